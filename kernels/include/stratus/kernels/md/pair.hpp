// The pair-style interface: one generic force kernel over a full neighbour list, templated on
// the pair style. A new style (e.g. Coulomb) is a new functor; integrators never change.
//
// A pair style `Pair` is a copyable struct of views and scalars with
//   KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real& fpair,
//                                          Real& energy) const;
// which, for two atoms of types ti, tj at squared distance rsq, sets fpair = F(r) / r (the
// force on i is fpair * (x_i - x_j); positive is repulsive) and energy = e(r), both zero at and
// beyond the style's cutoff for that type pair.
//
// Charged styles (Coulomb terms) declare `static constexpr bool kCharged = true` and take the
// product of the two charges as well:
//   KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real qiqj, Real& fpair,
//                                          Real& evdwl, Real& ecoul) const;
// the kernels then read the atoms' charges (the `q` argument) and sum the two energies apart.
//
// Optional fast path: when an ADL-visible `uniform_form(const Pair&)` returns a non-empty
// std::optional<U> (U another Pair that reads no per-type table, valid when every type pair
// has the same coefficients, e.g. one atom type), the kernels run with U instead, so no table
// is re-read per pair. LJCut's hook lives here (it should move to lj_cut.hpp).
//
// Two list modes: compute_pair_forces over the full lists of stratus::md::NeighborBuilder::build
// (bitwise reproducible whatever the decomposition) and compute_pair_forces_half over the half
// lists of stratus::md::NeighborBuilder::build_half (each pair once over all ranks, ghost forces
// sent back to their owners: about half the work on CPUs; sums in binning order, so not bitwise
// reproducible across decompositions or atom orders). On host back-ends the half-list kernel works
// in batches of neighbours so that the pair style is evaluated in vectorised loops.
#pragma once

#include "stratus/kernels/md/lj_cut.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/types.hpp"

#include <Kokkos_ScatterView.hpp>

#include <optional>
#include <utility>

namespace stratus::kernels::md {

/// Potential energy and the diagonal of the virial tensor, W_aa = sum over pairs of
/// r_ij,a f_ij,a (a = x, y, z; the scalar virial r_ij . f_ij is their sum), of a rank's local
/// atoms (pressure tensor P_aa = (2 KE_aa + W_aa) / V once summed over ranks). Also a Kokkos
/// reduction value.
struct PairResult {
  Real energy = 0;  ///< van der Waals (all of it for uncharged styles)
  Real virial[3] = {0, 0, 0};
  Real coul = 0;  ///< Coulomb energy of charged styles
  /// Adds o (the reduction join).
  KOKKOS_INLINE_FUNCTION void operator+=(const PairResult& o) {
    energy += o.energy;
    for (int a = 0; a < 3; ++a) virial[a] += o.virial[a];
    coul += o.coul;
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile PairResult& o) volatile {
    energy = energy + o.energy;
    for (int a = 0; a < 3; ++a) virial[a] = virial[a] + o.virial[a];
    coul = coul + o.coul;
  }
};

/// True for pair styles with a Coulomb term (they take q_i q_j).
template <class Pair>
inline constexpr bool is_charged_v = requires {
  Pair::kCharged;
};

/// Evaluates `p` for a pair: charged styles with qiqj, others without; ecoul stays 0 for those.
template <class Pair>
KOKKOS_INLINE_FUNCTION void evaluate_pair(const Pair& p, Real rsq, int ti, int tj, Real qiqj,
                                          Real& fpair, Real& evdwl, Real& ecoul) {
  if constexpr (is_charged_v<Pair>) {
    p(rsq, ti, tj, qiqj, fpair, evdwl, ecoul);
  } else {
    (void)qiqj;
    p(rsq, ti, tj, fpair, evdwl);
    ecoul = 0;
  }
}

/// LJCut with the coefficients of one type pair held as scalars (LJCut::operator() for types
/// that all share them).
struct LJCutUniform {
  Real lj1, lj2, lj3, lj4, cutsq, offset;
  KOKKOS_INLINE_FUNCTION Real reach_sq() const { return cutsq; }
  /// As LJCut::operator(), ignoring the types.
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int, int, Real& fpair, Real& energy) const {
    const bool in = rsq < cutsq;
    const Real r2inv = 1 / rsq;
    const Real r6inv = r2inv * r2inv * r2inv;
    fpair = in ? r6inv * (lj1 * r6inv - lj2) * r2inv : Real(0);
    energy = in ? r6inv * (lj3 * r6inv - lj4) - offset : Real(0);
  }
};

