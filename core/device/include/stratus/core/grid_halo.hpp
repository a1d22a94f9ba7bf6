// Ghost-cell exchange for block-decomposed 3D grids: planned once, executed every step.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/mpi_buffer.hpp"
#include "stratus/core/types.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
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
/// the device, and MPI reads them there or through host copies, as `transport` says. Along an
/// axis where the rank is its own neighbour on both sides, one kernel per face copies the
/// opposite interior layers into the ghosts directly.
///
/// Ghost widths may differ per axis; an axis of width 0 has no ghosts and is never exchanged
/// (1D and 2D grids are 3D grids of extent 1 and width 0 in the unused axes). The exchange is
/// split-phase: start() posts the first exchanged axis (receives, pack kernel, sends) and
/// returns, so that work on interior cells can run while messages travel; finish() completes
/// it and exchanges the remaining axes in order (each needs the ghosts of the one before to
/// fill edges and corners). `after_axis(a)` runs once the ghosts of axis a are in, before the
/// next axis is packed: a solver fills its physical boundaries there, so that wall ghosts
/// reach edges and corners too.
class GridHalo {
 public:
  /// Callback run after each axis (0, 1, 2) is exchanged; may be empty.
  using AfterAxis = std::function<void(int axis)>;

  GridHalo(const CartDecomposition& decomposition, std::array<std::int64_t, 3> local_extent,
           int ghost_width, int max_fields, MpiTransport transport);
  /// Per-axis ghost widths (0: no ghosts along that axis).
  GridHalo(const CartDecomposition& decomposition, std::array<std::int64_t, 3> local_extent,
           std::array<int, 3> ghost_widths, int max_fields, MpiTransport transport);

  /// Exchanges the ghost layers of `fields` (at most `max_fields`, all of the planned shape).
  /// Collective over the decomposition's communicator. Same as start() then finish().
  void exchange(const std::vector<Field3D>& fields, const AfterAxis& after_axis = {});

  /// Posts the exchange of the first axis with ghosts and returns; the fields' interior may be
  /// read (not written) until finish(). Collective.
  void start(const std::vector<Field3D>& fields, const AfterAxis& after_axis = {});
  /// Completes the exchange begun by start(). Collective.
  void finish();

  /// The largest ghost width of the three axes.
  [[nodiscard]] int ghost_width() const noexcept {
    return std::max(ghost_[0], std::max(ghost_[1], ghost_[2]));
  }

 private:
  void post_axis(int a);
  void complete_axis(int a);

  const CartDecomposition& decomposition_;
  std::array<std::int64_t, 3> extent_;
  std::array<int, 3> ghost_;
  int max_fields_;
  // The exchange in flight: its field count, callback, strides, the axis posted and requests.
  int nf_ = 0;
  AfterAxis after_axis_;
  std::array<std::int64_t, 3> stride_{};
  int posted_axis_ = -1;
  bool in_flight_ = false;
  std::array<MPI_Request, 4> requests_{};
  std::array<int, 2> count_{};
  // send/recv buffers per axis and side
  std::array<std::array<MpiBuffer<Real>, 2>, 3> send_, recv_;
  // neighbour rank per axis and side (MPI_PROC_NULL at a non-periodic wall)
  std::array<std::array<int, 2>, 3> neighbor_{};
  // axes on which this rank is its own neighbour on both sides (periodic, one rank along it):
  // ghosts are copied from the opposite interior layers, with no buffer and no message
  std::array<bool, 3> self_{};
  // table of the data pointers of the fields of the last exchange, on the device and the host
  Kokkos::View<detail::HaloFieldPointer*, DevMemSpace> field_ptrs_;
  HostMirrorOf<Kokkos::View<detail::HaloFieldPointer*, DevMemSpace>> field_ptrs_host_;
  int field_ptrs_count_ = 0;  // entries of the table that are valid on the device
};

}  // namespace stratus
