// H5mdWriter: H5MD 1.1 trajectories written collectively with MPI-IO, one frame per append().
//
// Each rank owns the contiguous block of ids [begin(r), begin(r + 1)) of the file's rows. On
// every frame the atoms travel to the owner of their id (one MPI_Alltoallv), which then writes
// its block as a single hyperslab per dataset: the file selection of every rank is one
// contiguous run, the best case for MPI-IO, and a rank whose block is empty selects nothing but
// still takes part in every collective call.
#include "stratus/io/h5md.hpp"

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace stratus::io {
namespace {

using detail::checked;
using detail::Handle;
using detail::QuietHdf5Errors;

constexpr const char* kRoot = "/particles/all";
/// Target size of one chunk of a per-atom dataset.
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
/// Frames per chunk of the small per-frame datasets (step, time, box edges).
constexpr hsize_t kFramesPerChunk = 256;

/// One owned atom on its way to the rank that writes its row.
struct PackedAtom {
  std::int64_t id;
  double x[3];
  double v[3];
  std::int32_t type;
  std::int32_t image[3];
};

/// First id of the block of rows written by rank `r` of `ranks`.
/// Exactly floor(natoms * r / ranks), without overflow.
std::int64_t block_begin(std::int64_t natoms, int ranks, int r) {
  return natoms / ranks * r + natoms % ranks * r / ranks;
}

/// The rank whose block holds `id` (0 <= id < natoms).
int block_owner(std::int64_t id, std::int64_t natoms, int ranks) {
  int r = std::clamp(static_cast<int>(static_cast<double>(id) / static_cast<double>(natoms) *
                                      static_cast<double>(ranks)),
                     0, ranks - 1);
  while (r + 1 < ranks && block_begin(natoms, ranks, r + 1) <= id) ++r;
  while (r > 0 && block_begin(natoms, ranks, r) > id) --r;
  return r;
}

/// Creates the extendable dataset `name` of shape (0, frame_shape...), chunked as
/// (chunk_frames, chunk_rows or the whole frame shape).
hid_t create_series(hid_t file, const std::string& path, const std::string& name, hid_t type,
                    const std::vector<hsize_t>& frame_shape, hsize_t chunk_frames,
                    hsize_t chunk_rows) {
  const int rank = static_cast<int>(frame_shape.size()) + 1;
  std::vector<hsize_t> dims(rank, 0);
  std::vector<hsize_t> maxdims(rank, H5S_UNLIMITED);
  std::vector<hsize_t> chunk(rank, chunk_frames);
  for (int d = 1; d < rank; ++d) {
    dims[d] = maxdims[d] = chunk[d] = frame_shape[d - 1];
  }
  if (rank > 1) chunk[1] = std::max<hsize_t>(1, std::min(chunk_rows, frame_shape[0]));
  Handle space(
      checked(H5Screate_simple(rank, dims.data(), maxdims.data()), path, "creating a dataspace"),
      H5Sclose);
  Handle dcpl(checked(H5Pcreate(H5P_DATASET_CREATE), path, "creating a dataset creation list"),
              H5Pclose);
  checked(H5Pset_chunk(dcpl, rank, chunk.data()), path, "setting the chunk shape of " + name);
  // Every element of a new frame is written: filling it first would only cost time.
  checked(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), path, "disabling fill values");
  return checked(H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), path,
                 "creating dataset " + name);
}

/// Grows the first (frame) axis of `dataset` to `frames`. Collective.
void extend(hid_t dataset, const std::string& path, hsize_t frames) {
  Handle space(checked(H5Dget_space(dataset), path, "reading a dataspace"), H5Sclose);
  hsize_t dims[H5S_MAX_RANK];
  checked(H5Sget_simple_extent_dims(space, dims, nullptr), path, "reading a dataset shape");
  dims[0] = frames;
  checked(H5Dset_extent(dataset, dims), path,
          "extending a dataset to " + std::to_string(frames) + " frames");
}

