// CheckpointReader (every rank opens the file read-only and reads its share) and the listing
// of a run's checkpoints. Every failure is about a file the user or the run pointed at, hence
// InputError naming the file and what is wrong with it.
#include "checkpoint_files.hpp"
#include "checkpoint_support.hpp"
#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/io/h5file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace stratus::io {

namespace fs = std::filesystem;
using detail::Handle;
using detail::QuietHdf5Errors;

namespace {

using detail::entry_of;
using detail::RawBuffer;
using detail::ReadAhead;
using detail::volume;
using Manifest = detail::CheckpointManifest;
using DatasetEntry = detail::CheckpointManifest::Dataset;

class ReadFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T>
T rchecked(T result, std::string_view what) {
  if (result < 0)
    throw ReadFailure(fmt::format("cannot read {}{}", what, detail::hdf5_error_detail()));
  return result;
}

std::int64_t int_attribute(hid_t file, const char* name, std::int64_t missing) {
  if (H5Aexists(file, name) <= 0) return missing;
  Handle attr(rchecked(H5Aopen(file, name, H5P_DEFAULT), name), H5Aclose);
  std::int64_t value = missing;
  rchecked(H5Aread(attr, H5T_NATIVE_INT64, &value), name);
  return value;
}

Manifest parse_manifest(const std::string& text) {
  Manifest m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    if (kind == "stratus-checkpoint") {
      words >> m.version;
    } else if (kind == "part") {
      std::string hex;
      words >> m.part.index >> m.part.count >> hex;
      if (!words || hex.size() != 16 || m.part.count < 2 || m.part.index < 0 ||
          m.part.index >= m.part.count)
        throw ReadFailure("the manifest has a malformed line: " + line);
      m.part.id = std::strtoull(hex.c_str(), nullptr, 16);
    } else if (kind == "deck-checksum") {
      std::string hex;
      words >> hex;
      m.deck_hash = std::strtoull(hex.c_str(), nullptr, 16);
    } else if (kind == "block") {
      detail::CheckpointManifest::Block b;
      words >> b.dataset;
      const auto it = std::find_if(m.datasets.begin(), m.datasets.end(),
                                   [&](const DatasetEntry& e) { return e.name == b.dataset; });
      if (it == m.datasets.end())
        throw ReadFailure("the manifest has a block of no dataset: " + line);
      b.start.resize(it->dims.size());
      b.count.resize(it->dims.size());
      for (auto& v : b.start) words >> v;
      for (auto& v : b.count) words >> v;
      std::string hex;
      words >> hex;
      if (!words || hex.size() != 16)
        throw ReadFailure("the manifest has a malformed line: " + line);
      for (std::size_t a = 0; a < b.start.size(); ++a)
        if (b.start[a] + b.count[a] > it->dims[a])
          throw ReadFailure("the manifest has a block outside its dataset: " + line);
      b.checksum = std::strtoull(hex.c_str(), nullptr, 16);
      std::string at;
      if (words >> at) {
        hsize_t offset = 0;
        const auto [ptr, ec] = std::from_chars(at.data() + 1, at.data() + at.size(), offset);
        if (at.size() < 2 || at[0] != '@' || ec != std::errc() || ptr != at.data() + at.size() ||
            it->stored.size() != 1 || offset + volume(b.count) > it->stored[0])
          throw ReadFailure("the manifest has a malformed line: " + line);
        b.at = offset;
      }
      m.blocks.push_back(std::move(b));
    } else if (kind == "info") {
      std::string key, value;
      words >> key >> value;
      m.info.emplace_back(key, value == "-" ? std::string() : value);
    } else if (kind == "stored") {
      std::string name;
      hsize_t total = 0;
      words >> name >> total;
      const auto it = std::find_if(m.datasets.begin(), m.datasets.end(),
                                   [&](const DatasetEntry& e) { return e.name == name; });
      if (!words || it == m.datasets.end() || m.part.whole())
        throw ReadFailure("the manifest has a malformed line: " + line);
      it->stored = {total};
    } else if (kind == "dataset") {
      DatasetEntry e;
      words >> e.name >> e.type;
      hsize_t d = 0;
      while (words >> d) e.dims.push_back(d);
      if (e.name.empty() || e.dims.empty())
        throw ReadFailure("the manifest has a malformed line: " + line);
      m.datasets.push_back(std::move(e));
    } else if (!kind.empty()) {
      throw ReadFailure("the manifest has an unknown line: " + line);
    }
  }
  if (m.version == 0) throw ReadFailure("the manifest has no version line");
  for (const auto& b : m.blocks)
    for (const auto& e : m.datasets)
      if (e.name == b.dataset && e.stored.empty() == b.at.has_value())
        throw ReadFailure(
            fmt::format("the manifest's block of {} at [{}] does not say where the "
                        "part stores it",
                        b.dataset, fmt::join(b.start, ", ")));
  return m;
}

