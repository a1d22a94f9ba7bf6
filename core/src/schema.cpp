#include "stratus/core/schema.hpp"

#include "stratus/core/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace stratus {

std::string_view type_name(ParamType type) {
  switch (type) {
    case ParamType::boolean:
      return "boolean";
    case ParamType::integer:
      return "integer";
    case ParamType::real:
      return "real";
    case ParamType::string:
      return "string";
    case ParamType::integer_list:
      return "list of integers";
    case ParamType::real_list:
      return "list of reals";
    case ParamType::string_list:
      return "list of strings";
  }
  return "?";
}

namespace {

std::string real_to_toml(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  // Shortest representation that round-trips, always with a decimal point or exponent so
  // that TOML reads it back as a float.
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string string_to_toml(const std::string& v) { return quoted_string(v); }

template <class T, class F>
std::string list_to_toml(const std::vector<T>& v, F&& item) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += item(v[i]);
  }
  return out + "]";
}

std::string bound_text(const ParamSpec& p) {
  std::string s;
  auto num = [](double v) { return fmt::format("{}", v); };
  if (p.min && p.max)
    s = fmt::format("{} {} x {} {}", num(*p.min),
                    p.min_exclusive ? "<" : "<=", p.max_exclusive ? "<" : "<=", num(*p.max));
  else if (p.min)
    s = fmt::format("{} {}", p.min_exclusive ? ">" : ">=", num(*p.min));
  else if (p.max)
    s = fmt::format("{} {}", p.max_exclusive ? "<" : "<=", num(*p.max));
  return s;
}

}  // namespace

std::string to_toml(const ParamValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return real_to_toml(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return string_to_toml(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          return list_to_toml(v, [](std::int64_t x) { return std::to_string(x); });
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return list_to_toml(v, real_to_toml);
        } else {
          return list_to_toml(v, string_to_toml);
        }
      },
      value);
}

std::string ParamSpec::expectation() const {
  std::string s(type_name(type));
  if (length) s = fmt::format("{} of length {}", s, *length);
  const std::string b = bound_text(*this);
  if (!b.empty()) {
    const bool list = type == ParamType::integer_list || type == ParamType::real_list;
    s += list ? fmt::format(" (each {})", b) : fmt::format(" {}", b);
  }
  if (!choices.empty()) s += fmt::format(", one of {}", join(choices, ", ", "\""));
  if (file_name) s += " (a plain file name: no '/', no control characters, no leading '.')";
  return s;
}

std::string ParamSpec::violation(const ParamValue& value) const {
  auto check_number = [&](double v) -> std::string {
    const bool low = min && (min_exclusive ? !(v > *min) : !(v >= *min));
    const bool high = max && (max_exclusive ? !(v < *max) : !(v <= *max));
    if (low || high || std::isnan(v)) return fmt::format("must be {}", bound_text(*this));
    return {};
  };
  auto check_choice = [&](const std::string& v) -> std::string {
    if (choices.empty()) return {};
    for (const auto& c : choices)
      if (c == v) return {};
    std::string msg = fmt::format("must be one of {}", join(choices, ", ", "\""));
    const std::string near = closest_match(v, choices);
    if (!near.empty()) msg += fmt::format(" (did you mean \"{}\"?)", near);
    return msg;
  };
  auto check_file_name = [&](const std::string& v) -> std::string {
    if (!file_name || v.empty()) return {};
    const bool bad_char = std::any_of(v.begin(), v.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return c == '/' || u < 0x20 || u == 0x7f;
    });
    if (bad_char || v.front() == '.')
      return "must be a plain file name (no '/', no control characters, not starting with '.')";
    return {};
  };
  auto check_length = [&](std::size_t n) -> std::string {
    if (length && n != *length) return fmt::format("must have {} elements, has {}", *length, n);
    return {};
  };
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>) {
          return {};
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
          return check_number(static_cast<double>(v));
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (auto e = check_file_name(v); !e.empty()) return e;
          return check_choice(v);
        } else {
          if (auto e = check_length(v.size()); !e.empty()) return e;
          for (std::size_t i = 0; i < v.size(); ++i) {
            std::string e;
            if constexpr (std::is_same_v<T, std::vector<std::string>>)
              e = check_choice(v[i]);
            else
              e = check_number(static_cast<double>(v[i]));
            if (!e.empty()) return fmt::format("element {} {}", i, e);
          }
          return {};
        }
      },
      value);
}

ParamSpec& SectionSpec::add(std::string name, ParamType type, std::string doc) {
  if (find(name)) throw std::logic_error(fmt::format("parameter {}.{} declared twice", path, name));
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.doc = std::move(doc);
  params.push_back(std::move(p));
  return params.back();
}

const ParamSpec* SectionSpec::find(std::string_view name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> SectionSpec::names() const {
  std::vector<std::string> out;
  for (const auto& p : params) out.push_back(p.name);
  return out;
}

SectionSpec& Schema::section(std::string path, std::string doc, std::string owner, bool repeated) {
  if (find(path)) throw std::logic_error(fmt::format("section [{}] declared twice", path));
  // A repeated section's parent must exist (if any), so that paths stay a tree.
  SectionSpec s;
  s.path = std::move(path);
  s.doc = std::move(doc);
  s.owner = std::move(owner);
  s.repeated = repeated;
  sections_.push_back(std::move(s));
  return sections_.back();
}

const SectionSpec* Schema::find(std::string_view path) const {
  for (const auto& s : sections_)
    if (s.path == path) return &s;
  return nullptr;
}

std::vector<std::string> Schema::children(std::string_view parent) const {
  std::vector<std::string> out;
  for (const auto& s : sections_) {
    const auto dot = s.path.rfind('.');
    const std::string_view p =
        dot == std::string::npos ? std::string_view() : std::string_view(s.path).substr(0, dot);
    if (p == parent) out.push_back(dot == std::string::npos ? s.path : s.path.substr(dot + 1));
  }
  return out;
}

bool Schema::may_change_on_restart(std::string_view key) const {
  std::string path;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '[') {
      const auto close = key.find(']', i);
      if (close == std::string_view::npos) break;
      i = close;
      continue;
    }
    path += key[i];
  }
  const auto dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  const SectionSpec* section = find(std::string_view(path).substr(0, dot));
  if (section == nullptr) return false;
  if (const ParamSpec* p = section->find(std::string_view(path).substr(dot + 1));
      p != nullptr && p->restart_free)
    return true;
  for (auto end = dot; end != std::string::npos; end = path.rfind('.', end - 1)) {
    const SectionSpec* s = find(std::string_view(path).substr(0, end));
    if (s != nullptr && s->restart_free) return true;
    if (end == 0) break;
  }
  return false;
}

std::vector<std::string> Schema::all_keys() const {
  std::vector<std::string> out;
  for (const auto& s : sections_)
    for (const auto& p : s.params) out.push_back(s.path + "." + p.name);
  return out;
}

}  // namespace stratus
