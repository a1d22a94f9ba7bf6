// Private to the checkpoint reader (checkpoint_read.cpp, checkpoint_restore.cpp): the parsed
// manifest, an open file of a checkpoint, and the buffers and read-ahead of its reads.
#pragma once

#include "h5_support.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/checkpoint.hpp"

#include <fmt/format.h>
#include <hdf5.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace stratus::io::detail {

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

/// One open file of a checkpoint: a whole checkpoint or one part.
struct CheckpointFile {
  std::string path;
  hid_t id = -1;
  CheckpointManifest manifest;
  std::uint64_t bytes = 0;
  CheckpointFile() = default;
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;
  ~CheckpointFile() {
    if (id >= 0) H5Fclose(id);
  }
};

inline hsize_t volume(const std::vector<hsize_t>& count) {
  hsize_t n = 1;
  for (const auto c : count) n *= c;
  return n;
}

/// The manifest's entry of dataset `name`; InputError naming `path` when there is none.
inline const CheckpointManifest::Dataset& entry_of(const CheckpointManifest& m,
                                                   const std::string& name,
                                                   const std::string& path) {
  for (const auto& e : m.datasets)
    if (e.name == name) return e;
  throw InputError(fmt::format("{}: checkpoint has no dataset {}", path, name));
}

/// A growable buffer that is never zero-filled (verification reads gigabytes into it).
class RawBuffer {
 public:
  void* reserve(std::size_t bytes) {
    if (bytes > size_) {
      data_.reset(new unsigned char[bytes]);  // default-initialised: no memset
      size_ = bytes;
      advise_huge_pages(data_.get(), bytes);
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
/// in 4 MiB pieces (readahead(2), which starts the reads and returns), at most `lead` bytes ahead
/// of what the caller says it has consumed, so that the caller's reads through HDF5 mostly copy
/// from the cache. Measured here, a cold 1 GB field
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

}  // namespace stratus::io::detail
