// Serial readers of trajectories and velocity snapshots for `stratus post`.
#include "stratus/io/analysis_input.hpp"

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/field_series.hpp"
#include "stratus/io/h5file.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

namespace stratus::io {

namespace {

using detail::Handle;
using detail::QuietHdf5Errors;

/// Opens `path` read-only and checks that it is a Stratus file of format `format` (`what`
/// describes that kind of file in messages, `hint` says where such files come from).
Handle open_stratus_file(const std::string& path, const std::string& format,
                         const std::string& what, const std::string& hint) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(fmt::format("{}: no such file (expected {})", path, what));
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw InputError(fmt::format("{}: not an HDF5 file (expected {})", path, what));
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid())
    throw InputError(fmt::format("{}: cannot be opened (truncated or damaged)", path));
  const std::string found = detail::read_string_attribute(file, "stratus_format");
  if (found != format)
    throw InputError(fmt::format(
        "{}: expected {} (stratus_format \"{}\"{}), found {}", path, what, format, hint,
        found.empty() ? "a file without the stratus_format attribute (not written by Stratus)"
                      : fmt::format("stratus_format \"{}\"", found)));
  return file;
}

std::vector<hsize_t> dataset_shape(hid_t dset) {
  Handle space(H5Dget_space(dset), H5Sclose);
  std::vector<hsize_t> dims(
      static_cast<std::size_t>(std::max(H5Sget_simple_extent_ndims(space), 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

Handle open_dataset(hid_t file, const std::string& path, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw InputError(fmt::format("{}: no dataset {}", path, name));
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) throw InputError(fmt::format("{}: {} cannot be opened", path, name));
  return d;
}

/// Reads `count` (C order) from `start` of a dataset into `out` as `mem_type`.
template <class T>
void read_slab(hid_t dset, const std::string& path, const std::string& name,
               const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, hid_t mem_type,
               std::vector<T>& out) {
  hsize_t total = 1;
  for (const auto c : count) total *= c;
  out.resize(static_cast<std::size_t>(total));
  Handle space(H5Dget_space(dset), H5Sclose);
  Handle mem(H5Screate_simple(1, &total, nullptr), H5Sclose);
  if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) <
          0 ||
      H5Dread(dset, mem_type, mem, space, H5P_DEFAULT, out.data()) < 0)
    throw InputError(fmt::format("{}: {} cannot be read (damaged, or not numbers)", path, name));
}

/// The whole 1D dataset `name`.
template <class T>
std::vector<T> read_1d(hid_t file, const std::string& path, const std::string& name,
                       hid_t mem_type) {
  Handle d = open_dataset(file, path, name);
  const auto dims = dataset_shape(d);
  if (dims.size() != 1)
    throw InputError(fmt::format("{}: {} has {} dimensions, expected 1", path, name, dims.size()));
  std::vector<T> out;
  read_slab(d, path, name, {0}, dims, mem_type, out);
  return out;
}

constexpr const char* kAll = "/particles/all";

std::array<double, 3> read_box(hid_t file, const std::string& path, std::int64_t frame) {
  const std::string name = std::string(kAll) + "/box/edges/value";
  Handle d = open_dataset(file, path, name);
  const auto dims = dataset_shape(d);
  if (dims.size() != 3 || dims[1] != 3 || dims[2] != 3 ||
      static_cast<std::int64_t>(dims[0]) <= frame)
    throw InputError(fmt::format("{}: {} has shape ({}), expected (frames, 3, 3)", path, name,
                                 fmt::join(dims, ", ")));
  std::vector<double> m;
  read_slab(d, path, name, {static_cast<hsize_t>(frame), 0, 0}, {1, 3, 3}, H5T_NATIVE_DOUBLE, m);
  std::array<double, 3> box{};
  for (int a = 0; a < 3; ++a) {
    box[a] = m[4 * a];
    for (int b = 0; b < 3; ++b)
      if (b != a && m[3 * a + b] != 0.0)
        throw InputError(
            fmt::format("{}: {} is a tilted box; expected an orthorhombic box", path, name));
    if (!(std::isfinite(box[a]) && box[a] > 0))
      throw InputError(fmt::format("{}: {}: edge {} is {}, expected a positive length", path, name,
                                   "xyz"[a], box[a]));
  }
  return box;
}

/// The `reduced_unit` or `unit` attribute of a dataset ("" when neither is present).
std::string unit_of(hid_t file, const std::string& name) {
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) return "";
  std::string u = detail::read_string_attribute(d, "reduced_unit");
  return u.empty() ? detail::read_string_attribute(d, "unit") : u;
}

}  // namespace

