// Device kernels of `stratus post` (post-processing of trajectories): the pair-distance
// histogram of the radial distribution function and the mean-square displacement sums.
// Pure Kokkos: no MPI, no I/O.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

#include <cstdint>

namespace stratus::kernels::analysis {

/// Positions (or unwrapped positions) of one frame, row = atom.
using Positions = Kokkos::View<Real* [3], Kokkos::LayoutRight, DevMemSpace>;
/// Atom types of one frame, row = atom (0-based).
using Species = Kokkos::View<int*, DevMemSpace>;
/// Unwrapped positions of every frame: (frames, atoms, 3).
using Trajectory = Kokkos::View<Real** [3], Kokkos::LayoutRight, DevMemSpace>;
/// Histogram counts (one per bin).
using Counts = Kokkos::View<std::int64_t*, DevMemSpace>;

/// What the pair histogram needs besides the positions, passed by value to the kernel.
struct PairHistogramParams {
  Kokkos::Array<Real, 3> box{};  ///< edges of the periodic orthorhombic box
  Real rmax = 0;                 ///< largest distance binned (<= half the shortest edge)
  int bins = 0;                  ///< bins of width rmax / bins
  int type_a = -1;               ///< first atom of a pair has this type (-1: any)
  int type_b = -1;               ///< second atom of a pair has this type (-1: any)
};

/// Minimum-image component of a separation along an axis of length `edge`.
KOKKOS_INLINE_FUNCTION Real minimum_image(Real d, Real edge) {
  const Real s = d / edge;
  return d -
         edge * static_cast<Real>(static_cast<std::int64_t>(s + (s >= 0 ? Real(0.5) : Real(-0.5))));
}

/// Counts the ordered pair (i, j) in its bin of `counts` when j != i, type(j) matches type_b and
/// the minimum-image distance is below rmax (rmax2 = rmax^2, inv_dr = bins / rmax). Atomic.
KOKKOS_INLINE_FUNCTION void count_pair(const Positions& x, const Species& type,
                                       const PairHistogramParams& p, const Real rmax2,
                                       const Real inv_dr, const std::int64_t i,
                                       const std::int64_t j, const Counts& counts) {
  if (j == i || (p.type_b >= 0 && type(j) != p.type_b)) return;
  Real r2 = 0;
  for (int a = 0; a < 3; ++a) {
    const Real d = minimum_image(x(j, a) - x(i, a), p.box[a]);
    r2 += d * d;
  }
  if (r2 >= rmax2) return;
  auto bin = static_cast<int>(kmath::sqrt(r2) * inv_dr);
  if (bin >= p.bins) bin = p.bins - 1;
  Kokkos::atomic_add(&counts(bin), std::int64_t{1});
}

/// Adds to `counts` every ordered pair (i, j), i != j, with type(i) matching type_a and type(j)
/// matching type_b, whose minimum-image distance r is below rmax, in bin floor(r / dr). An
/// unordered pair of equal types is counted twice (once from each side), so counts / N_a is the
/// mean number of neighbours per atom. O(N^2): one thread per atom i, atomics on the bins.
inline void pair_histogram(const Positions& x, const Species& type, const PairHistogramParams& p,
                           const Counts& counts) {
  const auto n = static_cast<std::int64_t>(x.extent(0));
  const Real rmax2 = p.rmax * p.rmax;
  const Real inv_dr = static_cast<Real>(p.bins) / p.rmax;
  Kokkos::parallel_for(
      "analysis::pair_histogram", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        if (p.type_a >= 0 && type(i) != p.type_a) return;
        for (std::int64_t j = 0; j < n; ++j) count_pair(x, type, p, rmax2, inv_dr, i, j, counts);
      });
}

/// Cells per axis for pair_histogram_cells: floor(edge / rmax), so that every pair closer than
/// rmax lies in the same or an adjacent cell. Cells pay only with at least 3 along each axis.
inline Kokkos::Array<int, 3> histogram_cells(const PairHistogramParams& p) {
  Kokkos::Array<int, 3> n{};
  for (int a = 0; a < 3; ++a) n[a] = static_cast<int>(p.box[a] / p.rmax);
  return n;
}

