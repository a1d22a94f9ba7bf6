// The pair-style interface: one generic force kernel over a full neighbour list, templated on
// the pair style. A new style (e.g. Coulomb) is a new functor; integrators never change.
//
// A pair style `Pair` is a copyable struct of views and scalars with
//   KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real& fpair,
//                                          Real& energy) const;
// which, for two atoms of types ti, tj at squared distance rsq, sets fpair = F(r) / r (the
// force on i is fpair * (x_i - x_j); positive is repulsive) and energy = e(r), both zero at and
// beyond the style's cutoff for that type pair.
#pragma once

#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/types.hpp"

namespace stratus::kernels::md {

/// Potential energy and virial W = sum over pairs of r_ij . f_ij of a rank's local atoms
/// (pressure P = (2 KE + W) / (3 V) once summed over ranks). Also a Kokkos reduction value.
struct PairResult {
  Real energy = 0;
  Real virial = 0;
  /// Adds o (the reduction join).
  KOKKOS_INLINE_FUNCTION void operator+=(const PairResult& o) {
    energy += o.energy;
    virial += o.virial;
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile PairResult& o) volatile {
    energy = energy + o.energy;
    virial = virial + o.virial;
  }
};

/// SETS f(i, .) for every local atom i < nlocal to the sum, in list order, of the pair forces
/// of its full neighbour list (no atomics: each pair is visited from both sides, so ghosts need
/// no reverse communication). Returns sum_i 1/2 sum_j e_ij and sum_i 1/2 sum_j r_ij . f_ij.
template <class Pair>
PairResult compute_pair_forces(const Pair& pair, const Vectors& x, const Types& type, int nlocal,
                               const NeighborList& list, const Vectors& f) {
  const Pair p = pair;
  const auto count = list.count;
  const auto entries = list.entries;
  PairResult result;
  Kokkos::parallel_reduce(
      "md::compute_pair_forces", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, PairResult& acc) {
        const Real xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
        const int ti = type(i);
        Real fx = 0, fy = 0, fz = 0, e = 0, w = 0;
        const int n = count(i);
        for (int k = 0; k < n; ++k) {
          const int j = entries(i, k);
          const Real dx = xi - x(j, 0), dy = yi - x(j, 1), dz = zi - x(j, 2);
          const Real rsq = dx * dx + dy * dy + dz * dz;
          Real fpair = 0, eij = 0;
          p(rsq, ti, type(j), fpair, eij);
          fx += dx * fpair;
          fy += dy * fpair;
          fz += dz * fpair;
          e += eij;
          w += rsq * fpair;
        }
        f(i, 0) = fx;
        f(i, 1) = fy;
        f(i, 2) = fz;
        acc.energy += Real(0.5) * e;
        acc.virial += Real(0.5) * w;
      },
      result);
  return result;
}

}  // namespace stratus::kernels::md
