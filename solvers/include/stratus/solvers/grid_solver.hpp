// What the grid solvers (heat, euler, spectral) share behind the Solver interface: a step
// counter, a simulated time and a global grid whose cell updates are the work of a step.
#pragma once

#include "stratus/solvers/solver.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace stratus {

/// A solver on a global grid of cells_[0] x cells_[1] x cells_[2] cells. The derived solver sets
/// cells_ during set-up and advances step_ and time_ (or overrides current_time(), as heat does
/// with step x dt).
class GridSolver : public Solver {
 public:
  [[nodiscard]] std::int64_t current_step() const override { return step_; }
  [[nodiscard]] double current_time() const override { return time_; }
  [[nodiscard]] double work_per_step() const override {
    return static_cast<double>(cells_[0]) * static_cast<double>(cells_[1]) *
           static_cast<double>(cells_[2]);
  }
  [[nodiscard]] std::string work_unit() const override { return "cell-updates"; }
  /// A grid step needs no preparation for its outputs.
  void advance(bool /*prepare_output*/) final { step(); }
  /// Advances one step. Collective.
  virtual void step() = 0;

 protected:
  std::array<std::int64_t, 3> cells_{};  ///< the global grid
  std::int64_t step_ = 0;
  double time_ = 0;
};

}  // namespace stratus
