#include "stratus/core/grid_halo.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <climits>
#include <type_traits>

namespace stratus {

namespace {

static_assert(std::is_same_v<Real, double>, "GridHalo sends Reals as MPI_DOUBLE");

constexpr std::array<const char*, 3> kAxisName{"x", "y", "z"};
// Tags: one per axis and direction of travel, so that the two messages between the same pair
// of ranks (two ranks on a periodic axis, or one rank talking to itself) never mix.
constexpr int kTagBase = 4200;
int tag(int axis, int travel_dir) { return kTagBase + 2 * axis + (travel_dir > 0 ? 0 : 1); }

// A box of cells in the index space of a field with ghosts: [begin, begin + size) per axis.
struct Slab {
  std::array<std::int64_t, 3> begin{0, 0, 0};
  std::array<std::int64_t, 3> size{0, 0, 0};
  [[nodiscard]] std::int64_t cells() const { return size[0] * size[1] * size[2]; }
};

// The slab of face (axis, side) that is sent (interior layers next to the face) or received
// (the ghost layers of the face). Axes before `axis` span their ghosts too, axes after it only
// their interior: x faces first, then y faces carrying x ghosts, then z faces carrying both,
// which fills edges and corners.
Slab face_slab(const std::array<std::int64_t, 3>& n, const std::array<int, 3>& g, int axis,
               int side, bool send) {
  Slab s;
  for (int d = 0; d < 3; ++d) {
    if (d < axis) {
      s.begin[d] = 0;
      s.size[d] = n[d] + 2 * g[d];
    } else if (d > axis) {
      s.begin[d] = g[d];
      s.size[d] = n[d];
    } else {
      s.size[d] = g[d];
      if (send) {
        s.begin[d] = side == 0 ? g[d] : n[d];
      } else {
        s.begin[d] = side == 0 ? 0 : n[d] + g[d];
      }
    }
  }
  return s;
}

using SlabPolicy =
    Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<4>, Kokkos::IndexType<std::int64_t>>;

// One point per (field, cell of the slab): no integer division per element (four 64-bit
// divisions an element made packing dearer than the copy itself). On host back-ends a tile is
// one whole row along the last axis (the default tiles there are a few cells: the loop
// overhead cost more than the copy).
SlabPolicy slab_policy(int nf, const Slab& slab) {
  const std::int64_t m0 = slab.size[0], m1 = slab.size[1], m2 = slab.size[2];
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible)
    return SlabPolicy({0, 0, 0, 0}, {static_cast<std::int64_t>(nf), m0, m1, m2}, {1, 1, 1, m2});
  return SlabPolicy({0, 0, 0, 0}, {static_cast<std::int64_t>(nf), m0, m1, m2});
}

// Copies `from` into `to` (slabs of the same size) in every field of the pointer table: the
// ghosts of a face from the opposite interior layers, on an axis where the rank is its own
// neighbour.
void copy_within(const Slab& from, const Slab& to,
                 const Kokkos::View<detail::HaloFieldPointer*, DevMemSpace>& table, int nf,
                 const std::array<std::int64_t, 3>& stride) {
  const std::int64_t s0 = stride[0], s1 = stride[1], s2 = stride[2];
  const std::int64_t shift = (to.begin[0] - from.begin[0]) * s0 +
                             (to.begin[1] - from.begin[1]) * s1 +
                             (to.begin[2] - from.begin[2]) * s2;
  const std::int64_t b0 = from.begin[0], b1 = from.begin[1], b2 = from.begin[2];
  if (from.cells() == 0 || nf == 0) return;
  Kokkos::parallel_for(
      "stratus::GridHalo::copy_within", slab_policy(nf, from),
      KOKKOS_LAMBDA(const std::int64_t f, const std::int64_t i, const std::int64_t j,
                    const std::int64_t k) {
        Real* cell = table(f).data + (b0 + i) * s0 + (b1 + j) * s1 + (b2 + k) * s2;
        cell[shift] = *cell;
      });
}

// Copies between a face buffer and `slab` of every field of the pointer table, with one kernel
// over all fields: pack (fields to buffer) or unpack (buffer to fields).
void copy_slab(const Slab& slab, const Kokkos::View<Real*, DevMemSpace>& buf,
               const Kokkos::View<detail::HaloFieldPointer*, DevMemSpace>& table, int nf,
               const std::array<std::int64_t, 3>& stride, bool pack) {
  const std::int64_t s0 = stride[0], s1 = stride[1], s2 = stride[2];
  const std::int64_t b0 = slab.begin[0], b1 = slab.begin[1], b2 = slab.begin[2];
  const std::int64_t m0 = slab.size[0], m1 = slab.size[1], m2 = slab.size[2];
  if (slab.cells() == 0 || nf == 0) return;
  Kokkos::parallel_for(
      pack ? "stratus::GridHalo::pack" : "stratus::GridHalo::unpack", slab_policy(nf, slab),
      KOKKOS_LAMBDA(const std::int64_t f, const std::int64_t i, const std::int64_t j,
                    const std::int64_t k) {
        const std::int64_t idx = ((f * m0 + i) * m1 + j) * m2 + k;
        Real* cell = table(f).data + (b0 + i) * s0 + (b1 + j) * s1 + (b2 + k) * s2;
        if (pack)
          buf(idx) = *cell;
        else
          *cell = buf(idx);
      });
}

}  // namespace

