// Typed errors that carry their source location, and the documented exit codes.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace stratus {

/// Exit codes of the `stratus` command (documented in README.md and docs/errors.md).
enum class ExitCode : int {
  ok = 0,                 ///< the run finished
  runtime_failure = 1,    ///< the run started and failed
  bad_input = 2,          ///< bad deck, bad option or bad input file: nothing was run
  stopped_resumable = 75  ///< stopped early on request; a checkpoint allows resuming
};

/// Base of every Stratus error: a message for the user, an exit code and where it was raised.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, ExitCode code,
        std::source_location where = std::source_location::current());

  [[nodiscard]] ExitCode exit_code() const noexcept { return code_; }
  [[nodiscard]] const std::source_location& where() const noexcept { return where_; }

 private:
  ExitCode code_;
  std::source_location where_;
};

/// The user's input is wrong (deck, command-line option, input file). Exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message,
                      std::source_location where = std::source_location::current())
      : Error(message, ExitCode::bad_input, where) {}
};

/// Something failed while running (I/O, numerical blow-up, lost atom). Exit code 1.
class RuntimeError : public Error {
 public:
  explicit RuntimeError(const std::string& message,
                        std::source_location where = std::source_location::current())
      : Error(message, ExitCode::runtime_failure, where) {}
};

/// The run stopped early on request (signal, wall-time limit) and can be resumed. Exit code 75.
class StopRequested : public Error {
 public:
  explicit StopRequested(const std::string& message,
                         std::source_location where = std::source_location::current())
      : Error(message, ExitCode::stopped_resumable, where) {}
};

/// Throws RuntimeError(message) unless `condition` holds.
inline void require(bool condition, const std::string& message,
                    std::source_location where = std::source_location::current()) {
  if (!condition) throw RuntimeError(message, where);
}

}  // namespace stratus
