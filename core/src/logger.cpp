#include "stratus/core/logger.hpp"

#include "stratus/core/error.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stratus {

LogLevel parse_log_level(std::string_view name) {
  if (name == "error") return LogLevel::error;
  if (name == "warn") return LogLevel::warn;
  if (name == "info") return LogLevel::info;
  if (name == "debug") return LogLevel::debug;
  throw InputError(
      fmt::format("log level: expected one of error, warn, info, debug; found '{}'", name));
}

namespace {

/// Whether stdout is a terminal the user watches, decided when the program loads (before
/// MPI_Init). Under an MPI launcher the answer of isatty() is no evidence: Open MPI gives its
/// ranks a pseudo-terminal even when mpiexec's own output goes to a file, so launched ranks
/// write plain progress lines. STRATUS_TERMINAL=1 or 0 overrides.
bool stdout_is_terminal() {
  if (const char* forced = std::getenv("STRATUS_TERMINAL"); forced != nullptr && *forced != '\0')
    return std::strcmp(forced, "0") != 0;
  for (const char* launcher : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                               "MV2_COMM_WORLD_SIZE", "SLURM_STEP_ID"})
    if (std::getenv(launcher) != nullptr) return false;
  return ::isatty(::fileno(stdout)) == 1;
}

const bool g_stdout_terminal = stdout_is_terminal();

}  // namespace

struct Logger::Shared {
  std::FILE* file = nullptr;
  long warnings = 0;
  std::vector<std::string> first_warnings;
  bool terminal = false;
  std::string progress;  ///< the progress line now on the terminal ("" when none)

  Shared() : terminal(g_stdout_terminal) {}
  ~Shared() {
    if (file != nullptr) std::fclose(file);
  }
  Shared(const Shared&) = delete;
  Shared& operator=(const Shared&) = delete;
};

Logger::Logger(int rank, int size, bool all_ranks, LogLevel level)
    : rank_(rank),
      size_(size),
      all_ranks_(all_ranks),
      level_(level),
      shared_(std::make_shared<Shared>()) {}

void Logger::configure(bool all_ranks, LogLevel level) {
  all_ranks_ = all_ranks;
  level_ = level;
}

namespace {
/// The log file takes info and up, and debug when the terminal does.
bool file_takes(LogLevel level, LogLevel terminal_level) {
  return level <= LogLevel::info || level <= terminal_level;
}
}  // namespace

bool Logger::enabled(LogLevel level) const noexcept {
  if (rank_ == 0 && shared_->file != nullptr && file_takes(level, level_)) return true;
  if (static_cast<int>(level) > static_cast<int>(level_)) return false;
  // Warnings and errors are rank-local facts: every rank may report them.
  return all_ranks_ || rank_ == 0 || level <= LogLevel::warn;
}

void Logger::clear_progress() const {
  auto& s = *shared_;
  if (s.progress.empty()) return;
  std::string blank(s.progress.size() + 1, ' ');  // progress starts with '\r' already
  blank.front() = '\r';
  blank.back() = '\r';
  std::fwrite(blank.data(), 1, blank.size(), stdout);
  std::fflush(stdout);
}

void Logger::redraw_progress() const {
  auto& s = *shared_;
  if (s.progress.empty()) return;
  std::fwrite(s.progress.data(), 1, s.progress.size(), stdout);
  std::fflush(stdout);
}

void Logger::write(LogLevel level, std::string_view text) const {
  auto& s = *shared_;
  if (level == LogLevel::warn) {
    ++s.warnings;
    if (s.first_warnings.size() < kKeptWarnings) s.first_warnings.emplace_back(text);
  }
  const char* tag = level == LogLevel::error  ? "error: "
                    : level == LogLevel::warn ? "warning: "
                                              : "";
  const bool to_terminal = static_cast<int>(level) <= static_cast<int>(level_) &&
                           (all_ranks_ || rank_ == 0 || level <= LogLevel::warn);
  if (to_terminal) {
    std::FILE* out = level <= LogLevel::warn ? stderr : stdout;
    std::string line;
    if ((all_ranks_ || rank_ != 0) && size_ > 1) line = fmt::format("[rank {}] ", rank_);
    line += tag;
    line += text;
    line += '\n';
    clear_progress();
    std::fwrite(line.data(), 1, line.size(), out);
    std::fflush(out);
    redraw_progress();
  }
  if (rank_ == 0 && s.file != nullptr && file_takes(level, level_))
    write_file(fmt::format("{}{}\n", tag, text));
}

void Logger::open_file(const std::string& path, std::string_view header) const {
  if (rank_ != 0) return;
  close_file();
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr)
    throw RuntimeError(fmt::format("log file {}: cannot open it: {}", path, std::strerror(errno)));
  shared_->file = f;
  write_file(header);
}

void Logger::close_file() const {
  if (shared_->file != nullptr) std::fclose(shared_->file);
  shared_->file = nullptr;
}

void Logger::write_file(std::string_view text) const {
  std::FILE* f = shared_->file;
  if (f == nullptr) return;
  std::fwrite(text.data(), 1, text.size(), f);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', f);
  std::fflush(f);
}

bool Logger::terminal() const noexcept { return rank_ == 0 && shared_->terminal; }

void Logger::progress(std::string_view line) const {
  if (rank_ != 0 || static_cast<int>(level_) < static_cast<int>(LogLevel::info)) return;
  if (!shared_->terminal) {
    write(LogLevel::info, line);
    return;
  }
  std::string shown(line);
  winsize w{};
  if (::ioctl(::fileno(stdout), TIOCGWINSZ, &w) == 0 && w.ws_col > 1 && shown.size() >= w.ws_col)
    shown.resize(w.ws_col - 1u);  // a wrapped line could not be redrawn in place
  clear_progress();
  shared_->progress = "\r" + shown;
  redraw_progress();
}

void Logger::end_progress() const {
  clear_progress();
  shared_->progress.clear();
}

long Logger::warnings() const noexcept { return shared_->warnings; }

std::vector<std::string> Logger::first_warnings() const { return shared_->first_warnings; }

}  // namespace stratus
