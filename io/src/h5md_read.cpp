// One frame of an H5MD 1.1 file as an initial configuration (read_h5md_frame). Rank 0 reads
// and broadcasts; every failure names the file and the HDF5 object, and is raised on every rank.
#include "h5_support.hpp"
#include "h5md_read_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/h5md.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

namespace stratus::io {

namespace detail {

std::vector<hsize_t> shape_of(hid_t dset, const std::string& name) {
  Handle space(H5Dget_space(dset), H5Sclose);
  if (!space.valid()) throw Unreadable{name + " has no readable dataspace"};
  std::vector<hsize_t> dims(
      static_cast<std::size_t>(std::max(H5Sget_simple_extent_ndims(space), 0)));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

std::string shape_text(const std::vector<hsize_t>& dims) {
  return fmt::format("({})", fmt::join(dims, ", "));
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;
using detail::Handle;
using detail::QuietHdf5Errors;
using detail::shape_of;
using detail::shape_text;
using detail::Unreadable;

/// One time-dependent or fixed H5MD element of `group`: `value` under the element's group
/// (time-dependent: first axis is the frame) or the element itself as a dataset (fixed).
struct Element {
  Handle dset;
  std::string name;
  bool time_dependent = false;
  std::vector<hsize_t> dims;
};

Element open_element(hid_t file, const std::string& group, const std::string& element,
                     bool required) {
  const std::string path = group + "/" + element;
  if (H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0) {
    if (required) throw Unreadable{"no " + path + " (an H5MD particle group needs it)"};
    return Element{Handle(-1, H5Dclose), {}, false, {}};
  }
  bool time_dependent = false;
  {
    Handle object(H5Oopen(file, path.c_str(), H5P_DEFAULT), H5Oclose);
    if (!object.valid()) throw Unreadable{path + " cannot be read"};
    time_dependent = H5Iget_type(object) == H5I_GROUP;
  }
  std::string name = time_dependent ? path + "/value" : path;
  Handle dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw Unreadable{"no dataset " + name};
  auto dims = shape_of(dset, name);
  return Element{std::move(dset), std::move(name), time_dependent, std::move(dims)};
}

/// Reads frame `frame` of element `e` (or all of a fixed one): `per_atom` values per row, `n`
/// rows, as `mem_type` into `out` (which must hold n * per_atom values).
template <class T>
void read_rows(const Element& e, std::int64_t frame, hsize_t n, hsize_t per_atom, hid_t mem_type,
               std::vector<T>& out) {
  std::vector<hsize_t> expect;
  if (e.time_dependent) expect.push_back(e.dims.empty() ? 0 : e.dims[0]);
  expect.push_back(n);
  if (per_atom > 1) expect.push_back(per_atom);
  if (e.dims != expect)
    throw Unreadable{fmt::format("{} has shape {}, expected {} ({} atoms{})", e.name,
                                 shape_text(e.dims), shape_text(expect), n,
                                 per_atom > 1 ? fmt::format(", {} values each", per_atom) : "")};
  out.resize(static_cast<std::size_t>(n * per_atom));
  Handle space(H5Dget_space(e.dset), H5Sclose);
  std::vector<hsize_t> start(e.dims.size(), 0), count = e.dims;
  if (e.time_dependent) {
    start[0] = static_cast<hsize_t>(frame);
    count[0] = 1;
  }
  const hsize_t mem_dims[1] = {n * per_atom};
  Handle mem(H5Screate_simple(1, mem_dims, nullptr), H5Sclose);
  if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) <
          0 ||
      H5Dread(e.dset, mem_type, mem, space, H5P_DEFAULT, out.data()) < 0)
    throw Unreadable{fmt::format("{} cannot be read (damaged, or not numbers{})", e.name,
                                 detail::hdf5_error_detail())};
}

/// The box edges of frame `frame`: box/edges as a fixed (3) vector or (3, 3) matrix, or
/// time-dependent (frames, 3) / (frames, 3, 3). Off-diagonal terms must be zero.
std::array<double, 3> read_edges(hid_t file, const std::string& group, std::int64_t frame) {
  const std::string box = group + "/box";
  if (H5Lexists(file, box.c_str(), H5P_DEFAULT) <= 0)
    throw Unreadable{"no " + box + " (an H5MD particle group needs its box)"};
  {
    Handle g(H5Gopen2(file, box.c_str(), H5P_DEFAULT), H5Gclose);
    std::vector<std::string> boundary;
    if (g.valid() && H5Aexists(g, "boundary") > 0) {
      Handle attr(H5Aopen(g, "boundary", H5P_DEFAULT), H5Aclose);
      Handle type(H5Aget_type(attr), H5Tclose);
      Handle space(H5Aget_space(attr), H5Sclose);
      const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
      if (H5Tget_class(type) == H5T_STRING && n == 3) {
        const std::size_t size = H5Tis_variable_str(type) > 0 ? 0 : H5Tget_size(type);
        Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
        if (size == 0) {
          H5Tset_size(mem, H5T_VARIABLE);
          std::vector<char*> text(n, nullptr);
          if (H5Aread(attr, mem, text.data()) >= 0)
            for (auto* t : text) {
              boundary.emplace_back(t != nullptr ? t : "");
              H5free_memory(t);
            }
        } else {
          H5Tset_size(mem, size);
          std::string raw(size * n, '\0');
          if (H5Aread(attr, mem, raw.data()) >= 0)
            for (std::size_t k = 0; k < n; ++k) {
              std::string s = raw.substr(k * size, size);
              s.resize(std::char_traits<char>::length(s.c_str()));
              boundary.push_back(s);
            }
        }
      }
    }
    for (std::size_t d = 0; d < boundary.size(); ++d)
      if (boundary[d] != "periodic")
        throw Unreadable{
            fmt::format("{}@boundary is '{}' along axis {}; the md solver needs a "
                        "periodic box",
                        box, boundary[d], "xyz"[d])};
  }
  const Element e = open_element(file, box, "edges", true);
  const std::size_t lead = e.time_dependent ? 1 : 0;
  const bool vector = e.dims.size() == lead + 1 && e.dims[lead] == 3;
  const bool matrix = e.dims.size() == lead + 2 && e.dims[lead] == 3 && e.dims[lead + 1] == 3;
  if (!vector && !matrix)
    throw Unreadable{fmt::format("{} has shape {}, expected 3 edges or a 3 x 3 matrix{}", e.name,
                                 shape_text(e.dims), e.time_dependent ? " per frame" : "")};
  if (e.time_dependent && static_cast<hsize_t>(frame) >= e.dims[0])
    throw Unreadable{fmt::format("{} has {} frames, the positions more", e.name, e.dims[0])};
  std::vector<double> values;
  read_rows(e, frame, 3, matrix ? 3 : 1, H5T_NATIVE_DOUBLE, values);
  std::array<double, 3> edges{};
  for (int a = 0; a < 3; ++a) {
    edges[a] = matrix ? values[4 * a] : values[a];
    if (matrix)
      for (int b = 0; b < 3; ++b)
        if (b != a && values[3 * a + b] != 0.0)
          throw Unreadable{e.name + " is a tilted (triclinic) box; expected an orthogonal box"};
    if (!(std::isfinite(edges[a]) && edges[a] > 0))
      throw Unreadable{
          fmt::format("{}: edge {} is {}, expected a positive length", e.name, "xyz"[a], edges[a])};
  }
  return edges;
}

AtomConfiguration read_on_root(const std::string& path, const std::string& group_name,
                               std::int64_t frame_wanted, int index_base,
                               const std::string& length_unit) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw Unreadable{"no such file"};
  if (H5Fis_hdf5(path.c_str()) <= 0) throw Unreadable{"not an HDF5 file"};
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw Unreadable{"cannot be opened (truncated or damaged)"};
  if (H5Lexists(file, "/h5md", H5P_DEFAULT) <= 0)
    throw Unreadable{"not an H5MD file (no /h5md group)"};
  const std::string group = "/particles/" + group_name;
  if (H5Lexists(file, "/particles", H5P_DEFAULT) <= 0 ||
      H5Lexists(file, group.c_str(), H5P_DEFAULT) <= 0)
    throw Unreadable{"no particle group " + group};

