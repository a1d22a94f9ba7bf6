// Verlet neighbour lists of the md solver: the host side of kernels/md/neighbor.hpp. The
// builder owns the binning scratch and the lists' storage (grown only, reused across builds),
// launches the binning and row kernels, and redoes the rows, longer, when an atom has more
// neighbours than they hold.
#pragma once

#include "stratus/kernels/md/neighbor.hpp"

namespace stratus::md {

class NeighborBuilder {
 public:
  /// Half lists are compact (kernels::md::fill_half_rows_compact) on host back-ends.
  static constexpr bool kCompactHalfRows =
      Kokkos::SpaceAccessibility<DevExecSpace, Kokkos::HostSpace>::accessible;

  using Vectors = kernels::md::Vectors;
  using Ids = kernels::md::Ids;
  using NeighborList = kernels::md::NeighborList;

  /// Full list: for every i < nlocal, all j in [0, nall), j != i, with |x_i - x_j|^2 <
  /// cutoff^2, sorted by (id, x, index) (kernels::md::fill_full_rows). Throws
  /// std::invalid_argument unless cutoff > 0.
  void build(const Vectors& x, const Ids& id, int nlocal, int nall, Real cutoff,
             NeighborList& list);

  /// Half list: every pair of atoms closer than `cutoff` with at least one local atom, listed
  /// once ("Newton on"): a pair of local atoms i, j under the one local_pair_is_mine picks, a
  /// local atom i with a ghost j when j is upper (`ghost_side`, as the ghost plan set it: of the
  /// two copies of a pair across a subdomain face, exactly one is upper, so the pair is listed
  /// on exactly one rank; the force on the ghost must be sent back to its owner,
  /// AtomExchange::reverse_forces). A periodic image of an atom must lie at least `cutoff` away.
  /// Lists are in binning order, NOT sorted: sums over them depend on the decomposition and the
  /// atom order. Throws std::invalid_argument unless cutoff > 0.
  void build_half(const Vectors& x, const kernels::md::GhostSides& ghost_side, int nlocal, int nall,
                  Real cutoff, NeighborList& list);

  /// Sorts atoms [0, nall) into bins for a search within `cutoff` (binned() then holds them),
  /// all of them or (with a non-empty `ghost_side`) the local atoms and upper ghosts.
  void bin(const Vectors& x, const kernels::md::GhostSides& ghost_side, int nlocal, int nall,
           Real cutoff);
  [[nodiscard]] const kernels::md::BinnedAtoms& binned() const noexcept { return binned_; }
  /// Frees the bins and scratch (the next build makes them again).
  void release() {
    binned_ = empty_bins();
    keys_ = decltype(keys_)("md::neigh_keys", 0, 0);
  }

 private:
  /// Sizes `list` for nlocal atoms; false when there is none (nothing to bin).
  static bool size_list(int nlocal, int nall, Real cutoff, NeighborList& list);
  /// Room for nlocal rows of list.width (full lists, and half lists on GPUs).
  static void fixed_rows(NeighborList& list, int nlocal);
  /// Rows long enough for `needed` neighbours, with a margin (after a fill that overflowed).
  static void wider_rows(NeighborList& list, int needed);
  /// Room for `values` entries; the old rows are released first (their contents are lost).
  static void reallocate_entries(NeighborList& list, std::size_t values);

  static kernels::md::BinnedAtoms empty_bins() {
    return {{},
            Kokkos::View<int*, DevMemSpace>("md::bin_count", 0),
            Kokkos::View<int*, DevMemSpace>("md::bin_start", 0),
            Kokkos::View<int*, DevMemSpace>("md::atom_bin", 0),
            Kokkos::View<int*, DevMemSpace>("md::bin_atoms", 0),
            kernels::md::SlotPositions("md::x_binned", 0)};
  }

  kernels::md::BinnedAtoms binned_ = empty_bins();
  Kokkos::View<GlobalId**, Kokkos::LayoutRight, DevMemSpace> keys_{"md::neigh_keys", 0, 0};
};

/// Copies positions [0, n) into x_at_build, reallocating it when it holds fewer than n rows.
void snapshot_positions(const kernels::md::Vectors& x, kernels::md::Vectors& x_at_build, int n);

}  // namespace stratus::md
