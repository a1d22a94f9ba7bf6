// Named wall-clock timers that also mark Kokkos profiling regions (through hooks that the
// device runtime installs: this header and its code are host-only).
//
// Every timer belongs to a phase (compute, neighbour lists or FFTs, communication, output,
// checkpoint): the run summary adds them up by phase. Scopes nest: a scope opened inside
// another is subtracted from the outer one's exclusive time, so that phases never count the
// same second twice.
#pragma once

#include <mpi.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace stratus {

/// What a timed region spends its time on, for the run summary's breakdown.
enum class Phase {
  compute = 0,
  neighbor = 1,
  communication = 2,
  output = 3,
  checkpoint = 4,
  other = 5
};
inline constexpr int kPhaseCount = 6;

/// "compute", "neighbor/FFT", "communication", "output", "checkpoint", "other".
const char* phase_name(Phase phase);

/// What a timed scope asks of the device runtime: mark a profiling region and wait for the
/// kernels launched inside it. Unset hooks do nothing (host-only programs and tests).
struct TimerHooks {
  void (*push_region)(const std::string& name) = nullptr;
  void (*pop_region)() = nullptr;
  void (*fence)() = nullptr;
};

class Timers {
 public:
  /// Times one region: pushes a Kokkos profiling region, fences the device at the end so the
  /// time covers the kernels launched inside, and adds the elapsed time to `name`.
  class Scope {
   public:
    Scope(Timers& owner, std::string name, Phase phase);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    friend class Timers;
    Timers& owner_;
    std::string name_;
    Phase phase_;
    double start_;
    double inner_ = 0;  ///< seconds of the scopes opened inside this one
    Scope* outer_;
  };

  /// Times a region of phase `phase` (Phase::other when not given).
  [[nodiscard]] Scope scope(std::string name, Phase phase = Phase::other) {
    return Scope(*this, std::move(name), phase);
  }

  /// Adds `seconds` to timer `name` (creating it with `phase`), as a region of its own.
  void add(const std::string& name, double seconds, Phase phase = Phase::other);
  /// Moves `seconds` of timer `from`'s exclusive time to timer `to` (created with `phase`):
  /// for work measured inside a region by other means (e.g. FFT statistics).
  void carve(const std::string& from, const std::string& to, double seconds, Phase phase);
  /// Seconds accumulated by `name` on this rank (0 if never started).
  [[nodiscard]] double seconds(const std::string& name) const;
  /// Exclusive seconds of this rank by phase (scopes nested in others not counted twice).
  [[nodiscard]] std::array<double, kPhaseCount> phase_seconds() const;
  /// Installs the device runtime's hooks (see stratus/core/device.hpp).
  void set_hooks(TimerHooks hooks) noexcept { hooks_ = hooks; }
  [[nodiscard]] const TimerHooks& hooks() const noexcept { return hooks_; }

  /// Forgets every timer (a run's summary covers its time loop only).
  void reset() { entries_.clear(); }

  struct Summary {
    std::string name;
    Phase phase = Phase::other;
    double min = 0, mean = 0, max = 0;  ///< over ranks, seconds (inclusive)
    double exclusive_mean = 0;          ///< over ranks, seconds (without nested timers)
    long calls = 0;                     ///< on rank 0
  };
  /// Collective over `comm`: every timer of any rank, by name (missing ones count 0).
  [[nodiscard]] std::vector<Summary> summarize(MPI_Comm comm) const;

 private:
  struct Entry {
    double seconds = 0;    ///< inclusive
    double exclusive = 0;  ///< without the scopes nested inside
    long calls = 0;
    Phase phase = Phase::other;
  };
  std::map<std::string, Entry> entries_;
  Scope* open_ = nullptr;  ///< innermost open scope
  TimerHooks hooks_;
};

/// Seconds since an arbitrary fixed point (monotonic).
double wall_seconds();

/// wall_seconds() when this process loaded Stratus (before main): where a run's wall-time
/// limit is counted from.
double process_start_seconds();

}  // namespace stratus
