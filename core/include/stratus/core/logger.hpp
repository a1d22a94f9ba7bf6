// Rank-aware logging: rank 0 speaks by default, every rank (prefixed) on request.
//
// Besides the terminal, a logger can copy rank 0's lines into a log file (open_file), counts
// the warnings of its rank and keeps the first ones (for the run summary), and can show one
// live progress line that is redrawn in place on a terminal: every other line clears it first
// and draws it again below, so that progress never garbles the log.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace stratus {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

/// Parses "error", "warn", "info" or "debug"; throws InputError otherwise.
LogLevel parse_log_level(std::string_view name);

class Logger {
 public:
  /// `rank`/`size` of the communicator the logger speaks for; with `all_ranks` every rank
  /// writes, each line prefixed with "[rank r]".
  Logger(int rank, int size, bool all_ranks, LogLevel level);

  /// Changes who writes and the terminal's level; keeps the log file, the warning count and
  /// the progress line.
  void configure(bool all_ranks, LogLevel level);

  /// True when a line of `level` goes anywhere (terminal or log file).
  [[nodiscard]] bool enabled(LogLevel level) const noexcept;
  [[nodiscard]] LogLevel level() const noexcept { return level_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }

  /// Writes one line (a trailing newline is added) to stdout (info, debug) or stderr (warn,
  /// error), as far as the terminal's level allows, and to the log file (rank 0, info and up).
  void write(LogLevel level, std::string_view text) const;

  template <class... Args>
  void info(fmt::format_string<Args...> f, Args&&... args) const {
    if (enabled(LogLevel::info)) write(LogLevel::info, fmt::format(f, std::forward<Args>(args)...));
  }
  /// A warning: written like the others, and always counted and kept for the run summary
  /// (even when the level hides it).
  template <class... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) const {
    write(LogLevel::warn, fmt::format(f, std::forward<Args>(args)...));
  }
  template <class... Args>
  void debug(fmt::format_string<Args...> f, Args&&... args) const {
    if (enabled(LogLevel::debug))
      write(LogLevel::debug, fmt::format(f, std::forward<Args>(args)...));
  }

  /// Rank 0: copies every line rank 0 writes at info level and above (debug too when the
  /// level is debug) into `path`, appended, after `header` (a separator line). Throws
  /// RuntimeError naming the file when it cannot be opened. Other ranks: nothing.
  void open_file(const std::string& path, std::string_view header) const;
  /// Closes the log file (the destructor of the last copy of the logger does it too).
  void close_file() const;
  /// Writes `text` (one or more lines) to the log file only (rank 0).
  void write_file(std::string_view text) const;

  /// Whether rank 0's stdout is a terminal (progress is then redrawn in place).
  [[nodiscard]] bool terminal() const noexcept;
  /// Shows `line` as the live progress line: redrawn in place ("\r") on a terminal, else
  /// written as an ordinary info line. Rank 0 only, info level.
  void progress(std::string_view line) const;
  /// Removes the live progress line from the terminal (no-op when none is shown).
  void end_progress() const;

  /// Warnings this rank has written (whatever the level).
  [[nodiscard]] long warnings() const noexcept;
  /// The text of the first warnings of this rank (at most kKeptWarnings).
  [[nodiscard]] std::vector<std::string> first_warnings() const;
  static constexpr std::size_t kKeptWarnings = 20;

 private:
  struct Shared;
  void clear_progress() const;
  void redraw_progress() const;

  int rank_;
  int size_;
  bool all_ranks_;
  LogLevel level_;
  std::shared_ptr<Shared> shared_;  ///< log file, warnings, progress line: kept by copies
};

}  // namespace stratus
