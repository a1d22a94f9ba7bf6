// CheckpointStore (a run's checkpoint files in one directory: whole files and per-host parts)
// and the naming rules they follow (docs/file-formats.md).
#include "stratus/io/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>

namespace stratus::io {

namespace fs = std::filesystem;

CheckpointStore::CheckpointStore(std::string dir, std::string run_name)
    : dir_(std::move(dir)), name_(std::move(run_name)) {}

std::string CheckpointStore::path_for(std::int64_t step) const {
  return (fs::path(dir_) / fmt::format("{}.step{:012}.h5", name_, step)).string();
}

std::string CheckpointStore::path_for(std::int64_t step, int part, int parts) const {
  if (parts == 1) return path_for(step);
  return (fs::path(dir_) / fmt::format("{}.step{:012}.part{}of{}.h5", name_, step, part, parts))
      .string();
}

namespace {

/// A decimal number of 1 to 12 digits without a sign (or -1).
std::int64_t digits_value(std::string_view digits) {
  if (digits.empty() || digits.size() > 12) return -1;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return -1;
  return v;
}

/// NAME.stepSSSSSSSSSSSS<tail> or NAME.stepSSSSSSSSSSSS.partKofH<tail> (H >= 2, K < H).
std::optional<CheckpointStore::Entry> entry_of_name(const std::string& file,
                                                    const std::string& name,
                                                    const std::string& tail) {
  const std::string head = name + ".step";
  if (!file.starts_with(head) || !file.ends_with(tail) ||
      file.size() < head.size() + 12 + tail.size())
    return std::nullopt;
  CheckpointStore::Entry e;
  e.step = digits_value(std::string_view(file.data() + head.size(), 12));
  if (e.step < 0) return std::nullopt;
  std::string_view rest(file.data() + head.size() + 12,
                        file.size() - head.size() - 12 - tail.size());
  if (rest.empty()) return e;
  if (!rest.starts_with(".part")) return std::nullopt;
  const std::string spelled(rest);
  rest.remove_prefix(5);
  const auto of = rest.find("of");
  if (of == std::string_view::npos) return std::nullopt;
  const std::int64_t k = digits_value(rest.substr(0, of)), h = digits_value(rest.substr(of + 2));
  if (k < 0 || h < 2 || k >= h || h > 1000000) return std::nullopt;
  // The canonical spelling only (no leading zeros): one name per part.
  if (fmt::format(".part{}of{}", k, h) != spelled) return std::nullopt;
  e.part = static_cast<int>(k);
  e.parts = static_cast<int>(h);
  return e;
}

}  // namespace

std::vector<std::string> checkpoint_files(const std::string& path) {
  const std::string file = fs::path(path).filename().string();
  // NAME.stepSSSSSSSSSSSS.partKofH.h5: the run name is what comes before ".step".
  const auto at = file.rfind(".step");
  if (at == std::string::npos) return {path};
  const auto e = entry_of_name(file, file.substr(0, at), ".h5");
  if (!e || e->parts == 1) return {path};
  const CheckpointStore here(fs::path(path).parent_path().string(), file.substr(0, at));
  std::vector<std::string> out;
  for (int k = 0; k < e->parts; ++k) out.push_back(here.path_for(e->step, k, e->parts));
  return out;
}

std::optional<CheckpointStore::Entry> CheckpointStore::parse(const std::string& path) const {
  auto e = entry_of_name(fs::path(path).filename().string(), name_, ".h5");
  if (e) e->path = path;
  return e;
}

std::vector<CheckpointStore::Entry> CheckpointStore::list() const {
  std::vector<Entry> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir_, ec)) {
    auto e = entry_of_name(f.path().filename().string(), name_, ".h5");
    if (!e) continue;
    e->path = f.path().string();
    out.push_back(std::move(*e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.step != b.step     ? a.step > b.step
           : a.parts != b.parts ? a.parts < b.parts
                                : a.part < b.part;
  });
  return out;
}

std::vector<std::string> CheckpointStore::partials() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir_, ec))
    if (entry_of_name(f.path().filename().string(), name_, ".h5.partial"))
      out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace stratus::io
