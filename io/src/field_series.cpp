#include "stratus/io/field_series.hpp"

#include "h5_support.hpp"
#include "stratus/core/version.hpp"
#include "stratus/io/h5file.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace stratus::io {

using detail::checked;
using detail::Handle;

namespace {

/// Like checked(), for readers: failures are the input's fault (InputError).
template <class T>
T read_checked(T result, const std::string& path, const std::string& what) {
  if (result < 0)
    throw InputError(fmt::format("{}: {} failed{}", path, what, detail::hdf5_error_detail()));
  return result;
}

}  // namespace

void write_xdmf_series(const std::string& path, const XdmfGrid& grid,
                       const std::vector<XdmfSnapshot>& snapshots) {
  const auto& d = grid.dims;
  const std::string dims = fmt::format("{} {} {}", d[0], d[1], d[2]);
  const int c = grid.cell_centred ? 1 : 0;
  const std::string points = fmt::format("{} {} {}", d[0] + c, d[1] + c, d[2] + c);
  const char* center = grid.cell_centred ? "Cell" : "Node";
  std::string x =
      "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
      "  <Grid Name=\"series\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& s : snapshots) {
    x += fmt::format("   <Grid Name=\"t={:.9g}\" GridType=\"Uniform\">\n", s.time);
    x += fmt::format("    <Time Value=\"{:.17g}\"/>\n", s.time);
    x += fmt::format("    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{}\"/>\n", points);
    x += "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
    x += fmt::format(
        "     <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
        "Dimensions=\"3\">{:.17g} "
        "{:.17g} {:.17g}</DataItem>\n",
        grid.origin[0], grid.origin[1], grid.origin[2]);
    x += fmt::format(
        "     <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" "
        "Dimensions=\"3\">{:.17g} "
        "{:.17g} {:.17g}</DataItem>\n",
        grid.spacing[0], grid.spacing[1], grid.spacing[2]);
    x += "    </Geometry>\n";
    const auto item = [&](const std::string& name) {
      return fmt::format(
          "<DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"8\" Dimensions=\"{}\">{}:/"
          "fields/{}</DataItem>",
          dims, s.file, name);
    };
    for (const auto& name : grid.scalars)
      x += fmt::format(
          "    <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"{}\">\n     {}\n"
          "    </Attribute>\n",
          name, center, item(name));
    for (const auto& v : grid.vectors)
      x += fmt::format(
          "    <Attribute Name=\"{}\" AttributeType=\"Vector\" Center=\"{}\">\n"
          "     <DataItem ItemType=\"Function\" Function=\"JOIN($0, $1, $2)\" "
          "Dimensions=\"{} 3\">\n      {}\n      {}\n      {}\n     </DataItem>\n"
          "    </Attribute>\n",
          v[0], center, dims, item(v[1]), item(v[2]), item(v[3]));
    x += "   </Grid>\n";
  }
  x += "  </Grid>\n </Domain>\n</Xdmf>\n";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << x;
    out.flush();
    if (!out) throw RuntimeError(fmt::format("{}: cannot write the XDMF series", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw RuntimeError(fmt::format("{}: cannot rename {}: {}", path, tmp, ec.message()));
}

double read_double_attribute(const std::string& path, const std::string& object,
                             const std::string& name) {
  const detail::QuietHdf5Errors quiet;
  Handle file(read_checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "opening"),
              H5Fclose);
  Handle attr(
      read_checked(H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                   path, "opening attribute " + object + ":" + name),
      H5Aclose);
  double v = 0;
  read_checked(H5Aread(attr, H5T_NATIVE_DOUBLE, &v), path, "reading " + object + ":" + name);
  return v;
}