/// Every element of every dataset must be covered by a checksummed block of one of the
/// manifests (the parts of one checkpoint, or a whole one), and no element twice.
void check_coverage(const std::vector<const Manifest*>& parts) {
  for (const auto& e : parts.front()->datasets) {
    std::vector<const detail::CheckpointManifest::Block*> blocks;
    hsize_t covered = 0;
    for (const Manifest* m : parts)
      for (const auto& b : m->blocks)
        if (b.dataset == e.name) {
          blocks.push_back(&b);
          covered += volume(b.count);
        }
    // The state datasets are written whole into every part: one copy counts.
    if (e.name.starts_with("/state/") && !blocks.empty()) covered = volume(blocks.front()->count);
    if (covered != volume(e.dims))
      throw ReadFailure(fmt::format("the manifest's checksums cover {} of the {} values of {}",
                                    covered, volume(e.dims), e.name));
    if (e.name.starts_with("/state/")) continue;
    for (std::size_t i = 0; i < blocks.size(); ++i)
      for (std::size_t j = i + 1; j < blocks.size(); ++j) {
        bool overlap = true;
        for (std::size_t a = 0; a < e.dims.size(); ++a)
          overlap = overlap && blocks[i]->start[a] < blocks[j]->start[a] + blocks[j]->count[a] &&
                    blocks[j]->start[a] < blocks[i]->start[a] + blocks[i]->count[a];
        if (overlap)
          throw ReadFailure(fmt::format("the manifests' blocks of {} overlap at [{}]", e.name,
                                        fmt::join(blocks[j]->start, ", ")));
      }
  }
}

/// Reads rows [first, first + count) of a 1D or 2D dataset as `mem_type` into `out`.
template <class T>
void read_rows(hid_t file, const std::string& name, hid_t mem_type, hsize_t first, hsize_t count,
               std::vector<T>& out, const std::vector<hsize_t>& expect) {
  Handle dset(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw ReadFailure("dataset " + name + " is missing");
  Handle space(rchecked(H5Dget_space(dset), name), H5Sclose);
  const int ndims = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(ndims, 0)));
  rchecked(H5Sget_simple_extent_dims(space, dims.data(), nullptr), name);
  if (dims != expect)
    throw ReadFailure(fmt::format("dataset {} has shape [{}], the manifest says [{}]", name,
                                  fmt::join(dims, ", "), fmt::join(expect, ", ")));
  hsize_t inner = 1;
  for (std::size_t a = 1; a < dims.size(); ++a) inner *= dims[a];
  out.resize(static_cast<std::size_t>(count * inner));
  if (count == 0) return;
  std::vector<hsize_t> start(dims.size(), 0), cnt = dims;
  start[0] = first;
  cnt[0] = count;
  rchecked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, cnt.data(), nullptr),
           name);
  Handle mem(rchecked(H5Screate_simple(static_cast<int>(cnt.size()), cnt.data(), nullptr), name),
             H5Sclose);
  if (H5Dread(dset, mem_type, mem, space, H5P_DEFAULT, out.data()) < 0)
    throw ReadFailure(
        fmt::format("dataset {} is damaged (unreadable{})", name, detail::hdf5_error_detail()));
}

