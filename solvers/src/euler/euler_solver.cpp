// The Euler solver's time step: ghost exchange overlapped with interior fluxes, boundary
// ghosts, Runge-Kutta stages, the CFL time step and the positivity check.
#include "stratus/solvers/euler.hpp"

#include "stratus/core/agree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stratus {

namespace ke = kernels::euler;

namespace {

// The boxes of `outer` that are not in `inner` (inner clipped to outer): at most six slabs.
std::vector<ke::IndexBox> box_minus(const ke::IndexBox& outer, ke::IndexBox inner) {
  for (int a = 0; a < 3; ++a) {
    inner.lo[a] = std::max(inner.lo[a], outer.lo[a]);
    inner.hi[a] = std::min(inner.hi[a], outer.hi[a]);
  }
  if (inner.empty()) return {outer};
  std::vector<ke::IndexBox> out;
  ke::IndexBox rest = outer;
  for (int a = 0; a < 3; ++a) {
    ke::IndexBox below = rest, above = rest;
    below.hi[a] = inner.lo[a];
    above.lo[a] = inner.hi[a];
    if (!below.empty()) out.push_back(below);
    if (!above.empty()) out.push_back(above);
    rest.lo[a] = inner.lo[a];
    rest.hi[a] = inner.hi[a];
  }
  return out;
}

}  // namespace

void EulerSolver::fill_ghosts_start() {
  auto t = ctx_.timers().scope("euler: halo start", Phase::communication);
  // After each axis is exchanged, the walls of that axis (their ghosts reach edges, corners).
  halo_->start(fields_, [this](int a) {
    if (!grid_.active(a)) return;
    auto tb = ctx_.timers().scope("euler: boundaries", Phase::compute);
    for (int side = 0; side < 2; ++side)
      if (boundary_[a][side] != ke::Boundary::periodic &&
          decomposition_->at_wall(a, side == 0 ? -1 : 1))
        ke::fill_boundary(u_, grid_, a, side, boundary_[a][side], inflow_);
  });
}

void EulerSolver::fill_ghosts_finish() {
  auto t = ctx_.timers().scope("euler: halo finish", Phase::communication);
  halo_->finish();
}

