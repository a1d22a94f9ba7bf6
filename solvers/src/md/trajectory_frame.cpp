#include "stratus/solvers/md/trajectory_frame.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
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

/// Columns the writer has built-in elements for.
bool built_in(const std::string& name) {
  static constexpr std::array<std::string_view, 5> kNames = {"position", "velocity", "type", "id",
                                                             "image"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

/// The columns behind trajectory_extras, in the same order.
std::vector<const ParticleColumn*> extra_columns(const AtomData& atoms) {
  std::vector<const ParticleColumn*> out;
  for (std::size_t k = 0; k < atoms.columns.size(); ++k) {
    const ParticleColumn& c = atoms.columns[k];
    if (!c.flags().trajectory || built_in(c.name())) continue;
    if (c.kind() == ColumnKind::other)
      throw RuntimeError(fmt::format(
          "per-atom column \"{}\" is flagged for trajectories but holds records, not numbers",
          c.name()));
    out.push_back(&c);
  }
  return out;
}

}  // namespace

std::vector<io::H5mdElement> trajectory_extras(const AtomData& atoms) {
  std::vector<io::H5mdElement> out;
  for (const ParticleColumn* c : extra_columns(atoms))
    out.push_back({c->name(), c->components(), c->kind() == ColumnKind::integer});
  return out;
}

namespace {

/// Appends the built-in columns' rows [0, nlocal) and `extras` (host rows of the writer's
/// extra elements, in its order) as one frame.
void append_rows(io::H5mdWriter& writer, std::int64_t step, double time,
                 const kernels::md::Vectors& x, const kernels::md::Vectors& v,
                 const kernels::md::Types& type, const kernels::md::Ids& id,
                 const kernels::md::Images& image, int nlocal,
                 std::vector<io::H5mdRows::Extra> extras) {
  const auto hx = host_rows(x, nlocal);
  const auto hv = host_rows(v, nlocal);
  const auto htype = host_rows(type, nlocal);
  const auto hid = host_rows(id, nlocal);
  const auto himage = host_rows(image, nlocal);
  writer.append(step, time, io::H5mdRows{hx, hv, htype, hid, himage, std::move(extras)}, nlocal);
}

}  // namespace

void append_frame(io::H5mdWriter& writer, std::int64_t step, double time, const AtomData& atoms) {
  const int n = atoms.nlocal;
  const auto columns = extra_columns(atoms);
  // Host copies of the extra columns, kept alive until the frame is written.
  std::vector<std::vector<double>> reals(columns.size());
  std::vector<std::vector<std::int64_t>> integers(columns.size());
  std::vector<io::H5mdRows::Extra> extras;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (columns[k]->kind() == ColumnKind::integer) {
      integers[k] = columns[k]->host_integers(n);
      extras.push_back({{}, integers[k]});
    } else {
      reals[k] = columns[k]->host_reals(n);
      extras.push_back({reals[k], {}});
    }
  }
  append_rows(writer, step, time, atoms.x, atoms.v, atoms.type, atoms.id, atoms.image, n,
              std::move(extras));
}

void append_frame(io::H5mdWriter& writer, std::int64_t step, double time,
                  const kernels::md::Vectors& x, const kernels::md::Vectors& v,
                  const kernels::md::Types& type, const kernels::md::Ids& id,
                  const kernels::md::Images& image, int nlocal) {
  append_rows(writer, step, time, x, v, type, id, image, nlocal, {});
}

}  // namespace stratus::md