/// Reads the hyperslab (start, count) of the open dataset `dset` (`name`) as `mem_type`
/// (`value_size` bytes per value) into `buffer`; returns the bytes read (C order).
std::size_t read_block(hid_t dset, const std::string& name, hid_t mem_type, std::size_t value_size,
                       const std::vector<hsize_t>& start, const std::vector<hsize_t>& count,
                       RawBuffer& buffer) {
  Handle space(rchecked(H5Dget_space(dset), name), H5Sclose);
  hsize_t n = 1;
  for (const auto c : count) n *= c;
  if (n == 0) return 0;
  void* out = buffer.reserve(static_cast<std::size_t>(n) * value_size);
  rchecked(H5Sselect_hyperslab(space, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
           name);
  Handle mem(
      rchecked(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), name),
      H5Sclose);
  if (H5Dread(dset, mem_type, mem, space, H5P_DEFAULT, out) < 0)
    throw ReadFailure(
        fmt::format("dataset {} is damaged (unreadable{})", name, detail::hdf5_error_detail()));
  return static_cast<std::size_t>(n) * value_size;
}

}  // namespace

namespace {

/// Opens f.path, checks that it is a complete Stratus checkpoint file and reads its manifest.
/// Throws ReadFailure.
void open_checkpoint_file(detail::CheckpointFile& f) {
  std::error_code ec;
  if (!fs::exists(f.path, ec)) throw ReadFailure("no such file");
  if (fs::is_directory(f.path, ec)) throw ReadFailure("is a directory");
  f.bytes = fs::file_size(f.path, ec);
  if (H5Fis_hdf5(f.path.c_str()) <= 0) throw ReadFailure("not an HDF5 file");
  const hid_t file = H5Fopen(f.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    throw ReadFailure(
        fmt::format("cannot be opened: truncated or damaged{}", detail::hdf5_error_detail()));
  f.id = file;
  const std::string format = detail::read_string_attribute(file, "stratus_format");
  if (format != "checkpoint")
    throw ReadFailure(format.empty() ? "not a Stratus checkpoint (no stratus_format attribute)"
                                     : "not a checkpoint (a Stratus '" + format + "' file)");
  if (int_attribute(file, "checkpoint_complete", 0) != 1)
    throw ReadFailure("no completion marker: its write never finished");
  std::vector<unsigned char> bytes;
  Handle dset(H5Dopen2(file, "/checkpoint/manifest", H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw ReadFailure("no /checkpoint/manifest");
  Handle space(rchecked(H5Dget_space(dset), "/checkpoint/manifest"), H5Sclose);
  hsize_t n = 0;
  rchecked(H5Sget_simple_extent_dims(space, &n, nullptr), "/checkpoint/manifest");
  read_rows(file, "/checkpoint/manifest", H5T_NATIVE_UCHAR, 0, n, bytes, {n});
  const std::string text(bytes.begin(), bytes.end());
  if (detail::read_string_attribute(file, "manifest_checksum") !=
      fmt::format("{:016x}", checksum64(text)))
    throw ReadFailure("the manifest does not match its checksum (damaged)");
  f.manifest = parse_manifest(text);
  if (f.manifest.version != kCheckpointFormatVersion)
    throw ReadFailure(fmt::format("checkpoint format version {}, this Stratus reads version {}",
                                  f.manifest.version, kCheckpointFormatVersion));
}

/// What a part must share with part 0 to belong to the same checkpoint ("" when it does).
std::string part_mismatch(const Manifest& a, const Manifest& b) {
  if (a.part.id != b.part.id)
    return fmt::format("it belongs to another checkpoint (id {:016x}, part 0's is {:016x})",
                       b.part.id, a.part.id);
  if (a.deck_hash != b.deck_hash) return "its deck differs from part 0's";
  if (a.info != b.info) return "its solver, units or decomposition differ from part 0's";
  if (a.datasets.size() != b.datasets.size()) return "its datasets differ from part 0's";
  for (std::size_t i = 0; i < a.datasets.size(); ++i)
    if (a.datasets[i].name != b.datasets[i].name || a.datasets[i].type != b.datasets[i].type ||
        a.datasets[i].dims != b.datasets[i].dims)
      return fmt::format("its dataset {} differs from part 0's", b.datasets[i].name);
  return {};
}

}  // namespace

CheckpointReader::CheckpointReader(MPI_Comm comm, std::string path)
    : CheckpointReader(comm, std::vector<std::string>{std::move(path)}) {}

CheckpointReader::CheckpointReader(MPI_Comm comm, std::vector<std::string> paths, bool one_part)
    : comm_(comm) {
  std::string failure;
  std::string where = paths.empty() ? std::string("checkpoint") : paths.front();
  std::vector<std::shared_ptr<detail::CheckpointFile>> files;
  try {
    QuietHdf5Errors quiet;
    if (paths.empty()) throw ReadFailure("no file given");
    if (one_part && paths.size() != 1) throw ReadFailure("one part expected");
    for (const auto& p : paths) {
      where = p;
      files.push_back(std::make_shared<detail::CheckpointFile>());
      files.back()->path = p;
      open_checkpoint_file(*files.back());
    }
    std::stable_sort(files.begin(), files.end(), [](const auto& x, const auto& y) {
      return x->manifest.part.index < y->manifest.part.index;
    });
    const Manifest& first = files.front()->manifest;
    where = files.front()->path;
    if (!one_part) {
      const auto count = static_cast<std::size_t>(first.part.count);
      if (count != files.size())
        throw ReadFailure(
            count == 1
                ? fmt::format("a whole checkpoint, given with {} other file(s)", files.size() - 1)
                : fmt::format("part {} of {}, but {} part file(s) given", first.part.index, count,
                              files.size()));
      for (std::size_t k = 0; k < files.size(); ++k) {
        where = files[k]->path;
        const Manifest& m = files[k]->manifest;
        if (static_cast<std::size_t>(m.part.index) != k || m.part.count != first.part.count)
          throw ReadFailure(
              fmt::format("part {} of {} where part {} of {} was expected (part {} "
                          "is missing or given twice)",
                          m.part.index, m.part.count, k, count, k));
        const std::string why = part_mismatch(first, m);
        if (!why.empty()) throw ReadFailure(why);
      }
      where = files.size() == 1 ? files.front()->path
                                : fmt::format("{} and its other parts", files.front()->path);
      std::vector<const Manifest*> all;
      for (const auto& f : files) all.push_back(&f->manifest);
      check_coverage(all);
    }
    where = files.front()->path;
    try {
      deck_ = read_deck_text(files.front()->path);
    } catch (const InputError& e) {
      throw ReadFailure(std::string("the deck cannot be read: ") + e.what());
    }
    while (!deck_.empty() && deck_.back() == '\0') deck_.pop_back();
    if (checksum64(deck_) != first.deck_hash)
      throw ReadFailure("the stored deck does not match its hash in the manifest (damaged)");
    for (const auto& [key, value] : first.info) {
      if (key == "solver") info_.solver = value;
      if (key == "units") info_.units = value;
      if (key == "decomposition") info_.decomposition = value;
      if (key == "backend") info_.backend = value;
    }
  } catch (const ReadFailure& e) {
    failure = fmt::format("{}: {}", where, e.what());
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) throw InputError(failure);
  for (auto& f : files) {
    bytes_ += f->bytes;
    files_.push_back(std::move(f));
  }
  path_ = files_.size() == 1
              ? files_.front()->path
              : fmt::format("{} (+{} parts)", files_.front()->path, files_.size() - 1);
  info_.step = integer("step");
  info_.time = real("time");
  info_.dt = real("dt");
}

CheckpointReader::~CheckpointReader() = default;

std::vector<std::string> CheckpointReader::paths() const {
  std::vector<std::string> out;
  for (const auto& f : files_) out.push_back(f->path);
  return out;
}

void CheckpointReader::verify_blocks(const std::vector<char>& pick, bool deal, bool shapes) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  std::string failure;
  std::string where = path_;
  try {
    QuietHdf5Errors quiet;
    for (const auto& f : files_) {
      if (!shapes) continue;  // the caller checked them
      where = f->path;
      for (const auto& e : f->manifest.datasets) {
        Handle dset(H5Dopen2(f->id, e.name.c_str(), H5P_DEFAULT), H5Dclose);
        if (!dset.valid()) throw ReadFailure("dataset " + e.name + " is missing");
        Handle space(rchecked(H5Dget_space(dset), e.name), H5Sclose);
        std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
        rchecked(H5Sget_simple_extent_dims(space, dims.data(), nullptr), e.name);
        if (dims != e.file_dims())
          throw ReadFailure(fmt::format("dataset {} has shape [{}], the manifest says [{}]", e.name,
                                        fmt::join(dims, ", "), fmt::join(e.file_dims(), ", ")));
      }
    }
    // The picked blocks, each checked by one rank: dealt out in turn, or each rank its own.
    std::vector<std::pair<const detail::CheckpointFile*, const Manifest::Block*>> blocks;
    std::size_t index = 0;
    for (const auto& f : files_)
      for (const auto& b : f->manifest.blocks)
        if (pick.at(index++) != 0) blocks.emplace_back(f.get(), &b);
    RawBuffer buffer;
    std::unique_ptr<ReadAhead> ahead;
    const detail::CheckpointFile* ahead_of = nullptr;
    const std::size_t begin = deal ? static_cast<std::size_t>(rank) : 0;
    const std::size_t step = deal ? static_cast<std::size_t>(ranks) : 1;
    for (std::size_t k = begin; k < blocks.size(); k += step) {
      const auto& [f, bp] = blocks[k];
      const auto& b = *bp;
      where = f->path;
      if (ahead_of != f) {
        ahead = std::make_unique<ReadAhead>(f->path);
        ahead_of = f;
      }
      const auto& e = entry_of(f->manifest, b.dataset, f->path);
      if (e.type != "float64" && e.type != "int64")
        throw ReadFailure("the manifest names an unknown type " + e.type);
      const hid_t type = e.type == "float64" ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
      Handle dset(H5Dopen2(f->id, b.dataset.c_str(), H5P_DEFAULT), H5Dclose);
      if (!dset.valid()) throw ReadFailure("dataset " + b.dataset + " is missing");
      if (b.start.size() != e.dims.size() || b.count.size() != e.dims.size() || b.count.empty())
        throw ReadFailure("the manifest's block of " + b.dataset + " does not match its shape");
      // In slabs along the first axis through one bounded buffer, checksummed as they come;
      // the kernel is told kReadAhead slabs in advance which ones come next. A part's block is
      // one run of its 1D dataset: read as such.
      const std::vector<hsize_t> first = b.at ? std::vector<hsize_t>{*b.at} : b.start;
      const std::vector<hsize_t> extent = b.at ? std::vector<hsize_t>{volume(b.count)} : b.count;
      hsize_t inner = 1;
      for (std::size_t a = 1; a < extent.size(); ++a) inner *= extent[a];
      const hsize_t per_slab =
          std::max<hsize_t>(1, detail::kSlabBytes / (8 * std::max<hsize_t>(inner, 1)));
      const auto slab = [&](hsize_t r) {
        auto start = first;
        auto count = extent;
        start[0] += r;
        count[0] = std::min(per_slab, extent[0] - r);
        return std::make_pair(start, count);
      };
      const auto announce = [&](hsize_t r) {
        if (r >= extent[0]) return;
        const auto [start, count] = slab(r);
        ahead->will_need(dset, e.file_dims(), start, count, 8);
      };
      constexpr hsize_t kReadAhead = 4;
      for (hsize_t s = 0; s < kReadAhead; ++s) announce(s * per_slab);
      Checksum64 sum;
      for (hsize_t r = 0; r < extent[0]; r += per_slab) {
        announce(r + kReadAhead * per_slab);
        const auto [start, count] = slab(r);
        const std::size_t bytes = read_block(dset, b.dataset, type, 8, start, count, buffer);
        sum.update(buffer.reserve(0), bytes);
      }
      if (sum.value() != b.checksum)
        throw ReadFailure(
            fmt::format("dataset {} is damaged (checksum mismatch in the block starting at [{}])",
                        b.dataset, fmt::join(b.start, ", ")));
    }
  } catch (const ReadFailure& e) {
    failure = fmt::format("{}: {}", where, e.what());
  } catch (const InputError& e) {
    failure = e.what();
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) throw InputError(failure);
}

std::size_t CheckpointReader::block_count() const {
  std::size_t total = 0;
  for (const auto& f : files_) total += f->manifest.blocks.size();
  return total;
}

void CheckpointReader::verify() { verify_blocks(std::vector<char>(block_count(), 1), true, true); }

bool CheckpointReader::has(const std::string& name) const {
  for (const auto& e : files_.front()->manifest.datasets)
    if (e.name == "/state/" + name) return true;
  return false;
}

std::vector<double> CheckpointReader::reals(const std::string& name) const {
  QuietHdf5Errors quiet;
  const auto& f = *files_.front();
  const auto& e = entry_of(f.manifest, "/state/" + name, f.path);
  if (e.type != "float64")
    throw InputError(fmt::format("{}: /state/{} is {}, expected float64", f.path, name, e.type));
  std::vector<double> v;
  try {
    read_rows(f.id, e.name, H5T_NATIVE_DOUBLE, 0, e.dims[0], v, e.dims);
  } catch (const ReadFailure& failure) {
    throw InputError(fmt::format("{}: {}", f.path, failure.what()));
  }
  return v;
}

std::vector<std::int64_t> CheckpointReader::ints(const std::string& name) const {
  QuietHdf5Errors quiet;
  const auto& f = *files_.front();
  const auto& e = entry_of(f.manifest, "/state/" + name, f.path);
  if (e.type != "int64")
    throw InputError(fmt::format("{}: /state/{} is {}, expected int64", f.path, name, e.type));
  std::vector<std::int64_t> v;
  try {
    read_rows(f.id, e.name, H5T_NATIVE_INT64, 0, e.dims[0], v, e.dims);
  } catch (const ReadFailure& failure) {
    throw InputError(fmt::format("{}: {}", f.path, failure.what()));
  }
  return v;
}

double CheckpointReader::real(const std::string& name) const {
  const auto v = reals(name);
  if (v.size() != 1) throw InputError(fmt::format("{}: /state/{} is not one value", path_, name));
  return v[0];
}

std::int64_t CheckpointReader::integer(const std::string& name) const {
  const auto v = ints(name);
  if (v.size() != 1) throw InputError(fmt::format("{}: /state/{} is not one value", path_, name));
  return v[0];
}

std::int64_t CheckpointReader::particle_count() const {
  for (const auto& e : files_.front()->manifest.datasets)
    if (e.name.starts_with("/particles/")) return static_cast<std::int64_t>(e.dims[0]);
  return 0;
}

}  // namespace stratus::io
