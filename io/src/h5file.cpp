// H5Writer: parallel (MPI-IO) writing of Stratus HDF5 files and their common metadata.
#include "stratus/io/h5file.hpp"

#include "stratus/core/agree.hpp"

#include "stratus/io/checkpoint.hpp"

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string_view>
#include <utility>

#include <sys/mman.h>

namespace stratus::io {

namespace detail {
namespace {

herr_t keep_innermost(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err != nullptr && err->desc != nullptr) {
    *static_cast<std::string*>(out) = err->desc;
  }
  return 0;
}

/// Current UTC time in ISO 8601 ("2024-05-01T12:00:00Z"), taken on rank 0 of `comm` so that
/// every rank writes the same attribute value.
std::string utc_now(MPI_Comm comm) {
  char text[32] = {};
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  }
  MPI_Bcast(text, sizeof text, MPI_CHAR, 0, comm);
  return text;
}

}  // namespace

std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail.empty() ? std::string() : ": " + detail;
}

Handle make_string_type(const std::string& path) {
  Handle type(checked(H5Tcopy(H5T_C_S1), path, "copying the string type"), H5Tclose);
  checked(H5Tset_size(type, H5T_VARIABLE), path, "setting the string size");
  checked(H5Tset_cset(type, H5T_CSET_UTF8), path, "setting the string character set");
  return type;
}

void put_attribute(hid_t file, const std::string& path, const std::string& object,
                   const std::string& name, hid_t file_type, hid_t mem_type, hid_t space,
                   const void* data) {
  const std::string where = fmt::format("attribute '{}' of '{}'", name, object);
  Handle obj(checked(H5Oopen(file, object.c_str(), H5P_DEFAULT), path, "opening " + object),
             H5Oclose);
  if (checked(H5Aexists(obj, name.c_str()), path, "looking up " + where) > 0) {
    checked(H5Adelete(obj, name.c_str()), path, "deleting the old " + where);
  }
  Handle attr(checked(H5Acreate2(obj, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT),
                      path, "creating " + where),
              H5Aclose);
  checked(H5Awrite(attr, mem_type, data), path, "writing " + where);
}

void put_numeric_attribute(hid_t file, const std::string& path, const std::string& object,
                           const std::string& name, hid_t file_type, hid_t mem_type,
                           const void* data, std::size_t count, bool scalar) {
  const hsize_t dims[1] = {static_cast<hsize_t>(count)};
  Handle space(checked(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr), path,
                       "creating a dataspace"),
               H5Sclose);
  put_attribute(file, path, object, name, file_type, mem_type, space, data);
}

std::string read_string_attribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return {};
  Handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return {};
  Handle type(H5Aget_type(attr), H5Tclose);
  if (!type.valid() || H5Tget_class(type) != H5T_STRING) return {};
  Handle space(H5Aget_space(attr), H5Sclose);
  if (!space.valid() || H5Sget_simple_extent_npoints(space) != 1) return {};
  Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!mem.valid()) return {};
  H5Tset_cset(mem, H5Tget_cset(type));
  if (H5Tis_variable_str(type) > 0) {
    H5Tset_size(mem, H5T_VARIABLE);
    char* text = nullptr;
    if (H5Aread(attr, mem, &text) < 0) return {};
    std::string out = text != nullptr ? text : "";
    H5free_memory(text);
    return out;
  }
  const std::size_t size = H5Tget_size(type);
  std::string out(size + 1, '\0');
  H5Tset_size(mem, size + 1);
  H5Tset_strpad(mem, H5T_STR_NULLTERM);
  if (H5Aread(attr, mem, out.data()) < 0) return {};
  out.resize(std::char_traits<char>::length(out.c_str()));
  return out;
}

void put_string_attribute(hid_t file, const std::string& path, const std::string& object,
                          const std::string& name, const std::string& value) {
  Handle type = make_string_type(path);
  Handle space(checked(H5Screate(H5S_SCALAR), path, "creating a dataspace"), H5Sclose);
  const char* text = value.c_str();
  put_attribute(file, path, object, name, type, type, space, &text);
}

void put_string_array_attribute(hid_t file, const std::string& path, const std::string& object,
                                const std::string& name, const std::vector<std::string>& value) {
  Handle type = make_string_type(path);
  const hsize_t dims[1] = {static_cast<hsize_t>(value.size())};
  Handle space(checked(H5Screate_simple(1, dims, nullptr), path, "creating a dataspace"), H5Sclose);
  std::vector<const char*> texts;
  texts.reserve(value.size());
  for (const auto& text : value) texts.push_back(text.c_str());
  put_attribute(file, path, object, name, type, type, space, texts.data());
}