GridHalo::GridHalo(const CartDecomposition& decomposition, std::array<std::int64_t, 3> local_extent,
                   int ghost_width, int max_fields, MpiTransport transport)
    : GridHalo(decomposition, local_extent,
               std::array<int, 3>{ghost_width, ghost_width, ghost_width}, max_fields, transport) {}

GridHalo::GridHalo(const CartDecomposition& decomposition, std::array<std::int64_t, 3> local_extent,
                   std::array<int, 3> ghost_widths, int max_fields, MpiTransport transport)
    : decomposition_(decomposition),
      extent_(local_extent),
      ghost_(ghost_widths),
      max_fields_(max_fields) {
  require(max_fields >= 1, fmt::format("GridHalo: max_fields {} < 1", max_fields));
  for (int a = 0; a < 3; ++a) {
    require(ghost_[a] >= 0,
            fmt::format("GridHalo: ghost width {} < 0 along {}", ghost_[a], kAxisName[a]));
    require(local_extent[a] >= 1,
            fmt::format("GridHalo: local extent {} along {} < 1", local_extent[a], kAxisName[a]));
    for (int side = 0; side < 2; ++side) {
      neighbor_[a][side] =
          ghost_[a] == 0 ? MPI_PROC_NULL : decomposition.neighbor(a, side == 0 ? -1 : 1);
    }
    const bool exchanges = neighbor_[a][0] != MPI_PROC_NULL || neighbor_[a][1] != MPI_PROC_NULL;
    self_[a] = ghost_[a] > 0 && neighbor_[a][0] == decomposition.rank() &&
               neighbor_[a][1] == decomposition.rank();
    // A neighbour's ghosts come from our interior layers: we need at least g of them.
    require(!exchanges || ghost_[a] <= local_extent[a],
            fmt::format("GridHalo: ghost width {} exceeds the {} local cells along {}", ghost_[a],
                        local_extent[a], kAxisName[a]));
  }
  requests_.fill(MPI_REQUEST_NULL);
  if (ghost_width() == 0) return;

  // Buffers only for faces that talk to a rank, sized for max_fields fields.
  for (int a = 0; a < 3; ++a) {
    for (int side = 0; side < 2; ++side) {
      if (neighbor_[a][side] == MPI_PROC_NULL || self_[a]) continue;
      const std::int64_t count = face_slab(extent_, ghost_, a, side, true).cells() * max_fields_;
      require(count <= INT_MAX,
              fmt::format("GridHalo: a face of {} values is too large for one MPI message", count));
      const std::string name =
          fmt::format("stratus::GridHalo::{}{}", kAxisName[a], side == 0 ? "lo" : "hi");
      send_[a][side] = MpiBuffer<Real>(name + ".send", transport);
      recv_[a][side] = MpiBuffer<Real>(name + ".recv", transport);
      send_[a][side].allocate(static_cast<std::size_t>(count));
      recv_[a][side].allocate(static_cast<std::size_t>(count));
    }
  }
  field_ptrs_ = Kokkos::View<detail::HaloFieldPointer*, DevMemSpace>("stratus::GridHalo::fields",
                                                                     max_fields_);
  field_ptrs_host_ = Kokkos::create_mirror_view(field_ptrs_);
}

void GridHalo::exchange(const std::vector<Field3D>& fields, const AfterAxis& after_axis) {
  start(fields, after_axis);
  finish();
}

