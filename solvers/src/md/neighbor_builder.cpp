// The host side of the neighbour lists: sizes, launches, retries (neighbor_builder.hpp).
#include "stratus/solvers/md/neighbor_builder.hpp"

#include <stdexcept>

namespace stratus::md {

namespace kmd = kernels::md;

void NeighborBuilder::build(const Vectors& x, const Ids& id, int nlocal, int nall, Real cutoff,
                            NeighborList& list) {
  if (!size_list(nlocal, nall, cutoff, list)) return;
  bin(x, id, nall, cutoff);
  for (;;) {
    if (keys_.extent(0) < list.entries.extent(0) || keys_.extent(1) < list.entries.extent(1))
      Kokkos::realloc(keys_, list.entries.extent(0), list.entries.extent(1));
    kmd::fill_full_rows(x, id, nlocal, cutoff * cutoff, binned_, list, keys_);
    const int needed = list.max_count();
    if (needed <= static_cast<int>(list.entries.extent(1))) break;
    grow_rows(list, needed);
  }
}

void NeighborBuilder::build_half(const Vectors& x, const Ids& id, int nlocal, int nall, Real cutoff,
                                 NeighborList& list) {
  if (!size_list(nlocal, nall, cutoff, list)) return;
  bin(x, id, nall, cutoff);
  for (;;) {
    kmd::fill_half_rows(x, id, nlocal, cutoff * cutoff, binned_, list);
    const int needed = list.max_count();
    if (needed <= static_cast<int>(list.entries.extent(1))) break;
    grow_rows(list, needed);
  }
}

void NeighborBuilder::bin(const Vectors& x, const Ids& id, int nall, Real cutoff) {
  binned_.grid = kmd::bin_grid(kmd::bounding_box(x, nall), cutoff, nall);
  const auto& nb = binned_.grid.nb;
  const int nbins = nb[0] * nb[1] * nb[2];
  if (static_cast<int>(binned_.bin_count.extent(0)) < nbins) {
    Kokkos::realloc(binned_.bin_count, nbins);
    Kokkos::realloc(binned_.bin_start, nbins + 1);
  }
  if (static_cast<int>(binned_.atom_bin.extent(0)) < nall) {
    const int rows = nall + nall / 8 + 16;
    Kokkos::realloc(binned_.atom_bin, rows);
    Kokkos::realloc(binned_.bin_atoms, rows);
    Kokkos::realloc(binned_.x_binned, rows);
    Kokkos::realloc(binned_.id_binned, rows);
  }
  kmd::sort_into_bins(x, id, nall, binned_);
}

bool NeighborBuilder::size_list(int nlocal, int nall, Real cutoff, NeighborList& list) {
  if (!(cutoff > 0)) throw std::invalid_argument("NeighborBuilder: cutoff must be positive");
  if (static_cast<int>(list.count.extent(0)) < nlocal)
    Kokkos::realloc(list.count, nlocal + nlocal / 8 + 16);
  if (static_cast<int>(list.entries.extent(0)) < nlocal)
    Kokkos::realloc(list.entries, nlocal + nlocal / 8 + 16, list.entries.extent(1));
  list.nlocal = nlocal;
  list.nall = nall;
  return nlocal > 0;
}

void NeighborBuilder::grow_rows(NeighborList& list, int needed) {
  Kokkos::realloc(list.entries, list.entries.extent(0), needed + needed / 8 + 8);
}

void snapshot_positions(const kmd::Vectors& x, kmd::Vectors& x_at_build, int n) {
  if (static_cast<int>(x_at_build.extent(0)) < n) Kokkos::realloc(x_at_build, n);
  kmd::copy_positions(x, x_at_build, n);
}

}  // namespace stratus::md