std::vector<double> read_block_3d(const std::string& path, const std::string& dataset,
                                  std::array<std::int64_t, 3> expected_dims,
                                  std::array<std::int64_t, 3> begin,
                                  std::array<std::int64_t, 3> extent) {
  if (!std::filesystem::exists(path)) throw InputError(fmt::format("{}: no such file", path));
  const detail::QuietHdf5Errors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(fmt::format("{}: not an HDF5 file", path));
  Handle file(read_checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "opening"),
              H5Fclose);
  if (H5Lexists(file, dataset.c_str(), H5P_DEFAULT) <= 0)
    throw InputError(fmt::format("{}: no dataset {}", path, dataset));
  Handle dset(
      read_checked(H5Dopen2(file, dataset.c_str(), H5P_DEFAULT), path, "opening " + dataset),
      H5Dclose);
  Handle space(read_checked(H5Dget_space(dset), path, "reading the shape of " + dataset), H5Sclose);
  hsize_t dims[3] = {0, 0, 0};
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank == 3) H5Sget_simple_extent_dims(space, dims, nullptr);
  if (rank != 3 || static_cast<std::int64_t>(dims[0]) != expected_dims[0] ||
      static_cast<std::int64_t>(dims[1]) != expected_dims[1] ||
      static_cast<std::int64_t>(dims[2]) != expected_dims[2])
    throw InputError(fmt::format("{}: {} has shape ({}), expected ({}, {}, {})", path, dataset,
                                 rank == 3 ? fmt::format("{}, {}, {}", dims[0], dims[1], dims[2])
                                           : fmt::format("{} dimensions", rank),
                                 expected_dims[0], expected_dims[1], expected_dims[2]));
  hsize_t start[3], count[3];
  for (int a = 0; a < 3; ++a) {
    start[a] = static_cast<hsize_t>(begin[a]);
    count[a] = static_cast<hsize_t>(extent[a]);
  }
  read_checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr), path,
               "selecting a block of " + dataset);
  Handle memspace(read_checked(H5Screate_simple(3, count, nullptr), path, "creating a dataspace"),
                  H5Sclose);
  std::vector<double> out(static_cast<std::size_t>(extent[0] * extent[1] * extent[2]));
  read_checked(H5Dread(dset, H5T_NATIVE_DOUBLE, memspace, space, H5P_DEFAULT, out.data()), path,
               "reading " + dataset);
  return out;
}

ProfileFile::ProfileFile(std::string path, std::string quantity, std::vector<double> x,
                         std::string resolved_deck, std::int64_t resumed_at)
    : path_(std::move(path)),
      quantity_(std::move(quantity)),
      deck_(std::move(resolved_deck)),
      x_(std::move(x)) {
  if (resumed_at < 0 || !std::filesystem::exists(path_)) {
    create();
    return;
  }
  const detail::QuietHdf5Errors quiet;
  Handle file(checked(H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path_, "opening"),
              H5Fclose);
  Handle steps(checked(H5Dopen2(file, "/profiles/step", H5P_DEFAULT), path_, "opening step"),
               H5Dclose);
  Handle space(checked(H5Dget_space(steps), path_, "reading rows"), H5Sclose);
  hsize_t rows = 0;
  H5Sget_simple_extent_dims(space, &rows, nullptr);
  std::vector<std::int64_t> s(rows);
  if (rows > 0)
    checked(H5Dread(steps, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), path_,
            "reading steps");
  hsize_t keep = 0;
  while (keep < rows && s[keep] <= resumed_at) ++keep;
  for (const char* name : {"/profiles/step", "/profiles/time", "/profiles/value"}) {
    Handle d(checked(H5Dopen2(file, name, H5P_DEFAULT), path_, std::string("opening ") + name),
             H5Dclose);
    hsize_t dims[2] = {keep, x_.size()};
    checked(H5Dset_extent(d, dims), path_, std::string("cutting back ") + name);
  }
}