void GridHalo::start(const std::vector<Field3D>& fields, const AfterAxis& after_axis) {
  const int nf = static_cast<int>(fields.size());
  // Checks build their message only on failure: exchange runs every step.
  if (in_flight_) throw RuntimeError("GridHalo::start: the previous exchange was not finished");
  if (nf > max_fields_) {
    throw RuntimeError(fmt::format(
        "GridHalo::exchange: {} fields, but the halo was planned for at most {}", nf, max_fields_));
  }
  nf_ = nf;
  after_axis_ = after_axis;
  in_flight_ = true;
  posted_axis_ = -1;
  if (nf == 0 || ghost_width() == 0) return;

  // Every field must have the planned shape and the same strides: one index formula fits all.
  for (int d = 0; d < 3; ++d) stride_[d] = static_cast<std::int64_t>(fields[0].stride(d));
  for (int f = 0; f < nf; ++f) {
    for (int d = 0; d < 3; ++d) {
      const auto want = static_cast<std::size_t>(extent_[d] + 2 * ghost_[d]);
      if (fields[f].extent(d) != want) {
        in_flight_ = false;
        throw RuntimeError(
            fmt::format("GridHalo::exchange: field {} has extent {} along {}, expected {}", f,
                        fields[f].extent(d), kAxisName[d], want));
      }
      if (static_cast<std::int64_t>(fields[f].stride(d)) != stride_[d]) {
        in_flight_ = false;
        throw RuntimeError(
            fmt::format("GridHalo::exchange: field {} is laid out unlike field 0", f));
      }
    }
  }

  // Upload the field pointer table only when the set of fields changed.
  bool changed = nf != field_ptrs_count_;
  for (int f = 0; f < nf && !changed; ++f) changed = field_ptrs_host_(f).data != fields[f].data();
  if (changed) {
    for (int f = 0; f < nf; ++f) field_ptrs_host_(f).data = fields[f].data();
    Kokkos::deep_copy(field_ptrs_, field_ptrs_host_);
    field_ptrs_count_ = nf;
  }
  // Post the first axis that has ghosts; finish() does the rest.
  for (int a = 0; a < 3; ++a) {
    if (ghost_[a] == 0) continue;
    post_axis(a);
    break;
  }
}

void GridHalo::finish() {
  if (!in_flight_) throw RuntimeError("GridHalo::finish: no exchange was started");
  Kokkos::Profiling::pushRegion("stratus::GridHalo::exchange");
  for (int a = 0; a < 3; ++a) {
    if (nf_ > 0 && ghost_[a] > 0) {
      if (posted_axis_ != a) post_axis(a);
      complete_axis(a);
    }
    if (after_axis_) after_axis_(a);
  }
  in_flight_ = false;
  after_axis_ = nullptr;
  Kokkos::Profiling::popRegion();
}

void GridHalo::post_axis(int a) {
  posted_axis_ = a;
  requests_.fill(MPI_REQUEST_NULL);
  count_ = {0, 0};
  if (self_[a]) {
    // Our low ghosts are our high interior layers (what the low neighbour, ourselves, would
    // send travelling +1), and the other way round.
    for (int side = 0; side < 2; ++side)
      copy_within(face_slab(extent_, ghost_, a, 1 - side, true),
                  face_slab(extent_, ghost_, a, side, false), field_ptrs_, nf_, stride_);
    return;
  }
  const int nf = nf_;
  const MPI_Comm comm = decomposition_.comm();
  for (int side = 0; side < 2; ++side) {
    if (neighbor_[a][side] == MPI_PROC_NULL) continue;
    count_[side] = static_cast<int>(face_slab(extent_, ghost_, a, side, false).cells() * nf);
    // Our low ghosts hold what the low neighbour sent travelling +1, and vice versa.
    MPI_Irecv(recv_[a][side].mpi(), count_[side], MPI_DOUBLE, neighbor_[a][side],
              tag(a, side == 0 ? 1 : -1), comm, &requests_[side]);
  }

  // Pack both faces, each with one kernel over all fields.
  for (int side = 0; side < 2; ++side) {
    if (neighbor_[a][side] == MPI_PROC_NULL) continue;
    copy_slab(face_slab(extent_, ghost_, a, side, true), send_[a][side].device(), field_ptrs_, nf_,
              stride_, true);
  }
  for (int side = 0; side < 2; ++side) {
    if (neighbor_[a][side] == MPI_PROC_NULL) continue;
    send_[a][side].to_mpi(0, static_cast<std::size_t>(count_[side]));
    MPI_Isend(send_[a][side].mpi(), count_[side], MPI_DOUBLE, neighbor_[a][side],
              tag(a, side == 0 ? -1 : 1), comm, &requests_[2 + side]);
  }
}

void GridHalo::complete_axis(int a) {
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  posted_axis_ = -1;
  // Unpack the received ghost layers; faces at a wall keep what the solver put there.
  for (int side = 0; side < 2; ++side) {
    if (neighbor_[a][side] == MPI_PROC_NULL || self_[a]) continue;
    recv_[a][side].from_mpi(0, static_cast<std::size_t>(count_[side]));
    copy_slab(face_slab(extent_, ghost_, a, side, false), recv_[a][side].device(), field_ptrs_, nf_,
              stride_, false);
  }
  // The next axis packs ghosts written here (kernels on one space run in order); the fence
  // makes the result visible to the caller however it reads the fields.
  DevExecSpace().fence();
}

}  // namespace stratus