TrajectoryInfo read_trajectory_info(const std::string& path) {
  QuietHdf5Errors quiet;
  Handle file = open_stratus_file(path, "h5md", "an H5MD trajectory",
                                  ", written by the md solver with md.trajectory.every > 0");
  TrajectoryInfo info;
  info.path = path;
  const std::string pos = std::string(kAll) + "/position/value";
  Handle d = open_dataset(file, path, pos);
  const auto dims = dataset_shape(d);
  if (dims.size() != 3 || dims[2] != 3)
    throw InputError(fmt::format("{}: {} has shape ({}), expected (frames, atoms, 3)", path, pos,
                                 fmt::join(dims, ", ")));
  info.frames = static_cast<std::int64_t>(dims[0]);
  info.natoms = static_cast<std::int64_t>(dims[1]);
  if (info.frames < 1 || info.natoms < 1)
    throw InputError(
        fmt::format("{}: {} holds {} frames of {} atoms; expected at least one of each", path, pos,
                    info.frames, info.natoms));
  info.step =
      read_1d<std::int64_t>(file, path, std::string(kAll) + "/position/step", H5T_NATIVE_INT64);
  info.time = read_1d<double>(file, path, std::string(kAll) + "/position/time", H5T_NATIVE_DOUBLE);
  if (static_cast<std::int64_t>(info.step.size()) != info.frames ||
      static_cast<std::int64_t>(info.time.size()) != info.frames)
    throw InputError(fmt::format("{}: {}/position/step and time hold {} and {} values, expected {}",
                                 path, kAll, info.step.size(), info.time.size(), info.frames));
  info.box = read_box(file, path, 0);
  info.has_image = H5Lexists(file, (std::string(kAll) + "/image").c_str(), H5P_DEFAULT) > 0;
  info.has_species = H5Lexists(file, (std::string(kAll) + "/species").c_str(), H5P_DEFAULT) > 0;
  info.length_unit = unit_of(file, pos);
  info.time_unit = unit_of(file, std::string(kAll) + "/position/time");
  return info;
}

TrajectoryFrame read_trajectory_frame(const TrajectoryInfo& info, std::int64_t frame) {
  QuietHdf5Errors quiet;
  const std::string& path = info.path;
  if (frame < 0 || frame >= info.frames)
    throw InputError(fmt::format("{}: frame {} asked for, the file has frames 0 .. {}", path, frame,
                                 info.frames - 1));
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw InputError(fmt::format("{}: cannot be opened", path));
  const auto f = static_cast<hsize_t>(frame);
  const auto n = static_cast<hsize_t>(info.natoms);
  TrajectoryFrame out;
  out.box = read_box(file, path, frame);
  const auto element = [&](const char* what, hsize_t per_atom, hid_t type, auto& values) {
    const std::string name = fmt::format("{}/{}/value", kAll, what);
    Handle d = open_dataset(file, path, name);
    std::vector<hsize_t> expect{static_cast<hsize_t>(info.frames), n};
    if (per_atom > 1) expect.push_back(per_atom);
    if (dataset_shape(d) != expect)
      throw InputError(fmt::format("{}: {} has shape ({}), expected ({})", path, name,
                                   fmt::join(dataset_shape(d), ", "), fmt::join(expect, ", ")));
    std::vector<hsize_t> start(expect.size(), 0), count = expect;
    start[0] = f;
    count[0] = 1;
    read_slab(d, path, name, start, count, type, values);
  };
  element("position", 3, H5T_NATIVE_DOUBLE, out.position);
  if (info.has_image) element("image", 3, H5T_NATIVE_INT, out.image);
  if (info.has_species)
    element("species", 1, H5T_NATIVE_INT, out.species);
  else
    out.species.assign(n, 0);
  return out;
}

