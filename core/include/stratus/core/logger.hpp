// Rank-aware logging: rank 0 speaks by default, every rank (prefixed) on request.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace stratus {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

/// Parses "error", "warn", "info" or "debug"; throws InputError otherwise.
LogLevel parse_log_level(std::string_view name);

class Logger {
 public:
  /// `rank`/`size` of the communicator the logger speaks for; with `all_ranks` every rank
  /// writes, each line prefixed with "[rank r]".
  Logger(int rank, int size, bool all_ranks, LogLevel level);

  [[nodiscard]] bool enabled(LogLevel level) const noexcept;
  [[nodiscard]] LogLevel level() const noexcept { return level_; }

  /// Writes one line (a trailing newline is added) to stdout (info, debug) or stderr (warn, error).
  void write(LogLevel level, std::string_view text) const;

  template <class... Args>
  void info(fmt::format_string<Args...> f, Args&&... args) const {
    if (enabled(LogLevel::info)) write(LogLevel::info, fmt::format(f, std::forward<Args>(args)...));
  }
  template <class... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) const {
    if (enabled(LogLevel::warn)) write(LogLevel::warn, fmt::format(f, std::forward<Args>(args)...));
  }
  template <class... Args>
  void debug(fmt::format_string<Args...> f, Args&&... args) const {
    if (enabled(LogLevel::debug))
      write(LogLevel::debug, fmt::format(f, std::forward<Args>(args)...));
  }

 private:
  int rank_;
  int size_;
  bool all_ranks_;
  LogLevel level_;
};

}  // namespace stratus
