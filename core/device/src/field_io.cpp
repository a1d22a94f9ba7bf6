#include "stratus/core/field_io.hpp"

#include <memory>
#include <type_traits>
#include <utility>

namespace stratus {

namespace {

using HostBox = Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace,
                             Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using DeviceBox = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using Staging = Kokkos::View<double*, DevMemSpace>;

constexpr bool kHostAccessible =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible;

auto box_of(const Field3D& f, const GridArray::Index& lo, const GridArray::Index& n) {
  return Kokkos::subview(f, std::make_pair(lo[0], lo[0] + n[0]),
                         std::make_pair(lo[1], lo[1] + n[1]), std::make_pair(lo[2], lo[2] + n[2]));
}

/// A contiguous device view of shape n over the (grown when too small) staging buffer.
DeviceBox staging_box(Staging& staging, const GridArray::Index& n) {
  const std::size_t size = n[0] * n[1] * n[2];
  if (staging.extent(0) < size)
    staging = Staging(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stratus::field_io"), size);
  return DeviceBox(staging.data(), n[0], n[1], n[2]);
}

}  // namespace

GridArray grid_array(const Field3D& field) {
  GridArray a;
  a.extent = {field.extent(0), field.extent(1), field.extent(2)};
  auto staging = std::make_shared<Staging>();
  a.get = [field, staging](GridArray::Index lo, GridArray::Index n, double* host) {
    const HostBox out(host, n[0], n[1], n[2]);
    if constexpr (kHostAccessible) {
      Kokkos::deep_copy(out, box_of(field, lo, n));
    } else {
      const DeviceBox buffer = staging_box(*staging, n);
      Kokkos::deep_copy(buffer, box_of(field, lo, n));
      Kokkos::deep_copy(out, buffer);
    }
  };
  a.put = [field, staging](GridArray::Index lo, GridArray::Index n, const double* host) {
    const HostBox in(const_cast<double*>(host), n[0], n[1], n[2]);
    if constexpr (kHostAccessible) {
      Kokkos::deep_copy(box_of(field, lo, n), in);
    } else {
      const DeviceBox buffer = staging_box(*staging, n);
      Kokkos::deep_copy(buffer, in);
      Kokkos::deep_copy(box_of(field, lo, n), buffer);
    }
  };
  return a;
}

}  // namespace stratus
