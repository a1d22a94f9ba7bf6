// CheckpointWriter and the particle routing shared by writer and reader.
#include "stratus/io/checkpoint.hpp"

#include "stratus/core/particle_plan.hpp"

#include "checkpoint_support.hpp"
#include "h5_support.hpp"
#include "stratus/core/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

namespace stratus::io {

namespace fs = std::filesystem;
using detail::checked;
using detail::Handle;
using detail::QuietHdf5Errors;

const ParticleColumns::Reals& ParticleColumns::real(const std::string& name) const {
  for (const auto& c : reals)
    if (c.name == name) return c;
  throw RuntimeError("particle column '" + name + "' missing");
}

const ParticleColumns::Ints& ParticleColumns::integer(const std::string& name) const {
  for (const auto& c : ints)
    if (c.name == name) return c;
  throw RuntimeError("particle column '" + name + "' missing");
}

RowBlock row_block(std::int64_t n_global, int rank, int ranks) {
  // The first n % ranks ranks hold one row more.
  const std::int64_t q = n_global / ranks, r = n_global % ranks;
  return {q * rank + std::min<std::int64_t>(rank, r), q + (rank < r ? 1 : 0)};
}

int row_owner(std::int64_t n_global, int ranks, std::int64_t row) {
  const std::int64_t q = n_global / ranks, r = n_global % ranks;
  if (row < (q + 1) * r) return static_cast<int>(row / (q + 1));
  return static_cast<int>(r + (row - (q + 1) * r) / q);
}

ParticleColumns route_particles(MPI_Comm comm, const ParticleColumns& columns,
                                const std::vector<int>& dest) {
  const std::size_t n = columns.rows();
  if (dest.size() != n) throw RuntimeError("route_particles: one destination per row expected");
  for (const auto& c : columns.reals)
    if (c.values.size() != n * static_cast<std::size_t>(c.ncomp))
      throw RuntimeError("route_particles: column '" + c.name + "' has the wrong length");
  for (const auto& c : columns.ints)
    if (c.values.size() != n * static_cast<std::size_t>(c.ncomp))
      throw RuntimeError("route_particles: column '" + c.name + "' has the wrong length");
  const ParticlePlan plan(comm, dest);
  ParticleColumns out;
  out.n_global = columns.n_global;
  out.ids = plan.execute(columns.ids);
  for (const auto& c : columns.reals)
    out.reals.push_back({c.name, c.ncomp, plan.execute(c.values, c.ncomp)});
  for (const auto& c : columns.ints)
    out.ints.push_back({c.name, c.ncomp, plan.execute(c.values, c.ncomp)});
  return out;
}

static_assert(std::endian::native == std::endian::little,
              "checksum64 hashes native bytes as little-endian words");

namespace {
constexpr std::uint64_t kPrime = 0x100000001b3ull;  // FNV-1a's 64-bit prime
}

void Checksum64::update(const void* data, std::size_t bytes) {
  // Four independent lanes of h = (h ^ word) * P: each step is a bijection of the lane, so a
  // changed word always changes its lane. Bytes are consumed in groups of 32 (one word per
  // lane); a partial group waits in carry_ for the next call or for value().
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += bytes;
  if (carried_ > 0) {
    const std::size_t take = std::min(bytes, 32 - carried_);
    std::memcpy(carry_ + carried_, p, take);
    carried_ += take;
    p += take;
    bytes -= take;
    if (carried_ < 32) return;
    std::uint64_t w[4];
    std::memcpy(w, carry_, 32);
    for (int k = 0; k < 4; ++k) lane_[k] = (lane_[k] ^ w[k]) * kPrime;
    carried_ = 0;
  }
  std::uint64_t h0 = lane_[0], h1 = lane_[1], h2 = lane_[2], h3 = lane_[3];
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, p + i, 32);
    h0 = (h0 ^ w[0]) * kPrime;
    h1 = (h1 ^ w[1]) * kPrime;
    h2 = (h2 ^ w[2]) * kPrime;
    h3 = (h3 ^ w[3]) * kPrime;
  }
  lane_[0] = h0;
  lane_[1] = h1;
  lane_[2] = h2;
  lane_[3] = h3;
  carried_ = bytes - i;
  std::memcpy(carry_, p + i, carried_);
}

