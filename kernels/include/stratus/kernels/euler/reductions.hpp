// Reductions over the Euler state (time-step rate with the positivity check, totals, minima,
// differences) and copies between the state and plain fields (output, checkpoints). Pure Kokkos.
#pragma once

#include "stratus/kernels/euler/gas.hpp"

#include <cfloat>

namespace stratus::kernels::euler {

/// Value returned by max_rate() when a cell has a non-positive (or NaN) density or pressure.
inline constexpr Real kBadState = DBL_MAX;

/// Host form of a maximum over cells of K::rate: one (i, j) row, the rates of a chunk in a
/// vectorised loop, then their maximum.
template <class K>
struct MaxRateRow {
  K kernel;
  int k0, k1;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, Real& acc) const {
    const K g = kernel;
    constexpr int kChunk = 64;
    Real r[kChunk];
    for (int k = k0; k < k1; k += kChunk) {
      const int n = k1 - k < kChunk ? k1 - k : kChunk;
      const std::int64_t c0 = g.u.index(i, j, k);
      STRATUS_IVDEP
      for (int m = 0; m < n; ++m) r[m] = g.rate(c0 + m);
      for (int m = 0; m < n; ++m) acc = r[m] > acc ? r[m] : acc;
    }
  }
};

/// The inverse time-step limit of one cell (see max_rate), without branches.
template <bool Viscous>
struct MaxRateKernel {
  Flat u;
  Gas gas;
  Grid grid;
  Real inv2;  ///< sum over the active axes of 1 / dx_a^2

  KOKKOS_FORCEINLINE_FUNCTION Real rate(std::int64_t c) const {
    const Vars w = to_primitive(gas, load(u, c));
    const bool ok = (w[0] > 0) & (w[4] > 0) & (w[4] < kBadState);
    const Real cs = sound_speed(gas, w[0], w[4]);
    Real rate = 0;
    STRATUS_UNROLL
    for (int a = 0; a < 3; ++a)
      rate += grid.active(a) ? (kmath::fabs(w[1 + a]) + cs) / grid.dx[a] : Real(0);
    if constexpr (Viscous) {
      const Real mu = viscosity(gas, w[4] / (w[0] * gas.gas_constant));
      const Real f = gas.gamma / gas.prandtl > 1 ? gas.gamma / gas.prandtl : Real(1);
      rate += 2 * mu * f / w[0] * inv2;
    }
    return ok & (rate < kBadState) ? rate : kBadState;  // NaN included
  }
  /// Device form: one cell.
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k, Real& acc) const {
    const Real r = rate(u.index(i, j, k));
    if (r > acc) acc = r;
  }
  static Real run(const State& u, const Grid& grid, const Gas& gas) {
    const IndexBox b = interior(grid);
    Real inv2 = 0;
    for (int a = 0; a < 3; ++a)
      if (grid.active(a)) inv2 += 1 / (grid.dx[a] * grid.dx[a]);
    const MaxRateKernel kernel{flat(u), gas, grid, inv2};
    Real m = 0;
    if constexpr (kHostRows)
      Kokkos::parallel_reduce(
          "euler::max_rate",
          Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<2>>({b.lo[0], b.lo[1]},
                                                               {b.hi[0], b.hi[1]}),
          MaxRateRow<MaxRateKernel>{kernel, static_cast<int>(b.lo[2]), static_cast<int>(b.hi[2])},
          Kokkos::Max<Real>(m));
    else
      Kokkos::parallel_reduce("euler::max_rate", policy(b), kernel, Kokkos::Max<Real>(m));
    return m;
  }
};

/// Largest inverse time-step limit over the interior: sum_a (|u_a| + c) / dx_a plus, with
/// viscosity, 2 nu sum_a 1/dx_a^2 (nu = max(mu, gamma mu / Pr) / rho). kBadState when any cell
/// has rho <= 0 or p <= 0 (or NaN).
inline Real max_rate(const State& u, const Grid& grid, const Gas& gas, bool viscous) {
  return viscous ? MaxRateKernel<true>::run(u, grid, gas) : MaxRateKernel<false>::run(u, grid, gas);
}

/// Sum over the interior cells of f(i, j, k) (a device functor returning Real).
template <class F>
Real interior_sum(const char* name, const Grid& grid, F f) {
  Real s = 0;
  Kokkos::parallel_reduce(
      name, policy(interior(grid)),
      KOKKOS_LAMBDA(const int i, const int j, const int k, Real& acc) { acc += f(i, j, k); }, s);
  return s;
}

/// Sum over the interior of conserved variable v.
inline Real total(const State& u, const Grid& grid, int v) {
  return interior_sum(
      "euler::total", grid,
      KOKKOS_LAMBDA(const int i, const int j, const int k) { return u(v, i, j, k); });
}

/// Sum over the interior of the kinetic energy density |rho u|^2 / (2 rho).
inline Real kinetic_energy(const State& u, const Grid& grid) {
  return interior_sum(
      "euler::kinetic_energy", grid, KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const Real m2 = u(1, i, j, k) * u(1, i, j, k) + u(2, i, j, k) * u(2, i, j, k) +
                        u(3, i, j, k) * u(3, i, j, k);
        return Real(0.5) * m2 / u(0, i, j, k);
      });
}

/// Minimum over the interior of the density (which = 0) or the pressure (which = 4).
inline Real minimum(const State& u, const Grid& grid, const Gas& gas, int which) {
  Real m = 0;
  Kokkos::parallel_reduce(
      "euler::minimum", policy(interior(grid)),
      KOKKOS_LAMBDA(const int i, const int j, const int k, Real& acc) {
        const Real x = which == 0 ? u(0, i, j, k) : to_primitive(gas, load(u, i, j, k))[4];
        if (x < acc) acc = x;
      },
      Kokkos::Min<Real>(m));
  return m;
}

/// Sum over the interior of |a(v) - b(v)| (two states of the same block).
inline Real l1_difference(const State& a, const State& b, const Grid& grid, int v) {
  return interior_sum(
      "euler::l1_difference", grid, KOKKOS_LAMBDA(const int i, const int j, const int k) {
        return kmath::fabs(a(v, i, j, k) - b(v, i, j, k));
      });
}

/// Copies variable v of the interior of `u` into `out` (shape n, no ghosts). With `transpose`,
/// out is (nz, ny, nx) (x fastest, the order XDMF readers map to x, y, z); with `primitive`,
/// v counts primitive variables (rho, u, v, w, p).
inline void extract(const State& u, const Field3D& out, const Grid& grid, const Gas& gas, int v,
                    bool primitive, bool transpose) {
  const int g0 = grid.g[0], g1 = grid.g[1], g2 = grid.g[2];
  Kokkos::parallel_for(
      "euler::extract",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>({0, 0, 0},
                                                           {grid.n[0], grid.n[1], grid.n[2]}),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const Real x = primitive ? to_primitive(gas, load(u, i + g0, j + g1, k + g2))[v]
                                 : u(v, i + g0, j + g1, k + g2);
        if (transpose)
          out(k, j, i) = x;
        else
          out(i, j, k) = x;
      });
}

/// Inverse of extract (conserved, not transposed): out's interior variable v from `in`.
inline void insert(const Field3D& in, const State& u, const Grid& grid, int v) {
  const int g0 = grid.g[0], g1 = grid.g[1], g2 = grid.g[2];
  Kokkos::parallel_for(
      "euler::insert",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>({0, 0, 0},
                                                           {grid.n[0], grid.n[1], grid.n[2]}),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        u(v, i + g0, j + g1, k + g2) = in(i, j, k);
      });
}

}  // namespace stratus::kernels::euler
