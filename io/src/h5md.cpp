// H5mdWriter: H5MD 1.1 trajectories written collectively with MPI-IO, one frame per append().
//
// Each rank owns the contiguous block of ids row_block(natoms, r, ranks) of the file's rows. On
// every frame the atoms travel to the owner of their id (one ParticlePlan), which then writes
// its block as a single hyperslab per dataset: the file selection of every rank is one
// contiguous run, the best case for MPI-IO, and a rank whose block is empty selects nothing but
// still takes part in every collective call.
#include "stratus/io/h5md.hpp"

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/particle_plan.hpp"
#include "stratus/core/version.hpp"
#include "stratus/io/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
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

/// Problems found on any rank, agreed on by all before anything is written: [0] nlocal outside
/// the arrays, [1] ids outside [0, natoms), [2] ids owned twice, [3] ids owned by no rank, [4]
/// non-finite positions, velocities or extra real values.
struct FrameProblems {
  static constexpr int kKinds = 5;
  std::int64_t count[kKinds] = {0, 0, 0, 0, 0};
  std::int64_t first[kKinds] = {
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(),
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(),
      std::numeric_limits<std::int64_t>::max()};
  void note(int kind, std::int64_t value) {
    ++count[kind];
    first[kind] = std::min(first[kind], value);
  }
  /// Collective: every rank throws the same RuntimeError when any rank found a problem.
  void agree_or_throw(MPI_Comm comm, const std::string& path, std::int64_t step,
                      std::int64_t natoms) {
    MPI_Allreduce(MPI_IN_PLACE, count, kKinds, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, first, kKinds, MPI_INT64_T, MPI_MIN, comm);
    if (count[0] + count[1] + count[2] + count[3] + count[4] == 0) return;
    std::string what;
    const char* kinds[kKinds] = {
        "rank(s) passed nlocal outside [0, array size)", "atom(s) with an id outside [0, natoms)",
        "id(s) owned twice", "id(s) owned by no rank",
        "atom(s) with a non-finite position, velocity or other value (id)"};
    for (int k = 0; k < kKinds; ++k) {
      if (count[k] == 0) continue;
      what += fmt::format("{}{} {} (first: {})", what.empty() ? "" : "; ", count[k], kinds[k],
                          first[k]);
    }
    throw RuntimeError(fmt::format(
        "{}: H5MD frame at step {} not written: every id in [0, {}) must be owned exactly once "
        "with finite real values, but found {}",
        path, step, natoms, what));
  }
};

/// This rank's block of file rows (ids [first, first + count)), in id order.
struct IdBlock {
  std::int64_t first = 0;
  std::size_t rows = 0;
  std::vector<double> pos, vel;
  std::vector<std::int32_t> species, images;
  std::vector<std::int64_t> ids;
  /// One per extra element: its values in id order (reals or integers, by its kind).
  struct Extra {
    std::vector<double> reals;
    std::vector<std::int64_t> integers;
  };
  std::vector<Extra> extras;
};

/// Places `width` values per row of `received` (row r of the plan's output) into `out` at the
/// row `slot[r]` says (-1: dropped, a duplicate).
template <class T>
void place_rows(const std::vector<T>& received, std::size_t width, const std::vector<long>& slot,
                std::vector<T>& out) {
  for (std::size_t r = 0; r < slot.size(); ++r) {
    if (slot[r] < 0) continue;
    const auto k = static_cast<std::size_t>(slot[r]);
    for (std::size_t d = 0; d < width; ++d) out[width * k + d] = received[width * r + d];
  }
}