/// Writes rows [row_begin, row_begin + rows) of frame `frame` of `dataset` from `data` (all
/// trailing axes whole). A 1D (per-frame) dataset takes rows 0 or 1. Collective: every rank
/// calls it, those with rows == 0 select nothing.
void write_frame(hid_t dataset, const std::string& path, const char* what, hid_t mem_type,
                 hsize_t frame, hsize_t row_begin, hsize_t rows, const void* data) {
  Handle file_space(checked(H5Dget_space(dataset), path, "reading a dataspace"), H5Sclose);
  const int rank = checked(H5Sget_simple_extent_ndims(file_space), path, "reading a dataset rank");
  hsize_t dims[H5S_MAX_RANK];
  checked(H5Sget_simple_extent_dims(file_space, dims, nullptr), path, "reading a dataset shape");
  hsize_t start[H5S_MAX_RANK] = {frame};
  hsize_t count[H5S_MAX_RANK] = {1};
  if (rank == 1) {
    count[0] = rows;
  } else {
    start[1] = row_begin;
    count[1] = rows;
    for (int d = 2; d < rank; ++d) count[d] = dims[d];
  }
  hsize_t elements = 1;
  for (int d = 0; d < rank; ++d) elements *= count[d];
  const hsize_t mem_dims[1] = {std::max<hsize_t>(elements, 1)};
  Handle mem_space(checked(H5Screate_simple(1, mem_dims, nullptr), path, "creating a dataspace"),
                   H5Sclose);
  const std::string where = fmt::format("{}/{}", kRoot, what);
  double unused = 0.0;
  if (elements == 0) {
    checked(H5Sselect_none(file_space), path, "selecting nothing in " + where);
    checked(H5Sselect_none(mem_space), path, "selecting nothing in memory");
    data = &unused;
  } else {
    checked(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), path,
            "selecting this rank's rows of " + where);
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");
  checked(H5Dwrite(dataset, mem_type, mem_space, file_space, dxpl, data), path,
          fmt::format("writing frame {} of {}", frame, where));
}

/// Lennard-Jones reduced units: the quantities are dimensionless numbers.
bool is_reduced_unit(const std::string& unit) { return unit == "sigma" || unit == "tau"; }

void require_open(hid_t file, const std::string& path) {
  if (file < 0) throw RuntimeError(fmt::format("{}: H5MD file used after close()", path));
}

}  // namespace