/// The same counts as pair_histogram, with the atoms binned into cells (histogram_cells(p),
/// each >= 3): O(N rmax^3 rho) instead of O(N^2). A counting sort on the device (atomics and a
/// scan) orders the atoms by cell; one thread per atom i visits the 27 cells around its own.
inline void pair_histogram_cells(const Positions& x, const Species& type,
                                 const PairHistogramParams& p, const Counts& counts) {
  const auto n = static_cast<std::int64_t>(x.extent(0));
  const Kokkos::Array<int, 3> nc = histogram_cells(p);
  const std::int64_t ncells = std::int64_t{nc[0]} * nc[1] * nc[2];
  Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace> cell("analysis::cell", n);
  Kokkos::View<std::int64_t*, DevMemSpace> start("analysis::cell_start", ncells + 1);
  Kokkos::View<std::int64_t*, DevMemSpace> fill("analysis::cell_fill", ncells);
  Kokkos::View<std::int64_t*, DevMemSpace> sorted("analysis::sorted", n);
  const auto box = p.box;
  Kokkos::parallel_for(
      "analysis::cell_of", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        int c[3];
        for (int a = 0; a < 3; ++a) {
          Real s = x(i, a) / box[a];
          s -= static_cast<Real>(static_cast<std::int64_t>(s));  // fractional part, in (-1, 1)
          if (s < 0) s += 1;
          c[a] = static_cast<int>(s * nc[a]);
          if (c[a] >= nc[a]) c[a] = nc[a] - 1;
          cell(i, a) = c[a];
        }
        Kokkos::atomic_add(&start((std::int64_t{c[0]} * nc[1] + c[1]) * nc[2] + c[2] + 1),
                           std::int64_t{1});
      });
  Kokkos::parallel_scan(
      "analysis::cell_scan", Kokkos::RangePolicy<DevExecSpace>(0, ncells + 1),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& sum, const bool final) {
        sum += start(k);
        if (final) start(k) = sum;
      });
  Kokkos::parallel_for(
      "analysis::cell_sort", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t c = (std::int64_t{cell(i, 0)} * nc[1] + cell(i, 1)) * nc[2] + cell(i, 2);
        sorted(start(c) + Kokkos::atomic_fetch_add(&fill(c), std::int64_t{1})) = i;
      });
  const Real rmax2 = p.rmax * p.rmax;
  const Real inv_dr = static_cast<Real>(p.bins) / p.rmax;
  Kokkos::parallel_for(
      "analysis::pair_histogram_cells", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        if (p.type_a >= 0 && type(i) != p.type_a) return;
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int d[3] = {dx, dy, dz};
              int c[3];
              for (int a = 0; a < 3; ++a) c[a] = (cell(i, a) + d[a] + nc[a]) % nc[a];
              const std::int64_t k = (std::int64_t{c[0]} * nc[1] + c[1]) * nc[2] + c[2];
              for (std::int64_t s = start(k); s < start(k + 1); ++s)
                count_pair(x, type, p, rmax2, inv_dr, i, sorted(s), counts);
            }
      });
}

/// Sum over time origins o in [0, frames - lag) and atoms of |x(o + lag) - x(o)|^2 (unwrapped
/// positions). Divide by (frames - lag) * atoms for the mean-square displacement at that lag.
inline Real displacement_sum(const Trajectory& x, std::int64_t lag) {
  const auto frames = static_cast<std::int64_t>(x.extent(0));
  const auto atoms = static_cast<std::int64_t>(x.extent(1));
  Real sum = 0;
  if (lag >= frames) return sum;
  Kokkos::parallel_reduce(
      "analysis::displacement_sum",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<2>>({0, 0}, {frames - lag, atoms}),
      KOKKOS_LAMBDA(const std::int64_t o, const std::int64_t i, Real& acc) {
        for (int a = 0; a < 3; ++a) {
          const Real d = x(o + lag, i, a) - x(o, i, a);
          acc += d * d;
        }
      },
      sum);
  return sum;
}

/// Unwraps frame f in place from frame f - 1 (wrapped positions, no image data): each
/// displacement between consecutive frames is taken as its minimum image. Valid while no atom
/// moves more than half a box edge between two frames.
inline void unwrap_from_previous(const Trajectory& x, std::int64_t f, Kokkos::Array<Real, 3> box) {
  const auto atoms = static_cast<std::int64_t>(x.extent(1));
  Kokkos::parallel_for(
      "analysis::unwrap", Kokkos::RangePolicy<DevExecSpace>(0, atoms),
      KOKKOS_LAMBDA(const std::int64_t i) {
        for (int a = 0; a < 3; ++a)
          x(f, i, a) = x(f - 1, i, a) + minimum_image(x(f, i, a) - x(f - 1, i, a), box[a]);
      });
}

}  // namespace stratus::kernels::analysis
