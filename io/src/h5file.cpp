// H5Writer: parallel (MPI-IO) writing of Stratus HDF5 files and their common metadata.
#include "stratus/io/h5file.hpp"

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string_view>
#include <utility>

namespace stratus::io {
namespace {

using detail::Handle;
using detail::QuietHdf5Errors;

herr_t keep_innermost(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err != nullptr && err->desc != nullptr) {
    *static_cast<std::string*>(out) = err->desc;
  }
  return 0;
}

/// The most specific message on HDF5's error stack (", <message>"), then clears the stack.
std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail.empty() ? std::string() : ": " + detail;
}

/// Returns `result` unless it signals an HDF5 failure (negative), then throws RuntimeError.
template <class T>
T checked(T result, const std::string& path, std::string_view what) {
  if (result < 0) {
    throw RuntimeError(fmt::format("{}: {} failed{}", path, what, hdf5_error_detail()));
  }
  return result;
}

/// Variable-length UTF-8 string type: h5py reads these attributes as `str`.
Handle make_string_type(const std::string& path) {
  Handle type(checked(H5Tcopy(H5T_C_S1), path, "copying the string type"), H5Tclose);
  checked(H5Tset_size(type, H5T_VARIABLE), path, "setting the string size");
  checked(H5Tset_cset(type, H5T_CSET_UTF8), path, "setting the string character set");
  return type;
}

/// Writes (replacing any previous one) attribute `name` on `object`.
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

void require_open(hid_t file, const std::string& path) {
  if (file < 0) throw RuntimeError(fmt::format("{}: HDF5 file used after close()", path));
}

}  // namespace

H5Writer::H5Writer(MPI_Comm comm, const std::string& path, const std::string& format,
                   const std::string& resolved_deck)
    : comm_(comm), path_(path) {
  QuietHdf5Errors quiet;
  {
    Handle fapl(checked(H5Pcreate(H5P_FILE_ACCESS), path_, "creating a file access list"),
                H5Pclose);
    checked(H5Pset_fapl_mpio(fapl, comm_, MPI_INFO_NULL), path_, "selecting the MPI-IO driver");
    checked(H5Pset_coll_metadata_write(fapl, 1), path_, "enabling collective metadata writes");
    const hid_t file = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
      throw RuntimeError(fmt::format(
          "{}: cannot create the HDF5 file{} (does its directory exist and is it writable?)", path_,
          hdf5_error_detail()));
    }
    file_ = file;
  }
  try {
    int ranks = 1;
    MPI_Comm_size(comm_, &ranks);
    write_attribute("/", "stratus_format", format);
    write_attribute("/", "stratus_format_version", std::int64_t{kFileFormatVersion});
    write_attribute("/", "stratus_version", std::string(stratus_version()));
    write_attribute("/", "stratus_git_revision", std::string(git_revision()));
    write_attribute("/", "created_utc", utc_now(comm_));
    write_attribute("/", "mpi_ranks", std::int64_t{ranks});
    create_group("/stratus");

    // Parallel HDF5 cannot write variable-length data, so the deck is one fixed-length UTF-8
    // string (h5py reads either kind the same way); rank 0 writes it, the others select none.
    Handle type(checked(H5Tcopy(H5T_C_S1), path_, "copying the string type"), H5Tclose);
    checked(H5Tset_size(type, std::max<std::size_t>(resolved_deck.size(), 1)), path_,
            "setting the deck string size");
    checked(H5Tset_cset(type, H5T_CSET_UTF8), path_, "setting the string character set");
    checked(H5Tset_strpad(type, H5T_STR_NULLPAD), path_, "setting the string padding");
    Handle space(checked(H5Screate(H5S_SCALAR), path_, "creating a dataspace"), H5Sclose);
    Handle deck(checked(H5Dcreate2(file_, "/stratus/deck", type, space, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT),
                        path_, "creating /stratus/deck"),
                H5Dclose);
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (rank != 0) checked(H5Sselect_none(space), path_, "selecting nothing in /stratus/deck");
    Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path_, "creating a transfer list"), H5Pclose);
    checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path_, "selecting collective transfer");
    std::string text = resolved_deck;
    text.resize(std::max<std::size_t>(text.size(), 1), '\0');
    checked(H5Dwrite(deck, type, space, space, dxpl, text.data()), path_, "writing /stratus/deck");
  } catch (...) {
    H5Fclose(file_);
    file_ = -1;
    throw;
  }
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
  // Walk the components so that existing parents are kept and missing ones are created.
  std::string prefix;
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    if (next > pos) {
      prefix += '/';
      prefix.append(path, pos, next - pos);
      const htri_t exists =
          checked(H5Lexists(file_, prefix.c_str(), H5P_DEFAULT), path_, "looking up " + prefix);
      if (exists == 0) {
        Handle group(
            checked(H5Gcreate2(file_, prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_,
                    "creating group " + prefix),
            H5Gclose);
      }
    }
    pos = next + 1;
  }
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::string& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  Handle type = make_string_type(path_);
  Handle space(checked(H5Screate(H5S_SCALAR), path_, "creating a dataspace"), H5Sclose);
  const char* text = value.c_str();
  put_attribute(file_, path_, object, name, type, type, space, &text);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               std::int64_t value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  put_numeric_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, 1,
                        true);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name, double value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  put_numeric_attribute(file_, path_, object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1,
                        true);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::vector<double>& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  put_numeric_attribute(file_, path_, object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, value.data(),
                        value.size(), false);
}

