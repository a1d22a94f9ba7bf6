// A rank that waits forever is worse than one that fails: when a host of the run is cut off
// (its link down, its instance frozen), the ranks that talk to it block in MPI calls that TCP
// will not give up on for many minutes, and the job, its allocation and its bill go on with
// nothing computed. The watchdog ends this process when the run stops making progress.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace stratus {

/// Ends this process (message on stderr, exit code 1) when no progress is reported for longer
/// than the limit: max(`floor_seconds`, `factor` x the longest gap between two progress
/// reports so far), so a run whose steps or checkpoints take long gets a longer leash. A
/// background thread checks every second; it touches no MPI, and no file but stderr and what
/// `last_words` writes just before the exit (rank 0 records its exit code for
/// tools/stratus-mpiexec). A floor that is not positive and finite disables the watch.
class ProgressWatchdog {
 public:
  /// `who` names this process in the message ("rank 3 on host node7").
  ProgressWatchdog(double floor_seconds, double factor, std::string who,
                   std::function<void()> last_words = {});
  ~ProgressWatchdog();
  ProgressWatchdog(const ProgressWatchdog&) = delete;
  ProgressWatchdog& operator=(const ProgressWatchdog&) = delete;

  /// Progress was made; `step` is the step the run is at, for the message.
  void beat(std::int64_t step);
  /// Progress was made, and the next stretch may take `seconds` (a checkpoint write of a
  /// known size): until the next beat the limit is at least that.
  void beat(std::int64_t step, double seconds);
  /// The current limit in seconds (infinite when disabled).
  [[nodiscard]] double limit() const;

 private:
  void watch();

  double floor_;
  double factor_;
  std::string who_;
  std::function<void()> last_words_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  double last_beat_;        // monotonic seconds
  double longest_gap_ = 0;  // between two beats
  double allowance_ = 0;    // until the next beat
  std::int64_t step_ = -1;
  std::thread thread_;
};

}  // namespace stratus