  const Element position = open_element(file, group, "position", true);
  if (position.dims.size() != (position.time_dependent ? 3u : 2u) || position.dims.back() != 3)
    throw Unreadable{fmt::format("{} has shape {}, expected (frames, atoms, 3)", position.name,
                                 shape_text(position.dims))};
  const std::string unit = detail::read_string_attribute(position.dset, "unit");
  if (length_unit.empty() && !unit.empty())
    throw Unreadable{
        fmt::format("{}@unit is '{}'; the run is in Lennard-Jones reduced units (md.units = "
                    "\"lj\") and does not convert physical units",
                    position.name, unit)};
  if (!length_unit.empty() && unit != length_unit)
    throw Unreadable{fmt::format(
        "{}@unit is {}; expected '{}', the length unit of the deck's md.units (Stratus does not "
        "convert units)",
        position.name, unit.empty() ? std::string("absent") : "'" + unit + "'", length_unit)};
  const hsize_t frames = position.time_dependent ? position.dims[0] : 1;
  const hsize_t n = position.dims[position.time_dependent ? 1 : 0];
  if (n == 0) throw Unreadable{position.name + " holds no atoms"};
  if (frames == 0) throw Unreadable{position.name + " holds no frames"};
  const std::int64_t frame =
      frame_wanted < 0 ? static_cast<std::int64_t>(frames) + frame_wanted : frame_wanted;
  if (frame < 0 || frame >= static_cast<std::int64_t>(frames))
    throw Unreadable{fmt::format(
        "frame {} was asked for (md.read_h5md.frame); {} has {} frame{} "
        "(0 .. {}, or -1 .. -{} from the end)",
        frame_wanted, position.name, frames, frames == 1 ? "" : "s", frames - 1, frames)};

