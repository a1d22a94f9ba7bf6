// Private helpers of the HDF5 code in io/src: identifier ownership, error-stack control, and the
// pieces every parallel Stratus writer shares (checked calls, attributes, the common layout).
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/grid_array.hpp"
#include "stratus/core/scalar.hpp"

#include <fmt/format.h>
#include <hdf5.h>
#include <mpi.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stratus::io::detail {

/// Turns HDF5's automatic error-stack printing off for one scope (Stratus checks every result
/// and reports failures itself), then clears the stack and restores what was set before.
class QuietHdf5Errors {
 public:
  QuietHdf5Errors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5Errors() {
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, func_, data_);
  }
  QuietHdf5Errors(const QuietHdf5Errors&) = delete;
  QuietHdf5Errors& operator=(const QuietHdf5Errors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// Owns one HDF5 identifier and releases it with the matching close function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  operator hid_t() const noexcept { return id_; }  // NOLINT(google-explicit-constructor)
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }

 private:
  hid_t id_;
  Closer close_;
};

/// The most specific message on HDF5's error stack (", <message>"), then clears the stack.
std::string hdf5_error_detail();

/// Returns `result` unless it signals an HDF5 failure (negative), then throws RuntimeError
/// "<path>: <what> failed: <HDF5's message>". For writers; readers report InputError instead.
template <class T>
T checked(T result, const std::string& path, std::string_view what) {
  if (result < 0) {
    throw RuntimeError(fmt::format("{}: {} failed{}", path, what, hdf5_error_detail()));
  }
  return result;
}

/// Variable-length UTF-8 string type: h5py reads such attributes as `str`.
Handle make_string_type(const std::string& path);

/// Writes (replacing any previous one) attribute `name` on the object `object` of `file`.
void put_attribute(hid_t file, const std::string& path, const std::string& object,
                   const std::string& name, hid_t file_type, hid_t mem_type, hid_t space,
                   const void* data);
/// A numeric attribute: a scalar (`scalar`) or a 1D array of `count` values.
void put_numeric_attribute(hid_t file, const std::string& path, const std::string& object,
                           const std::string& name, hid_t file_type, hid_t mem_type,
                           const void* data, std::size_t count, bool scalar);
/// A scalar variable-length UTF-8 string attribute.
void put_string_attribute(hid_t file, const std::string& path, const std::string& object,
                          const std::string& name, const std::string& value);
/// A 1D array of variable-length UTF-8 strings as an attribute.
void put_string_array_attribute(hid_t file, const std::string& path, const std::string& object,
                                const std::string& name, const std::vector<std::string>& value);

/// The scalar string attribute `name` of the object `obj` (fixed or variable length, as any
/// writer stores it); "" when it is absent, not a string, or unreadable.
std::string read_string_attribute(hid_t obj, const char* name);

/// Creates group `group` of `file` and its missing parents (collective in parallel files).
void create_groups(hid_t file, const std::string& path, const std::string& group);

/// Creates (truncates) `path` with the MPI-IO driver over `comm` and writes the common layout
/// of every Stratus file: root attributes (stratus_format = `format`, ...) and /stratus/deck.
/// Returns the open file; throws RuntimeError (and leaves nothing open) on failure. Collective.
hid_t create_stratus_file(MPI_Comm comm, const std::string& path, const std::string& format,
                          const std::string& resolved_deck);

/// A dataset creation list without fill values. Parallel HDF5 allocates datasets at creation
/// and would otherwise write zeros over every byte before the data itself: twice the bytes.
/// Every dataset Stratus creates is written whole, so a fill value is never seen.
Handle no_fill_dcpl(const std::string& path);

/// This rank's part of a collective write: the hyperslab `start`, `count` (`rank` axes) of
/// `file_space` from `data` (the selection's values, contiguous), or nothing where the selection
/// holds no element (every rank calls it). `what` names the dataset in the selection messages,
/// `writing` the write in its message.
void write_collective(hid_t dataset, hid_t file_space, int rank, const hsize_t* start,
                      const hsize_t* count, hid_t mem_type, const void* data,
                      const std::string& path, const std::string& what, const std::string& writing);

/// Creates the 3D float64 dataset `dataset` (shape `global_cells`, no fill values) and
/// writes the interior of `field` (extent + 2 * ghost per axis, on the device) as this rank's
/// hyperslab `block`, collectively over `comm`, in slabs of a few planes through one small
/// buffer (no copy of the whole block). Throws RuntimeError naming the mismatch or HDF5's
/// failure. With `checksum`, stores there the checkpoint checksum of the block (C order).
/// With `flat`, the dataset is instead 1D of flat->total values and this rank's block goes,
/// in C order, to [flat->offset, flat->offset + cells) (a checkpoint part's compact layout).
struct FlatPlacement {
  std::uint64_t offset = 0, total = 0;
};
void write_field_block(MPI_Comm comm, hid_t file, const std::string& path,
                       const std::string& dataset, const GridArray& field, int ghost,
                       const GridBlock& block, std::array<std::int64_t, 3> global_cells,
                       std::uint64_t* checksum = nullptr, const FlatPlacement* flat = nullptr);

/// Size of the bounded I/O buffers (32 MiB) used for blocks of any size: fresh memory is
/// expensive to fault in on virtual machines; a small reused buffer is not.
inline constexpr std::size_t kSlabBytes = std::size_t{32} << 20;

/// Asks the kernel to back [data, data + bytes) with huge pages where it can (2 MiB pages:
/// a 32 MiB buffer faults in 16 times instead of 8192; measured here, the first read into a
/// fresh 32 MiB buffer took 0.15 s with 4 KiB pages, 0.03-0.09 s with huge pages). Call before
/// the memory is first touched; a hint only, ignored where unsupported.
void advise_huge_pages(const void* data, std::size_t bytes);

}  // namespace stratus::io::detail