/// Sends every atom to the rank whose block holds its id (one particle plan for every column)
/// and places it in its row; notes ids out of range, owned twice or by no rank, and non-finite
/// reals. Collective.
IdBlock gather_block(MPI_Comm comm, const H5mdRows& in, int n, std::int64_t natoms,
                     const std::vector<H5mdElement>& extras, FrameProblems& problems) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const auto rows = static_cast<std::size_t>(n);
  std::vector<int> dest(rows, -1);
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t id = in.id[i];
    if (id < 0 || id >= natoms)
      problems.note(1, id);
    else
      dest[i] = row_owner(natoms, ranks, id);
  }
  const ParticlePlan plan(comm, dest);
  const auto head = [&](const auto& column, std::size_t width) {
    using T = typename std::decay_t<decltype(column)>::value_type;
    return std::vector<T>(column.begin(),
                          column.begin() + static_cast<std::ptrdiff_t>(rows * width));
  };
  const auto id = plan.execute(head(in.id, 1));
  const auto type = plan.execute(head(in.type, 1));
  const auto x = plan.execute(head(in.x, 3), 3);
  const auto v = plan.execute(head(in.v, 3), 3);
  const auto image = plan.execute(head(in.image, 3), 3);

  IdBlock b;
  const RowBlock mine = row_block(natoms, rank, ranks);
  b.first = mine.first;
  b.rows = static_cast<std::size_t>(mine.count);
  // Where each received atom goes in the block (-1: a duplicate, dropped).
  std::vector<long> slot(id.size(), -1);
  std::vector<unsigned char> seen(b.rows, 0);
  for (std::size_t r = 0; r < id.size(); ++r) {
    const auto k = static_cast<std::size_t>(id[r] - b.first);
    if (seen[k] != 0) {
      problems.note(2, id[r]);
      continue;
    }
    seen[k] = 1;
    slot[r] = static_cast<long>(k);
  }
  const auto narrow = [](const auto& values) {
    return std::vector<std::int32_t>(values.begin(), values.end());
  };
  b.pos.assign(3 * b.rows, 0.0);
  b.vel.assign(3 * b.rows, 0.0);
  b.species.assign(b.rows, 0);
  b.ids.assign(b.rows, 0);
  b.images.assign(3 * b.rows, 0);
  place_rows(id, 1, slot, b.ids);
  place_rows(narrow(type), 1, slot, b.species);
  place_rows(x, 3, slot, b.pos);
  place_rows(v, 3, slot, b.vel);
  place_rows(narrow(image), 3, slot, b.images);
  std::vector<unsigned char> finite(b.rows, 1);
  const auto check_finite = [&](const std::vector<double>& values, std::size_t width) {
    for (std::size_t k = 0; k < b.rows; ++k)
      for (std::size_t d = 0; d < width; ++d)
        if (!std::isfinite(values[width * k + d])) finite[k] = 0;
  };
  check_finite(b.pos, 3);
  check_finite(b.vel, 3);
  for (std::size_t e = 0; e < extras.size(); ++e) {
    const auto width = static_cast<std::size_t>(extras[e].components);
    IdBlock::Extra out;
    if (extras[e].integer) {
      out.integers.assign(width * b.rows, 0);
      place_rows(plan.execute(head(in.extras[e].integers, width), static_cast<int>(width)), width,
                 slot, out.integers);
    } else {
      out.reals.assign(width * b.rows, 0.0);
      place_rows(plan.execute(head(in.extras[e].reals, width), static_cast<int>(width)), width,
                 slot, out.reals);
      check_finite(out.reals, width);
    }
    b.extras.push_back(std::move(out));
  }
  for (std::size_t k = 0; k < b.rows; ++k) {
    if (seen[k] == 0) problems.note(3, b.first + static_cast<std::int64_t>(k));
    if (finite[k] == 0) problems.note(4, b.first + static_cast<std::int64_t>(k));
  }
  return b;
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
  const std::string where = fmt::format("{}/{}", kRoot, what);
  detail::write_collective(dataset, file_space, rank, start, count, mem_type, data, path, where,
                           fmt::format("writing frame {} of {}", frame, where));
}

/// Lennard-Jones reduced units: the quantities are dimensionless numbers.
bool is_reduced_unit(const std::string& unit) { return unit == "sigma" || unit == "tau"; }

void require_open(hid_t file, const std::string& path) {
  if (file < 0) throw RuntimeError(fmt::format("{}: H5MD file used after close()", path));
}

