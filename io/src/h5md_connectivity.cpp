// H5mdWriter::write_connectivity: a molecular topology as H5MD 1.1 connectivity (tuples lists
// that refer to /particles/all), with Stratus's per-term types and per-type coefficients under
// /parameters/stratus/connectivity (layout: h5md.hpp).
//
// The topology is distributed like the atoms: each rank holds the terms of the atoms it owns.
// As for a frame's atoms, the terms travel to the rank whose block of ids holds their owner
// (one ParticlePlan), are ordered there by owner, and every rank writes its contiguous run of
// rows in one collective call, so the file does not depend on the decomposition. The
// coefficients are a few numbers per type, the same on every rank: rank 0 writes them, as it
// writes a frame's step, time and box.
#include "h5_support.hpp"
#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/particle_plan.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/io/h5md.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace stratus::io {

namespace {

using detail::checked;
using detail::Handle;

constexpr const char* kParameters = "/parameters/stratus/connectivity";

/// The first problem of this rank's share of `k` ("" if none): lengths, ids, owners, types and
/// coefficients.
std::string check_kind(const H5mdTuples& k, std::int64_t natoms) {
  const int width = h5md_tuple_width(k.name);
  if (width == 0)
    return fmt::format("\"{}\" is not a kind of term (bonds, angles, dihedrals, impropers)",
                       k.name);
  const std::size_t n = k.types.size();
  if (k.atoms.size() != n * static_cast<std::size_t>(width) || k.owners.size() != n)
    return fmt::format("{}: {} types, {} owners and {} atom ids for {} ids per term", k.name, n,
                       k.owners.size(), k.atoms.size(), width);
  for (std::size_t t = 0; t < n; ++t) {
    for (int a = 0; a < width; ++a) {
      const std::int64_t id = k.atoms[t * static_cast<std::size_t>(width) + a];
      if (id < 0 || id >= natoms)
        return fmt::format("{}: a term names atom id {}, outside [0, {})", k.name, id, natoms);
    }
    if (k.owners[t] < 0 || k.owners[t] >= natoms)
      return fmt::format("{}: a term's owner id {} is outside [0, {})", k.name, k.owners[t],
                         natoms);
    if (k.types[t] < 0 || static_cast<std::size_t>(k.types[t]) >= k.coeffs.size())
      return fmt::format("{}: a term of type {} has no coefficients ({} type(s) given)", k.name,
                         k.types[t], k.coeffs.size());
  }
  for (const auto& row : k.coeffs) {
    if (row.empty() || row.size() != k.coeffs.front().size())
      return fmt::format("{}: coefficient rows of {} and {} numbers; expected one length >= 1",
                         k.name, k.coeffs.front().size(), row.size());
    for (const double v : row)
      if (!std::isfinite(v)) return fmt::format("{}: a coefficient is {}", k.name, v);
  }
  return {};
}

/// Creates the 1D or 2D dataset `name` of `rows` x `width` (width 0: 1D) values of `file_type`
/// and writes this rank's rows [first, first + count) from `data` (collective; a rank with none
/// selects nothing).
void write_rows(hid_t file, const std::string& path, const std::string& name, hid_t file_type,
                hid_t mem_type, hsize_t rows, hsize_t width, hsize_t first, hsize_t count,
                const void* data) {
  const int rank = width == 0 ? 1 : 2;
  const hsize_t dims[2] = {rows, width};
  Handle space(checked(H5Screate_simple(rank, dims, nullptr), path, "creating a dataspace"),
               H5Sclose);
  const Handle dcpl = detail::no_fill_dcpl(path);
  Handle dset(
      checked(H5Dcreate2(file, name.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
              path, "creating dataset " + name),
      H5Dclose);
  const hsize_t start[2] = {first, 0};
  const hsize_t block[2] = {count, width};
  detail::write_collective(dset, space, rank, start, block, mem_type, data, path, name,
                           "writing " + name);
}

}  // namespace

int h5md_tuple_width(const std::string& name) {
  if (name == "bonds") return 2;
  if (name == "angles") return 3;
  if (name == "dihedrals" || name == "impropers") return 4;
  return 0;
}

void H5mdWriter::write_connectivity(const std::vector<H5mdTuples>& kinds) {
  detail::QuietHdf5Errors quiet;
  if (file_ < 0) throw RuntimeError(fmt::format("{}: H5MD file used after close()", path_));
  if (connectivity_written_)
    throw RuntimeError(fmt::format("{}: the connectivity is written once per file", path_));
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  std::string problem;
  std::set<std::string> names;
  for (const H5mdTuples& k : kinds) {
    problem = names.insert(k.name).second ? check_kind(k, natoms_)
                                          : fmt::format("\"{}\" is given twice", k.name);
    if (!problem.empty()) break;
  }
  if (const std::string where = agree_on_message(comm_, problem); !where.empty())
    throw RuntimeError(fmt::format("{}: connectivity not written: {}", path_, where));

  for (const H5mdTuples& k : kinds) {
    const int width = h5md_tuple_width(k.name);
    const auto w = static_cast<std::size_t>(width);
    std::int64_t total = static_cast<std::int64_t>(k.types.size());
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, comm_);
    if (k.total >= 0 && total != k.total)
      throw RuntimeError(fmt::format(
          "{}: connectivity not written: the ranks hold {} {} together, the system has {}", path_,
          total, k.name, k.total));
    if (total == 0) continue;
    // Each term to the rank whose block of ids holds its owner, then ordered by owner there
    // (stable: a plan keeps each source's order, and one owner's terms come from one rank).
    std::vector<int> dest(k.types.size());
    for (std::size_t t = 0; t < dest.size(); ++t) dest[t] = row_owner(natoms_, ranks, k.owners[t]);
    const ParticlePlan plan(comm_, dest);
    const auto owners = plan.execute(k.owners);
    const auto atoms = plan.execute(k.atoms, width);
    const auto types = plan.execute(k.types);
    std::vector<std::size_t> order(owners.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return owners[a] < owners[b]; });
    std::vector<std::int64_t> rows(order.size() * w);
    std::vector<std::int32_t> row_types(order.size());
    for (std::size_t r = 0; r < order.size(); ++r) {
      std::copy_n(atoms.begin() + static_cast<std::ptrdiff_t>(order[r] * w), w,
                  rows.begin() + static_cast<std::ptrdiff_t>(r * w));
      row_types[r] = types[order[r]];
    }
    std::int64_t count = static_cast<std::int64_t>(order.size()), first = 0;
    MPI_Exscan(&count, &first, 1, MPI_INT64_T, MPI_SUM, comm_);
    if (rank == 0) first = 0;  // MPI_Exscan leaves rank 0's result undefined