H5mdWriter::H5mdWriter(MPI_Comm comm, const std::string& path, const std::string& resolved_deck,
                       std::int64_t natoms, const std::array<double, 3>& box_edges,
                       const std::string& length_unit, const std::string& time_unit,
                       const std::vector<std::string>& boundary, const std::string& author)
    : comm_(comm), path_(path), natoms_(natoms), edges_(box_edges) {
  datasets_.fill(-1);
  if (natoms < 1) {
    throw RuntimeError(
        fmt::format("{}: an H5MD trajectory needs at least one atom, not {}", path, natoms));
  }
  for (int d = 0; d < 3; ++d) {
    if (!(std::isfinite(box_edges[d]) && box_edges[d] > 0.0)) {
      throw RuntimeError(fmt::format("{}: box edge {} is {}; it must be positive and finite", path,
                                     d, box_edges[d]));
    }
  }
  const bool boundary_ok =
      boundary.size() == 3 && std::all_of(boundary.begin(), boundary.end(), [](const auto& b) {
        return b == "periodic" || b == "none";
      });
  if (!boundary_ok) {
    throw RuntimeError(
        fmt::format("{}: boundary must list 3 of \"periodic\" or \"none\", not {} entries", path,
                    boundary.size()));
  }

  file_ = detail::create_stratus_file(comm_, path_, "h5md", resolved_deck);
  QuietHdf5Errors quiet;
  try {
    const std::string root = kRoot;
    const std::int32_t version[2] = {1, 1};
    const std::int32_t dimension = 3;
    detail::create_groups(file_, path_, "/h5md/author");
    detail::create_groups(file_, path_, "/h5md/creator");
    detail::put_numeric_attribute(file_, path_, "/h5md", "version", H5T_STD_I32LE, H5T_NATIVE_INT32,
                                  version, 2, false);
    detail::put_string_attribute(file_, path_, "/h5md/author", "name", author);
    detail::put_string_attribute(file_, path_, "/h5md/creator", "name", "Stratus");
    detail::put_string_attribute(file_, path_, "/h5md/creator", "version",
                                 std::string(stratus_version()));

    detail::create_groups(file_, path_, root + "/box/edges");
    detail::put_numeric_attribute(file_, path_, root + "/box", "dimension", H5T_STD_I32LE,
                                  H5T_NATIVE_INT32, &dimension, 1, true);
    detail::put_string_array_attribute(file_, path_, root + "/box", "boundary", boundary);

    // Per-atom elements: chunks of about kChunkBytes, one frame deep.
    const auto n = static_cast<hsize_t>(natoms_);
    const auto rows_for = [](std::size_t row_bytes) {
      return static_cast<hsize_t>(std::max<std::size_t>(1, kChunkBytes / row_bytes));
    };
    struct Element {
      Slot slot;
      const char* name;
      hid_t type;
      std::vector<hsize_t> shape;
      std::size_t row_bytes;
    };
    const Element elements[] = {{kPosition, "position", H5T_IEEE_F64LE, {n, 3}, 3 * sizeof(double)},
                                {kVelocity, "velocity", H5T_IEEE_F64LE, {n, 3}, 3 * sizeof(double)},
                                {kSpecies, "species", H5T_STD_I32LE, {n}, sizeof(std::int32_t)},
                                {kId, "id", H5T_STD_I64LE, {n}, sizeof(std::int64_t)},
                                {kImage, "image", H5T_STD_I32LE, {n, 3}, 3 * sizeof(std::int32_t)},
                                {kEdges, "box/edges", H5T_IEEE_F64LE, {3, 3}, 3 * sizeof(double)}};
    for (const auto& e : elements) {
      const std::string group = root + "/" + e.name;
      detail::create_groups(file_, path_, group);
      const hsize_t chunk_frames = e.slot == kEdges ? kFramesPerChunk : 1;
      datasets_[e.slot] = create_series(file_, path_, group + "/value", e.type, e.shape,
                                        chunk_frames, rows_for(e.row_bytes));
    }
    // One step and one time dataset, shared by every element through hard links (all are
    // sampled together).
    const std::string first = root + "/position";
    datasets_[kStep] =
        create_series(file_, path_, first + "/step", H5T_STD_I64LE, {}, kFramesPerChunk, 1);
    datasets_[kTime] =
        create_series(file_, path_, first + "/time", H5T_IEEE_F64LE, {}, kFramesPerChunk, 1);
    for (const auto& e : elements) {
      if (e.slot == kPosition) continue;
      for (const char* series : {"step", "time"}) {
        const std::string target = first + "/" + series;
        const std::string link = root + "/" + e.name + "/" + series;
        checked(
            H5Lcreate_hard(file_, target.c_str(), file_, link.c_str(), H5P_DEFAULT, H5P_DEFAULT),
            path_, "linking " + link);
      }
    }

    // Units: physical ones follow the H5MD units module (a `unit` attribute on the value and
    // time datasets). Lennard-Jones reduced quantities are plain numbers for H5MD, and readers
    // refuse unit strings they cannot convert (MDAnalysis 2.4 even with convert_units=False),
    // so "sigma" and "tau" go to `reduced_unit` attributes instead.
    const bool physical = !is_reduced_unit(length_unit) && !is_reduced_unit(time_unit);
    const char* unit_attr = physical ? "unit" : "reduced_unit";
    if (physical && (!length_unit.empty() || !time_unit.empty())) {
      const std::int32_t units_version[2] = {1, 0};
      detail::create_groups(file_, path_, "/h5md/modules/units");
      detail::put_numeric_attribute(file_, path_, "/h5md/modules/units", "version", H5T_STD_I32LE,
                                    H5T_NATIVE_INT32, units_version, 2, false);
      detail::put_string_attribute(file_, path_, "/h5md/modules/units", "system", "SI");
    }
    if (!length_unit.empty()) {
      detail::put_string_attribute(file_, path_, root + "/position/value", unit_attr, length_unit);
      detail::put_string_attribute(file_, path_, root + "/box/edges/value", unit_attr, length_unit);
    }
    if (!length_unit.empty() && !time_unit.empty()) {
      detail::put_string_attribute(file_, path_, root + "/velocity/value", unit_attr,
                                   fmt::format("{} {}-1", length_unit, time_unit));
    }
    if (!time_unit.empty()) {
      detail::put_string_attribute(file_, path_, first + "/time", unit_attr, time_unit);
    }
    detail::put_string_attribute(file_, path_, root + "/species/value", "description",
                                 "atom type, 0-based (the order of the deck's types)");
    detail::put_string_attribute(file_, path_, root + "/id/value", "description",
                                 "global atom id; row r of every element is the atom with id r");
    detail::put_string_attribute(file_, path_, root + "/image/value", "description",
                                 "periodic image: unwrapped position = position + image * edge");
    checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing the file");
  } catch (...) {
    for (hid_t& d : datasets_) {
      if (d >= 0) H5Dclose(std::exchange(d, -1));
    }
    H5Fclose(std::exchange(file_, -1));
    throw;
  }
}

