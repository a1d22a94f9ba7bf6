#include "stratus/core/logger.hpp"

#include "stratus/core/error.hpp"

#include <cstdio>

namespace stratus {

LogLevel parse_log_level(std::string_view name) {
  if (name == "error") return LogLevel::error;
  if (name == "warn") return LogLevel::warn;
  if (name == "info") return LogLevel::info;
  if (name == "debug") return LogLevel::debug;
  throw InputError(
      fmt::format("log level: expected one of error, warn, info, debug; found '{}'", name));
}

Logger::Logger(int rank, int size, bool all_ranks, LogLevel level)
    : rank_(rank), size_(size), all_ranks_(all_ranks), level_(level) {}

bool Logger::enabled(LogLevel level) const noexcept {
  if (static_cast<int>(level) > static_cast<int>(level_)) return false;
  // Warnings and errors are rank-local facts: every rank may report them.
  return all_ranks_ || rank_ == 0 || level <= LogLevel::warn;
}

void Logger::write(LogLevel level, std::string_view text) const {
  std::FILE* out = level <= LogLevel::warn ? stderr : stdout;
  const char* tag = level == LogLevel::error  ? "error: "
                    : level == LogLevel::warn ? "warning: "
                                              : "";
  std::string line;
  if ((all_ranks_ || rank_ != 0) && size_ > 1) line = fmt::format("[rank {}] ", rank_);
  line += tag;
  line += text;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

}  // namespace stratus