void EulerSolver::compute_fluxes(bool overlap) {
  const bool fourth = scheme_.fourth_order;
  const int w = ke::stencil_width(scheme_.reconstruction);
  // Per axis: the faces to compute, and those of them whose stencil has no ghost cell.
  std::array<ke::IndexBox, 3> full{}, point{}, inner{};
  for (int a = 0; a < 3; ++a) {
    if (!grid_.active(a)) continue;
    for (int d = 0; d < 3; ++d) {
      const std::int64_t g = grid_.g[d], n = grid_.n[d];
      if (d == a) {
        full[a].lo[d] = g;
        full[a].hi[d] = g + n + 1;
        inner[a].lo[d] = g + w;
        inner[a].hi[d] = g + n + 1 - w;
      } else if (!grid_.active(d)) {
        full[a].lo[d] = 0;
        full[a].hi[d] = 1;
        inner[a].lo[d] = 0;
        inner[a].hi[d] = 1;
      } else {
        // fourth order: states two faces beyond, point fluxes one face beyond (transverse).
        const std::int64_t extra = fourth ? 2 : 0;
        const std::int64_t reach = (!fourth && scheme_.viscous) ? 1 : 0;
        full[a].lo[d] = g - extra;
        full[a].hi[d] = g + n + extra;
        inner[a].lo[d] = g + reach;
        inner[a].hi[d] = g + n - reach;
      }
    }
    point[a] = full[a];
    if (fourth)
      for (int d = 0; d < 3; ++d)
        if (d != a && grid_.active(d)) {
          point[a].lo[d] += 1;
          point[a].hi[d] -= 1;
        }
  }
  auto launch = [&](int a, const ke::IndexBox& box) {
    if (box.empty()) return;
    if (fourth)
      ke::face_average_states(u_, states_, a, box, gas_, scheme_);
    else
      ke::face_fluxes(u_, w_, flux_, a, box, grid_, gas_, scheme_);
  };
  // Primitive variables (PLM, first order, viscous terms): of the interior before the
  // exchange, of the ghosts after it.
  const bool prims = ke::needs_primitives(scheme_);
  ke::IndexBox all;
  for (int d = 0; d < 3; ++d) all.hi[d] = grid_.n[d] + 2 * grid_.g[d];
  const ke::IndexBox cells = ke::interior(grid_);
  auto ghost_primitives = [&]() {
    if (!prims) return;
    auto t = ctx_.timers().scope("euler: primitives", Phase::compute);
    for (const auto& b : box_minus(all, cells)) ke::primitives(u_, w_, b, gas_);
  };
  if (prims) {
    auto t = ctx_.timers().scope("euler: primitives", Phase::compute);
    ke::primitives(u_, w_, cells, gas_);
  }
  if (!fourth) {
    fill_ghosts_start();
    if (overlap) {
      auto t = ctx_.timers().scope("euler: fluxes (interior)", Phase::compute);
      for (int a = 0; a < 3; ++a)
        if (grid_.active(a)) launch(a, inner[a]);
    }
    fill_ghosts_finish();
    ghost_primitives();
    auto t =
        ctx_.timers().scope(overlap ? "euler: fluxes (boundary)" : "euler: fluxes", Phase::compute);
    for (int a = 0; a < 3; ++a) {
      if (!grid_.active(a)) continue;
      for (const auto& b : overlap ? box_minus(full[a], inner[a]) : std::vector{full[a]})
        launch(a, b);
    }
    return;
  }
  // Fourth order: the face states of one axis at a time share one array.
  fill_ghosts_start();
  bool first = true;
  for (int a = 0; a < 3; ++a) {
    if (!grid_.active(a)) continue;
    auto t = ctx_.timers().scope("euler: fluxes", Phase::compute);
    if (first && overlap) {
      launch(a, inner[a]);
      fill_ghosts_finish();
      ghost_primitives();
      for (const auto& b : box_minus(full[a], inner[a])) launch(a, b);
    } else {
      if (first) {
        fill_ghosts_finish();
        ghost_primitives();
      }
      launch(a, full[a]);
    }
    first = false;
    ke::face_point_fluxes(w_, states_, flux_, a, point[a], grid_, gas_, scheme_);
  }
  if (first) fill_ghosts_finish();  // no active axis (a single cell)
}

void EulerSolver::rhs_and_stage(const ke::Stage& st, double dt) {
  // Overlap pays only when messages travel between ranks; alone, one launch per axis is cheaper.
  compute_fluxes(decomposition_->size() > 1);
  auto t = ctx_.timers().scope("euler: update", Phase::compute);
  ke::stage_update(u0_, u_, acc_, flux_, grid_, scheme_.fourth_order, st, dt);
}

double EulerSolver::next_dt() {
  double rate = 0;
  {
    auto t = ctx_.timers().scope("euler: time step", Phase::compute);
    const double local = ke::max_rate(u_, grid_, gas_, scheme_.viscous);
    MPI_Allreduce(&local, &rate, 1, MPI_DOUBLE, MPI_MAX, ctx_.comm());
  }
  if (!(rate < ke::kBadState)) check_positivity(rate);
  return rate > 0 ? cfl_ / rate : 0.0;
}