/// The uniform form of an LJCut with one type (empty otherwise). Host call: copies 6 scalars.
inline std::optional<LJCutUniform> uniform_form(const LJCut& p) {
  if (p.ntypes != 1) return std::nullopt;
  LJCutUniform u{};
  const TypeTable* tables[6] = {&p.lj1, &p.lj2, &p.lj3, &p.lj4, &p.cutsq, &p.offset};
  Real* out[6] = {&u.lj1, &u.lj2, &u.lj3, &u.lj4, &u.cutsq, &u.offset};
  for (int k = 0; k < 6; ++k) {
    Kokkos::View<Real, Kokkos::HostSpace> h("md::lj_uniform");
    Kokkos::deep_copy(h, Kokkos::subview(*tables[k], 0, 0));
    *out[k] = h();
  }
  return u;
}

namespace detail {
/// Calls run(uniform) when pair has a non-empty uniform_form, else run(pair).
template <class Pair, class Run>
PairResult with_uniform_form(const Pair& pair, Run&& run) {
  if constexpr (requires { uniform_form(pair); }) {
    if (const auto u = uniform_form(pair)) return run(*u);
  }
  return run(pair);
}

/// The squared distance beyond which `p` is zero for every type pair: its reach_sq() where it
/// has one, else no limit.
template <class Pair>
KOKKOS_INLINE_FUNCTION Real pair_reach_sq(const Pair& p) {
  if constexpr (requires { p.reach_sq(); })
    return p.reach_sq();
  else
    return Real(1e300);
}

/// Sums over one row of a neighbour list: the force on atom i, and sum e_ij and the diagonal of
/// sum r_ij f_ij (zero unless asked for).
struct RowSums {
  Real fx = 0, fy = 0, fz = 0, energy = 0, coul = 0;
  Real virial[3] = {0, 0, 0};
};

/// A scatter target that takes nothing (rows whose neighbours get no reaction: full lists).
struct NoReaction {
  KOKKOS_INLINE_FUNCTION Real operator()(int, int) const { return 0; }
};

/// Neighbours handled per batch by the host form of the pair kernels.
inline constexpr int kPairBatch = 64;

/// One row of a neighbour list on a host thread, in batches: the neighbours' coordinates are
/// gathered into contiguous arrays, the pair style runs over them in a loop with no memory
/// access but to those arrays (so compilers vectorise it, given -fno-trapping-math), then the
/// forces are summed for i in list order and, when Reaction, subtracted from each neighbour's
/// row of fs. Sums in the same order and with the same operations as pair_row: bitwise equal.
template <bool EnergyVirial, bool Reaction, class Pair, class Force>
KOKKOS_INLINE_FUNCTION RowSums pair_row_batched(const Pair& p, const Vectors& x, const Types& type,
                                                const Charges& q, const int i, const int n,
                                                const int* const neighbors, Force& fs) {
  constexpr bool charged = is_charged_v<Pair>;
  const Real xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
  const int ti = type(i);
  const Real qi = charged ? q(i) : Real(0);
  RowSums sums;
  // Neighbours beyond every cutoff of the style (the list's skin) are dropped while gathering,
  // so that the arithmetic loop runs only on pairs that interact: they would add exact zeros
  // (x + 0 = x), so the sums are bitwise those of pair_row.
  const Real reach = pair_reach_sq(p);
  // Styles with a gathered form: row ti of their per-type-pair numbers, once per row.
  constexpr bool gathers = requires { Pair::kGathered; };
  constexpr int ng = [] {
    if constexpr (requires { Pair::kGathered; })
      return Pair::kGathered;
    else
      return 1;
  }();
  constexpr int kRowTypes = 16;  // more types: gathered per neighbour
  Real coeff[gathers ? kRowTypes : 1][ng];
  bool cached = false;
  if constexpr (gathers) {
    cached = p.type_count() <= kRowTypes;
    for (int t = 0; cached && t < p.type_count(); ++t) p.gather(ti, t, coeff[t]);
  }
  for (int k0 = 0; k0 < n; k0 += kPairBatch) {
    const int mk = n - k0 < kPairBatch ? n - k0 : kPairBatch;
    Real dx[kPairBatch], dy[kPairBatch], dz[kPairBatch], fp[kPairBatch], en[kPairBatch];
    Real qq[charged ? kPairBatch : 1], ec[charged ? kPairBatch : 1];
    // Styles with a gathered form get their type pair's numbers here, outside the arithmetic
    // loop, which then reads no table (no gathers: it vectorises on any SIMD width).
    Real tab[ng][gathers ? kPairBatch : 1];
    int tj[kPairBatch], jj[kPairBatch];
    // Raw pointers (the views' data do not move within a row), and a compaction without a branch
    // (every neighbour is written at m; m advances only for those in reach), which a skin's
    // worth of unpredictable pairs would otherwise cost in mispredictions.
    const int* row = neighbors + k0;
    const Real* xd = x.data();
    const auto sx = static_cast<std::size_t>(x.stride(0));
    const int* td = type.data();
    int m = 0;
    for (int c = 0; c < mk; ++c) {
      const int j = row[c];
      const Real* xj = xd + static_cast<std::size_t>(j) * sx;
      const Real ddx = xi - xj[0], ddy = yi - xj[1], ddz = zi - xj[2];
      dx[m] = ddx;
      dy[m] = ddy;
      dz[m] = ddz;
      jj[m] = j;
      tj[m] = td[j];
      if constexpr (charged) qq[m] = qi * q.data()[j];
      if constexpr (gathers) {
        Real own[ng];
        if (!cached) p.gather(ti, tj[m], own);
        const Real* g = cached ? &coeff[tj[m]][0] : own;
        for (int k = 0; k < ng; ++k) tab[k][m] = g[k];
      }
      m += ddx * ddx + ddy * ddy + ddz * ddz < reach ? 1 : 0;
    }
    const Pair pl = p;  // a local copy: GCC does not vectorise through the reference
    for (int c = 0; c < m; ++c) {
      const Real rsq = dx[c] * dx[c] + dy[c] * dy[c] + dz[c] * dz[c];
      Real fpair, eij;
      if constexpr (gathers) {
        Real ecoul;
        pl.gathered(rsq, tab[0][c], tab[1][c], tab[2][c], tab[3][c], tab[4][c], tab[5][c], qq[c],
                    fpair, eij, ecoul);
        ec[c] = ecoul;
      } else if constexpr (charged) {
        Real ecoul;
        pl(rsq, ti, tj[c], qq[c], fpair, eij, ecoul);
        ec[c] = ecoul;
      } else {
        pl(rsq, ti, tj[c], fpair, eij);
      }
      fp[c] = fpair;
      en[c] = eij;
    }
    for (int c = 0; c < m; ++c) {
      const Real fxj = dx[c] * fp[c], fyj = dy[c] * fp[c], fzj = dz[c] * fp[c];
      sums.fx += fxj;
      sums.fy += fyj;
      sums.fz += fzj;
      if constexpr (Reaction) {  // the pair is listed once: j, local or ghost, gets the reaction
        const int j = jj[c];
        fs(j, 0) -= fxj;
        fs(j, 1) -= fyj;
        fs(j, 2) -= fzj;
      }
      if constexpr (EnergyVirial) {
        sums.energy += en[c];
        sums.virial[0] += dx[c] * fxj;
        sums.virial[1] += dy[c] * fyj;
        sums.virial[2] += dz[c] * fzj;
        if constexpr (charged) sums.coul += ec[c];
      }
    }
  }
  return sums;
}

/// One row of a neighbour list, a neighbour at a time (the GPU form: no per-thread arrays);
/// otherwise as pair_row_batched.
template <bool EnergyVirial, bool Reaction, class Pair, class Force>
KOKKOS_INLINE_FUNCTION RowSums pair_row(const Pair& p, const Vectors& x, const Types& type,
                                        const Charges& q, const int i, const int n,
                                        const int* const neighbors, Force& fs) {
  constexpr bool charged = is_charged_v<Pair>;
  const Real xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
  const int ti = type(i);
  const Real qi = charged ? q(i) : Real(0);
  RowSums sums;
  for (int k = 0; k < n; ++k) {
    const int j = neighbors[k];
    const Real dx = xi - x(j, 0), dy = yi - x(j, 1), dz = zi - x(j, 2);
    const Real rsq = dx * dx + dy * dy + dz * dz;
    Real fpair = 0, eij = 0, ecoul = 0;
    evaluate_pair(p, rsq, ti, type(j), charged ? qi * q(j) : Real(0), fpair, eij, ecoul);
    const Real fxj = dx * fpair, fyj = dy * fpair, fzj = dz * fpair;
    sums.fx += fxj;
    sums.fy += fyj;
    sums.fz += fzj;
    if constexpr (Reaction) {
      fs(j, 0) -= fxj;
      fs(j, 1) -= fyj;
      fs(j, 2) -= fzj;
    }
    if constexpr (EnergyVirial) {
      sums.energy += eij;
      sums.virial[0] += dx * fxj;
      sums.virial[1] += dy * fyj;
      sums.virial[2] += dz * fzj;
      sums.coul += ecoul;
    }
  }
  return sums;
}

#if defined(STRATUS_HOST_AVX2)
/// pair_row_batched compiled for AVX2 (STRATUS_AVX2_TARGET: the same bits as the default build),
/// its loops over a batch 4 doubles wide.
template <bool EnergyVirial, bool Reaction, class Pair, class Force>
STRATUS_AVX2_TARGET RowSums pair_row_avx2(const Pair& p, const Vectors& x, const Types& type,
                                          const Charges& q, const int i, const int n,
                                          const int* const neighbors, Force& fs) {
  return pair_row_batched<EnergyVirial, Reaction>(p, x, type, q, i, n, neighbors, fs);
}
#endif

/// The row function of the back-end: batches on host threads (in AVX2 registers when `wide`:
/// host_vector_bytes() >= 32), one neighbour at a time on GPUs.
template <bool EnergyVirial, bool Reaction, class Pair, class Force>
KOKKOS_INLINE_FUNCTION RowSums pair_row_any(const Pair& p, const Vectors& x, const Types& type,
                                            const Charges& q, const int i, const int n,
                                            const int* const neighbors, Force& fs,
                                            [[maybe_unused]] const bool wide) {
  if constexpr (Kokkos::SpaceAccessibility<DevExecSpace, Kokkos::HostSpace>::accessible) {
#if defined(STRATUS_HOST_AVX2)
    if (wide) return pair_row_avx2<EnergyVirial, Reaction>(p, x, type, q, i, n, neighbors, fs);
#endif
    return pair_row_batched<EnergyVirial, Reaction>(p, x, type, q, i, n, neighbors, fs);
  } else {
    return pair_row<EnergyVirial, Reaction>(p, x, type, q, i, n, neighbors, fs);
  }
}

/// compute_pair_forces with a fixed pair style (no dispatch).
template <bool EnergyVirial, class Pair>
PairResult pair_forces_full(const Pair& p, const Vectors& x, const Types& type, const Charges& q,
                            int nlocal, const NeighborList& list, const Vectors& f) {
  const NeighborList rows = list;
  const bool wide = host_vector_bytes() >= 32;
  PairResult result;
  Kokkos::parallel_reduce(
      "md::compute_pair_forces", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, PairResult& acc) {
        NoReaction none;
        const RowSums s = pair_row_any<EnergyVirial, false>(p, x, type, q, i, rows.count(i),
                                                            rows.row(i), none, wide);
        f(i, 0) = s.fx;
        f(i, 1) = s.fy;
        f(i, 2) = s.fz;
        if constexpr (EnergyVirial) {
          acc.energy += Real(0.5) * s.energy;
          for (int a = 0; a < 3; ++a) acc.virial[a] += Real(0.5) * s.virial[a];
          acc.coul += Real(0.5) * s.coul;
        }
      },
      result);
  return result;
}

