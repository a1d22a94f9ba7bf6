// The kernels of Verlet neighbour lists built by cell binning (the solver layer's
// stratus::md::NeighborBuilder sizes their arrays and launches them); there is no minimum image
// (periodic images are explicit ghost atoms). Full lists (fill_full_rows): every local atom i <
// nlocal lists every atom j in [0, nall), j != i, closer than the cutoff, sorted by global id, so
// sums over a list run in an order that depends neither on the decomposition nor on thread
// scheduling. Half lists (fill_half_rows): each pair once over all ranks, a pair of local atoms
// under the one local_pair_is_mine picks, a local atom with a ghost when the ghost is upper
// (GhostSides: of the two copies of a pair across a subdomain face, exactly one is).
#pragma once

#include "stratus/kernels/md/types.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace stratus::kernels::md {

/// Neighbours of the local atoms: row i is entries(first(i) .. first(i) + count(i)) for
/// i < nlocal (sorted by id in a full list, in binning order in a half list). Full lists and
/// half lists on GPUs have rows of a fixed stride (first(i) = i * width); half lists on host
/// back-ends are compact (rows one after another, in the order the threads finished them: a
/// row holds exactly its neighbours).
struct NeighborList {
  Kokkos::View<int*, DevMemSpace> count{"md::neigh_count", 0};
  Kokkos::View<std::int64_t*, DevMemSpace> first{"md::neigh_first", 0};
  Kokkos::View<int*, DevMemSpace> entries{"md::neigh_entries", 0};
  /// The longest row a fill can take (the fixed stride, or the compact fill's scratch rows).
  int width = 0;
  int nlocal = 0;  ///< atoms with a list: [0, nlocal)
  int nall = 0;    ///< atoms the lists index: [0, nall)

  /// Row i (writable: the exclusions filter rows in place).
  KOKKOS_INLINE_FUNCTION int* row(const int i) const { return entries.data() + first(i); }

  /// Longest list (0 when empty).
  [[nodiscard]] int max_count() const {
    int m = 0;
    const auto c = count;
    Kokkos::parallel_reduce(
        "md::neigh_max_count", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
        KOKKOS_LAMBDA(const int i, int& acc) {
          if (c(i) > acc) acc = c(i);
        },
        Kokkos::Max<int>(m));
    return nlocal > 0 ? m : 0;
  }
};

/// Axis-aligned bounding box, usable as a Kokkos reduction value (join = union).
struct BoundingBox {
  Real lo[3], hi[3];
  /// The empty box (identity of the union).
  KOKKOS_INLINE_FUNCTION BoundingBox() {
    for (int d = 0; d < 3; ++d) {
      lo[d] = Kokkos::reduction_identity<Real>::min();
      hi[d] = Kokkos::reduction_identity<Real>::max();
    }
  }
  /// Union with o (the reduction join).
  KOKKOS_INLINE_FUNCTION void operator+=(const BoundingBox& o) {
    for (int d = 0; d < 3; ++d) {
      if (o.lo[d] < lo[d]) lo[d] = o.lo[d];
      if (o.hi[d] > hi[d]) hi[d] = o.hi[d];
    }
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile BoundingBox& o) volatile {
    for (int d = 0; d < 3; ++d) {
      if (o.lo[d] < lo[d]) lo[d] = o.lo[d];
      if (o.hi[d] > hi[d]) hi[d] = o.hi[d];
    }
  }
};

/// Bounding box of atoms [0, n) (empty box, lo > hi, when n == 0).
inline BoundingBox bounding_box(const Vectors& x, int n) {
  BoundingBox box;
  Kokkos::parallel_reduce(
      "md::bounding_box", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, BoundingBox& acc) {
        for (int d = 0; d < 3; ++d) {
          if (x(i, d) < acc.lo[d]) acc.lo[d] = x(i, d);
          if (x(i, d) > acc.hi[d]) acc.hi[d] = x(i, d);
        }
      },
      box);
  return box;
}

/// True when atom j goes before atom k in a sorted list: by id, then by coordinates, then index.
KOKKOS_INLINE_FUNCTION bool neighbor_before(const Vectors& x, const Ids& id, int j, int k) {
  if (id(j) != id(k)) return id(j) < id(k);
  for (int d = 0; d < 3; ++d)
    if (x(j, d) != x(k, d)) return x(j, d) < x(k, d);
  return j < k;
}

