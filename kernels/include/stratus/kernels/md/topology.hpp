// Device kernels of molecular topologies (the solver's stratus::md::MolecularTopology launches
// them): global id -> local index lookup with the closest periodic image, the local lists of
// bonded terms built from the owners' per-atom rows of global ids, the special neighbours'
// exclusion from neighbour lists and the scaling of special pairs.
//
// Per-atom rows (IdRows, runtime width): a term row is (type, id 0, ..., id N-1), type < 0 for an
// empty slot; a special row lists 1-2 partners, then 1-3, then 1-4, with cumulative counts
// nspecial(i, 0..2).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/bonded.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/kernels/md/types.hpp"

#include <cstdint>

namespace stratus::kernels::md {

using IdRows =
    Kokkos::View<std::int64_t**, Kokkos::LayoutRight, DevMemSpace, Kokkos::MemoryUnmanaged>;
using SpecialCounts = Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>;

/// Chains every local index to its global id: head(id) is one index of that id, next(index) the
/// next (or -1). head must hold -1 for every id beforehand.
inline void chain_ids(const Ids& id, int nall, const Kokkos::View<int*, DevMemSpace>& head,
                      const Kokkos::View<int*, DevMemSpace>& next) {
  Kokkos::parallel_for(
      "md::chain_ids", Kokkos::RangePolicy<DevExecSpace>(0, nall),
      KOKKOS_LAMBDA(const int i) { next(i) = Kokkos::atomic_exchange(&head(id(i)), i); });
}

/// The local index of global id g closest to atom i (-1 when g is not here).
KOKKOS_INLINE_FUNCTION int closest_image(const Vectors& x,
                                         const Kokkos::View<int*, DevMemSpace>& head,
                                         const Kokkos::View<int*, DevMemSpace>& next, int i,
                                         std::int64_t g) {
  int best = -1;
  Real best_d2 = 0;
  for (int j = head(g); j >= 0; j = next(j)) {
    const Real dx = x(j, 0) - x(i, 0), dy = x(j, 1) - x(i, 1), dz = x(j, 2) - x(i, 2);
    const Real d2 = dx * dx + dy * dy + dz * dz;
    if (best < 0 || d2 < best_d2) {
      best = j;
      best_d2 = d2;
    }
  }
  return best;
}

/// What a list build could not find: the owner's id and the missing atom's (-1: none missing).
struct MissingAtom {
  std::int64_t owner = -1, missing = -1;
};

/// Local terms of N atoms from the owned atoms' rows (`rows`, `width` terms of N + 1 ids each):
/// counts them, sizes `list` (grown only) and fills it in owner order. Returns the number of
/// terms; sets `missing` (host) to the first term, by owner id, with an atom absent here.
template <int N>
int build_terms(const IdRows& rows, int width, const Ids& id, const Vectors& x, int nlocal,
                const Kokkos::View<int*, DevMemSpace>& head,
                const Kokkos::View<int*, DevMemSpace>& next, TermList<N>& list,
                MissingAtom& missing) {
  Kokkos::View<int*, DevMemSpace> offset("md::term_offset", nlocal + 1);
  Kokkos::parallel_for(
      "md::count_terms", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        int n = 0;
        for (int k = 0; k < width; ++k) n += rows(i, k * (N + 1)) >= 0 ? 1 : 0;
        offset(i + 1) = n;
      });
  int total = 0;
  Kokkos::parallel_scan(
      "md::scan_terms", Kokkos::RangePolicy<DevExecSpace>(0, nlocal + 1),
      KOKKOS_LAMBDA(const int i, int& acc, const bool final) {
        const int v = i == 0 ? 0 : offset(i);
        acc += v;
        if (final) offset(i) = acc;
      },
      total);
  if (static_cast<int>(list.extent(0)) < total)
    list = TermList<N>(Kokkos::view_alloc(Kokkos::WithoutInitializing, list.label()),
                       total + total / 4 + 16);
  const TermList<N> out = list;
  Kokkos::View<std::int64_t[2], DevMemSpace> lost("md::term_lost");
  Kokkos::deep_copy(lost, std::int64_t(-1));
  Kokkos::parallel_for(
      "md::fill_terms", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        int t = offset(i);
        for (int k = 0; k < width; ++k) {
          const std::int64_t type = rows(i, k * (N + 1));
          if (type < 0) continue;
          out(t, 0) = static_cast<int>(type);
          for (int a = 0; a < N; ++a) {
            const std::int64_t g = rows(i, k * (N + 1) + 1 + a);
            const int j = g == id(i) ? i : closest_image(x, head, next, i, g);
            out(t, 1 + a) = j < 0 ? i : j;
            if (j < 0 && Kokkos::atomic_compare_exchange(&lost(0), std::int64_t(-1), id(i)) == -1)
              lost(1) = g;
          }
          ++t;
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lost);
  missing = {h(0), h(1)};
  return total;
}

/// Level (1, 2, 3 for 1-2, 1-3, 1-4) of global id g among atom i's special partners, 0 if none.
KOKKOS_INLINE_FUNCTION int special_level(const IdRows& special, const SpecialCounts& nspecial,
                                         int i, std::int64_t g) {
  const int n = nspecial(i, 2);
  for (int k = 0; k < n; ++k)
    if (special(i, k) == g) return k < nspecial(i, 0) ? 1 : (k < nspecial(i, 1) ? 2 : 3);
  return 0;
}

/// Special pairs left out of cluster-pair lists (cluster.hpp; the topology computes them, scaled):
/// those of a local atom's special row (global ids, topology.hpp) at a level in `levels` (bit k:
/// level k + 1). levels == 0: none.
struct ClusterExclusions {
  IdRows special;
  SpecialCounts nspecial;
  unsigned levels = 0;
};

/// Removes from each owned atom's row of `list` the neighbours whose special level is in
/// `levels` (bit k: level k + 1), keeping the order of the others.
inline void remove_special_neighbors(const NeighborList& list, const Ids& id, const IdRows& special,
                                     const SpecialCounts& nspecial, unsigned levels, int nlocal) {
  const NeighborList rows = list;
  Kokkos::parallel_for(
      "md::exclude_special", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i) {
        const int ns = nspecial(i, 2);
        if (ns == 0) return;
        std::int64_t lo = special(i, 0), hi = lo;
        for (int k = 1; k < ns; ++k) {
          lo = special(i, k) < lo ? special(i, k) : lo;
          hi = special(i, k) > hi ? special(i, k) : hi;
        }
        int kept = 0;
        const int n = rows.count(i);
        int* const row = rows.row(i);
        for (int k = 0; k < n; ++k) {
          const int j = row[k];
          const std::int64_t g = id(j);
          const int level = g < lo || g > hi ? 0 : special_level(special, nspecial, i, g);
          if (level > 0 && ((levels >> (level - 1)) & 1u)) continue;
          row[kept++] = j;
        }
        rows.count(i) = kept;
      });
}