/// compute_pair_forces_half with a fixed pair style and scatter kind (no dispatch).
template <bool EnergyVirial, class Pair, class Scatter>
PairResult pair_forces_half(const Pair& p, const Vectors& x, const Types& type, const Charges& q,
                            int nlocal, const NeighborList& list, Scatter scatter) {
  const NeighborList rows = list;
  const bool wide = host_vector_bytes() >= 32;
  PairResult result;
  Kokkos::parallel_reduce(
      "md::compute_pair_forces_half", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, PairResult& acc) {
        auto fs = scatter.access();
        const RowSums s = pair_row_any<EnergyVirial, true>(p, x, type, q, i, rows.count(i),
                                                           rows.row(i), fs, wide);
        fs(i, 0) += s.fx;
        fs(i, 1) += s.fy;
        fs(i, 2) += s.fz;
        if constexpr (EnergyVirial) {
          acc.energy += s.energy;
          for (int a = 0; a < 3; ++a) acc.virial[a] += s.virial[a];
          acc.coul += s.coul;
        }
      },
      result);
  return result;
}

/// compute_pair_forces_half with a fixed pair style: zeroes f, then scatters into it directly
/// when one thread runs the kernel, else through per-thread copies (host threads) or atomics
/// (GPUs), Kokkos's default for the space.
template <bool EnergyVirial, class Pair>
PairResult pair_forces_half(const Pair& p, const Vectors& x, const Types& type, const Charges& q,
                            int nlocal, const NeighborList& list, const Vectors& f) {
  namespace kx = Kokkos::Experimental;
  auto fl = Kokkos::subview(f, std::make_pair(0, list.nall), Kokkos::ALL);
  Kokkos::deep_copy(fl, Real(0));
  if (DevExecSpace().concurrency() == 1) {
    kx::ScatterView<Real* [3], Kokkos::LayoutRight, DevExecSpace, kx::ScatterSum,
                    kx::ScatterNonDuplicated, kx::ScatterNonAtomic>
        direct(fl);
    return pair_forces_half<EnergyVirial>(p, x, type, q, nlocal, list, direct);
  }
  auto scatter = kx::create_scatter_view(fl);
  const auto r = pair_forces_half<EnergyVirial>(p, x, type, q, nlocal, list, scatter);
  kx::contribute(fl, scatter);
  return r;
}
}  // namespace detail