std::uint64_t Checksum64::value() const {
  std::uint64_t h[4] = {lane_[0], lane_[1], lane_[2], lane_[3]};
  // The last partial group: its words (the final one zero-padded) into lanes 0, 1, ...
  for (std::size_t i = 0, k = 0; i < carried_; i += 8, ++k) {
    std::uint64_t w = 0;
    std::memcpy(&w, carry_ + i, std::min<std::size_t>(8, carried_ - i));
    h[k] = (h[k] ^ w) * kPrime;
  }
  auto mix = [](std::uint64_t x) {  // a bijective finaliser (splitmix64's)
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  std::uint64_t out = total_;
  for (int k = 0; k < 4; ++k) out = mix(out ^ mix(h[k] + static_cast<std::uint64_t>(k)));
  return out;
}

std::uint64_t checksum64(const void* data, std::size_t bytes) {
  Checksum64 sum;
  sum.update(data, bytes);
  return sum.value();
}

namespace detail {

std::string block_line(const std::string& dataset, const std::vector<hsize_t>& start,
                       const std::vector<hsize_t>& count, std::uint64_t checksum,
                       std::optional<std::uint64_t> stored_at) {
  std::string line = "block " + dataset;
  for (const auto v : start) line += fmt::format(" {}", v);
  for (const auto v : count) line += fmt::format(" {}", v);
  line += fmt::format(" {:016x}", checksum);
  if (stored_at) line += fmt::format(" @{}", *stored_at);
  return line;
}

}  // namespace detail

namespace {

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string out;
  for (const auto d : dims) {
    out += ' ';
    out += std::to_string(d);
  }
  return out;
}

/// fsync() of a file or directory; "" or the reason it failed.
std::string sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return fmt::format("cannot open {} to sync it: {}", path, std::strerror(errno));
  std::string failure;
  if (::fsync(fd) != 0) failure = fmt::format("fsync of {} failed: {}", path, std::strerror(errno));
  ::close(fd);
  return failure;
}

/// Runs `write` (collective over one part's ranks); a failure on any rank of `comm` is thrown
/// on every rank, so that the ranks of other parts do not wait for ranks that gave up.
template <class F>
void agreed(MPI_Comm comm, F&& write) {
  std::string failure;
  try {
    write();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  failure = agree_on_message(comm, failure);
  if (!failure.empty()) throw RuntimeError(failure);
}

}  // namespace

CheckpointWriter::CheckpointWriter(MPI_Comm comm, std::string path,
                                   const std::string& resolved_deck, const CheckpointInfo& info)
    : CheckpointWriter(comm, comm, CheckpointPart{}, std::move(path), resolved_deck, info) {}

