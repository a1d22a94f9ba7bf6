// The runtime context: owns the MPI lifetime and that of the device runtime (Kokkos, started
// through ContextOptions::start_device), the duplicated communicator, the logger and the
// timers. Passed explicitly to whatever needs them; Stratus has no mutable globals. Host-only:
// the device runtime lives in Stratus::device (stratus/core/device.hpp).
#pragma once

#include "stratus/core/logger.hpp"
#include "stratus/core/timers.hpp"

#include <mpi.h>

#include <functional>
#include <memory>

namespace stratus {

class Context;

/// What the device runtime leaves running while a Context lives (Kokkos, the chosen GPU);
/// destroyed before MPI is finalized.
class DeviceSession {
 public:
  virtual ~DeviceSession() = default;
};

/// Starts the device runtime once MPI is up (stratus::device::starter() in Stratus::device).
using DeviceStarter = std::function<std::unique_ptr<DeviceSession>(Context&, int&, char**&)>;

struct ContextOptions {
  bool log_all_ranks = false;
  LogLevel log_level = LogLevel::info;
  /// Seconds that the failure handler waits for every rank to report the same failure
  /// before it aborts the whole job (see run_guarded).
  double failure_grace_seconds = 5.0;
  /// Starts Kokkos (and chooses this rank's GPU); empty for commands that launch no kernel
  /// (check, info, schema) and for host-only programs.
  DeviceStarter start_device;
};

class Context {
 public:
  /// Initializes MPI (unless already initialized), then calls options.start_device (when set);
  /// finalizes in the destructor whatever it initialized, the device session first.
  Context(int& argc, char**& argv, ContextOptions options = {});
  /// A context on a sub-communicator of an existing one (ensembles, serial references in
  /// tests): duplicates `comm`, shares the parent's MPI and Kokkos, logs like the parent.
  /// Collective over `comm`.
  Context(const Context& parent, MPI_Comm comm);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Duplicate of MPI_COMM_WORLD that belongs to Stratus alone.
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const Logger& log() const noexcept { return logger_; }
  [[nodiscard]] Timers& timers() noexcept { return timers_; }
  [[nodiscard]] const ContextOptions& options() const noexcept { return options_; }
  /// The device runtime's session (a sub-context shares its parent's); null when none started.
  [[nodiscard]] const DeviceSession* device_session() const noexcept { return session_; }

  /// Changes logging after construction (the command line is parsed once MPI is up).
  void configure_logging(bool all_ranks, LogLevel level);

  /// Runs `body` and turns any exception into an exit code, printing one clear message.
  /// When every rank fails the same way, rank 0 prints once and all ranks return the code.
  /// When only some ranks fail, each failing rank prints its message and the whole job is
  /// aborted with MPI_Abort after `failure_grace_seconds`: no rank is left hanging.
  int run_guarded(const std::function<int()>& body);

 private:
  ContextOptions options_;
  bool owns_mpi_ = false;
  std::unique_ptr<DeviceSession> device_;
  const DeviceSession* session_ = nullptr;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm failure_comm_ = MPI_COMM_NULL;  ///< used only by the failure agreement
  int rank_ = 0;
  int size_ = 1;
  Logger logger_;
  Timers timers_;
};

}  // namespace stratus