/// SETS f(i, .) for every local atom i < nlocal to the sum, in list order, of the pair forces
/// of its full neighbour list (no atomics: each pair is visited from both sides, so ghosts need
/// no reverse communication). Returns sum_i 1/2 sum_j e_ij and sum_i 1/2 sum_j r_ij,a f_ij,a, or
/// zeros without computing them when EnergyVirial is false (forces are bitwise the same).
/// Charged styles read q (the atoms' charges, ghosts included); others ignore it.
template <class Pair, bool EnergyVirial = true>
PairResult compute_pair_forces(const Pair& pair, const Vectors& x, const Types& type, int nlocal,
                               const NeighborList& list, const Vectors& f,
                               const Charges& q = Charges()) {
  return detail::with_uniform_form(pair, [&](const auto& p) {
    return detail::pair_forces_full<EnergyVirial>(p, x, type, q, nlocal, list, f);
  });
}

/// SETS f(i, .) for every atom i < list.nall from a half list
/// (stratus::md::NeighborBuilder::build_half): each listed pair adds f_ij to i and -f_ij to j,
/// local or ghost. A ghost's row then holds the reactions of the pairs listed on this rank, which
/// its owner must add to the atom (AtomExchange::reverse_forces); the local rows are complete only
/// after that. Energy and virial count every listed pair once, so summed over ranks they equal
/// compute_pair_forces's up to rounding; zeros when EnergyVirial is false. Sums run in list order
/// with per-thread copies: not bitwise reproducible across thread counts.
template <class Pair, bool EnergyVirial = true>
PairResult compute_pair_forces_half(const Pair& pair, const Vectors& x, const Types& type,
                                    int nlocal, const NeighborList& list, const Vectors& f,
                                    const Charges& q = Charges()) {
  return detail::with_uniform_form(pair, [&](const auto& p) {
    return detail::pair_forces_half<EnergyVirial>(p, x, type, q, nlocal, list, f);
  });
}

}  // namespace stratus::kernels::md