  AtomConfiguration c;
  c.natoms = static_cast<std::int64_t>(n);
  const auto edges = read_edges(file, group, frame);
  for (int a = 0; a < 3; ++a) {
    c.box.lo[a] = 0.0;
    c.box.hi[a] = edges[a];
  }
  std::vector<double> x, v;
  read_rows(position, frame, n, 3, H5T_NATIVE_DOUBLE, x);
  std::vector<std::int64_t> id(n), species(n, index_base), image;
  for (hsize_t i = 0; i < n; ++i) id[i] = static_cast<std::int64_t>(i) + index_base;
  if (const Element e = open_element(file, group, "id", false); e.dset.valid())
    read_rows(e, frame, n, 1, H5T_NATIVE_INT64, id);
  if (const Element e = open_element(file, group, "species", false); e.dset.valid())
    read_rows(e, frame, n, 1, H5T_NATIVE_INT64, species);
  if (const Element e = open_element(file, group, "image", false); e.dset.valid())
    read_rows(e, frame, n, 3, H5T_NATIVE_INT64, image);
  if (const Element e = open_element(file, group, "velocity", false); e.dset.valid()) {
    read_rows(e, frame, n, 3, H5T_NATIVE_DOUBLE, v);
    c.velocities.resize(n);
  }
  // Charges and molecule ids (H5MD's charge element; Stratus's molecule column): atom style
  // full when either is present.
  std::vector<double> charge;
  std::vector<std::int64_t> molecule;
  if (const Element e = open_element(file, group, "charge", false); e.dset.valid())
    read_rows(e, frame, n, 1, H5T_NATIVE_DOUBLE, charge);
  if (const Element e = open_element(file, group, "molecule", false); e.dset.valid())
    read_rows(e, frame, n, 1, H5T_NATIVE_INT64, molecule);
  c.style = charge.empty() && molecule.empty() ? AtomStyle::atomic : AtomStyle::full;
  c.charges = !charge.empty();

