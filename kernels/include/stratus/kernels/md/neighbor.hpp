// Full Verlet neighbour lists built by cell binning. Every local atom i < nlocal lists every
// atom j in [0, nall), j != i, closer than the cutoff; there is no minimum image (periodic
// images are explicit ghost atoms). Each list is sorted by global id, so sums over it run in an
// order that depends neither on the decomposition nor on thread scheduling.
#pragma once

#include "stratus/kernels/md/types.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace stratus::kernels::md {

/// Neighbours of the local atoms: entries(i, 0 .. count(i)) for i < nlocal, sorted by id.
struct NeighborList {
  Kokkos::View<int*, DevMemSpace> count{"md::neigh_count", 0};
  Kokkos::View<int**, Kokkos::LayoutRight, DevMemSpace> entries{"md::neigh_entries", 0, 0};
  int nlocal = 0;  ///< atoms with a list: [0, nlocal)

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

/// Builds neighbour lists; owns its binning scratch, reused (grown only) across builds.
class NeighborBuilder {
 public:
  /// Lists, for every i < nlocal, all j in [0, nall), j != i, with |x_i - x_j|^2 < cutoff^2,
  /// sorted by (id, x, index). Grows list.entries when an atom has more neighbours.
  void build(const Vectors& x, const Ids& id, int nlocal, int nall, Real cutoff,
             NeighborList& list) {
    if (!(cutoff > 0)) throw std::invalid_argument("NeighborBuilder: cutoff must be positive");
    if (static_cast<int>(list.count.extent(0)) < nlocal)
      Kokkos::realloc(list.count, nlocal + nlocal / 8 + 16);
    if (static_cast<int>(list.entries.extent(0)) < nlocal)
      Kokkos::realloc(list.entries, nlocal + nlocal / 8 + 16, list.entries.extent(1));
    list.nlocal = nlocal;
    if (nlocal == 0) return;

    // Bins of size >= cutoff / 2 over the bounding box (a 5 x 5 x 5 stencil then looks at
    // about half the candidates of cutoff-sized bins), at most ~ 2 nall + 64 of them. The 1e-8
    // margin keeps two atoms closer than the cutoff within two bins despite rounding.
    const BoundingBox box = bounding_box(x, nall);
    const double bin_min = 0.5 * cutoff * (1 + 1e-8);
    Kokkos::Array<int, 3> nb;
    Kokkos::Array<Real, 3> lo, inv;
    for (int d = 0; d < 3; ++d)
      nb[d] = static_cast<int>(std::clamp(std::floor((box.hi[d] - box.lo[d]) / bin_min), 1.0, 1e6));
    const double limit = 2.0 * nall + 64;  // sparse, spread-out atoms: coarser bins
    while (double(nb[0]) * nb[1] * nb[2] > limit) {
      const int d = nb[0] >= nb[1] && nb[0] >= nb[2] ? 0 : (nb[1] >= nb[2] ? 1 : 2);
      nb[d] = std::max(1, nb[d] / 2);
    }
    for (int d = 0; d < 3; ++d) {
      const double ext = box.hi[d] - box.lo[d];
      lo[d] = box.lo[d];
      inv[d] = ext > 0 ? nb[d] / ext : 0;
    }
    const int nbins = nb[0] * nb[1] * nb[2];

    // Counting sort of atoms into bins.
    if (static_cast<int>(bin_count_.extent(0)) < nbins) {
      Kokkos::realloc(bin_count_, nbins);
      Kokkos::realloc(bin_start_, nbins + 1);
    }
    if (static_cast<int>(atom_bin_.extent(0)) < nall) {
      Kokkos::realloc(atom_bin_, nall + nall / 8 + 16);
      Kokkos::realloc(bin_atoms_, nall + nall / 8 + 16);
    }
    const auto bin_count = bin_count_;
    const auto bin_start = bin_start_;
    const auto atom_bin = atom_bin_;
    const auto bin_atoms = bin_atoms_;
    Kokkos::deep_copy(bin_count, 0);
    Kokkos::parallel_for(
        "md::neigh_bin", Kokkos::RangePolicy<DevExecSpace>(0, nall), KOKKOS_LAMBDA(const int i) {
          int c[3];
          for (int d = 0; d < 3; ++d) {
            c[d] = static_cast<int>((x(i, d) - lo[d]) * inv[d]);
            c[d] = c[d] < 0 ? 0 : (c[d] >= nb[d] ? nb[d] - 1 : c[d]);
          }
          const int b = (c[0] * nb[1] + c[1]) * nb[2] + c[2];
          atom_bin(i) = b;
          Kokkos::atomic_add(&bin_count(b), 1);
        });
    Kokkos::parallel_scan(
        "md::neigh_bin_scan", Kokkos::RangePolicy<DevExecSpace>(0, nbins),
        KOKKOS_LAMBDA(const int b, int& acc, const bool final) {
          if (final) bin_start(b) = acc;
          acc += bin_count(b);
          if (final && b == nbins - 1) bin_start(nbins) = acc;
        });
    Kokkos::deep_copy(bin_count, 0);
    Kokkos::parallel_for(
        "md::neigh_bin_fill", Kokkos::RangePolicy<DevExecSpace>(0, nall),
        KOKKOS_LAMBDA(const int i) {
          const int b = atom_bin(i);
          bin_atoms(bin_start(b) + Kokkos::atomic_fetch_add(&bin_count(b), 1)) = i;
        });

    // Stencil search and per-atom insertion sort on cached ids (keys_ holds id(entries(i, k)),
    // so comparisons read contiguous memory); redone with longer rows if one overflows.
    const Real cutsq = cutoff * cutoff;
    for (;;) {
      const auto count = list.count;
      const auto entries = list.entries;
      const int maxn = static_cast<int>(entries.extent(1));
      if (keys_.extent(0) < entries.extent(0) || keys_.extent(1) < entries.extent(1))
        Kokkos::realloc(keys_, entries.extent(0), entries.extent(1));
      const auto keys = keys_;
      Kokkos::parallel_for(
          "md::neigh_build", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
          KOKKOS_LAMBDA(const int i) {
            const int b = atom_bin(i);
            const int c[3] = {b / (nb[1] * nb[2]), (b / nb[2]) % nb[1], b % nb[2]};
            const Real xi[3] = {x(i, 0), x(i, 1), x(i, 2)};
            int n = 0;
            for (int a = c[0] > 1 ? c[0] - 2 : 0; a <= c[0] + 2 && a < nb[0]; ++a)
              for (int bb = c[1] > 1 ? c[1] - 2 : 0; bb <= c[1] + 2 && bb < nb[1]; ++bb)
                for (int cc = c[2] > 1 ? c[2] - 2 : 0; cc <= c[2] + 2 && cc < nb[2]; ++cc) {
                  const int nbr = (a * nb[1] + bb) * nb[2] + cc;
                  for (int s = bin_start(nbr); s < bin_start(nbr + 1); ++s) {
                    const int j = bin_atoms(s);
                    const Real dx = xi[0] - x(j, 0), dy = xi[1] - x(j, 1), dz = xi[2] - x(j, 2);
                    if (j == i || dx * dx + dy * dy + dz * dz >= cutsq) continue;
                    if (n < maxn) {  // insert j, keeping entries(i, 0 .. n] sorted
                      const GlobalId kj = id(j);
                      int k = n;
                      while (k > 0 && (keys(i, k - 1) > kj ||
                                       (keys(i, k - 1) == kj &&
                                        neighbor_before(x, id, j, entries(i, k - 1))))) {
                        entries(i, k) = entries(i, k - 1);
                        keys(i, k) = keys(i, k - 1);
                        --k;
                      }
                      entries(i, k) = j;
                      keys(i, k) = kj;
                    }
                    ++n;
                  }
                }
            count(i) = n;
          });
      const int needed = list.max_count();
      if (needed <= maxn) break;
      Kokkos::realloc(list.entries, list.entries.extent(0), needed + needed / 8 + 8);
    }
  }

