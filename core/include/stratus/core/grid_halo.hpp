// Ghost-cell exchange for block-decomposed 3D grids: planned once, executed every step.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/types.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace stratus {

namespace detail {
/// Data pointer of one field: a device table of these lets one kernel pack all fields. At
/// namespace scope because CUDA rejects private nested types in kernel closures.
struct HaloFieldPointer {
  Real* data;
};
}  // namespace detail

/// Fills the ghost layers of cell-centred fields of shape (nx + 2g, ny + 2g, nz + 2g) from the
/// neighbouring ranks (or from this rank across a periodic axis with one rank). Axes are
/// exchanged one after the other (x, then y including x ghosts, then z including x and y
/// ghosts), so edge and corner ghosts are filled too. Faces on a non-periodic global boundary
/// are left untouched: the solver applies its boundary condition there.
///
/// All fields of one call are packed into one buffer per face by one kernel; buffers live on
/// the device and are staged through host mirrors for MPI.
class GridHalo {
 public:
  GridHalo(const CartDecomposition& decomposition, std::array<std::int64_t, 3> local_extent,
           int ghost_width, int max_fields);

  /// Exchanges the ghost layers of `fields` (at most `max_fields`, all of the planned shape).
  /// Collective over the decomposition's communicator.
  void exchange(const std::vector<Field3D>& fields);

  [[nodiscard]] int ghost_width() const noexcept { return ghost_; }

 private:
  const CartDecomposition& decomposition_;
  std::array<std::int64_t, 3> extent_;
  int ghost_;
  int max_fields_;
  // send/recv buffers per axis and side, on the device and their host mirrors
  std::array<std::array<Kokkos::View<Real*, DevMemSpace>, 2>, 3> send_, recv_;
  std::array<std::array<Kokkos::View<Real*, DevMemSpace>::HostMirror, 2>, 3> send_host_, recv_host_;
  // neighbour rank per axis and side (MPI_PROC_NULL at a non-periodic wall)
  std::array<std::array<int, 2>, 3> neighbor_{};
  // table of the data pointers of the fields of the last exchange, on the device and the host
  Kokkos::View<detail::HaloFieldPointer*, DevMemSpace> field_ptrs_;
  Kokkos::View<detail::HaloFieldPointer*, DevMemSpace>::HostMirror field_ptrs_host_;
  int field_ptrs_count_ = 0;  // entries of the table that are valid on the device
};

}  // namespace stratus