/// Throws RuntimeError naming the first extra element that cannot be written.
void check_extras(const std::string& path, const std::vector<H5mdElement>& extras) {
  static const char* const kBuiltIn[] = {"position", "velocity", "species", "id", "image", "box"};
  for (std::size_t e = 0; e < extras.size(); ++e) {
    const H5mdElement& x = extras[e];
    std::string why;
    if (x.name.empty() || x.name == "." || x.name == ".." || x.name.find('/') != std::string::npos)
      why = "is not a plain HDF5 name (empty, '.', '..' or holding '/')";
    else if (std::find(std::begin(kBuiltIn), std::end(kBuiltIn), x.name) != std::end(kBuiltIn))
      why = "is the name of a built-in H5MD element";
    else if (std::any_of(extras.begin(), extras.begin() + static_cast<std::ptrdiff_t>(e),
                         [&](const H5mdElement& y) { return y.name == x.name; }))
      why = "is given twice";
    else if (x.components < 1 || x.components > 64)
      why = fmt::format("has {} components (1 to 64 allowed)", x.components);
    if (!why.empty())
      throw RuntimeError(fmt::format("{}: extra trajectory element \"{}\" {}", path, x.name, why));
  }
}

/// Refuses a trajectory no reader could use: no atoms, a box edge that is not a positive finite
/// number, a boundary list that is not 3 of "periodic" or "none".
void check_layout(const std::string& path, std::int64_t natoms,
                  const std::array<double, 3>& box_edges,
                  const std::vector<std::string>& boundary) {
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
}

/// Units: physical ones follow the H5MD units module (a `unit` attribute on the value and time
/// datasets). Lennard-Jones reduced quantities are plain numbers for H5MD, and readers refuse
/// unit strings they cannot convert (MDAnalysis 2.4 even with convert_units=False), so "sigma"
/// and "tau" go to `reduced_unit` attributes instead. Also the descriptions of the elements whose
/// meaning is Stratus's.
void write_units(hid_t file, const std::string& path, const std::string& length_unit,
                 const std::string& time_unit) {
  const std::string root = kRoot;
  const std::string first = root + "/position";
  const bool physical = !is_reduced_unit(length_unit) && !is_reduced_unit(time_unit);
  const char* unit_attr = physical ? "unit" : "reduced_unit";
  if (physical && (!length_unit.empty() || !time_unit.empty())) {
    const std::int32_t units_version[2] = {1, 0};
    detail::create_groups(file, path, "/h5md/modules/units");
    detail::put_numeric_attribute(file, path, "/h5md/modules/units", "version", H5T_STD_I32LE,
                                  H5T_NATIVE_INT32, units_version, 2, false);
    detail::put_string_attribute(file, path, "/h5md/modules/units", "system", "SI");
  }
  if (!length_unit.empty()) {
    detail::put_string_attribute(file, path, root + "/position/value", unit_attr, length_unit);
    detail::put_string_attribute(file, path, root + "/box/edges/value", unit_attr, length_unit);
  }
  if (!length_unit.empty() && !time_unit.empty()) {
    detail::put_string_attribute(file, path, root + "/velocity/value", unit_attr,
                                 fmt::format("{} {}-1", length_unit, time_unit));
  }
  if (!time_unit.empty()) {
    detail::put_string_attribute(file, path, first + "/time", unit_attr, time_unit);
  }
  detail::put_string_attribute(file, path, root + "/species/value", "description",
                               "atom type, 0-based (the order of the deck's types)");
  detail::put_string_attribute(file, path, root + "/id/value", "description",
                               "global atom id; row r of every element is the atom with id r");
  detail::put_string_attribute(file, path, root + "/image/value", "description",
                               "periodic image: unwrapped position = position + image * edge");
}

}  // namespace

H5mdWriter::H5mdWriter(MPI_Comm comm, const std::string& path, const std::string& resolved_deck,
                       std::int64_t natoms, const std::array<double, 3>& box_edges,
                       const std::string& length_unit, const std::string& time_unit,
                       const std::vector<std::string>& boundary, const std::string& author,
                       const std::vector<H5mdElement>& extras)
    : comm_(comm), path_(path), natoms_(natoms), edges_(box_edges), extras_(extras) {
  datasets_.fill(-1);
  check_layout(path, natoms, box_edges, boundary);
  check_extras(path, extras);

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

    create_elements();
    write_units(file_, path_, length_unit, time_unit);
    checked(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing the file");
  } catch (...) {
    close_datasets();
    H5Fclose(std::exchange(file_, -1));
    throw;
  }
}

