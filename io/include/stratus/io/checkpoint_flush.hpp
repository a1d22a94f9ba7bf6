// The second checkpoint level: a checkpoint written and verified on node-local storage (fast,
// but gone with the instance) is copied to the durable directory in the background while the
// run goes on. The durable copy counts only once it is complete and equal to the local file.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace stratus::io {

/// Copies `from` to `to` through `to`.partial: bytes copied and flushed to disk, read back and
/// compared with the source by a 64-bit hash (FNV-1a), then renamed to `to` and the directory
/// flushed. Returns the bytes copied. Throws RuntimeError naming the file and the reason; the
/// .partial file is removed then. Plain file I/O (no HDF5, no MPI): safe in any thread.
/// `rate` > 0: the copy writes at most that many bytes per second on average.
std::uint64_t copy_verified(const std::string& from, const std::string& to, double rate = 0);

/// One background copy at a time (copy_verified), for the first rank of each host.
class CheckpointFlusher {
 public:
  struct Done {
    std::int64_t step = 0;
    std::string to;
    double seconds = 0;  ///< the copy's wall time
    std::uint64_t bytes = 0;
    std::string error;  ///< empty: the durable copy is complete and verified
  };

  CheckpointFlusher() = default;
  ~CheckpointFlusher();  // waits for a copy still running
  CheckpointFlusher(const CheckpointFlusher&) = delete;
  CheckpointFlusher& operator=(const CheckpointFlusher&) = delete;

  /// Starts copying the checkpoint of `step` from `from` to `to`. A copy still running is
  /// waited for first: its result is returned (and not reported by poll() again).
  std::optional<Done> start(std::int64_t step, std::string from, std::string to, double rate = 0);
  /// The result of a copy that has finished, once (nothing while it runs or when none ran).
  std::optional<Done> poll();
  /// Waits for the running copy and returns its result (nothing when none ran).
  std::optional<Done> wait();
  [[nodiscard]] bool busy() const;

 private:
  std::optional<Done> take();

  mutable std::mutex mutex_;
  std::thread thread_;
  bool running_ = false;
  std::optional<Done> done_;
};

}  // namespace stratus::io
