// CheckpointReader (every rank opens the file read-only and reads its share) and the listing
// of a run's checkpoints. Every failure is about a file the user or the run pointed at, hence
// InputError naming the file and what is wrong with it.
#include "checkpoint_support.hpp"
#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/io/h5file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace stratus::io {

namespace detail {

/// Parsed /checkpoint/manifest.
struct CheckpointManifest {
  struct Dataset {
    std::string name, type;
    std::vector<hsize_t> dims;    ///< the global shape
    std::vector<hsize_t> stored;  ///< a part's compact 1D dataset ({total}); empty: dims
    [[nodiscard]] const std::vector<hsize_t>& file_dims() const {
      return stored.empty() ? dims : stored;
    }
  };
  struct Block {
    std::string dataset;
    std::vector<hsize_t> start, count;
    std::uint64_t checksum = 0;
    std::optional<hsize_t> at;  ///< a part: the block's values, in C order, from here on
  };
  int version = 0;
  std::uint64_t deck_hash = 0;
  CheckpointPart part;  ///< count 1: a whole checkpoint
  std::vector<std::pair<std::string, std::string>> info;
  std::vector<Dataset> datasets;
  std::vector<Block> blocks;
};

}  // namespace detail

namespace fs = std::filesystem;
using detail::Handle;
using detail::QuietHdf5Errors;

namespace {

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

hsize_t volume(const std::vector<hsize_t>& count) {
  hsize_t n = 1;
  for (const auto c : count) n *= c;
  return n;
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

/// A growable buffer that is never zero-filled (verification reads gigabytes into it).
class RawBuffer {
 public:
  void* reserve(std::size_t bytes) {
    if (bytes > size_) {
      data_.reset(new unsigned char[bytes]);  // default-initialised: no memset
      size_ = bytes;
      detail::advise_huge_pages(data_.get(), bytes);
    }
    return data_.get();
  }

 private:
  std::unique_ptr<unsigned char[]> data_;
  std::size_t size_ = 0;
};

/// Tells the kernel which bytes of a contiguous dataset are read next, so that it fetches them
/// in the background while the slab before them is checksummed or copied. HDF5 reads a dataset's
/// header between two slabs, which defeats the kernel's sequential read-ahead: measured here,
/// cold 32 MiB reads took 60-150 ms each without this hint, as long as the disk's sequential
/// rate (about 3 GB/s) allows with it. A hint only: nothing happens where it is not supported.
class ReadAhead {
 public:
  explicit ReadAhead(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~ReadAhead() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  /// The hyperslab (start, count) of `dset` (shape `dims`, `value_size` bytes per value).
  void will_need(hid_t dset, const std::vector<hsize_t>& dims, const std::vector<hsize_t>& start,
                 const std::vector<hsize_t>& count, std::size_t value_size) const {
    if (fd_ < 0 || dims.size() != start.size() || dims.size() != count.size()) return;
    const haddr_t base = H5Dget_offset(dset);  // HADDR_UNDEF unless contiguous and allocated
    if (base == HADDR_UNDEF) return;
    hsize_t first = 0, last = 0, stride = 1;
    for (std::size_t a = dims.size(); a-- > 0;) {
      if (count[a] == 0) return;
      first += start[a] * stride;
      last += (start[a] + count[a] - 1) * stride;
      stride *= dims[a];
    }
    (void)posix_fadvise(fd_, static_cast<off_t>(base + first * value_size),
                        static_cast<off_t>((last - first + 1) * value_size), POSIX_FADV_WILLNEED);
  }

 private:
  int fd_;
};

/// Brings bytes [first, first + length) of a file into the page cache from a thread of its own,
/// in 4 MiB pieces (readahead(2), which returns once they are read), at most `lead` bytes ahead
/// of what the caller says it has consumed: a second stream of requests to the disk beside the
/// caller's reads through HDF5, which then copy from the cache. Measured here, a cold 1 GB field
/// restore took 0.65-0.84 s with fadvise hints alone (dd: 0.22 s). Stops at the end or when
/// destroyed.
class Prefetch {
 public:
  Prefetch(const std::string& path, std::uint64_t first, std::uint64_t length, std::uint64_t lead)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) return;
    thread_ = std::thread([this, first, length, lead] {
      constexpr std::uint64_t kPiece = 4u << 20;
      for (std::uint64_t done = 0; done < length;) {
        {
          std::unique_lock<std::mutex> lock(mutex_);
          wake_.wait(lock, [&] { return stop_ || done < consumed_ + lead; });
          if (stop_) return;
        }
        const std::uint64_t n = std::min(kPiece, length - done);
        if (::readahead(fd_, static_cast<off64_t>(first + done), n) != 0) return;
        done += n;
      }
    });
  }
  ~Prefetch() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  Prefetch(const Prefetch&) = delete;
  Prefetch& operator=(const Prefetch&) = delete;

  /// The caller has read the first `bytes` bytes.
  void consumed(std::uint64_t bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      consumed_ = bytes;
    }
    wake_.notify_all();
  }

 private:
  int fd_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t consumed_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

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

const DatasetEntry& entry_of(const Manifest& m, const std::string& name, const std::string& path) {
  for (const auto& e : m.datasets)
    if (e.name == name) return e;
  throw InputError(fmt::format("{}: checkpoint has no dataset {}", path, name));
}

}  // namespace

namespace detail {

/// One open file of a checkpoint: a whole checkpoint or one part.
struct CheckpointFile {
  std::string path;
  hid_t id = -1;
  Manifest manifest;
  std::uint64_t bytes = 0;
  CheckpointFile() = default;
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;
  ~CheckpointFile() {
    if (id >= 0) H5Fclose(id);
  }
};

}  // namespace detail

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
    for (const auto& f : shapes ? files_ : decltype(files_){}) {
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

void CheckpointReader::verify() {
  std::size_t total = 0;
  for (const auto& f : files_) total += f->manifest.blocks.size();
  verify_blocks(std::vector<char>(total, 1), true, true);
}

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
  std::size_t total = 0;
  for (const auto& f : files_) total += f->manifest.blocks.size();
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
