// The molecular topology of an H5MD file (/connectivity with Stratus's types and coefficients,
// layout in h5md.hpp) as a data file's Topology, read by rank 0 and broadcast.
#include "h5_support.hpp"
#include "h5md_read_support.hpp"
#include "stratus/io/h5md.hpp"

#include <fmt/format.h>

#include <cmath>
#include <type_traits>

namespace stratus::io::detail {

namespace {

constexpr const char* kParameters = "/parameters/stratus/connectivity";

/// The open dataset `name` (Unreadable naming `missing` when it is absent, or when it is a group:
/// a time-dependent element).
Handle open_fixed(hid_t file, const std::string& name, const std::string& missing) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) throw Unreadable{missing};
  {
    Handle object(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (!object.valid()) throw Unreadable{name + " cannot be read"};
    if (H5Iget_type(object) == H5I_GROUP)
      throw Unreadable{name +
                       " is a group (time-dependent); the connectivity is fixed during a run: "
                       "expected a dataset"};
  }
  Handle dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw Unreadable{name + " cannot be read"};
  return dset;
}

/// The HDF5 type class of `dset`.
H5T_class_t type_class(hid_t dset) {
  Handle type(H5Dget_type(dset), H5Tclose);
  return type.valid() ? H5Tget_class(type) : H5T_NO_CLASS;
}

/// All values of `dset` as `mem_type` into `out` (`count` of them).
template <class T>
void read_all(hid_t dset, const std::string& name, hid_t mem_type, std::size_t count,
              std::vector<T>& out) {
  out.resize(count);
  if (count == 0) return;
  if (H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw Unreadable{
        fmt::format("{} cannot be read (damaged, or not numbers{})", name, hdf5_error_detail())};
}

/// The particle group the tuples' @particles_group refers to ("" without the attribute).
std::string referenced_group(hid_t dset) {
  if (H5Aexists(dset, "particles_group") <= 0) return {};
  Handle attr(H5Aopen(dset, "particles_group", H5P_DEFAULT), H5Aclose);
  hobj_ref_t ref{};
  if (!attr.valid() || H5Aread(attr, H5T_STD_REF_OBJ, &ref) < 0) return "(unreadable)";
  Handle target(H5Rdereference2(dset, H5P_DEFAULT, H5R_OBJECT, &ref), H5Oclose);
  if (!target.valid()) return "(a dangling reference)";
  const ssize_t size = H5Iget_name(target, nullptr, 0);
  if (size <= 0) return "(an unnamed object)";
  std::string name(static_cast<std::size_t>(size) + 1, '\0');
  H5Iget_name(target, name.data(), name.size());
  name.resize(static_cast<std::size_t>(size));
  return name;
}

/// One kind: /connectivity/KIND (N ids per row), its types and its coefficients.
template <int N>
void read_kind(hid_t file, const std::string& group, std::int64_t natoms, int index_base,
               const char* kind, const char* singular, const char* section,
               std::vector<DataTerm<N>>& terms, CoeffSection& coeffs, int& ntypes) {
  const std::string tuples = std::string("/connectivity/") + kind;
  if (H5Lexists(file, tuples.c_str(), H5P_DEFAULT) <= 0) return;
  const Handle dset = open_fixed(file, tuples, tuples);
  const auto dims = shape_of(dset, tuples);
  if (dims.size() != 2 || dims[1] != static_cast<hsize_t>(N))
    throw Unreadable{fmt::format("{} has shape {}; expected ({}, {}): {} atom ids per {}", tuples,
                                 shape_text(dims), kind, N, N, singular)};
  if (type_class(dset) != H5T_INTEGER)
    throw Unreadable{tuples + " does not hold integers; expected atom ids"};
  if (const std::string target = referenced_group(dset); !target.empty() && target != group)
    throw Unreadable{
        fmt::format("{}@particles_group refers to {}; the run reads the particle "
                    "group {} (md.read_h5md.group)",
                    tuples, target, group)};
  const auto n = static_cast<std::size_t>(dims[0]);
  std::vector<std::int64_t> ids;
  read_all(dset, tuples, H5T_NATIVE_INT64, n * N, ids);

  const std::string type_name = std::string(kParameters) + "/" + kind + "/type";
  const std::string coeff_name = std::string(kParameters) + "/" + kind + "/coefficients";
  const Handle type_set = open_fixed(
      file, type_name,
      fmt::format("{} has no types: expected {} (one 0-based type per row) and {} (the "
                  "coefficients per type), as Stratus writes them; a {} needs its type and "
                  "coefficients to be computed",
                  tuples, type_name, coeff_name, singular));
  const auto type_dims = shape_of(type_set, type_name);
  if (type_dims != std::vector<hsize_t>{dims[0]} || type_class(type_set) != H5T_INTEGER)
    throw Unreadable{
        fmt::format("{} has shape {}{}; expected ({}) integers: one type per row of {}", type_name,
                    shape_text(type_dims),
                    type_class(type_set) == H5T_INTEGER ? "" : " (not integers)", dims[0], tuples)};
  std::vector<std::int64_t> types;
  read_all(type_set, type_name, H5T_NATIVE_INT64, n, types);

  const Handle coeff_set = open_fixed(
      file, coeff_name,
      fmt::format("no {}: the coefficients of the {} types (one row per type) are missing",
                  coeff_name, singular));
  const auto coeff_dims = shape_of(coeff_set, coeff_name);
  const H5T_class_t coeff_class = type_class(coeff_set);
  if (coeff_dims.size() != 2 || coeff_dims[0] == 0 || coeff_dims[1] == 0 ||
      (coeff_class != H5T_FLOAT && coeff_class != H5T_INTEGER))
    throw Unreadable{fmt::format(
        "{} has shape {}{}; expected (types, numbers per type) of "
        "numbers, at least one of each",
        coeff_name, shape_text(coeff_dims),
        coeff_class == H5T_FLOAT || coeff_class == H5T_INTEGER ? ""
                                                               : " and does not hold numbers")};
  const auto t_count = static_cast<std::size_t>(coeff_dims[0]);
  const auto m = static_cast<std::size_t>(coeff_dims[1]);
  std::vector<double> values;
  read_all(coeff_set, coeff_name, H5T_NATIVE_DOUBLE, t_count * m, values);
  const std::string style = read_string_attribute(coeff_set, "style");
  if (style.empty())
    throw Unreadable{
        fmt::format("{}@style is missing; expected the {} style's name (e.g. "
                    "\"harmonic\")",
                    coeff_name, singular)};

  terms.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    DataTerm<N>& term = terms[t];
    if (types[t] < 0 || static_cast<std::size_t>(types[t]) >= t_count)
      throw Unreadable{fmt::format(
          "{}: row {} holds type {}; {} has coefficients for types 0 .. "
          "{} only ({} row{}): a type without coefficients",
          type_name, t, types[t], coeff_name, t_count - 1, t_count, t_count == 1 ? "" : "s")};
    term.type = static_cast<int>(types[t]);
    for (int a = 0; a < N; ++a) {
      const std::int64_t raw = ids[t * N + static_cast<std::size_t>(a)];
      const std::int64_t id = raw - index_base;
      if (id < 0 || id >= natoms)
        throw Unreadable{
            fmt::format("{}: row {} names atom {}; expected ids {} .. {}, the atoms "
                        "of {} (md.read_h5md.index_base = {})",
                        tuples, t, raw, index_base, natoms - 1 + index_base, group, index_base)};
      for (int b = 0; b < a; ++b)
        if (term.atoms[static_cast<std::size_t>(b)] == id)
          throw Unreadable{
              fmt::format("{}: row {} names atom {} twice; expected {} distinct "
                          "atoms per {}",
                          tuples, t, raw, N, singular)};
      term.atoms[static_cast<std::size_t>(a)] = id;
    }
  }
  ntypes = static_cast<int>(t_count);
  coeffs.name = section;
  coeffs.style = style;
  coeffs.dataset = coeff_name;
  coeffs.rows.resize(t_count);
  for (std::size_t t = 0; t < t_count; ++t) {
    auto& row = coeffs.rows[t];
    row.type = row.type2 = static_cast<int>(t);
    row.values.assign(values.begin() + static_cast<std::ptrdiff_t>(t * m),
                      values.begin() + static_cast<std::ptrdiff_t>((t + 1) * m));
    for (const double v : row.values)
      if (!std::isfinite(v))
        throw Unreadable{
            fmt::format("{}: row {} holds {}; expected finite coefficients", coeff_name, t, v)};
  }
}

template <class T>
void broadcast_vector(MPI_Comm comm, std::vector<T>& values) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::uint64_t size = values.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
  values.resize(size);
  if (size > 0) MPI_Bcast(values.data(), static_cast<int>(size * sizeof(T)), MPI_BYTE, 0, comm);
}