/// The level of atom i's k-th special partner when the pair is in `levels` and listed under i
/// (the lower id), else 0.
KOKKOS_INLINE_FUNCTION int listed_special(const IdRows& special, const SpecialCounts& nspecial,
                                          unsigned levels, const Ids& id, int i, int k) {
  const int level = k < nspecial(i, 0) ? 1 : (k < nspecial(i, 1) ? 2 : 3);
  return ((levels >> (level - 1)) & 1u) && id(i) < special(i, k) ? level : 0;
}

/// Special pairs whose level is in `levels`, each once over all ranks (under the atom of lower
/// id, which must be owned here): (i, j, level) with j the partner's image closest to i. Sizes
/// `pairs` (grown only); returns their number; `missing` as build_terms.
inline int build_special_pairs(const IdRows& special, const SpecialCounts& nspecial,
                               unsigned levels, const Ids& id, const Vectors& x, int nlocal,
                               const Kokkos::View<int*, DevMemSpace>& head,
                               const Kokkos::View<int*, DevMemSpace>& next,
                               Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>& pairs,
                               MissingAtom& missing) {
  Kokkos::View<int*, DevMemSpace> offset("md::special_offset", nlocal + 1);
  Kokkos::parallel_for(
      "md::count_special", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i) {
        int n = 0;
        for (int k = 0; k < nspecial(i, 2); ++k)
          n += listed_special(special, nspecial, levels, id, i, k) > 0 ? 1 : 0;
        offset(i + 1) = n;
      });
  int total = 0;
  Kokkos::parallel_scan(
      "md::scan_special", Kokkos::RangePolicy<DevExecSpace>(0, nlocal + 1),
      KOKKOS_LAMBDA(const int i, int& acc, const bool final) {
        acc += i == 0 ? 0 : offset(i);
        if (final) offset(i) = acc;
      },
      total);
  if (static_cast<int>(pairs.extent(0)) < total)
    pairs = Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, pairs.label()), total + total / 4 + 16);
  const auto out = pairs;
  Kokkos::View<std::int64_t[2], DevMemSpace> lost("md::special_lost");
  Kokkos::deep_copy(lost, std::int64_t(-1));
  Kokkos::parallel_for(
      "md::fill_special", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        int t = offset(i);
        for (int k = 0; k < nspecial(i, 2); ++k) {
          const int level = listed_special(special, nspecial, levels, id, i, k);
          if (level == 0) continue;
          const int j = closest_image(x, head, next, i, special(i, k));
          if (j < 0 && Kokkos::atomic_compare_exchange(&lost(0), std::int64_t(-1), id(i)) == -1)
            lost(1) = special(i, k);
          out(t, 0) = i;
          out(t, 1) = j < 0 ? i : j;
          out(t, 2) = level;
          ++t;
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lost);
  missing = {h(0), h(1)};
  return total;
}