void create_groups(hid_t file, const std::string& path, const std::string& group) {
  // Walk the components so that existing parents are kept and missing ones are created.
  std::string prefix;
  std::size_t pos = 0;
  while (pos <= group.size()) {
    std::size_t next = group.find('/', pos);
    if (next == std::string::npos) next = group.size();
    if (next > pos) {
      prefix += '/';
      prefix.append(group, pos, next - pos);
      const htri_t exists =
          checked(H5Lexists(file, prefix.c_str(), H5P_DEFAULT), path, "looking up " + prefix);
      if (exists == 0) {
        Handle created(
            checked(H5Gcreate2(file, prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path,
                    "creating group " + prefix),
            H5Gclose);
      }
    }
    pos = next + 1;
  }
}

hid_t create_stratus_file(MPI_Comm comm, const std::string& path, const std::string& format,
                          const std::string& resolved_deck) {
  QuietHdf5Errors quiet;
  hid_t file = -1;
  {
    Handle fapl(checked(H5Pcreate(H5P_FILE_ACCESS), path, "creating a file access list"), H5Pclose);
    checked(H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), path, "selecting the MPI-IO driver");
    checked(H5Pset_coll_metadata_write(fapl, 1), path, "enabling collective metadata writes");
    file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
      throw RuntimeError(fmt::format(
          "{}: cannot create the HDF5 file{} (does its directory exist and is it writable?)", path,
          hdf5_error_detail()));
    }
  }
  try {
    int ranks = 1;
    int rank = 0;
    MPI_Comm_size(comm, &ranks);
    MPI_Comm_rank(comm, &rank);
    const std::int64_t layout_version = kFileFormatVersion;
    const std::int64_t nranks = ranks;
    put_string_attribute(file, path, "/", "stratus_format", format);
    put_numeric_attribute(file, path, "/", "stratus_format_version", H5T_STD_I64LE,
                          H5T_NATIVE_INT64, &layout_version, 1, true);
    put_string_attribute(file, path, "/", "stratus_version", std::string(stratus_version()));
    put_string_attribute(file, path, "/", "stratus_git_revision", std::string(git_revision()));
    put_string_attribute(file, path, "/", "created_utc", utc_now(comm));
    put_numeric_attribute(file, path, "/", "mpi_ranks", H5T_STD_I64LE, H5T_NATIVE_INT64, &nranks, 1,
                          true);
    create_groups(file, path, "/stratus");

    // Parallel HDF5 cannot write variable-length data, so the deck is one fixed-length UTF-8
    // string (h5py reads either kind the same way); rank 0 writes it, the others select none.
    Handle type(checked(H5Tcopy(H5T_C_S1), path, "copying the string type"), H5Tclose);
    checked(H5Tset_size(type, std::max<std::size_t>(resolved_deck.size(), 1)), path,
            "setting the deck string size");
    checked(H5Tset_cset(type, H5T_CSET_UTF8), path, "setting the string character set");
    checked(H5Tset_strpad(type, H5T_STR_NULLPAD), path, "setting the string padding");
    Handle space(checked(H5Screate(H5S_SCALAR), path, "creating a dataspace"), H5Sclose);
    Handle deck(checked(H5Dcreate2(file, "/stratus/deck", type, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT),
                        path, "creating /stratus/deck"),
                H5Dclose);
    if (rank != 0) checked(H5Sselect_none(space), path, "selecting nothing in /stratus/deck");
    Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
    checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");
    std::string text = resolved_deck;
    text.resize(std::max<std::size_t>(text.size(), 1), '\0');
    checked(H5Dwrite(deck, type, space, space, dxpl, text.data()), path, "writing /stratus/deck");
  } catch (...) {
    H5Fclose(file);
    throw;
  }
  return file;
}

void advise_huge_pages(const void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin)
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);  // NOLINT
#else
  (void)data;
  (void)bytes;
#endif
}

Handle no_fill_dcpl(const std::string& path) {
  Handle dcpl(checked(H5Pcreate(H5P_DATASET_CREATE), path, "creating a dataset creation list"),
              H5Pclose);
  checked(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), path, "disabling fill values");
  return dcpl;
}