/// A bin grid: nb bins per dimension over [lo, lo + nb / inv), bin of cell c at
/// (c0 * nb1 + c1) * nb2 + c2.
struct NeighborBins {
  Kokkos::Array<int, 3> nb;
  Kokkos::Array<Real, 3> lo, inv;
};

/// Calls visit(s_begin, s_end) for each of the 25 runs of adjacent slots, in order, that make
/// up the 5 x 5 x 5 bins around bin b, where bin_start(b) .. bin_start(b + 1) are the slots of bin
/// b (bins stored one after another, so bins adjacent along the last axis are one run).
template <class Visit>
KOKKOS_INLINE_FUNCTION void for_each_stencil_run(const NeighborBins& g, const int b,
                                                 const Kokkos::View<int*, DevMemSpace>& bin_start,
                                                 Visit&& visit) {
  const int c[3] = {b / (g.nb[1] * g.nb[2]), (b / g.nb[2]) % g.nb[1], b % g.nb[2]};
  const int c2lo = c[2] > 1 ? c[2] - 2 : 0;
  const int c2hi = c[2] + 2 < g.nb[2] ? c[2] + 2 : g.nb[2] - 1;
  for (int a = c[0] > 1 ? c[0] - 2 : 0; a <= c[0] + 2 && a < g.nb[0]; ++a)
    for (int bb = c[1] > 1 ? c[1] - 2 : 0; bb <= c[1] + 2 && bb < g.nb[1]; ++bb) {
      const int row = (a * g.nb[1] + bb) * g.nb[2];
      visit(bin_start(row + c2lo), bin_start(row + c2hi + 1));
    }
}

/// Slot positions: xb(s, d), each coordinate contiguous over the slots (the stencil scans read
/// runs of slots).
using SlotPositions = Kokkos::View<Real* [3], Kokkos::LayoutLeft, DevMemSpace>;

/// Candidates whose distance is tested in one vectorisable loop by build_half.
inline constexpr int kNeighborBatch = 32;

/// Which of two local atoms (indices i != j) lists their pair in a half list: the lower index
/// when the indices have the same parity, the higher otherwise. Exactly one of
/// local_pair_is_mine(i, j), local_pair_is_mine(j, i) holds, and each atom keeps about half of
/// its neighbours wherever it is (plain "lower index" would leave the rows of the last atoms
/// nearly empty and make those of the first ones full: a list as wide as the fullest row).
KOKKOS_INLINE_FUNCTION bool local_pair_is_mine(const int i, const int j) {
  return (i < j) != (((i ^ j) & 1) != 0);
}

/// Atoms sorted into bins (sized by the solver's NeighborBuilder, which owns them): bin_count
/// holds at least nbins + 1 entries, bin_start nbins + 2, atom_bin and bin_atoms nall, x_binned
/// the atoms in the bins (slots before bin_start(nbins)).
struct BinnedAtoms {
  NeighborBins grid{};
  Kokkos::View<int*, DevMemSpace> bin_count;  ///< scratch of the counting sort
  /// First slot of each bin; bin nbins, after the last, holds the atoms left out (the lower
  /// ghosts of a half list), up to bin_start(nbins + 1) = nall.
  Kokkos::View<int*, DevMemSpace> bin_start;
  Kokkos::View<int*, DevMemSpace> atom_bin;   ///< bin of each atom
  Kokkos::View<int*, DevMemSpace> bin_atoms;  ///< atom of each slot
  SlotPositions x_binned;  ///< x(bin_atoms(s)): the stencil scans read it in order
};

/// The bin grid for a search within `cutoff` over `box` holding nall atoms: bins of size
/// >= cutoff / 2 (a 5 x 5 x 5 stencil then looks at about half the candidates of cutoff-sized
/// bins), at most ~ 2 nall + 64 of them. The 1e-8 margin keeps two atoms closer than the cutoff
/// within two bins despite rounding.
inline NeighborBins bin_grid(const BoundingBox& box, Real cutoff, int nall) {
  const double bin_min = 0.5 * cutoff * (1 + 1e-8);
  NeighborBins g;
  auto& nb = g.nb;
  for (int d = 0; d < 3; ++d)
    nb[d] = static_cast<int>(std::clamp(std::floor((box.hi[d] - box.lo[d]) / bin_min), 1.0, 1e6));
  const double limit = 2.0 * nall + 64;  // sparse, spread-out atoms: coarser bins
  while (double(nb[0]) * nb[1] * nb[2] > limit) {
    const int d = nb[0] >= nb[1] && nb[0] >= nb[2] ? 0 : (nb[1] >= nb[2] ? 1 : 2);
    nb[d] = std::max(1, nb[d] / 2);
  }
  for (int d = 0; d < 3; ++d) {
    const double ext = box.hi[d] - box.lo[d];
    g.lo[d] = box.lo[d];
    g.inv[d] = ext > 0 ? nb[d] / ext : 0;
  }
  return g;
}

