#include "stratus/core/watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace stratus {
namespace {

double monotonic_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressWatchdog::ProgressWatchdog(double floor_seconds, double factor, std::string who,
                                   std::function<void()> last_words)
    : floor_(floor_seconds),
      factor_(factor),
      who_(std::move(who)),
      last_words_(std::move(last_words)),
      last_beat_(monotonic_seconds()) {
  if (std::isfinite(floor_) && floor_ > 0) thread_ = std::thread([this] { watch(); });
}

ProgressWatchdog::~ProgressWatchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProgressWatchdog::beat(std::int64_t step) { beat(step, 0.0); }

void ProgressWatchdog::beat(std::int64_t step, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const double now = monotonic_seconds();
  longest_gap_ = std::max(longest_gap_, now - last_beat_);
  last_beat_ = now;
  step_ = step;
  allowance_ = std::isfinite(seconds) ? std::max(seconds, 0.0) : 0.0;
}

double ProgressWatchdog::limit() const {
  if (!(std::isfinite(floor_) && floor_ > 0)) return std::numeric_limits<double>::infinity();
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::max({floor_, factor_ * longest_gap_, allowance_});
}

void ProgressWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (stop_) return;
    const double limit = std::max({floor_, factor_ * longest_gap_, allowance_});
    const double idle = monotonic_seconds() - last_beat_;
    if (idle <= limit) continue;
    std::fprintf(
        stderr,
        "error: %s: no progress for %.0f s (limit %.0f s: run.hang_timeout, or %g x the "
        "longest step or checkpoint so far), %s: a rank or a host of this run is gone "
        "or cut off. Ending this rank so that the job ends; run the same command to "
        "resume from the newest checkpoint.\n",
        who_.c_str(), idle, limit, factor_,
        step_ >= 0 ? ("last at step " + std::to_string(step_)).c_str() : "before the first step");
    std::fflush(stderr);
    if (last_words_) last_words_();
    std::_Exit(1);  // the main thread is blocked in MPI: no destructor, no finalize
  }
}

}  // namespace stratus