H5mdWriter::~H5mdWriter() {
  if (file_ < 0) return;
  try {
    close();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stratus: %s\n", e.what());  // destructors must not throw
  }
}

void H5mdWriter::append(std::int64_t step, double time, const H5mdRows& rows_in, int nlocal) {
  QuietHdf5Errors quiet;
  require_open(file_, path_);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);

  // Problems found on any rank, agreed on by all before anything is written:
  // [0] nlocal outside the arrays, [1] ids outside [0, natoms), [2] ids owned twice, [3] missing.
  std::int64_t problems[4] = {0, 0, 0, 0};
  std::int64_t first_bad[4];
  std::fill(std::begin(first_bad), std::end(first_bad), std::numeric_limits<std::int64_t>::max());
  const auto note = [&](int kind, std::int64_t value) {
    ++problems[kind];
    first_bad[kind] = std::min(first_bad[kind], value);
  };
  const std::size_t capacity =
      std::min({rows_in.x.size() / 3, rows_in.v.size() / 3, rows_in.type.size(), rows_in.id.size(),
                rows_in.image.size() / 3});
  int n = nlocal;
  if (nlocal < 0 || static_cast<std::size_t>(nlocal) > capacity) {
    note(0, nlocal);
    n = 0;
  }

  const auto hid = [&](int i) { return rows_in.id[static_cast<std::size_t>(i)]; };

  // Pack by destination rank (a counting sort), leaving out ids outside [0, natoms).
  std::vector<int> send_counts(ranks, 0);
  std::vector<int> owner(n, -1);
  for (int i = 0; i < n; ++i) {
    if (hid(i) < 0 || hid(i) >= natoms_) {
      note(1, hid(i));
      continue;
    }
    owner[i] = block_owner(hid(i), natoms_, ranks);
    ++send_counts[owner[i]];
  }
  std::vector<int> send_displs(ranks, 0);
  for (int r = 1; r < ranks; ++r) send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
  std::vector<PackedAtom> send(n > 0 ? static_cast<std::size_t>(n) : 0);
  {
    std::vector<int> next = send_displs;
    for (int i = 0; i < n; ++i) {
      if (owner[i] < 0) continue;
      PackedAtom& a = send[next[owner[i]]++];
      a.id = hid(i);
      a.type = rows_in.type[static_cast<std::size_t>(i)];
      for (std::size_t d = 0; d < 3; ++d) {
        const std::size_t k = 3 * static_cast<std::size_t>(i) + d;
        a.x[d] = rows_in.x[k];
        a.v[d] = rows_in.v[k];
        a.image[d] = rows_in.image[k];
      }
    }
  }
  std::vector<int> recv_counts(ranks, 0);
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm_);
  std::vector<int> recv_displs(ranks, 0);
  for (int r = 1; r < ranks; ++r) recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
  std::vector<PackedAtom> recv(static_cast<std::size_t>(recv_displs[ranks - 1]) +
                               static_cast<std::size_t>(recv_counts[ranks - 1]));
  MPI_Datatype atom_type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(sizeof(PackedAtom)), MPI_BYTE, &atom_type);
  MPI_Type_commit(&atom_type);
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), atom_type, recv.data(),
                recv_counts.data(), recv_displs.data(), atom_type, comm_);
  MPI_Type_free(&atom_type);

  // This rank's block of rows, in id order.
  const std::int64_t begin = block_begin(natoms_, ranks, rank);
  const auto rows = static_cast<std::size_t>(block_begin(natoms_, ranks, rank + 1) - begin);
  std::vector<double> pos(3 * rows);
  std::vector<double> vel(3 * rows);
  std::vector<std::int32_t> species(rows);
  std::vector<std::int64_t> ids(rows);
  std::vector<std::int32_t> images(3 * rows);
  std::vector<unsigned char> seen(rows, 0);
  for (const PackedAtom& a : recv) {
    const auto k = static_cast<std::size_t>(a.id - begin);
    if (seen[k] != 0) {
      note(2, a.id);
      continue;
    }
    seen[k] = 1;
    ids[k] = a.id;
    species[k] = a.type;
    for (int d = 0; d < 3; ++d) {
      pos[3 * k + d] = a.x[d];
      vel[3 * k + d] = a.v[d];
      images[3 * k + d] = a.image[d];
    }
  }
  for (std::size_t k = 0; k < rows; ++k) {
    if (seen[k] == 0) note(3, begin + static_cast<std::int64_t>(k));
  }

  MPI_Allreduce(MPI_IN_PLACE, problems, 4, MPI_INT64_T, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, first_bad, 4, MPI_INT64_T, MPI_MIN, comm_);
  if (problems[0] + problems[1] + problems[2] + problems[3] > 0) {
    std::string what;
    const char* kinds[4] = {"rank(s) passed nlocal outside [0, array size)",
                            "atom(s) with an id outside [0, natoms)", "id(s) owned twice",
                            "id(s) owned by no rank"};
    for (int k = 0; k < 4; ++k) {
      if (problems[k] == 0) continue;
      what += fmt::format("{}{} {} (first: {})", what.empty() ? "" : "; ", problems[k], kinds[k],
                          first_bad[k]);
    }
    throw RuntimeError(fmt::format(
        "{}: H5MD frame at step {} not written: the ranks must own every id in [0, {}) exactly "
        "once, but found {}",
        path_, step, natoms_, what));
  }

  // Collective: grow every dataset by one frame, then each rank writes its block.
  const auto frame = static_cast<hsize_t>(frames_);
  for (hid_t d : datasets_) extend(d, path_, frame + 1);
  const auto first_row = static_cast<hsize_t>(begin);
  write_frame(datasets_[kPosition], path_, "position/value", H5T_NATIVE_DOUBLE, frame, first_row,
              rows, pos.data());
  write_frame(datasets_[kVelocity], path_, "velocity/value", H5T_NATIVE_DOUBLE, frame, first_row,
              rows, vel.data());
  write_frame(datasets_[kSpecies], path_, "species/value", H5T_NATIVE_INT32, frame, first_row, rows,
              species.data());
  write_frame(datasets_[kId], path_, "id/value", H5T_NATIVE_INT64, frame, first_row, rows,
              ids.data());
  write_frame(datasets_[kImage], path_, "image/value", H5T_NATIVE_INT32, frame, first_row, rows,
              images.data());
  // Per-frame data: rank 0 writes, the others select nothing.
  const hsize_t mine = rank == 0 ? 1 : 0;
  const double box[9] = {edges_[0], 0.0, 0.0, 0.0, edges_[1], 0.0, 0.0, 0.0, edges_[2]};
  write_frame(datasets_[kEdges], path_, "box/edges/value", H5T_NATIVE_DOUBLE, frame, 0, 3 * mine,
              box);
  write_frame(datasets_[kStep], path_, "position/step", H5T_NATIVE_INT64, frame, 0, mine, &step);
  write_frame(datasets_[kTime], path_, "position/time", H5T_NATIVE_DOUBLE, frame, 0, mine, &time);
  checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing the file");
  ++frames_;
}

void H5mdWriter::close() {
  if (file_ < 0) return;
  QuietHdf5Errors quiet;
  for (hid_t& d : datasets_) {
    if (d >= 0) H5Dclose(std::exchange(d, -1));
  }
  const hid_t file = std::exchange(file_, -1);
  checked(H5Fclose(file), path_, "closing the file");
}

}  // namespace stratus::io