 private:
  Kokkos::View<int*, DevMemSpace> bin_count_{"md::bin_count", 0};
  Kokkos::View<int*, DevMemSpace> bin_start_{"md::bin_start", 0};
  Kokkos::View<int*, DevMemSpace> atom_bin_{"md::atom_bin", 0};
  Kokkos::View<int*, DevMemSpace> bin_atoms_{"md::bin_atoms", 0};
  Kokkos::View<GlobalId**, Kokkos::LayoutRight, DevMemSpace> keys_{"md::neigh_keys", 0, 0};
};

/// Largest squared displacement of atoms [0, nlocal) since x_at_build was taken (0 if none).
inline Real max_displacement_sq(const Vectors& x, const Vectors& x_at_build, int nlocal) {
  Real m = 0;
  Kokkos::parallel_reduce(
      "md::max_displacement_sq", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, Real& acc) {
        Real r2 = 0;
        for (int d = 0; d < 3; ++d) {
          const Real dd = x(i, d) - x_at_build(i, d);
          r2 += dd * dd;
        }
        if (r2 > acc) acc = r2;
      },
      Kokkos::Max<Real>(m));
  return nlocal > 0 ? m : 0;
}

/// Copies positions [0, n) into x_at_build, reallocating it when it holds fewer than n rows.
inline void snapshot_positions(const Vectors& x, Vectors& x_at_build, int n) {
  if (static_cast<int>(x_at_build.extent(0)) < n) Kokkos::realloc(x_at_build, n);
  const auto dst = x_at_build;
  Kokkos::parallel_for(
      "md::snapshot_positions", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) dst(i, d) = x(i, d);
      });
}

}  // namespace stratus::kernels::md