void write_collective(hid_t dataset, hid_t file_space, int rank, const hsize_t* start,
                      const hsize_t* count, hid_t mem_type, const void* data,
                      const std::string& path, const std::string& what,
                      const std::string& writing) {
  hsize_t elements = 1;
  for (int d = 0; d < rank; ++d) elements *= count[d];
  const hsize_t mem_dims[1] = {std::max<hsize_t>(elements, 1)};
  Handle mem_space(checked(H5Screate_simple(1, mem_dims, nullptr), path, "creating a dataspace"),
                   H5Sclose);
  double unused = 0.0;
  if (elements == 0) {
    checked(H5Sselect_none(file_space), path, "selecting nothing in " + what);
    checked(H5Sselect_none(mem_space), path, "selecting nothing in memory");
    data = &unused;
  } else {
    checked(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), path,
            "selecting this rank's rows of " + what);
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");
  checked(H5Dwrite(dataset, mem_type, mem_space, file_space, dxpl, data), path, writing);
}

namespace {

/// "value nan at cell (i, j, k)" for the first non-finite value of a slab of `rows` planes
/// starting at plane i0 of `block` (z fastest), or "".
std::string first_non_finite(const double* values, std::size_t rows,
                             const std::array<std::size_t, 3>& n, const GridBlock& block,
                             std::size_t i0) {
  const std::size_t count = rows * n[1] * n[2];
  for (std::size_t p = 0; p < count; ++p) {
    if (std::isfinite(values[p])) continue;
    const std::size_t k = p % n[2], j = (p / n[2]) % n[1], i = p / (n[1] * n[2]);
    return fmt::format("value {} at cell ({}, {}, {})", values[p],
                       block.begin[0] + static_cast<std::int64_t>(i0 + i),
                       block.begin[1] + static_cast<std::int64_t>(j),
                       block.begin[2] + static_cast<std::int64_t>(k));
  }
  return {};
}

}  // namespace

