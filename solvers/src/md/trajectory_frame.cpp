#include "stratus/solvers/md/trajectory_frame.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace stratus::md {

namespace {

/// Host copy of rows [0, n) of a device view (n clamped to the view), row-major.
template <class View>
std::vector<typename View::non_const_value_type> host_rows(const View& view, int n) {
  const auto rows = std::min<std::size_t>(static_cast<std::size_t>(std::max(n, 0)), view.extent(0));
  const std::size_t width = View::rank == 1 ? 1 : view.extent(1);
  std::vector<typename View::non_const_value_type> out(rows * width);
  if (rows == 0) return out;
  if constexpr (View::rank == 1) {
    Kokkos::View<typename View::non_const_value_type*, Kokkos::HostSpace,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        host(out.data(), rows);
    Kokkos::deep_copy(host, Kokkos::subview(view, std::make_pair(std::size_t{0}, rows)));
  } else {
    Kokkos::View<typename View::non_const_value_type**, Kokkos::LayoutRight, Kokkos::HostSpace,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        host(out.data(), rows, width);
    Kokkos::deep_copy(host,
                      Kokkos::subview(view, std::make_pair(std::size_t{0}, rows), Kokkos::ALL));
  }
  return out;
}

}  // namespace

void append_frame(io::H5mdWriter& writer, std::int64_t step, double time,
                  const kernels::md::Vectors& x, const kernels::md::Vectors& v,
                  const kernels::md::Types& type, const kernels::md::Ids& id,
                  const kernels::md::Images& image, int nlocal) {
  const auto hx = host_rows(x, nlocal);
  const auto hv = host_rows(v, nlocal);
  const auto htype = host_rows(type, nlocal);
  const auto hid = host_rows(id, nlocal);
  const auto himage = host_rows(image, nlocal);
  writer.append(step, time, io::H5mdRows{hx, hv, htype, hid, himage}, nlocal);
}

}  // namespace stratus::md