/// Counting sort of items [0, n) by key(i) in [0, nb): the slots of bucket b are start(b) ..
/// start(b + 1) (start(nb) = n) and slot(s) is the item in slot s; within a bucket the order
/// depends on thread scheduling. count: scratch of at least nb entries.
inline void counting_sort(const Kokkos::View<int*, DevMemSpace>& key, int n, int nb,
                          const Kokkos::View<int*, DevMemSpace>& count,
                          const Kokkos::View<int*, DevMemSpace>& start,
                          const Kokkos::View<int*, DevMemSpace>& slot) {
  Kokkos::deep_copy(Kokkos::subview(count, std::make_pair(0, nb)), 0);
  Kokkos::parallel_for(
      "md::sort_count", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i) { Kokkos::atomic_add(&count(key(i)), 1); });
  Kokkos::parallel_scan(
      "md::sort_scan", Kokkos::RangePolicy<DevExecSpace>(0, nb),
      KOKKOS_LAMBDA(const int b, int& acc, const bool final) {
        if (final) start(b) = acc;
        acc += count(b);
        if (final && b == nb - 1) start(nb) = acc;
      });
  Kokkos::deep_copy(Kokkos::subview(count, std::make_pair(0, nb)), 0);
  Kokkos::parallel_for(
      "md::sort_fill", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const int b = key(i);
        slot(start(b) + Kokkos::atomic_fetch_add(&count(b), 1)) = i;
      });
}

/// Counting sort of atoms [0, nall) into the bins of b.grid: fills atom_bin, bin_start and
/// bin_atoms (bins in order, atoms by index within a bin, so the result does not depend on
/// thread scheduling). With `side` (not empty), the ghosts that are not upper go to bin nbins,
/// after the last, which no stencil visits. Returns the atoms in the bins, bin_start(nbins):
/// x_binned must hold that many rows for order_bins.
inline int sort_into_bins(const Vectors& x, const GhostSides& side, int nlocal, int nall,
                          const BinnedAtoms& b) {
  const NeighborBins g = b.grid;
  const int nbins = g.nb[0] * g.nb[1] * g.nb[2];
  const auto atom_bin = b.atom_bin;
  const bool sides = side.extent(0) > 0;
  Kokkos::parallel_for(
      "md::neigh_bin", Kokkos::RangePolicy<DevExecSpace>(0, nall), KOKKOS_LAMBDA(const int i) {
        if (sides && !paired_with_locals(side, nlocal, i)) {
          atom_bin(i) = nbins;
          return;
        }
        int c[3];
        for (int d = 0; d < 3; ++d) {
          c[d] = static_cast<int>((x(i, d) - g.lo[d]) * g.inv[d]);
          c[d] = c[d] < 0 ? 0 : (c[d] >= g.nb[d] ? g.nb[d] - 1 : c[d]);
        }
        atom_bin(i) = (c[0] * g.nb[1] + c[1]) * g.nb[2] + c[2];
      });
  counting_sort(atom_bin, nall, nbins + 1, b.bin_count, b.bin_start, b.bin_atoms);
  int binned = 0;
  Kokkos::deep_copy(binned, Kokkos::subview(b.bin_start, nbins));
  return binned;
}

/// Orders the atoms of each bin by index and copies their positions into x_binned (after
/// sort_into_bins).
inline void order_bins(const Vectors& x, const BinnedAtoms& b) {
  const NeighborBins g = b.grid;
  const int nbins = g.nb[0] * g.nb[1] * g.nb[2];
  const auto bin_start = b.bin_start;
  const auto bin_atoms = b.bin_atoms;
  const auto xb = b.x_binned;
  Kokkos::parallel_for(
      "md::neigh_bin_order", Kokkos::RangePolicy<DevExecSpace>(0, nbins),
      KOKKOS_LAMBDA(const int bin) {
        const int s0 = bin_start(bin), s1 = bin_start(bin + 1);
        for (int s = s0 + 1; s < s1; ++s) {  // insertion sort by index: bins hold few atoms
          const int a = bin_atoms(s);
          int k = s;
          for (; k > s0 && bin_atoms(k - 1) > a; --k) bin_atoms(k) = bin_atoms(k - 1);
          bin_atoms(k) = a;
        }
        for (int s = s0; s < s1; ++s)
          for (int d = 0; d < 3; ++d) xb(s, d) = x(bin_atoms(s), d);
      });
}