void write_field_block(MPI_Comm comm, hid_t file, const std::string& path,
                       const std::string& dataset, const GridArray& field, int ghost,
                       const GridBlock& block, std::array<std::int64_t, 3> global_cells,
                       std::uint64_t* checksum, const FlatPlacement* flat) {
  const auto g = static_cast<std::size_t>(ghost);
  for (int a = 0; a < 3; ++a) {
    const bool fits = ghost >= 0 && block.begin[a] >= 0 && block.extent[a] >= 0 &&
                      block.begin[a] + block.extent[a] <= global_cells[a] &&
                      field.extent[a] == static_cast<std::size_t>(block.extent[a]) + 2 * g;
    if (!fits) {
      throw RuntimeError(fmt::format(
          "{}: write_field('{}'): axis {}: block [{}, {}) of {} cells with {} ghost layers does "
          "not match a field of extent {}",
          path, dataset, a, block.begin[a], block.begin[a] + block.extent[a], global_cells[a],
          ghost, field.extent[a]));
    }
  }

  const std::string what = "dataset " + dataset;
  hsize_t dims[3];
  for (int a = 0; a < 3; ++a) dims[a] = static_cast<hsize_t>(global_cells[a]);
  if (flat != nullptr) dims[0] = flat->total;
  Handle file_space(checked(H5Screate_simple(flat != nullptr ? 1 : 3, dims, nullptr), path,
                            "creating a dataspace"),
                    H5Sclose);
  Handle lcpl(checked(H5Pcreate(H5P_LINK_CREATE), path, "creating a link creation list"), H5Pclose);
  checked(H5Pset_create_intermediate_group(lcpl, 1), path, "enabling intermediate groups");
  const Handle dcpl = no_fill_dcpl(path);
  Handle dset(checked(H5Dcreate2(file, dataset.c_str(), H5T_IEEE_F64LE, file_space, lcpl, dcpl,
                                 H5P_DEFAULT),
                      path, "creating " + what),
              H5Dclose);
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");

  // Slabs of whole planes along x: interior -> host buffer (through a small contiguous device
  // buffer when the field is on a GPU: grid_array) -> file. Every rank makes the same number of
  // collective writes; a rank out of planes selects nothing.
  const std::array<std::size_t, 3> n = {static_cast<std::size_t>(block.extent[0]),
                                        static_cast<std::size_t>(block.extent[1]),
                                        static_cast<std::size_t>(block.extent[2])};
  const std::size_t plane = std::max<std::size_t>(n[1] * n[2], 1);
  const std::size_t per_slab = std::max<std::size_t>(1, kSlabBytes / (plane * sizeof(double)));
  const std::size_t depth = block.cells() == 0 ? 0 : std::min(per_slab, n[0]);
  long long slabs = depth == 0 ? 0 : static_cast<long long>((n[0] + depth - 1) / depth);
  MPI_Allreduce(MPI_IN_PLACE, &slabs, 1, MPI_LONG_LONG, MPI_MAX, comm);
  const std::unique_ptr<double[]> host(new double[std::max<std::size_t>(depth * plane, 1)]);
  advise_huge_pages(host.get(), depth * plane * sizeof(double));
  Checksum64 sum;
  std::string non_finite;  // the first non-finite value of this rank's block
  for (long long s = 0; s < slabs; ++s) {
    const std::size_t i0 = std::min(n[0], static_cast<std::size_t>(s) * depth);
    const std::size_t i1 = std::min(n[0], i0 + depth);
    const std::size_t rows = i1 - i0;
    const hsize_t one[1] = {1};
    const hsize_t count[3] = {rows, n[1], n[2]};
    Handle mem_space(checked(rows == 0 || block.cells() == 0 ? H5Screate_simple(1, one, nullptr)
                                                             : H5Screate_simple(3, count, nullptr),
                             path, "creating a dataspace"),
                     H5Sclose);
    double unused = 0.0;
    const void* data = &unused;
    if (rows == 0 || block.cells() == 0) {
      checked(H5Sselect_none(file_space), path, "selecting nothing in " + what);
      checked(H5Sselect_none(mem_space), path, "selecting nothing in memory");
    } else {
      field.get({g + i0, g, g}, {rows, n[1], n[2]}, host.get());
      if (non_finite.empty()) non_finite = first_non_finite(host.get(), rows, n, block, i0);
      if (checksum != nullptr) sum.update(host.get(), rows * plane * sizeof(double));
      const hsize_t start[3] = {static_cast<hsize_t>(block.begin[0]) + i0,
                                static_cast<hsize_t>(block.begin[1]),
                                static_cast<hsize_t>(block.begin[2])};
      // Flat: planes [i0, i1) of the block are one contiguous run of the 1D dataset.
      const hsize_t run[1] = {rows * plane};
      const hsize_t at[1] = {flat != nullptr ? flat->offset + i0 * plane : 0};
      checked(flat != nullptr
                  ? H5Sselect_hyperslab(file_space, H5S_SELECT_SET, at, nullptr, run, nullptr)
                  : H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr),
              path, "selecting this rank's block of " + what);
      data = host.get();
    }
    checked(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem_space, file_space, dxpl, data), path,
            "writing " + what);
  }
  if (checksum != nullptr) *checksum = sum.value();
  // A file never holds a NaN or an infinity: the caller's file is discarded (checkpoints) or
  // the run stops, naming the cell.
  non_finite = agree_on_message(comm, non_finite);
  if (!non_finite.empty())
    throw RuntimeError(fmt::format("{}: {} not written: {}", path, dataset, non_finite));
}

}  // namespace detail

namespace {

using detail::checked;
using detail::Handle;
using detail::QuietHdf5Errors;

void require_open(hid_t file, const std::string& path) {
  if (file < 0) throw RuntimeError(fmt::format("{}: HDF5 file used after close()", path));
}

}  // namespace

H5Writer::H5Writer(MPI_Comm comm, const std::string& path, const std::string& format,
                   const std::string& resolved_deck)
    : comm_(comm), path_(path) {
  file_ = detail::create_stratus_file(comm_, path_, format, resolved_deck);
}

H5Writer::~H5Writer() {
  if (file_ < 0) return;
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stratus: %s\n", e.what());  // destructors must not throw
  }
}

void H5Writer::create_group(const std::string& path) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::create_groups(file_, path_, path);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::string& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::put_string_attribute(file_, path_, object, name, value);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               std::int64_t value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::put_numeric_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value,
                                1, true);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name, double value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::put_numeric_attribute(file_, path_, object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                &value, 1, true);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::vector<double>& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::put_numeric_attribute(file_, path_, object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                value.data(), value.size(), false);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::vector<std::int64_t>& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::put_numeric_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64,
                                value.data(), value.size(), false);
}

void H5Writer::write_field(const std::string& dataset, const GridArray& field, int ghost,
                           const GridBlock& block, std::array<std::int64_t, 3> global_cells) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  detail::write_field_block(comm_, file_, path_, dataset, field, ghost, block, global_cells);
}

void H5Writer::close() {
  if (file_ < 0) return;
  QuietHdf5Errors quiet;
  const hid_t file = std::exchange(file_, -1);
  checked(H5Fclose(file), path_, "closing the file");
}

}  // namespace stratus::io
