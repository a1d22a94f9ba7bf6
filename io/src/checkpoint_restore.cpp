// CheckpointReader's restore: the boxes of particle and field data it reads (assembled from the
// blocks of every part) and, in one pass, the check of each block as it is read.
#include "checkpoint_files.hpp"
#include "h5_support.hpp"
#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace stratus::io {

using detail::entry_of;
using detail::Handle;
using detail::Prefetch;
using detail::QuietHdf5Errors;
using detail::ReadAhead;
using detail::volume;
using Manifest = detail::CheckpointManifest;
using DatasetEntry = detail::CheckpointManifest::Dataset;

std::int64_t CheckpointReader::block_of(const std::string& dataset,
                                        const std::vector<std::uint64_t>& start,
                                        const std::vector<std::uint64_t>& count) const {
  const auto same = [](const std::vector<hsize_t>& a, const std::vector<std::uint64_t>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](hsize_t x, std::uint64_t y) { return x == y; });
  };
  std::int64_t k = 0;
  for (const auto& f : files_)
    for (const auto& b : f->manifest.blocks) {
      if (b.dataset == dataset && same(b.start, start) && same(b.count, count)) return k;
      ++k;
    }
  return -1;
}

bool CheckpointReader::verify_unread(const std::vector<BoxRead>& reads) {
  const std::size_t total = block_count();
  std::vector<int> mine(total, 0);
  int whole = 1;
  for (const auto& r : reads) {
    const std::int64_t k = block_of(r.dataset, r.start, r.count);
    if (k < 0)
      whole = 0;
    else
      mine[static_cast<std::size_t>(k)] = 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_LAND, comm_);
  if (whole == 0) {  // another layout: the reads cut across blocks
    verify();
    return false;
  }
  std::vector<int> any(mine);
  MPI_Allreduce(MPI_IN_PLACE, any.data(), static_cast<int>(total), MPI_INT, MPI_MAX, comm_);
  std::vector<char> unread(total);
  for (std::size_t k = 0; k < total; ++k) unread[k] = any[k] == 0 ? 1 : 0;
  verify_blocks(unread, true, true);
  armed_.assign(mine.begin(), mine.end());
  read_.assign(total, 0);
  return true;
}

void CheckpointReader::finish_one_pass() {
  std::vector<char> rest(armed_.size());
  for (std::size_t k = 0; k < rest.size(); ++k) rest[k] = armed_[k] != 0 && read_[k] == 0 ? 1 : 0;
  armed_.clear();
  read_.clear();
  verify_blocks(rest, false, false);
}

void CheckpointReader::check_read(std::int64_t block, std::uint64_t sum, const std::string& dataset,
                                  std::string failure) const {
  if (failure.empty() && block >= 0 && armed_[static_cast<std::size_t>(block)] != 0) {
    std::int64_t k = 0;
    for (const auto& f : files_)
      for (const auto& b : f->manifest.blocks)
        if (k++ == block && b.checksum != sum)
          failure = fmt::format(
              "{}: dataset {} is damaged (checksum mismatch in the block starting at [{}])",
              f->path, dataset, fmt::join(b.start, ", "));
    read_[static_cast<std::size_t>(block)] = 1;
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) throw InputError(failure);
}