CheckpointWriter::CheckpointWriter(MPI_Comm comm, MPI_Comm file_comm, CheckpointPart part,
                                   std::string path, const std::string& resolved_deck,
                                   const CheckpointInfo& info)
    : comm_(comm),
      file_comm_(file_comm),
      part_(part),
      path_(std::move(path)),
      partial_(path_ + ".partial") {
  try {
    // Each part's file is created by its own ranks: every rank of `comm` learns of a failure.
    agreed(comm_, [&] {
      file_ = detail::create_stratus_file(file_comm_, partial_, "checkpoint", resolved_deck);
    });
  } catch (...) {
    discard();
    throw;
  }
  deck_hash_ = checksum64(resolved_deck);
  try {
    QuietHdf5Errors quiet;
    const auto file = static_cast<hid_t>(file_);
    detail::put_string_attribute(file, partial_, "/", "solver", info.solver);
    detail::put_numeric_attribute(file, partial_, "/", "step", H5T_STD_I64LE, H5T_NATIVE_INT64,
                                  &info.step, 1, true);
    detail::put_numeric_attribute(file, partial_, "/", "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                  &info.time, 1, true);
    manifest_.push_back(fmt::format("stratus-checkpoint {}", kCheckpointFormatVersion));
    manifest_.push_back(fmt::format("deck-checksum {:016x}", deck_hash_));
    if (!part_.whole())
      manifest_.push_back(fmt::format("part {} {} {:016x}", part_.index, part_.count, part_.id));
    for (const auto& [key, value] :
         {std::pair{"solver", info.solver}, std::pair{"units", info.units},
          std::pair{"decomposition", info.decomposition}, std::pair{"backend", info.backend}}) {
      if (value.find('\n') != std::string::npos || value.find(' ') != std::string::npos)
        throw RuntimeError(fmt::format("{}: checkpoint {} '{}' has a space", partial_, key, value));
      manifest_.push_back(fmt::format("info {} {}", key, value.empty() ? "-" : value));
    }
    put("step", info.step);
    put("time", info.time);
    put("dt", info.dt);
  } catch (...) {
    discard();
    throw;
  }
}

CheckpointWriter::~CheckpointWriter() {
  if (!committed_) discard();
}

int CheckpointWriter::file_rank() const {
  int rank = 0;
  MPI_Comm_rank(file_comm_, &rank);
  return rank;
}

void CheckpointWriter::discard() noexcept {
  const int rank = file_rank();
  if (file_ >= 0) {
    // The file is abandoned: emptying it first gives back its space, so that closing (which
    // flushes HDF5's metadata) succeeds even when the write failed on a full file system. A
    // failed close would leave HDF5 with a half-closed file that crashes it at MPI_Finalize.
    if (rank == 0) static_cast<void>(::truncate(partial_.c_str(), 0));
    QuietHdf5Errors quiet;
    H5Fclose(static_cast<hid_t>(file_));
    file_ = -1;
  }
  if (rank == 0) {
    std::error_code ec;
    fs::remove(partial_, ec);
  }
}

namespace {

/// Writes /state/NAME (rank 0's values); returns rank 0's block line ("" elsewhere).
template <class T>
std::string put_state(hid_t file, MPI_Comm comm, const std::string& path, const std::string& name,
                      const std::vector<T>& values, hid_t file_type, hid_t mem_type) {
  const std::vector<hsize_t> dims{static_cast<hsize_t>(values.size())};
  Handle space(checked(H5Screate_simple(1, dims.data(), nullptr), path, "creating a dataspace"),
               H5Sclose);
  Handle lcpl(checked(H5Pcreate(H5P_LINK_CREATE), path, "creating a link creation list"), H5Pclose);
  checked(H5Pset_create_intermediate_group(lcpl, 1), path, "enabling intermediate groups");
  const std::string dataset = "/state/" + name;
  const Handle dcpl = detail::no_fill_dcpl(path);
  Handle dset(checked(H5Dcreate2(file, dataset.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT),
                      path, "creating " + dataset),
              H5Dclose);
  if (values.empty()) return {};  // the same on every rank: nothing to write, nothing to check
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");
  if (rank != 0) checked(H5Sselect_none(space), path, "selecting nothing");
  T unused{};
  checked(H5Dwrite(dset, mem_type, space, space, dxpl, rank != 0 ? &unused : values.data()), path,
          "writing " + dataset);
  if (rank != 0) return {};
  return detail::block_line(dataset, {0}, dims,
                            checksum64(values.data(), values.size() * sizeof(T)));
}

/// Where a part stores a block: its values, in C order, at `offset` of a 1D dataset of
/// `total` values (docs/file-formats.md, parts). Whole checkpoints store blocks in place.
struct Flat {
  std::uint64_t offset = 0, total = 0;
};

/// This rank's Flat placement of `mine` values in a part written over `file_comm` (the ranks'
/// blocks one after another, in rank order).
Flat flat_placement(MPI_Comm file_comm, std::uint64_t mine) {
  Flat f;
  int rank = 0;
  MPI_Comm_rank(file_comm, &rank);
  MPI_Exscan(&mine, &f.offset, 1, MPI_UINT64_T, MPI_SUM, file_comm);
  if (rank == 0) f.offset = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_Allreduce(&mine, &f.total, 1, MPI_UINT64_T, MPI_SUM, file_comm);
  return f;
}

/// Creates /particles/NAME (n_global, ncomp) and writes rows [first, first + count) from `rows`;
/// returns this rank's block line ("" for no rows). With `flat` (a part), the dataset is 1D of
/// flat->total values and the rows go to [flat->offset, flat->offset + count * ncomp).
template <class T>
std::string put_rows(hid_t file, const std::string& path, const std::string& dataset,
                     std::int64_t n_global, int ncomp, RowBlock block, const std::vector<T>& rows,
                     hid_t file_type, hid_t mem_type, const Flat* flat = nullptr) {
  const std::vector<hsize_t> dims =
      flat != nullptr
          ? std::vector<hsize_t>{flat->total}
          : std::vector<hsize_t>{static_cast<hsize_t>(n_global), static_cast<hsize_t>(ncomp)};
  Handle file_space(checked(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                            path, "creating a dataspace"),
                    H5Sclose);
  Handle lcpl(checked(H5Pcreate(H5P_LINK_CREATE), path, "creating a link creation list"), H5Pclose);
  checked(H5Pset_create_intermediate_group(lcpl, 1), path, "enabling intermediate groups");
  const Handle dcpl = detail::no_fill_dcpl(path);
  Handle dset(
      checked(H5Dcreate2(file, dataset.c_str(), file_type, file_space, lcpl, dcpl, H5P_DEFAULT),
              path, "creating " + dataset),
      H5Dclose);
  if (n_global == 0) return {};  // the same on every rank
  const std::vector<hsize_t> start{static_cast<hsize_t>(block.first), 0};
  const std::vector<hsize_t> count{static_cast<hsize_t>(block.count), static_cast<hsize_t>(ncomp)};
  const hsize_t one[1] = {1};
  Handle mem_space(checked(block.count == 0 ? H5Screate_simple(1, one, nullptr)
                                            : H5Screate_simple(2, count.data(), nullptr),
                           path, "creating a dataspace"),
                   H5Sclose);
  if (block.count == 0) {
    checked(H5Sselect_none(file_space), path, "selecting nothing");
    checked(H5Sselect_none(mem_space), path, "selecting nothing");
  } else {
    const hsize_t at[1] = {flat != nullptr ? flat->offset : 0};
    const hsize_t run[1] = {count[0] * count[1]};
    checked(flat != nullptr
                ? H5Sselect_hyperslab(file_space, H5S_SELECT_SET, at, nullptr, run, nullptr)
                : H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr,
                                      count.data(), nullptr),
            path, "selecting rows of " + dataset);
  }
  Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), path, "creating a transfer list"), H5Pclose);
  checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), path, "selecting collective transfer");
  T unused{};
  checked(H5Dwrite(dset, mem_type, mem_space, file_space, dxpl,
                   block.count == 0 ? &unused : rows.data()),
          path, "writing " + dataset);
  if (block.count == 0) return {};
  return detail::block_line(
      dataset, start, count, checksum64(rows.data(), rows.size() * sizeof(T)),
      flat != nullptr ? std::optional<std::uint64_t>(flat->offset) : std::nullopt);
}

}  // namespace