/// Full rows: for every i < nlocal, all j != i closer than sqrt(cutsq), sorted by (id, x,
/// index), in rows of list.width (first(i) = i * width; entries holds nlocal rows); count(i) is
/// the true number (a row that overflows must be redone with longer rows). keys: scratch of
/// nlocal x width (it holds the ids of the row, so comparisons read contiguous memory).
inline void fill_full_rows(const Vectors& x, const Ids& id, int nlocal, Real cutsq,
                           const BinnedAtoms& b, const NeighborList& list,
                           const Kokkos::View<GlobalId**, Kokkos::LayoutRight, DevMemSpace>& keys) {
  const NeighborBins bins = b.grid;
  const auto bin_start = b.bin_start;
  const auto bin_atoms = b.bin_atoms;
  const auto xb = b.x_binned;
  const auto atom_bin = b.atom_bin;
  const auto count = list.count;
  const auto first = list.first;
  const auto entries = list.entries;
  const int maxn = list.width;
  Kokkos::parallel_for(
      "md::neigh_build", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        const Real xi[3] = {x(i, 0), x(i, 1), x(i, 2)};
        const std::int64_t at = static_cast<std::int64_t>(i) * maxn;
        first(i) = at;
        int* const row = entries.data() + at;
        int n = 0;
        for_each_stencil_run(bins, atom_bin(i), bin_start, [&](const int s0, const int s1) {
          for (int s = s0; s < s1; ++s) {
            const Real dx = xi[0] - xb(s, 0), dy = xi[1] - xb(s, 1), dz = xi[2] - xb(s, 2);
            if (dx * dx + dy * dy + dz * dz >= cutsq) continue;
            const int j = bin_atoms(s);
            if (j == i) continue;
            if (n < maxn) {  // insert j, keeping row[0 .. n] sorted
              const GlobalId kj = id(j);
              int k = n;
              while (k > 0 && (keys(i, k - 1) > kj ||
                               (keys(i, k - 1) == kj && neighbor_before(x, id, j, row[k - 1])))) {
                row[k] = row[k - 1];
                keys(i, k) = keys(i, k - 1);
                --k;
              }
              row[k] = j;
              keys(i, k) = kj;
            }
            ++n;
          }
        });
        count(i) = n;
      });
}

/// One half row: the j closer than sqrt(cutsq) that i lists (local j with
/// local_pair_is_mine(i, j); ghosts: those binned, the upper ones), in binning order, written to
/// row[0 .. maxn); returns their true number (more than maxn: redo with a longer row). Writes
/// candidates that fail the test too, at the next free place (no branch on the outcome): row
/// must have room for maxn entries.
KOKKOS_INLINE_FUNCTION int half_row(const Vectors& x, const int nlocal, const int i,
                                    const Real cutsq, const BinnedAtoms& b, int* const row,
                                    const int maxn) {
  const Real xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
  // Raw pointers and a local count: the stores to the row cannot then alias the views' fields,
  // which would be reloaded for every candidate.
  const int* const slot_atom = b.bin_atoms.data();
  const auto& xb = b.x_binned;
  int n = 0;
  for_each_stencil_run(b.grid, b.atom_bin(i), b.bin_start, [&](const int s0, const int s1) {
    int k = n;
    for (int c0 = s0; c0 < s1; c0 += kNeighborBatch) {
      const int m = s1 - c0 < kNeighborBatch ? s1 - c0 : kNeighborBatch;
      Real rsq[kNeighborBatch];
      for (int c = 0; c < m; ++c) {  // distances only: vectorisable
        const Real dx = xi - xb(c0 + c, 0), dy = yi - xb(c0 + c, 1), dz = zi - xb(c0 + c, 2);
        rsq[c] = dx * dx + dy * dy + dz * dz;
      }
      for (int c = 0; c < m; ++c) {  // append without a branch on the outcome
        const int j = slot_atom[c0 + c];
        if (k < maxn) row[k] = j;
        k += static_cast<int>(rsq[c] < cutsq) &
             static_cast<int>(j >= nlocal || local_pair_is_mine(i, j));
      }
    }
    n = k;
  });
  return n;
}

