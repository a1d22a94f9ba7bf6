// One run at a time per output directory: OUTPUT_DIR/stratus.lock names the run that owns the
// directory (host, pid, Slurm job, since when). A second run into the same directory (a double
// submit, ranks that outlive a killed mpiexec) would resume from the first one's checkpoints and
// rewrite its files; it is refused instead (InputError, exit 2, naming the holder).
//
// A lock whose holder is gone is taken over with a warning, never silently: on this host when
// its process no longer exists (pid and process start time checked, so a reused pid does not
// count), from any host when its lease ran out. The holder renews the lease (the file's
// modification time) from a background thread every kLockRenewSeconds; a lock not renewed for
// kLockLeaseSeconds belongs to a host that is gone or cut off. Shared file systems need
// coherent modification times and atomic link(2) (NFSv3+, Lustre, EFS, FSx, Filestore do).
#pragma once

#include <mpi.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace stratus::io {

inline constexpr double kLockLeaseSeconds = 60;
inline constexpr double kLockRenewSeconds = 10;

/// Who holds a lock, as its file says.
struct LockHolder {
  std::string host;
  long long pid = 0;
  long long start_ticks = 0;  ///< the process's start time (/proc/PID/stat field 22)
  std::string job;            ///< SLURM_JOB_ID, or empty
  long long attempt = -1;     ///< SLURM_RESTART_COUNT (0: the job's first run), -1 outside Slurm
  std::string since;          ///< UTC time the lock was taken
  [[nodiscard]] std::string describe() const;
};

class RunLock {
 public:
  /// Takes DIR/stratus.lock on rank 0 (the directory exists). Collective: every rank throws the
  /// same InputError when another live run holds it. `warn` receives the takeover message of a
  /// stale lock (rank 0).
  RunLock(MPI_Comm comm, const std::string& dir,
          const std::function<void(const std::string&)>& warn);
  /// Stops renewing and removes the lock if it is still this run's.
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  /// Rank 0: takes the lock or returns why not ("" on success).
  std::string acquire(const std::function<void(const std::string&)>& warn);
  void renew_until_stopped();

  std::string path_;
  LockHolder me_;
  bool held_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread renewer_;
};

/// This process as a lock holder.
LockHolder this_process();
/// The holder a lock file names; false when the file is missing or unreadable.
bool read_lock(const std::string& path, LockHolder& out);

}  // namespace stratus::io