void CheckpointReader::read_box(const std::string& name, bool real,
                                const std::vector<std::uint64_t>& start,
                                const std::vector<std::uint64_t>& count, void* out) const {
  const std::vector<hsize_t> lo(start.begin(), start.end()), n(count.begin(), count.end());
  if (volume(n) == 0) return;
  const hid_t type = real ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
  hsize_t read = 0;
  struct Piece {
    std::vector<hsize_t> a, c;               // the overlap: first index and extent
    const Manifest::Block* block = nullptr;  // a part's block (stored as one 1D run)
  };
  for (const auto& f : files_) {
    // A whole file holds every value: one read. A part holds its blocks: their overlaps.
    std::vector<Piece> pieces;
    if (f->manifest.part.whole()) {
      pieces.push_back({lo, n, nullptr});
    } else {
      for (const auto& b : f->manifest.blocks) {
        if (b.dataset != name || b.start.size() != lo.size()) continue;
        Piece p{std::vector<hsize_t>(lo.size()), std::vector<hsize_t>(lo.size()), &b};
        bool empty = false;
        for (std::size_t d = 0; d < lo.size(); ++d) {
          p.a[d] = std::max(lo[d], b.start[d]);
          const hsize_t e = std::min(lo[d] + n[d], b.start[d] + b.count[d]);
          empty = empty || e <= p.a[d];
          p.c[d] = empty ? 0 : e - p.a[d];
        }
        if (!empty) pieces.push_back(std::move(p));
      }
    }
    if (pieces.empty()) continue;
    Handle dset(H5Dopen2(f->id, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (!dset.valid()) throw InputError(fmt::format("{}: dataset {} is missing", f->path, name));
    Handle space(H5Dget_space(dset), H5Sclose);
    Handle mem(H5Screate_simple(static_cast<int>(n.size()), n.data(), nullptr), H5Sclose);
    const auto fail = [&] {
      return InputError(fmt::format("{}: dataset {} is damaged (unreadable{})", f->path, name,
                                    detail::hdf5_error_detail()));
    };
    const std::size_t rank = n.size();
    for (const auto& p : pieces) {
      std::vector<hsize_t> at(rank);
      for (std::size_t d = 0; d < rank; ++d) at[d] = p.a[d] - lo[d];
      if (p.block == nullptr || !p.block->at) {
        if (H5Sselect_hyperslab(space, H5S_SELECT_SET, p.a.data(), nullptr, p.c.data(), nullptr) <
                0 ||
            H5Sselect_hyperslab(mem, H5S_SELECT_SET, at.data(), nullptr, p.c.data(), nullptr) < 0 ||
            H5Dread(dset, type, mem, space, H5P_DEFAULT, out) < 0)
          throw fail();
        read += volume(p.c);
        continue;
      }
      // A part's block is its box in C order from `at` on: the overlap's rows along the last
      // axis are runs of it, one strided selection per index of the axes before the last two.
      const auto& b = *p.block;
      std::vector<hsize_t> stride(rank, 1);
      for (std::size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * b.count[d + 1];
      const std::size_t lead = rank >= 2 ? rank - 2 : 0;
      std::vector<hsize_t> x(p.a.begin(), p.a.end());
      for (;;) {
        hsize_t offset = *b.at;
        for (std::size_t d = 0; d < rank; ++d) offset += (x[d] - b.start[d]) * stride[d];
        const hsize_t fstart[1] = {offset};
        const hsize_t fstride[1] = {rank >= 2 ? stride[rank - 2] : 1};
        const hsize_t fcount[1] = {rank >= 2 ? p.c[rank - 2] : 1};
        const hsize_t fblock[1] = {p.c[rank - 1]};
        std::vector<hsize_t> mstart(rank), mcount(rank, 1);
        for (std::size_t d = 0; d < rank; ++d) mstart[d] = x[d] - lo[d];
        for (std::size_t d = lead; d < rank; ++d) mcount[d] = p.c[d];
        if (H5Sselect_hyperslab(space, H5S_SELECT_SET, fstart, fstride, fcount, fblock) < 0 ||
            H5Sselect_hyperslab(mem, H5S_SELECT_SET, mstart.data(), nullptr, mcount.data(),
                                nullptr) < 0 ||
            H5Dread(dset, type, mem, space, H5P_DEFAULT, out) < 0)
          throw fail();
        read += fcount[0] * fblock[0];
        // The next index of the leading axes (odometer order); done after the last.
        bool done = true;
        for (std::size_t d = lead; d-- > 0;) {
          if (++x[d] < p.a[d] + p.c[d]) {
            done = false;
            break;
          }
          x[d] = p.a[d];
        }
        if (done) break;
      }
    }
  }
  if (read != volume(n))
    throw InputError(fmt::format("{}: the parts hold {} of the {} values of {} starting at [{}]",
                                 path_, read, volume(n), name, fmt::join(lo, ", ")));
}

namespace {
/// The box of particle dataset `e` that read_particles reads for the rows of `b`.
CheckpointReader::BoxRead particle_box(const DatasetEntry& e, RowBlock b) {
  CheckpointReader::BoxRead box{
      e.name, {static_cast<std::uint64_t>(b.first)}, {static_cast<std::uint64_t>(b.count)}};
  if (e.dims.size() > 1) {
    box.start.push_back(0);
    box.count.push_back(e.dims[1]);
  }
  return box;
}
}  // namespace

std::vector<CheckpointReader::BoxRead> CheckpointReader::particle_reads(
    const std::vector<std::string>& names) const {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  const RowBlock b = row_block(particle_count(), rank, ranks);
  std::vector<BoxRead> out;
  if (b.count == 0) return out;
  for (const auto& name : names)
    for (const auto& e : files_.front()->manifest.datasets)
      if (e.name == "/particles/" + name) out.push_back(particle_box(e, b));
  return out;
}

ParticleColumns CheckpointReader::read_particles(const std::vector<std::string>& reals,
                                                 const std::vector<std::string>& ints) const {
  QuietHdf5Errors quiet;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  const Manifest& m = files_.front()->manifest;
  ParticleColumns out;
  out.n_global = particle_count();
  const RowBlock b = row_block(out.n_global, rank, ranks);
  for (std::int64_t i = 0; i < b.count; ++i) out.ids.push_back(b.first + i);
  const auto rows = [&](const DatasetEntry& e, auto& values) {
    const BoxRead box = particle_box(e, b);
    const std::uint64_t ncomp = e.dims.size() > 1 ? e.dims[1] : 1;
    values.resize(static_cast<std::size_t>(b.count) * ncomp);
    if (!armed()) {
      read_box(e.name, e.type == "float64", box.start, box.count, values.data());
    } else {  // one pass: a read that fails is agreed on with the checksums
      std::string failure;
      try {
        read_box(e.name, e.type == "float64", box.start, box.count, values.data());
      } catch (const InputError& error) {
        failure = error.what();
      }
      const std::int64_t k = b.count > 0 ? block_of(e.name, box.start, box.count) : -1;
      check_read(k, k >= 0 ? checksum64(values.data(), values.size() * sizeof(values[0])) : 0,
                 e.name, failure);
    }
    return static_cast<int>(ncomp);
  };
  // Each named column of the expected type ("float64" into reals, "int64" into ints).
  const auto columns = [&](const std::vector<std::string>& names, const char* type, auto& into) {
    for (const auto& name : names) {
      const auto& e = entry_of(m, "/particles/" + name, path_);
      if (e.type != type)
        throw InputError(fmt::format("{}: {} is {}, expected {}", path_, e.name, e.type, type));
      auto& c = into.emplace_back();
      c.name = name;
      c.ncomp = rows(e, c.values);
    }
  };
  columns(reals, "float64", out.reals);
  columns(ints, "int64", out.ints);
  return out;
}

void CheckpointReader::read_field(const std::string& name, const GridArray& field, int ghost,
                                  const GridBlock& block,
                                  std::array<std::int64_t, 3> global_cells) const {
  QuietHdf5Errors quiet;
  const auto& e = entry_of(files_.front()->manifest, "/fields/" + name, path_);
  const std::vector<hsize_t> expect{static_cast<hsize_t>(global_cells[0]),
                                    static_cast<hsize_t>(global_cells[1]),
                                    static_cast<hsize_t>(global_cells[2])};
  if (e.dims != expect)
    throw InputError(fmt::format("{}: /fields/{} is [{}], this run's grid is [{}]", path_, name,
                                 fmt::join(e.dims, ", "), fmt::join(expect, ", ")));
  if (e.type != "float64")
    throw InputError(fmt::format("{}: {} is {}, expected float64", path_, e.name, e.type));
  // Slabs of whole planes through one bounded buffer (as the writer does).
  const std::array<std::size_t, 3> n = {static_cast<std::size_t>(block.extent[0]),
                                        static_cast<std::size_t>(block.extent[1]),
                                        static_cast<std::size_t>(block.extent[2])};
  // One pass: this box's block checked from the bytes read (every rank agrees on each field).
  const std::int64_t checked = armed() && block.cells() > 0
                                   ? block_of(e.name,
                                              {static_cast<std::uint64_t>(block.begin[0]),
                                               static_cast<std::uint64_t>(block.begin[1]),
                                               static_cast<std::uint64_t>(block.begin[2])},
                                              {n[0], n[1], n[2]})
                                   : -1;
  Checksum64 sum;
  if (block.cells() == 0) {
    if (armed()) check_read(-1, 0, e.name, {});
    return;
  }
  const std::size_t plane = n[1] * n[2];
  const std::size_t depth =
      std::min(n[0], std::max<std::size_t>(1, detail::kSlabBytes / (plane * sizeof(double))));
  const std::unique_ptr<double[]> host(new double[depth * plane]);
  detail::advise_huge_pages(host.get(), depth * plane * sizeof(double));
  const auto g = static_cast<std::size_t>(ghost);
  // A whole file: the kernel is told kReadAhead slabs in advance which ones come next (HDF5's
  // reads of object headers between slabs defeat its own sequential read-ahead; this read is
  // the cold one when the blocks are verified as they are read).
  const bool whole = files_.size() == 1;
  const auto ahead = whole ? std::make_unique<ReadAhead>(files_.front()->path) : nullptr;
  const Handle dset(whole ? H5Dopen2(files_.front()->id, e.name.c_str(), H5P_DEFAULT) : -1,
                    H5Dclose);
  const auto announce = [&](std::size_t i0) {
    if (!ahead || !dset.valid() || i0 >= n[0]) return;
    ahead->will_need(dset, e.dims,
                     {static_cast<hsize_t>(block.begin[0]) + i0,
                      static_cast<hsize_t>(block.begin[1]), static_cast<hsize_t>(block.begin[2])},
                     {std::min(depth, n[0] - i0), n[1], n[2]}, sizeof(double));
  };
  constexpr std::size_t kReadAhead = 8;
  for (std::size_t k = 0; k < kReadAhead; ++k) announce(k * depth);
  // A box of whole planes is one run of the file: a second stream reads it ahead.
  std::unique_ptr<Prefetch> prefetch;
  const haddr_t base = dset.valid() ? H5Dget_offset(dset) : HADDR_UNDEF;
  if (base != HADDR_UNDEF && n[1] == e.dims[1] && n[2] == e.dims[2])
    prefetch = std::make_unique<Prefetch>(
        files_.front()->path, base + static_cast<std::uint64_t>(block.begin[0]) * plane * 8,
        n[0] * plane * 8, 8 * depth * plane * 8);
  std::string failure;  // one pass: a read that fails is agreed on with the checksums
  try {
    for (std::size_t i0 = 0; i0 < n[0]; i0 += depth) {
      announce(i0 + kReadAhead * depth);
      const std::size_t rows = std::min(depth, n[0] - i0);
      read_box(
          e.name, true,
          {static_cast<std::uint64_t>(block.begin[0]) + i0,
           static_cast<std::uint64_t>(block.begin[1]), static_cast<std::uint64_t>(block.begin[2])},
          {rows, n[1], n[2]}, host.get());
      if (prefetch) prefetch->consumed((i0 + rows) * plane * sizeof(double));
      if (checked >= 0) sum.update(host.get(), rows * plane * sizeof(double));
      field.put({g + i0, g, g}, {rows, n[1], n[2]}, host.get());
    }
  } catch (const InputError& error) {
    if (!armed()) throw;
    failure = error.what();
  }
  if (armed()) check_read(checked, sum.value(), e.name, failure);
}
}  // namespace stratus::io