void CheckpointWriter::put(const std::string& name, const std::vector<double>& values) {
  std::string bad;
  for (const double v : values)
    if (!std::isfinite(v) && bad.empty()) bad = fmt::format("/state/{} holds {}", name, v);
  bad = agree_on_message(comm_, bad);
  if (!bad.empty()) throw RuntimeError(fmt::format("{}: not written: {}", partial_, bad));
  QuietHdf5Errors quiet;
  agreed(comm_, [&] {
    blocks_.push_back(put_state(static_cast<hid_t>(file_), file_comm_, partial_, name, values,
                                H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE));
  });
  manifest_.push_back(fmt::format("dataset /state/{} float64 {}", name, values.size()));
}

void CheckpointWriter::put(const std::string& name, const std::vector<std::int64_t>& values) {
  QuietHdf5Errors quiet;
  agreed(comm_, [&] {
    blocks_.push_back(put_state(static_cast<hid_t>(file_), file_comm_, partial_, name, values,
                                H5T_STD_I64LE, H5T_NATIVE_INT64));
  });
  manifest_.push_back(fmt::format("dataset /state/{} int64 {}", name, values.size()));
}

void CheckpointWriter::write_particles(const ParticleColumns& columns) {
  ParticleSource source;
  source.n_global = columns.n_global;
  source.ids = columns.ids;
  for (const auto& c : columns.reals) source.reals.push_back({c.name, c.ncomp});
  for (const auto& c : columns.ints) source.ints.push_back({c.name, c.ncomp});
  source.real_values = [&columns](const std::string& name) { return columns.real(name).values; };
  source.int_values = [&columns](const std::string& name) { return columns.integer(name).values; };
  write_particles(std::move(source));
}

