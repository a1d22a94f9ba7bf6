#include "stratus/core/duration.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <vector>

namespace stratus {

namespace {

std::optional<double> number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

std::optional<long> whole(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  long value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<double> clock(std::string_view text) {
  double days = 0;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    const auto d = whole(text.substr(0, dash));
    if (!d) return std::nullopt;
    days = static_cast<double>(*d);
    text.remove_prefix(dash + 1);
  }
  std::vector<long> parts;
  while (true) {
    const auto colon = text.find(':');
    const auto p = whole(text.substr(0, colon));
    if (!p) return std::nullopt;
    parts.push_back(*p);
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  double seconds = 0;
  if (parts.size() == 2 && days == 0) {
    if (parts[1] >= 60) return std::nullopt;
    seconds = 60.0 * parts[0] + parts[1];
  } else if (parts.size() == 3) {
    if (parts[1] >= 60 || parts[2] >= 60) return std::nullopt;
    seconds = 3600.0 * parts[0] + 60.0 * parts[1] + parts[2];
  } else {
    return std::nullopt;
  }
  return days * 86400.0 + seconds;
}

}  // namespace

std::optional<double> parse_duration(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.find(':') != std::string_view::npos) return clock(text);
  struct Unit {
    std::string_view suffix;
    double seconds;
  };
  constexpr Unit units[] = {{"min", 60.0}, {"s", 1.0}, {"h", 3600.0}, {"d", 86400.0}};
  for (const auto& u : units) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      auto head = text.substr(0, text.size() - u.suffix.size());
      while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
      const auto v = number(head);
      if (!v) return std::nullopt;
      return *v * u.seconds;
    }
  }
  return number(text);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "unlimited";
  if (seconds < 60) return fmt::format("{:.3g} s", seconds);
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{} h {:02} min {:02} s", h, m, s);
  return fmt::format("{} min {:02} s", m, s);
}

}  // namespace stratus