void ProfileFile::create() {
  Handle file(
      checked(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path_, "creating"),
      H5Fclose);
  Handle group(checked(H5Gcreate2(file, "/profiles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_,
                       "creating /profiles"),
               H5Gclose);
  // The common layout of Stratus files (docs/file-formats.md), written by this one process.
  {
    char when[32] = {};
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
    detail::put_string_attribute(file, path_, "/", "stratus_format", "profiles");
    const std::int64_t version = kFileFormatVersion, ranks = 1;
    detail::put_numeric_attribute(file, path_, "/", "stratus_format_version", H5T_STD_I64LE,
                                  H5T_NATIVE_INT64, &version, 1, true);
    detail::put_string_attribute(file, path_, "/", "stratus_version",
                                 std::string(stratus_version()));
    detail::put_string_attribute(file, path_, "/", "stratus_git_revision",
                                 std::string(git_revision()));
    detail::put_string_attribute(file, path_, "/", "created_utc", when);
    detail::put_numeric_attribute(file, path_, "/", "mpi_ranks", H5T_STD_I64LE, H5T_NATIVE_INT64,
                                  &ranks, 1, true);
    detail::put_string_attribute(file, path_, "/", "quantity", quantity_);
    Handle g(checked(H5Gcreate2(file, "/stratus", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path_,
                     "creating /stratus"),
             H5Gclose);
    Handle type(checked(H5Tcopy(H5T_C_S1), path_, "copying the string type"), H5Tclose);
    checked(H5Tset_size(type, std::max<std::size_t>(deck_.size(), 1)), path_, "sizing the deck");
    checked(H5Tset_cset(type, H5T_CSET_UTF8), path_, "setting the deck character set");
    Handle scalar(checked(H5Screate(H5S_SCALAR), path_, "creating a dataspace"), H5Sclose);
    Handle d(checked(H5Dcreate2(file, "/stratus/deck", type, scalar, H5P_DEFAULT, H5P_DEFAULT,
                                H5P_DEFAULT),
                     path_, "creating /stratus/deck"),
             H5Dclose);
    std::string text = deck_;
    text.resize(std::max<std::size_t>(deck_.size(), 1), '\0');
    checked(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), path_,
            "writing /stratus/deck");
  }
  const hsize_t n = x_.size();
  Handle xs(checked(H5Screate_simple(1, &n, nullptr), path_, "creating a dataspace"), H5Sclose);
  Handle xd(checked(H5Dcreate2(file, "/profiles/x", H5T_IEEE_F64LE, xs, H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT),
                    path_, "creating /profiles/x"),
            H5Dclose);
  checked(H5Dwrite(xd, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x_.data()), path_,
          "writing /profiles/x");
  for (const auto& [name, type, cols] :
       {std::tuple<const char*, hid_t, hsize_t>{"/profiles/step", H5T_STD_I64LE, 0},
        {"/profiles/time", H5T_IEEE_F64LE, 0},
        {"/profiles/value", H5T_IEEE_F64LE, n}}) {
    const int rank = cols == 0 ? 1 : 2;
    hsize_t dims[2] = {0, cols}, maxdims[2] = {H5S_UNLIMITED, cols}, chunk[2] = {16, cols};
    Handle space(checked(H5Screate_simple(rank, dims, maxdims), path_, "creating a dataspace"),
                 H5Sclose);
    Handle dcpl(checked(H5Pcreate(H5P_DATASET_CREATE), path_, "creating a property list"),
                H5Pclose);
    checked(H5Pset_chunk(dcpl, rank, chunk), path_, "setting chunks");
    Handle d(checked(H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), path_,
                     std::string("creating ") + name),
             H5Dclose);
  }
}

void ProfileFile::append(std::int64_t step, double time, const std::vector<double>& values) {
  Handle file(checked(H5Fopen(path_.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), path_, "opening"),
              H5Fclose);
  const hsize_t n = x_.size();
  hsize_t rows = 0;
  {
    Handle d(checked(H5Dopen2(file, "/profiles/step", H5P_DEFAULT), path_, "opening step"),
             H5Dclose);
    Handle space(checked(H5Dget_space(d), path_, "reading rows"), H5Sclose);
    H5Sget_simple_extent_dims(space, &rows, nullptr);
  }
  const auto put = [&](const char* name, hid_t mem_type, const void* data, hsize_t cols) {
    Handle d(checked(H5Dopen2(file, name, H5P_DEFAULT), path_, std::string("opening ") + name),
             H5Dclose);
    const int rank = cols == 0 ? 1 : 2;
    hsize_t dims[2] = {rows + 1, cols};
    checked(H5Dset_extent(d, dims), path_, std::string("extending ") + name);
    Handle space(checked(H5Dget_space(d), path_, "reading a dataspace"), H5Sclose);
    hsize_t start[2] = {rows, 0}, count[2] = {1, cols};
    checked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr), path_,
            "selecting a row");
    Handle mem(checked(H5Screate_simple(rank, count, nullptr), path_, "creating a dataspace"),
               H5Sclose);
    checked(H5Dwrite(d, mem_type, mem, space, H5P_DEFAULT, data), path_,
            std::string("writing ") + name);
  };
  put("/profiles/step", H5T_NATIVE_INT64, &step, 0);
  put("/profiles/time", H5T_NATIVE_DOUBLE, &time, 0);
  if (values.size() != n)
    throw RuntimeError(fmt::format("{}: a row of {} values, expected {}", path_, values.size(), n));
  put("/profiles/value", H5T_NATIVE_DOUBLE, values.data(), n);
  checked(H5Fflush(file, H5F_SCOPE_GLOBAL), path_, "flushing");
}

}  // namespace stratus::io