namespace {
/// Moves row i of `rows` (ncomp values each) to row slot[i], in place: each cycle of the
/// permutation is followed once with one row in hand, so a column is never held twice.
template <class T>
void place_rows(std::vector<T>& rows, const std::vector<std::int64_t>& slot, std::size_t ncomp) {
  std::vector<bool> done(slot.size(), false);
  std::vector<T> carry(ncomp);
  for (std::size_t i = 0; i < slot.size(); ++i) {
    if (done[i]) continue;
    std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(i * ncomp), ncomp, carry.begin());
    std::size_t k = i;
    do {
      k = static_cast<std::size_t>(slot[k]);
      std::swap_ranges(carry.begin(), carry.end(),
                       rows.begin() + static_cast<std::ptrdiff_t>(k * ncomp));
      done[k] = true;
    } while (k != i);
  }
}
}  // namespace

void CheckpointWriter::write_particles(ParticleSource source) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  const std::int64_t n = source.n_global;
  // Every row goes to the rank that writes its id's block, which places it by id. The plan is
  // made once; the columns follow it one at a time, each placed in its own storage: the peak
  // holds one column once, not the state (docs/performance.md, memory).
  const std::size_t sent = source.ids.size();
  std::vector<int> dest(sent);
  std::string bad;
  for (std::size_t i = 0; i < sent; ++i) {
    const std::int64_t id = source.ids[i];
    if (id < 0 || id >= n) {
      if (bad.empty()) bad = fmt::format("particle id {} outside [0, {})", id, n);
      dest[i] = 0;
      continue;
    }
    dest[i] = row_owner(n, ranks, id);
  }
  const ParticlePlan plan(comm_, dest);
  std::vector<int>().swap(dest);
  const RowBlock block = row_block(n, rank, ranks);
  // The ids received become the rows' places in this rank's block (id - block.first). With
  // every id in range, none twice and none missing (checked below), slot is a permutation.
  std::vector<std::int64_t> slot = plan.execute(std::move(source.ids));
  {
    std::vector<bool> seen(static_cast<std::size_t>(block.count), false);
    for (std::int64_t& k : slot) {
      const std::int64_t id = k;
      k -= block.first;
      if (k < 0 || k >= block.count) {  // already reported as out of range
        k = 0;
        continue;
      }
      if (seen[static_cast<std::size_t>(k)] && bad.empty())
        bad = fmt::format("particle id {} appears twice", id);
      seen[static_cast<std::size_t>(k)] = true;
    }
    if (bad.empty()) {
      const auto missing = std::find(seen.begin(), seen.end(), false);
      if (missing != seen.end())
        bad = fmt::format("particle id {} is missing", block.first + (missing - seen.begin()));
    }
  }
  const auto refuse = [&](std::string why) {
    why = agree_on_message(comm_, why);
    if (!why.empty())
      throw RuntimeError(fmt::format("{}: cannot write particles: {}", partial_, why));
  };
  refuse(bad);

  QuietHdf5Errors quiet;
  const auto file = static_cast<hid_t>(file_);
  // One column: asked for, routed, checked, placed by id and written; then dropped.
  const auto write = [&](const ParticleSource::Column& c, auto values, const char* type,
                         hid_t file_type, hid_t mem_type) {
    using T = typename decltype(values)::value_type;
    const auto ncomp = static_cast<std::size_t>(c.ncomp);
    refuse(values.size() == sent * ncomp
               ? std::string()
               : fmt::format("column '{}' has {} values for {} rows of {}", c.name, values.size(),
                             sent, ncomp));
    std::vector<T> rows = plan.execute(std::move(values), c.ncomp);
    std::string why;
    if constexpr (std::is_floating_point_v<T>)
      for (std::size_t v = 0; v < rows.size() && why.empty(); ++v)
        if (!std::isfinite(rows[v]))
          why = fmt::format("particle {} of id {} is not finite ({})", c.name,
                            block.first + slot[v / ncomp], rows[v]);
    refuse(why);
    place_rows(rows, slot, ncomp);
    const std::string dataset = "/particles/" + c.name;
    // A part holds only its ranks' rows, one block after another (compact: no space for the
    // rows of other parts).
    const Flat flat = part_.whole()
                          ? Flat{}
                          : flat_placement(file_comm_, static_cast<std::uint64_t>(block.count) *
                                                           static_cast<std::uint64_t>(c.ncomp));
    agreed(comm_, [&] {
      blocks_.push_back(put_rows(file, partial_, dataset, n, c.ncomp, block, rows, file_type,
                                 mem_type, part_.whole() ? nullptr : &flat));
    });
    manifest_.push_back(fmt::format("dataset {} {} {} {}", dataset, type, n, c.ncomp));
    if (!part_.whole()) manifest_.push_back(fmt::format("stored {} {}", dataset, flat.total));
  };
  for (const auto& c : source.reals)
    write(c, source.real_values(c.name), "float64", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  for (const auto& c : source.ints)
    write(c, source.int_values(c.name), "int64", H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void CheckpointWriter::write_field(const std::string& name, const GridArray& field, int ghost,
                                   const GridBlock& block,
                                   std::array<std::int64_t, 3> global_cells) {
  QuietHdf5Errors quiet;
  const std::vector<hsize_t> dims{static_cast<hsize_t>(global_cells[0]),
                                  static_cast<hsize_t>(global_cells[1]),
                                  static_cast<hsize_t>(global_cells[2])};
  const std::string dataset = "/fields/" + name;
  std::uint64_t sum = 0;
  // A part holds only its ranks' boxes, one after another (compact).
  const Flat flat = part_.whole()
                        ? Flat{}
                        : flat_placement(file_comm_, static_cast<std::uint64_t>(block.cells()));
  const detail::FlatPlacement placement{flat.offset, flat.total};
  agreed(comm_, [&] {
    detail::write_field_block(file_comm_, static_cast<hid_t>(file_), partial_, dataset, field,
                              ghost, block, global_cells, &sum,
                              part_.whole() ? nullptr : &placement);
  });
  if (block.cells() > 0)
    blocks_.push_back(detail::block_line(
        dataset,
        {static_cast<hsize_t>(block.begin[0]), static_cast<hsize_t>(block.begin[1]),
         static_cast<hsize_t>(block.begin[2])},
        {static_cast<hsize_t>(block.extent[0]), static_cast<hsize_t>(block.extent[1]),
         static_cast<hsize_t>(block.extent[2])},
        sum, part_.whole() ? std::nullopt : std::optional<std::uint64_t>(flat.offset)));
  manifest_.push_back(fmt::format("dataset {} float64{}", dataset, shape_text(dims)));
  if (!part_.whole()) manifest_.push_back(fmt::format("stored {} {}", dataset, flat.total));
}

std::uint64_t CheckpointWriter::commit() {
  const int rank = file_rank();
  std::string failure;
  {
    QuietHdf5Errors quiet;
    const auto file = static_cast<hid_t>(file_);
    try {
      // Rank 0 gathers every rank's block lines after its own dataset lines.
      std::string mine;
      for (const auto& line : blocks_)
        if (!line.empty()) mine += line + "\n";
      int ranks = 1;
      MPI_Comm_size(file_comm_, &ranks);
      int length = static_cast<int>(mine.size());
      std::vector<int> lengths(static_cast<std::size_t>(ranks)), offsets(lengths.size());
      MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, file_comm_);
      int total = 0;
      for (int r = 0; r < ranks; ++r) {
        offsets[r] = total;
        total += lengths[r];
      }
      std::string gathered(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
      MPI_Gatherv(mine.data(), length, MPI_CHAR, gathered.data(), lengths.data(), offsets.data(),
                  MPI_CHAR, 0, file_comm_);
      std::string text;
      for (const auto& line : manifest_) text += line + "\n";
      text += gathered;
      std::uint64_t text_sum = checksum64(text);
      MPI_Bcast(&text_sum, 1, MPI_UINT64_T, 0, file_comm_);
      std::uint64_t size = text.size();
      MPI_Bcast(&size, 1, MPI_UINT64_T, 0, file_comm_);
      const std::vector<hsize_t> dims{size};
      Handle space(
          checked(H5Screate_simple(1, dims.data(), nullptr), partial_, "creating a dataspace"),
          H5Sclose);
      Handle lcpl(checked(H5Pcreate(H5P_LINK_CREATE), partial_, "creating a link creation list"),
                  H5Pclose);
      checked(H5Pset_create_intermediate_group(lcpl, 1), partial_, "enabling intermediate groups");
      Handle dset(checked(H5Dcreate2(file, "/checkpoint/manifest", H5T_STD_U8LE, space, lcpl,
                                     H5P_DEFAULT, H5P_DEFAULT),
                          partial_, "creating /checkpoint/manifest"),
                  H5Dclose);
      Handle dxpl(checked(H5Pcreate(H5P_DATASET_XFER), partial_, "creating a transfer list"),
                  H5Pclose);
      checked(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), partial_,
              "selecting collective transfer");
      if (rank != 0) checked(H5Sselect_none(space), partial_, "selecting nothing");
      char unused = 0;
      checked(
          H5Dwrite(dset, H5T_NATIVE_UCHAR, space, space, dxpl, rank == 0 ? text.data() : &unused),
          partial_, "writing /checkpoint/manifest");
      const std::string sum_text = fmt::format("{:016x}", text_sum);
      detail::put_string_attribute(file, partial_, "/", "manifest_checksum", sum_text);
      // The marker last: everything before it is in the file when a reader sees it.
      checked(H5Fflush(file, H5F_SCOPE_GLOBAL), partial_, "flushing");
      const std::int64_t complete = 1;
      detail::put_numeric_attribute(file, partial_, "/", "checkpoint_complete", H5T_STD_I64LE,
                                    H5T_NATIVE_INT64, &complete, 1, true);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    // Close even after a failure so that the id is released; keep the first reason.
    if (file_ >= 0) {
      const herr_t closed = H5Fclose(file);
      file_ = -1;
      if (closed < 0 && failure.empty())
        failure =
            fmt::format("{}: closing the file failed{}", partial_, detail::hdf5_error_detail());
    }
  }
  failure = agree_on_message(comm_, failure);
  if (failure.empty()) failure = agree_on_message(comm_, sync_path(partial_, false));
  std::uint64_t bytes = 0;
  if (failure.empty() && rank == 0) {
    std::error_code ec;
    bytes = fs::file_size(partial_, ec);
    fs::rename(partial_, path_, ec);
    if (ec) {
      failure = fmt::format("renaming {} to {} failed: {}", partial_, path_, ec.message());
    } else {
      const auto dir = fs::path(path_).parent_path();
      failure = sync_path(dir.empty() ? std::string(".") : dir.string(), true);
    }
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) {
    discard();
    throw RuntimeError(fmt::format("checkpoint {} not written: {}", path_, failure));
  }
  // Each part's rank 0 knows its file's size: the sum is the checkpoint's.
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, comm_);
  committed_ = true;
  return bytes;
}

}  // namespace stratus::io