  std::vector<char> seen(n, 0);
  c.atoms.resize(n);
  c.ntypes = 0;
  for (hsize_t i = 0; i < n; ++i) {
    auto& atom = c.atoms[i];
    const std::int64_t own = id[i] - index_base;
    if (own < 0 || own >= c.natoms)
      throw Unreadable{
          fmt::format("{}/id: row {} holds id {}; expected ids {} .. {} (each once; "
                      "md.read_h5md.index_base = {})",
                      group, i, id[i], index_base, c.natoms - 1 + index_base, index_base)};
    if (seen[static_cast<std::size_t>(own)] != 0)
      throw Unreadable{fmt::format("{}/id: id {} appears twice (row {})", group, id[i], i)};
    seen[static_cast<std::size_t>(own)] = 1;
    atom.id = own;
    const std::int64_t type = species[i] - index_base;
    if (type < 0 || type > 1'000'000)
      throw Unreadable{
          fmt::format("{}/species: row {} holds {}; expected a type >= {} "
                      "(md.read_h5md.index_base = {})",
                      group, i, species[i], index_base, index_base)};
    atom.type = static_cast<int>(type);
    c.ntypes = std::max(c.ntypes, atom.type + 1);
    for (int a = 0; a < 3; ++a) {
      atom.x[a] = x[3 * i + a];
      if (!std::isfinite(atom.x[a]))
        throw Unreadable{
            fmt::format("{}: atom in row {} has a non-finite coordinate", position.name, i)};
      atom.image[a] = image.empty() ? 0 : static_cast<int>(image[3 * i + a]);
    }
    if (!v.empty())
      c.velocities[static_cast<std::size_t>(own)] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    if (!charge.empty()) {
      atom.charge = charge[i];
      if (!std::isfinite(atom.charge))
        throw Unreadable{
            fmt::format("{}/charge: atom in row {} has the charge {}; expected a "
                        "finite number",
                        group, i, atom.charge)};
    }
    if (!molecule.empty()) atom.molecule = molecule[i];
  }
  detail::read_connectivity(file, group, c.natoms, index_base, c.topology);
  return c;
}

template <class T>
void broadcast_vector(MPI_Comm comm, std::vector<T>& values) {
  std::uint64_t size = values.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  values.resize(size);
  if (size > 0) MPI_Bcast(values.data(), static_cast<int>(size * sizeof(T)), MPI_BYTE, 0, comm);
}

}  // namespace

AtomConfiguration read_h5md_frame(MPI_Comm comm, const std::string& path, const std::string& group,
                                  std::int64_t frame, int index_base,
                                  const std::string& length_unit) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  AtomConfiguration c;
  std::string failure;
  if (rank == 0) {
    try {
      QuietHdf5Errors quiet;
      c = read_on_root(path, group, frame, index_base, length_unit);
    } catch (const Unreadable& e) {
      failure = e.what.empty() ? "unreadable" : e.what;
    }
  }
  std::uint64_t length = failure.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm);
  failure.resize(length);
  if (length > 0) {
    MPI_Bcast(failure.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
    throw InputError(fmt::format("{}: {}", path, failure));
  }
  std::int64_t header[2] = {c.natoms, c.ntypes};
  MPI_Bcast(header, 2, MPI_INT64_T, 0, comm);
  c.natoms = header[0];
  c.ntypes = static_cast<int>(header[1]);
  MPI_Bcast(c.box.lo.data(), 3, MPI_DOUBLE, 0, comm);
  MPI_Bcast(c.box.hi.data(), 3, MPI_DOUBLE, 0, comm);
  int style[2] = {c.style == AtomStyle::full ? 1 : 0, c.charges ? 1 : 0};
  MPI_Bcast(style, 2, MPI_INT, 0, comm);
  c.style = style[0] == 1 ? AtomStyle::full : AtomStyle::atomic;
  c.charges = style[1] == 1;
  broadcast_vector(comm, c.atoms);
  broadcast_vector(comm, c.velocities);
  detail::broadcast_topology(comm, c.topology);
  return c;
}

}  // namespace stratus::io