void EulerSolver::check_positivity(double) const {
  // Rare path: find this rank's first bad cell on the host, then the lowest rank with one
  // tells everybody.
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u_);
  std::string message;
  for (std::int64_t i = grid_.g[0]; i < grid_.g[0] + grid_.n[0] && message.empty(); ++i)
    for (std::int64_t j = grid_.g[1]; j < grid_.g[1] + grid_.n[1] && message.empty(); ++j)
      for (std::int64_t k = grid_.g[2]; k < grid_.g[2] + grid_.n[2] && message.empty(); ++k) {
        ke::Vars c;
        for (int v = 0; v < ke::kVars; ++v) c[v] = h(v, i, j, k);
        const ke::Vars w = ke::to_primitive(gas_, c);
        if (w[0] > 0 && w[4] > 0 && std::isfinite(w[4])) continue;
        const std::int64_t gi = grid_.begin[0] + i - grid_.g[0];
        const std::int64_t gj = grid_.begin[1] + j - grid_.g[1];
        const std::int64_t gk = grid_.begin[2] + k - grid_.g[2];
        message = fmt::format(
            "euler: {} {} at cell ({}, {}, {}) (x = {:.6g}, {:.6g}, {:.6g}) after step {} "
            "(t = {:.9g}): rho = {:.6g}, velocity = ({:.6g}, {:.6g}, {:.6g}), p = {:.6g}. The "
            "run stops; its last checkpoint is kept. Try a smaller euler.cfl, "
            "euler.limiter = \"minmod\", euler.riemann = \"hlle\" or a finer grid.",
            !(w[0] > 0) ? "non-positive density" : "non-positive pressure",
            !(w[0] > 0) ? w[0] : w[4], gi, gj, gk, grid_.centre(0, static_cast<int>(i)),
            grid_.centre(1, static_cast<int>(j)), grid_.centre(2, static_cast<int>(k)), step_,
            time_, w[0], w[1], w[2], w[3], w[4]);
      }
  message = agree_on_message(ctx_.comm(), message);
  throw RuntimeError(message.empty() ? "euler: a state became non-finite (NaN)" : message);
}

bool EulerSolver::reached_end() const { return t_end_ > 0 && time_ >= t_end_; }

void EulerSolver::step() {
  double dt = dt_;
  bool clipped = false;
  if (t_end_ > 0 && time_ + dt >= t_end_) {
    dt = t_end_ - time_;
    clipped = true;
  }
  Kokkos::deep_copy(u0_, u_);
  if (integrator_ == EulerConfig::TimeIntegrator::rk2) {
    rhs_and_stage({0, 1, 0, 1, 0}, dt);
    rhs_and_stage({0.5, 0.5, 0, 0.5, 0}, dt);
  } else if (integrator_ == EulerConfig::TimeIntegrator::rk3) {
    rhs_and_stage({0, 1, 0, 1, 0}, dt);
    rhs_and_stage({0.75, 0.25, 0, 0.25, 0}, dt);
    rhs_and_stage({1.0 / 3, 2.0 / 3, 0, 2.0 / 3, 0}, dt);
  } else {
    Kokkos::deep_copy(acc_, u_);
    rhs_and_stage({1, 0, 0, 0.5, 1.0 / 6}, dt);
    rhs_and_stage({1, 0, 0, 0.5, 1.0 / 3}, dt);
    rhs_and_stage({1, 0, 0, 1, 1.0 / 3}, dt);
    rhs_and_stage({0, 0, 1, 1.0 / 6, 0}, dt);
  }
  ++step_;
  time_ = clipped ? t_end_ : time_ + dt;
  dt_ = next_dt();
}

EulerSolver::Totals EulerSolver::totals() const {
  auto t = ctx_.timers().scope("euler: diagnostics", Phase::output);
  Totals d;
  d.step = step_;
  d.time = time_;
  double sums[ke::kVars + 1];
  for (int v = 0; v < ke::kVars; ++v) sums[v] = ke::total(u_, grid_, v);
  sums[ke::kVars] = ke::kinetic_energy(u_, grid_);
  MPI_Allreduce(MPI_IN_PLACE, sums, ke::kVars + 1, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  double volume = 1;
  for (int a = 0; a < 3; ++a) volume *= grid_.dx[a];
  d.mass = sums[0] * volume;
  for (int a = 0; a < 3; ++a) d.momentum[a] = sums[1 + a] * volume;
  d.energy = sums[4] * volume;
  d.kinetic_energy = sums[ke::kVars] * volume;
  double mins[2] = {ke::minimum(u_, grid_, gas_, 0), ke::minimum(u_, grid_, gas_, 4)};
  MPI_Allreduce(MPI_IN_PLACE, mins, 2, MPI_DOUBLE, MPI_MIN, ctx_.comm());
  d.min_density = mins[0];
  d.min_pressure = mins[1];
  return d;
}

double EulerSolver::l1_difference(const EulerSolver& other, int var) const {
  double s = ke::l1_difference(u_, other.u_, grid_, var);
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  return s / static_cast<double>(cells_[0] * cells_[1] * cells_[2]);
}

}  // namespace stratus