VelocitySnapshot read_velocity_snapshot(const std::string& path) {
  VelocitySnapshot s;
  s.path = path;
  std::array<std::string, 3> names;
  {
    QuietHdf5Errors quiet;
    const Handle file = open_stratus_file(path, "field", "a field snapshot",
                                          ", written by the spectral or the euler solver");
    if (H5Lexists(file, "/fields", H5P_DEFAULT) > 0 &&
        H5Lexists(file, "/fields/u", H5P_DEFAULT) > 0) {
      s.solver = "spectral";
      names = {"/fields/u", "/fields/v", "/fields/w"};
    } else if (H5Lexists(file, "/fields", H5P_DEFAULT) > 0 &&
               H5Lexists(file, "/fields/velocity_x", H5P_DEFAULT) > 0) {
      s.solver = "euler";
      names = {"/fields/velocity_x", "/fields/velocity_y", "/fields/velocity_z"};
    } else {
      throw InputError(
          fmt::format("{}: expected a velocity field (/fields/u, v, w of the spectral solver or "
                      "/fields/velocity_x, _y, _z of the euler solver), found neither",
                      path));
    }
  }
  std::array<std::int64_t, 3> dims{};
  for (int c = 0; c < 3; ++c) {
    std::array<std::int64_t, 3> d{};
    s.velocity[c] = read_dataset_3d(path, names[c], d);
    if (c > 0 && d != dims)
      throw InputError(fmt::format("{}: {} has shape ({}), {} ({})", path, names[c],
                                   fmt::join(d, ", "), names[0], fmt::join(dims, ", ")));
    dims = d;
  }
  if (s.solver == "euler") {
    std::array<std::int64_t, 3> d{};
    s.density = read_dataset_3d(path, "/fields/density", d);
  }
  s.points = {dims[2], dims[1], dims[0]};  // stored (z, y, x)
  s.time = read_double_attribute(path, "/fields", "time");
  s.step = static_cast<std::int64_t>(read_double_attribute(path, "/fields", "step"));
  {
    QuietHdf5Errors quiet;
    Handle f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    Handle g(H5Oopen(f, "/fields", H5P_DEFAULT), H5Oclose);
    std::array<double, 3> lo{}, hi{};
    for (auto [name, out] : {std::pair{"box_lo", &lo}, std::pair{"box_hi", &hi}}) {
      Handle a(H5Aopen(g, name, H5P_DEFAULT), H5Aclose);
      if (!a.valid() || H5Aread(a, H5T_NATIVE_DOUBLE, out->data()) < 0)
        throw InputError(fmt::format("{}: /fields@{} is missing or unreadable", path, name));
    }
    for (int a = 0; a < 3; ++a) {
      s.length[a] = hi[a] - lo[a];
      if (!(s.length[a] > 0))
        throw InputError(fmt::format("{}: /fields@box_hi - box_lo is {} along {}, expected > 0",
                                     path, s.length[a], "xyz"[a]));
    }
  }
  s.deck = read_deck_text(path);
  return s;
}

std::int64_t read_velocity_snapshot_step(const std::string& path) {
  {
    QuietHdf5Errors quiet;
    open_stratus_file(path, "field", "a field snapshot",
                      ", written by the spectral or the euler solver");
  }
  return static_cast<std::int64_t>(read_double_attribute(path, "/fields", "step"));
}

}  // namespace stratus::io