/// Half rows of a fixed stride (the GPU form): row i at i * list.width (entries holds nlocal
/// rows); count(i) is the true number (a row that overflows must be redone with longer rows).
inline void fill_half_rows(const Vectors& x, int nlocal, Real cutsq, const BinnedAtoms& b,
                           const NeighborList& list) {
  const auto count = list.count;
  const auto first = list.first;
  const auto entries = list.entries;
  const int maxn = list.width;
  Kokkos::parallel_for(
      "md::neigh_build_half", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i) {
        const std::int64_t at = static_cast<std::int64_t>(i) * maxn;
        first(i) = at;
        count(i) = half_row(x, nlocal, i, cutsq, b, entries.data() + at, maxn);
      });
}

/// Atoms whose half rows one host thread fills in its scratch before it copies them out.
inline constexpr int kCompactChunk = 64;

/// Compact half rows (the host form): each thread fills the rows of kCompactChunk atoms in its
/// own scratch (rows of list.width), takes room for their neighbours at `cursor` (an atomic
/// add) and copies them there, one row after another. count(i) is the true number. Returns the
/// room the rows took: when it exceeds entries' extent nothing was copied past the end, and
/// the fill must be redone with more room (as when a row exceeds width).
inline std::int64_t fill_half_rows_compact(const Vectors& x, int nlocal, Real cutsq,
                                           const BinnedAtoms& b, const NeighborList& list) {
  const auto count = list.count;
  const auto first = list.first;
  const auto entries = list.entries;
  const int maxn = list.width;
  const auto room = static_cast<std::int64_t>(entries.extent(0));
  Kokkos::View<std::int64_t, DevMemSpace> cursor("md::neigh_cursor");
  using Policy = Kokkos::TeamPolicy<DevExecSpace>;
  using Scratch = Kokkos::View<int*, typename DevExecSpace::scratch_memory_space,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int chunks = (nlocal + kCompactChunk - 1) / kCompactChunk;
  const std::size_t bytes = Scratch::shmem_size(static_cast<std::size_t>(kCompactChunk) * maxn);
  Kokkos::parallel_for(
      "md::neigh_build_half_compact", Policy(chunks, 1).set_scratch_size(1, Kokkos::PerTeam(bytes)),
      KOKKOS_LAMBDA(const typename Policy::member_type& team) {
        const Scratch scratch(team.team_scratch(1), static_cast<std::size_t>(kCompactChunk) * maxn);
        const int i0 = team.league_rank() * kCompactChunk;
        const int i1 = i0 + kCompactChunk < nlocal ? i0 + kCompactChunk : nlocal;
        std::int64_t total = 0;
        for (int i = i0; i < i1; ++i) {
          const int n = half_row(x, nlocal, i, cutsq, b, scratch.data() + (i - i0) * maxn, maxn);
          count(i) = n;
          total += n < maxn ? n : maxn;
        }
        const std::int64_t at = Kokkos::atomic_fetch_add(&cursor(), total);
        if (at + total > room) return;
        std::int64_t k = at;
        for (int i = i0; i < i1; ++i) {
          first(i) = k;
          const int n = count(i) < maxn ? count(i) : maxn;
          const int* src = scratch.data() + (i - i0) * maxn;
          for (int c = 0; c < n; ++c) entries(k + c) = src[c];
          k += n;
        }
      });
  std::int64_t used = 0;
  Kokkos::deep_copy(used, cursor);
  return used;
}

/// Largest squared displacement of atoms [0, nlocal) since x_at_build was taken (0 if none).
/// With a box that changed since then, the build positions are first mapped affinely to the
/// current box (x_at_build * scale + offset), so that only the motion relative to the box
/// counts.
inline Real max_displacement_sq(const Vectors& x, const Vectors& x_at_build, int nlocal,
                                Kokkos::Array<Real, 3> scale = {1, 1, 1},
                                Kokkos::Array<Real, 3> offset = {0, 0, 0}) {
  Real m = 0;
  Kokkos::parallel_reduce(
      "md::max_displacement_sq", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, Real& acc) {
        Real r2 = 0;
        for (int d = 0; d < 3; ++d) {
          const Real dd = x(i, d) - (x_at_build(i, d) * scale[d] + offset[d]);
          r2 += dd * dd;
        }
        if (r2 > acc) acc = r2;
      },
      Kokkos::Max<Real>(m));
  return nlocal > 0 ? m : 0;
}

/// Copies positions [0, n) into dst (which holds at least n rows).
inline void copy_positions(const Vectors& x, const Vectors& dst, int n) {
  Kokkos::parallel_for(
      "md::snapshot_positions", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) dst(i, d) = x(i, d);
      });
}

}  // namespace stratus::kernels::md
