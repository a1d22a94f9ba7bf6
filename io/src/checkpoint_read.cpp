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
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace stratus::io {

namespace detail {

/// Parsed /checkpoint/manifest.
struct CheckpointManifest {
  struct Dataset {
    std::string name, type;
    std::vector<hsize_t> dims;
  };
  struct Block {
    std::string dataset;
    std::vector<hsize_t> start, count;
    std::uint64_t checksum = 0;
  };
  int version = 0;
  std::uint64_t deck_hash = 0;
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

hid_t file_of(std::int64_t id) { return static_cast<hid_t>(id); }

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
      m.blocks.push_back(std::move(b));
    } else if (kind == "info") {
      std::string key, value;
      words >> key >> value;
      m.info.emplace_back(key, value == "-" ? std::string() : value);
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
  // Every element of every dataset must be covered by a checksummed block.
  for (const auto& e : m.datasets) {
    hsize_t size = 1, covered = 0;
    for (const auto d : e.dims) size *= d;
    for (const auto& b : m.blocks) {
      if (b.dataset != e.name) continue;
      hsize_t n = 1;
      for (const auto c : b.count) n *= c;
      covered += n;
    }
    if (covered != size)
      throw ReadFailure(fmt::format("the manifest's checksums cover {} of the {} values of {}",
                                    covered, size, e.name));
  }
  return m;
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

CheckpointReader::CheckpointReader(MPI_Comm comm, std::string path)
    : comm_(comm), path_(std::move(path)) {
  std::string failure;
  Manifest manifest;
  try {
    QuietHdf5Errors quiet;
    std::error_code ec;
    if (!fs::exists(path_, ec)) throw ReadFailure("no such file");
    if (fs::is_directory(path_, ec)) throw ReadFailure("is a directory");
    bytes_ = fs::file_size(path_, ec);
    if (H5Fis_hdf5(path_.c_str()) <= 0) throw ReadFailure("not an HDF5 file");
    const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
      throw ReadFailure(
          fmt::format("cannot be opened: truncated or damaged{}", detail::hdf5_error_detail()));
    file_ = file;
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
    manifest = parse_manifest(text);
    if (manifest.version != kCheckpointFormatVersion)
      throw ReadFailure(fmt::format("checkpoint format version {}, this Stratus reads version {}",
                                    manifest.version, kCheckpointFormatVersion));
    try {
      deck_ = read_deck_text(path_);
    } catch (const InputError& e) {
      throw ReadFailure(std::string("the deck cannot be read: ") + e.what());
    }
    while (!deck_.empty() && deck_.back() == '\0') deck_.pop_back();
    if (checksum64(deck_) != manifest.deck_hash)
      throw ReadFailure("the stored deck does not match its hash in the manifest (damaged)");
    for (const auto& [key, value] : manifest.info) {
      if (key == "solver") info_.solver = value;
      if (key == "units") info_.units = value;
      if (key == "decomposition") info_.decomposition = value;
      if (key == "backend") info_.backend = value;
    }
  } catch (const ReadFailure& e) {
    failure = e.what();
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) {
    if (file_ >= 0) H5Fclose(file_of(file_));
    file_ = -1;
    throw InputError(fmt::format("{}: {}", path_, failure));
  }
  manifest_ = std::make_shared<const Manifest>(std::move(manifest));
  info_.step = integer("step");
  info_.time = real("time");
  info_.dt = real("dt");
}

CheckpointReader::~CheckpointReader() {
  if (file_ >= 0) H5Fclose(file_of(file_));
}

void CheckpointReader::verify() {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  std::string failure;
  try {
    QuietHdf5Errors quiet;
    const hid_t file = file_of(file_);
    for (const auto& e : manifest_->datasets) {
      Handle dset(H5Dopen2(file, e.name.c_str(), H5P_DEFAULT), H5Dclose);
      if (!dset.valid()) throw ReadFailure("dataset " + e.name + " is missing");
      Handle space(rchecked(H5Dget_space(dset), e.name), H5Sclose);
      std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
      rchecked(H5Sget_simple_extent_dims(space, dims.data(), nullptr), e.name);
      if (dims != e.dims)
        throw ReadFailure(fmt::format("dataset {} has shape [{}], the manifest says [{}]", e.name,
                                      fmt::join(dims, ", "), fmt::join(e.dims, ", ")));
    }
    // Every block checked by one rank, dealt out in turn.
    const auto& blocks = manifest_->blocks;
    RawBuffer buffer;
    const ReadAhead ahead(path_);
    for (std::size_t k = static_cast<std::size_t>(rank); k < blocks.size();
         k += static_cast<std::size_t>(ranks)) {
      const auto& b = blocks[k];
      const auto& e = entry_of(*manifest_, b.dataset, path_);
      if (e.type != "float64" && e.type != "int64")
        throw ReadFailure("the manifest names an unknown type " + e.type);
      const hid_t type = e.type == "float64" ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
      Handle dset(H5Dopen2(file, b.dataset.c_str(), H5P_DEFAULT), H5Dclose);
      if (!dset.valid()) throw ReadFailure("dataset " + b.dataset + " is missing");
      if (b.start.size() != e.dims.size() || b.count.size() != e.dims.size() || b.count.empty())
        throw ReadFailure("the manifest's block of " + b.dataset + " does not match its shape");
      // In slabs along the first axis through one bounded buffer, checksummed as they come;
      // the kernel is told kReadAhead slabs in advance which ones come next.
      hsize_t inner = 1;
      for (std::size_t a = 1; a < b.count.size(); ++a) inner *= b.count[a];
      const hsize_t per_slab =
          std::max<hsize_t>(1, detail::kSlabBytes / (8 * std::max<hsize_t>(inner, 1)));
      const auto slab = [&](hsize_t r) {
        auto start = b.start;
        auto count = b.count;
        start[0] += r;
        count[0] = std::min(per_slab, b.count[0] - r);
        return std::make_pair(start, count);
      };
      const auto announce = [&](hsize_t r) {
        if (r >= b.count[0]) return;
        const auto [start, count] = slab(r);
        ahead.will_need(dset, e.dims, start, count, 8);
      };
      constexpr hsize_t kReadAhead = 4;
      for (hsize_t s = 0; s < kReadAhead; ++s) announce(s * per_slab);
      Checksum64 sum;
      for (hsize_t r = 0; r < b.count[0]; r += per_slab) {
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
    failure = e.what();
  } catch (const InputError& e) {
    failure = e.what();
  }
  failure = agree_on_message(comm_, failure);
  if (!failure.empty()) throw InputError(fmt::format("{}: {}", path_, failure));
}

bool CheckpointReader::has(const std::string& name) const {
  for (const auto& e : (*manifest_).datasets)
    if (e.name == "/state/" + name) return true;
  return false;
}

std::vector<double> CheckpointReader::reals(const std::string& name) const {
  QuietHdf5Errors quiet;
  const auto& e = entry_of((*manifest_), "/state/" + name, path_);
  if (e.type != "float64")
    throw InputError(fmt::format("{}: /state/{} is {}, expected float64", path_, name, e.type));
  std::vector<double> v;
  try {
    read_rows(file_of(file_), e.name, H5T_NATIVE_DOUBLE, 0, e.dims[0], v, e.dims);
  } catch (const ReadFailure& f) {
    throw InputError(fmt::format("{}: {}", path_, f.what()));
  }
  return v;
}

std::vector<std::int64_t> CheckpointReader::ints(const std::string& name) const {
  QuietHdf5Errors quiet;
  const auto& e = entry_of((*manifest_), "/state/" + name, path_);
  if (e.type != "int64")
    throw InputError(fmt::format("{}: /state/{} is {}, expected int64", path_, name, e.type));
  std::vector<std::int64_t> v;
  try {
    read_rows(file_of(file_), e.name, H5T_NATIVE_INT64, 0, e.dims[0], v, e.dims);
  } catch (const ReadFailure& f) {
    throw InputError(fmt::format("{}: {}", path_, f.what()));
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
  for (const auto& e : (*manifest_).datasets)
    if (e.name.starts_with("/particles/")) return static_cast<std::int64_t>(e.dims[0]);
  return 0;
}

ParticleColumns CheckpointReader::read_particles(const std::vector<std::string>& reals,
                                                 const std::vector<std::string>& ints) const {
  QuietHdf5Errors quiet;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &ranks);
  const Manifest& m = (*manifest_);
  ParticleColumns out;
  out.n_global = particle_count();
  const RowBlock b = row_block(out.n_global, rank, ranks);
  for (std::int64_t i = 0; i < b.count; ++i) out.ids.push_back(b.first + i);
  try {
    for (const auto& name : reals) {
      const auto& e = entry_of(m, "/particles/" + name, path_);
      ParticleColumns::Reals c{name, static_cast<int>(e.dims.size() > 1 ? e.dims[1] : 1), {}};
      read_rows(file_of(file_), e.name, H5T_NATIVE_DOUBLE, static_cast<hsize_t>(b.first),
                static_cast<hsize_t>(b.count), c.values, e.dims);
      out.reals.push_back(std::move(c));
    }
    for (const auto& name : ints) {
      const auto& e = entry_of(m, "/particles/" + name, path_);
      ParticleColumns::Ints c{name, static_cast<int>(e.dims.size() > 1 ? e.dims[1] : 1), {}};
      read_rows(file_of(file_), e.name, H5T_NATIVE_INT64, static_cast<hsize_t>(b.first),
                static_cast<hsize_t>(b.count), c.values, e.dims);
      out.ints.push_back(std::move(c));
    }
  } catch (const ReadFailure& f) {
    throw InputError(fmt::format("{}: {}", path_, f.what()));
  }
  return out;
}

void CheckpointReader::read_field(const std::string& name, const GridArray& field, int ghost,
                                  const GridBlock& block,
                                  std::array<std::int64_t, 3> global_cells) const {
  QuietHdf5Errors quiet;
  const auto& e = entry_of((*manifest_), "/fields/" + name, path_);
  const std::vector<hsize_t> expect{static_cast<hsize_t>(global_cells[0]),
                                    static_cast<hsize_t>(global_cells[1]),
                                    static_cast<hsize_t>(global_cells[2])};
  if (e.dims != expect)
    throw InputError(fmt::format("{}: /fields/{} is [{}], this run's grid is [{}]", path_, name,
                                 fmt::join(e.dims, ", "), fmt::join(expect, ", ")));
  Handle dset(H5Dopen2(file_of(file_), e.name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.valid()) throw InputError(fmt::format("{}: dataset {} is missing", path_, e.name));
  Handle space(H5Dget_space(dset), H5Sclose);
  // Slabs of whole planes through one bounded buffer (as the writer does).
  const std::array<std::size_t, 3> n = {static_cast<std::size_t>(block.extent[0]),
                                        static_cast<std::size_t>(block.extent[1]),
                                        static_cast<std::size_t>(block.extent[2])};
  if (block.cells() == 0) return;
  const std::size_t plane = n[1] * n[2];
  const std::size_t depth =
      std::min(n[0], std::max<std::size_t>(1, detail::kSlabBytes / (plane * sizeof(double))));
  const std::unique_ptr<double[]> host(new double[depth * plane]);
  detail::advise_huge_pages(host.get(), depth * plane * sizeof(double));
  const auto g = static_cast<std::size_t>(ghost);
  for (std::size_t i0 = 0; i0 < n[0]; i0 += depth) {
    const std::size_t rows = std::min(depth, n[0] - i0);
    const hsize_t start[3] = {static_cast<hsize_t>(block.begin[0]) + i0,
                              static_cast<hsize_t>(block.begin[1]),
                              static_cast<hsize_t>(block.begin[2])};
    const hsize_t count[3] = {rows, n[1], n[2]};
    Handle mem(H5Screate_simple(3, count, nullptr), H5Sclose);
    if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, host.get()) < 0)
      throw InputError(fmt::format("{}: dataset {} is damaged (unreadable{})", path_, e.name,
                                   detail::hdf5_error_detail()));
    field.put({g + i0, g, g}, {rows, n[1], n[2]}, host.get());
  }
}

CheckpointStore::CheckpointStore(std::string dir, std::string run_name)
    : dir_(std::move(dir)), name_(std::move(run_name)) {}

std::string CheckpointStore::path_for(std::int64_t step) const {
  return (fs::path(dir_) / fmt::format("{}.step{:012}.h5", name_, step)).string();
}

namespace {

/// The step of NAME.stepSSSSSSSSSSSS.h5 (or -1 if `file` is not such a name).
std::int64_t step_of(const std::string& file, const std::string& name, const std::string& tail) {
  const std::string head = name + ".step";
  if (!file.starts_with(head) || !file.ends_with(tail)) return -1;
  const std::string digits = file.substr(head.size(), file.size() - head.size() - tail.size());
  if (digits.size() != 12) return -1;
  std::int64_t step = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return -1;
  return step;
}

}  // namespace

std::vector<CheckpointStore::Entry> CheckpointStore::list() const {
  std::vector<Entry> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir_, ec)) {
    const std::string file = f.path().filename().string();
    const std::int64_t step = step_of(file, name_, ".h5");
    if (step >= 0) out.push_back({step, f.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.step > b.step; });
  return out;
}

std::vector<std::string> CheckpointStore::partials() const {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir_, ec))
    if (step_of(f.path().filename().string(), name_, ".h5.partial") >= 0)
      out.push_back(f.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace stratus::io
