// Named wall-clock timers that also mark Kokkos profiling regions.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

namespace stratus {

class Timers {
 public:
  /// Times one region: pushes a Kokkos profiling region, fences the device at the end so the
  /// time covers the kernels launched inside, and adds the elapsed time to `name`.
  class Scope {
   public:
    Scope(Timers& owner, std::string name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timers& owner_;
    std::string name_;
    double start_;
  };

  [[nodiscard]] Scope scope(std::string name) { return Scope(*this, std::move(name)); }

  /// Adds `seconds` to timer `name` (creating it).
  void add(const std::string& name, double seconds);
  /// Seconds accumulated by `name` on this rank (0 if never started).
  [[nodiscard]] double seconds(const std::string& name) const;

  struct Summary {
    std::string name;
    double min = 0, mean = 0, max = 0;  ///< over ranks, seconds
    long calls = 0;                     ///< on rank 0
  };
  /// Collective over `comm`: every rank must hold the same timer names (missing ones count 0).
  [[nodiscard]] std::vector<Summary> summarize(MPI_Comm comm) const;

 private:
  struct Entry {
    double seconds = 0;
    long calls = 0;
  };
  std::map<std::string, Entry> entries_;
};

/// Seconds since an arbitrary fixed point (monotonic).
double wall_seconds();

/// wall_seconds() when this process loaded Stratus (before main): where a run's wall-time
/// limit is counted from.
double process_start_seconds();

}  // namespace stratus