/// ADDS, for each special pair (i, j, level) of `pairs` (pairs the neighbour lists leave out),
/// the pair style's interaction scaled by lj[level - 1] (van der Waals) and coul[level - 1]
/// (Coulomb, charged styles) to i and j; returns its energies (energy: van der Waals, coul) and
/// the virial tensor's diagonal (d_k^2 fpair per pair, d = x_i - x_j). A factor of 0 skips its term
/// (a 1-2 pair may sit well inside the LJ core).
template <class Pair>
BondedSums special_pair_forces(
    const Pair& pair, const Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>& pairs, int n,
    Kokkos::Array<Real, 3> lj, Kokkos::Array<Real, 3> coul, const Vectors& x, const Types& type,
    const Charges& q, const Vectors& f) {
  BondedSums sums;
  Kokkos::parallel_reduce(
      "md::special_pair_forces", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int p, BondedSums& acc) {
        // Everything the branches below read is named here first: nvcc's extended lambdas
        // cannot first capture a variable inside `if constexpr`.
        const Pair& style = pair;
        const Charges& charge = q;
        const Real f_lj = lj[pairs(p, 2) - 1], f_coul = coul[pairs(p, 2) - 1];
        (void)charge;
        (void)f_coul;
        const int i = pairs(p, 0), j = pairs(p, 1);
        const int ti = type(i), tj = type(j);
        const Real d[3] = {x(i, 0) - x(j, 0), x(i, 1) - x(j, 1), x(i, 2) - x(j, 2)};
        const Real rsq = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        Real fpair = 0, evdwl = 0, ecoul = 0;
        if constexpr (is_charged_v<Pair>) {
          Real fv = 0, fc = 0;
          const Real qq = charge(i) * charge(j);
          style.parts(rsq, ti, tj, qq, fv, fc, evdwl, ecoul);
          fv = f_lj == 0 ? Real(0) : f_lj * fv;
          evdwl = f_lj == 0 ? Real(0) : f_lj * evdwl;
          if constexpr (requires { Pair::kLongRange; }) {
            // The k-space sum holds the whole 1/r of every pair: the real-space part keeps
            // erfc(g r) / r and removes (1 - factor) / r, within the Coulomb cutoff.
            if (rsq < style.cut_coulsq) {
              const Real direct = style.qqrd2e * qq / kmath::sqrt(rsq);
              ecoul -= (1 - f_coul) * direct;
              fc -= (1 - f_coul) * direct / rsq;
            }
          } else {
            fc = f_coul * fc;
            ecoul = f_coul * ecoul;
          }
          fpair = fv + fc;
        } else if (f_lj != 0) {
          style(rsq, ti, tj, fpair, evdwl);
          fpair *= f_lj;
          evdwl *= f_lj;
        }
        for (int k = 0; k < 3; ++k) {
          Kokkos::atomic_add(&f(i, k), fpair * d[k]);
          Kokkos::atomic_add(&f(j, k), -fpair * d[k]);
        }
        acc.energy += evdwl;
        acc.coul += ecoul;
        for (int k = 0; k < 3; ++k) acc.virial[k] += d[k] * d[k] * fpair;
      },
      sums);
  return sums;
}

}  // namespace stratus::kernels::md