void broadcast_string(MPI_Comm comm, std::string& s) {
  std::vector<char> chars(s.begin(), s.end());
  broadcast_vector(comm, chars);
  s.assign(chars.begin(), chars.end());
}

void broadcast_section(MPI_Comm comm, CoeffSection& c) {
  broadcast_string(comm, c.name);
  broadcast_string(comm, c.style);
  broadcast_string(comm, c.dataset);
  MPI_Bcast(&c.line, 1, MPI_INT, 0, comm);
  std::uint64_t rows = c.rows.size();
  MPI_Bcast(&rows, 1, MPI_UINT64_T, 0, comm);
  c.rows.resize(rows);
  for (auto& row : c.rows) {
    int head[3] = {row.type, row.type2, row.line};
    MPI_Bcast(head, 3, MPI_INT, 0, comm);
    row.type = head[0];
    row.type2 = head[1];
    row.line = head[2];
    broadcast_vector(comm, row.values);
  }
}

}  // namespace

void read_connectivity(hid_t file, const std::string& group, std::int64_t natoms, int index_base,
                       Topology& out) {
  if (H5Lexists(file, "/connectivity", H5P_DEFAULT) <= 0) return;
  read_kind<2>(file, group, natoms, index_base, "bonds", "bond", "Bond Coeffs", out.bonds,
               out.bond_coeffs, out.bond_types);
  read_kind<3>(file, group, natoms, index_base, "angles", "angle", "Angle Coeffs", out.angles,
               out.angle_coeffs, out.angle_types);
  read_kind<4>(file, group, natoms, index_base, "dihedrals", "dihedral", "Dihedral Coeffs",
               out.dihedrals, out.dihedral_coeffs, out.dihedral_types);
  read_kind<4>(file, group, natoms, index_base, "impropers", "improper", "Improper Coeffs",
               out.impropers, out.improper_coeffs, out.improper_types);
}

void broadcast_topology(MPI_Comm comm, Topology& t) {
  int types[4] = {t.bond_types, t.angle_types, t.dihedral_types, t.improper_types};
  MPI_Bcast(types, 4, MPI_INT, 0, comm);
  t.bond_types = types[0];
  t.angle_types = types[1];
  t.dihedral_types = types[2];
  t.improper_types = types[3];
  broadcast_vector(comm, t.bonds);
  broadcast_vector(comm, t.angles);
  broadcast_vector(comm, t.dihedrals);
  broadcast_vector(comm, t.impropers);
  for (CoeffSection* c :
       {&t.pair_coeffs, &t.bond_coeffs, &t.angle_coeffs, &t.dihedral_coeffs, &t.improper_coeffs})
    broadcast_section(comm, *c);
}

}  // namespace stratus::io::detail
