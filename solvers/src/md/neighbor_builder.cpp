// The host side of the neighbour lists: sizes, launches, retries (neighbor_builder.hpp).
#include "stratus/solvers/md/neighbor_builder.hpp"

#include <stdexcept>

namespace stratus::md {

namespace kmd = kernels::md;

void NeighborBuilder::build(const Vectors& x, const Ids& id, int nlocal, int nall, Real cutoff,
                            NeighborList& list) {
  if (!size_list(nlocal, nall, cutoff, list)) return;
  bin(x, kmd::GhostSides("md::bin_every_atom", 0), nlocal, nall, cutoff);
  for (;;) {
    fixed_rows(list, nlocal);
    if (keys_.extent(0) < static_cast<std::size_t>(nlocal) ||
        keys_.extent(1) < static_cast<std::size_t>(list.width))
      Kokkos::realloc(keys_, nlocal, list.width);
    kmd::fill_full_rows(x, id, nlocal, cutoff * cutoff, binned_, list, keys_);
    const int needed = list.max_count();
    if (needed <= list.width) break;
    wider_rows(list, needed);
  }
}

void NeighborBuilder::build_half(const Vectors& x, const kmd::GhostSides& ghost_side, int nlocal,
                                 int nall, Real cutoff, NeighborList& list) {
  if (!size_list(nlocal, nall, cutoff, list)) return;
  bin(x, ghost_side, nlocal, nall, cutoff);
  for (;;) {
    if constexpr (kCompactHalfRows) {
      // Room for the rows as long as the last build's plus a sixteenth (a first build: an
      // estimate); a fill that needs more tells how much, and runs again.
      const std::int64_t used =
          kmd::fill_half_rows_compact(x, nlocal, cutoff * cutoff, binned_, list);
      const int needed = list.max_count();
      const bool rows_fit = needed <= list.width;
      if (!rows_fit) wider_rows(list, needed);
      if (used > static_cast<std::int64_t>(list.entries.extent(0))) {
        reallocate_entries(list, static_cast<std::size_t>(used + used / 16 + 64));
        continue;
      }
      if (rows_fit) break;
    } else {
      fixed_rows(list, nlocal);
      kmd::fill_half_rows(x, nlocal, cutoff * cutoff, binned_, list);
      const int needed = list.max_count();
      if (needed <= list.width) break;
      wider_rows(list, needed);
    }
  }
}

void NeighborBuilder::bin(const Vectors& x, const kmd::GhostSides& ghost_side, int nlocal, int nall,
                          Real cutoff) {
  binned_.grid = kmd::bin_grid(kmd::bounding_box(x, nall), cutoff, nall);
  const auto& nb = binned_.grid.nb;
  const int nbins = nb[0] * nb[1] * nb[2];
  if (static_cast<int>(binned_.bin_count.extent(0)) < nbins + 1) {
    Kokkos::realloc(binned_.bin_count, nbins + 1);
    Kokkos::realloc(binned_.bin_start, nbins + 2);
  }
  if (static_cast<int>(binned_.atom_bin.extent(0)) < nall) {
    const int rows = nall + nall / 8 + 16;
    Kokkos::realloc(binned_.atom_bin, rows);
    Kokkos::realloc(binned_.bin_atoms, rows);
  }
  const int binned = kmd::sort_into_bins(x, ghost_side, nlocal, nall, binned_);
  if (static_cast<int>(binned_.x_binned.extent(0)) < binned)
    Kokkos::realloc(binned_.x_binned, binned + binned / 8 + 16);
  kmd::order_bins(x, binned_);
}

bool NeighborBuilder::size_list(int nlocal, int nall, Real cutoff, NeighborList& list) {
  if (!(cutoff > 0)) throw std::invalid_argument("NeighborBuilder: cutoff must be positive");
  if (static_cast<int>(list.count.extent(0)) < nlocal) {
    Kokkos::realloc(list.count, nlocal + nlocal / 8 + 16);
    Kokkos::realloc(list.first, nlocal + nlocal / 8 + 16);
  }
  if (list.width == 0) list.width = 32;  // grown after a fill that needed more
  list.nlocal = nlocal;
  list.nall = nall;
  return nlocal > 0;
}

void NeighborBuilder::fixed_rows(NeighborList& list, int nlocal) {
  const auto needed = static_cast<std::size_t>(nlocal) * static_cast<std::size_t>(list.width);
  if (list.entries.extent(0) < needed) reallocate_entries(list, needed + needed / 8 + 64);
}

void NeighborBuilder::wider_rows(NeighborList& list, int needed) {
  list.width = needed + needed / 8 + 8;
}

void NeighborBuilder::reallocate_entries(NeighborList& list, std::size_t values) {
  // The old rows go first: never two lists at once. (An empty View made by label: nvcc leaves
  // View's default constructor undefined here with Kokkos 4.6.)
  list.entries = Kokkos::View<int*, DevMemSpace>("md::neigh_entries", 0);
  list.entries = Kokkos::View<int*, DevMemSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "md::neigh_entries"), values);
}

void snapshot_positions(const kmd::Vectors& x, kmd::Vectors& x_at_build, int n) {
  if (static_cast<int>(x_at_build.extent(0)) < n) Kokkos::realloc(x_at_build, n);
  kmd::copy_positions(x, x_at_build, n);
}

}  // namespace stratus::md