    const std::string tuples = "/connectivity/" + k.name;
    const std::string params = std::string(kParameters) + "/" + k.name;
    detail::create_groups(file_, path_, "/connectivity");
    detail::create_groups(file_, path_, params);
    const auto n = static_cast<hsize_t>(total);
    write_rows(file_, path_, tuples, H5T_STD_I64LE, H5T_NATIVE_INT64, n, w,
               static_cast<hsize_t>(first), static_cast<hsize_t>(count), rows.data());
    hobj_ref_t group{};
    checked(H5Rcreate(&group, file_, "/particles/all", H5R_OBJECT, -1), path_,
            "referencing /particles/all");
    {
      Handle scalar(checked(H5Screate(H5S_SCALAR), path_, "creating a dataspace"), H5Sclose);
      detail::put_attribute(file_, path_, tuples, "particles_group", H5T_STD_REF_OBJ,
                            H5T_STD_REF_OBJ, scalar, &group);
    }
    detail::put_string_attribute(
        file_, path_, tuples, "description",
        fmt::format("{} ids per term: global atom ids, 0-based (= the rows of /particles/all); "
                    "types and coefficients in {}",
                    width, params));
    write_rows(file_, path_, params + "/type", H5T_STD_I32LE, H5T_NATIVE_INT32, n, 0,
               static_cast<hsize_t>(first), static_cast<hsize_t>(count), row_types.data());
    detail::put_string_attribute(
        file_, path_, params + "/type", "description",
        fmt::format("type of row t of {}, 0-based (row T of coefficients)", tuples));
    const auto m = k.coeffs.front().size();
    std::vector<double> coeffs;
    for (const auto& row : k.coeffs) coeffs.insert(coeffs.end(), row.begin(), row.end());
    write_rows(file_, path_, params + "/coefficients", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
               static_cast<hsize_t>(k.coeffs.size()), static_cast<hsize_t>(m), 0,
               rank == 0 ? static_cast<hsize_t>(k.coeffs.size()) : 0, coeffs.data());
    detail::put_string_attribute(file_, path_, params + "/coefficients", "style", k.style);
    detail::put_string_attribute(file_, path_, params + "/coefficients", "section", k.section);
    detail::put_string_attribute(
        file_, path_, params + "/coefficients", "description",
        fmt::format("row T: the numbers of the {} line of type T + 1 in a LAMMPS data file, "
                    "as read (angles in degrees)",
                    k.section.empty() ? std::string("coefficients") : k.section));
  }
  checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing the file");
  connectivity_written_ = true;
}

}  // namespace stratus::io