void H5mdWriter::create_elements() {
  const std::string root = kRoot;
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
    datasets_[e.slot] = create_series(file_, path_, group + "/value", e.type, e.shape, chunk_frames,
                                      rows_for(e.row_bytes));
  }
  std::vector<std::string> linked;  // every element but position shares its step and time
  for (const auto& e : elements)
    if (e.slot != kPosition) linked.emplace_back(e.name);
  for (const H5mdElement& e : extras_) {
    const std::string group = root + "/" + e.name;
    detail::create_groups(file_, path_, group);
    const auto width = static_cast<hsize_t>(e.components);
    std::vector<hsize_t> shape{n};
    if (e.components > 1) shape.push_back(width);
    extra_datasets_.push_back(create_series(file_, path_, group + "/value",
                                            e.integer ? H5T_STD_I64LE : H5T_IEEE_F64LE, shape, 1,
                                            rows_for(static_cast<std::size_t>(width) * 8)));
    linked.push_back(e.name);
  }
  // One step and one time dataset, shared by every element through hard links (all are
  // sampled together).
  const std::string first = root + "/position";
  datasets_[kStep] =
      create_series(file_, path_, first + "/step", H5T_STD_I64LE, {}, kFramesPerChunk, 1);
  datasets_[kTime] =
      create_series(file_, path_, first + "/time", H5T_IEEE_F64LE, {}, kFramesPerChunk, 1);
  for (const auto& name : linked) {
    for (const char* series : {"step", "time"}) {
      const std::string target = first + "/" + series;
      const std::string link = root + "/" + name + "/" + series;
      checked(H5Lcreate_hard(file_, target.c_str(), file_, link.c_str(), H5P_DEFAULT, H5P_DEFAULT),
              path_, "linking " + link);
    }
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
  MPI_Comm_rank(comm_, &rank);
  FrameProblems problems;
  if (rows_in.extras.size() != extras_.size()) {
    throw RuntimeError(
        fmt::format("{}: H5MD frame at step {} not written: {} extra column(s) "
                    "given for the file's {} extra element(s)",
                    path_, step, rows_in.extras.size(), extras_.size()));
  }
  std::size_t capacity = std::min({rows_in.x.size() / 3, rows_in.v.size() / 3, rows_in.type.size(),
                                   rows_in.id.size(), rows_in.image.size() / 3});
  for (std::size_t e = 0; e < extras_.size(); ++e) {
    const auto& values = rows_in.extras[e];
    const std::size_t size = extras_[e].integer ? values.integers.size() : values.reals.size();
    capacity = std::min(capacity, size / static_cast<std::size_t>(extras_[e].components));
  }
  int n = nlocal;
  if (nlocal < 0 || static_cast<std::size_t>(nlocal) > capacity) {
    problems.note(0, nlocal);
    n = 0;
  }
  const IdBlock block = gather_block(comm_, rows_in, n, natoms_, extras_, problems);
  problems.agree_or_throw(comm_, path_, step, natoms_);
  const auto rows = block.rows;
  const std::int64_t begin = block.first;
  const auto& pos = block.pos;
  const auto& vel = block.vel;
  const auto& species = block.species;
  const auto& ids = block.ids;
  const auto& images = block.images;

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
  for (std::size_t e = 0; e < extras_.size(); ++e) {
    extend(extra_datasets_[e], path_, frame + 1);
    const std::string what = extras_[e].name + "/value";
    if (extras_[e].integer)
      write_frame(extra_datasets_[e], path_, what.c_str(), H5T_NATIVE_INT64, frame, first_row, rows,
                  block.extras[e].integers.data());
    else
      write_frame(extra_datasets_[e], path_, what.c_str(), H5T_NATIVE_DOUBLE, frame, first_row,
                  rows, block.extras[e].reals.data());
  }
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

void H5mdWriter::close_datasets() noexcept {
  for (hid_t& d : datasets_) {
    if (d >= 0) H5Dclose(std::exchange(d, -1));
  }
  for (hid_t d : extra_datasets_) H5Dclose(d);
  extra_datasets_.clear();
}

void H5mdWriter::set_edges(const std::array<double, 3>& edges) {
  check_layout(path_, natoms_, edges, {"periodic", "periodic", "periodic"});
  edges_ = edges;
}

void H5mdWriter::close() {
  if (file_ < 0) return;
  QuietHdf5Errors quiet;
  close_datasets();
  const hid_t file = std::exchange(file_, -1);
  checked(H5Fclose(file), path_, "closing the file");
}

}  // namespace stratus::io