void H5Writer::write_attribute(const std::string& object, const std::string& name,
                               const std::vector<std::int64_t>& value) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  put_numeric_attribute(file_, path_, object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, value.data(),
                        value.size(), false);
}

void H5Writer::write_field(const std::string& dataset, const Field3D& field, int ghost,
                           const GridBlock& block, std::array<std::int64_t, 3> global_cells) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  const auto g = static_cast<std::size_t>(ghost);
  for (int a = 0; a < 3; ++a) {
    const bool fits = ghost >= 0 && block.begin[a] >= 0 && block.extent[a] >= 0 &&
                      block.begin[a] + block.extent[a] <= global_cells[a] &&
                      field.extent(a) == static_cast<std::size_t>(block.extent[a]) + 2 * g;
    if (!fits) {
      throw RuntimeError(fmt::format(
          "{}: write_field('{}'): axis {}: block [{}, {}) of {} cells with {} ghost layers does "
          "not match a field of extent {}",
          path_, dataset, a, block.begin[a], block.begin[a] + block.extent[a], global_cells[a],
          ghost, field.extent(a)));
    }
  }

  // Interior -> contiguous device buffer -> host (a plain mirror when the device is the host).
  const std::array<std::size_t, 3> n = {static_cast<std::size_t>(block.extent[0]),
                                        static_cast<std::size_t>(block.extent[1]),
                                        static_cast<std::size_t>(block.extent[2])};
  auto interior = Kokkos::subview(field, std::make_pair(g, g + n[0]), std::make_pair(g, g + n[1]),
                                  std::make_pair(g, g + n[2]));
  Field3D packed(Kokkos::view_alloc(Kokkos::WithoutInitializing, "stratus::io::write_field"), n[0],
                 n[1], n[2]);
  Kokkos::deep_copy(packed, interior);
  auto host = Kokkos::create_mirror_view(packed);
  Kokkos::deep_copy(host, packed);

  const std::string what = "dataset " + dataset;
  hsize_t dims[3];
  hsize_t start[3];
  hsize_t count[3];
  for (int a = 0; a < 3; ++a) {
    dims[a] = static_cast<hsize_t>(global_cells[a]);
    start[a] = static_cast<hsize_t>(block.begin[a]);
    count[a] = static_cast<hsize_t>(block.extent[a]);
  }
  Handle file_space(checked(H5Screate_simple(3, dims, nullptr), path_, "creating a dataspace"),
                    H5Sclose);
  Handle lcpl(checked(H5Pcreate(H5P_LINK_CREATE), path_, "creating a link creation list"),
              H5Pclose);
  checked(H5Pset_create_intermediate_group(lcpl, 1), path_, "enabling intermediate groups");
  Handle dset(checked(H5Dcreate2(file_, dataset.c_str(), H5T_IEEE_F64LE, file_space, lcpl,
                                 H5P_DEFAULT, H5P_DEFAULT),
                      path_, "creating " + what),
              H5Dclose);

  // A rank with an empty block selects nothing but still takes part in the collective write.
  const bool empty = block.cells() == 0;
  const hsize_t one[1] = {1};
  Handle mem_space(
      checked(empty ? H5Screate_simple(1, one, nullptr) : H5Screate_simple(3, count, nullptr),
              path_, "creating a dataspace"),
      H5Sclose);
  if (empty) {
    checked(H5Sselect_none(file_space), path_, "selecting nothing in " + what);
    checked(H5Sselect_none(mem_space), path_, "selecting nothing in memory");
  } else {
    checked(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), path_,
            "selecting this rank's block of " + what);
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path_, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path_, "selecting collective transfer");
  double unused = 0.0;
  const void* data = empty ? static_cast<const void*>(&unused) : host.data();
  checked(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem_space, file_space, dxpl, data), path_,
          "writing " + what);
}

void H5Writer::close() {
  if (file_ < 0) return;
  QuietHdf5Errors quiet;
  const hid_t file = std::exchange(file_, -1);
  checked(H5Fclose(file), path_, "closing the file");
}

}  // namespace stratus::io
