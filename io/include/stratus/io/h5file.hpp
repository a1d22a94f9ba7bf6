// Parallel HDF5 files written by Stratus, and the metadata every one of them carries.
//
// Layout of every Stratus HDF5 file (see docs/file-formats.md):
//   /                     attributes: stratus_format ("field", later "checkpoint", ...),
//                         stratus_format_version (int), stratus_version, stratus_git_revision,
//                         created_utc (ISO 8601), mpi_ranks (ranks that wrote it)
//   /stratus/deck         string dataset: the resolved deck (TOML, every default filled in);
//                         fixed-length UTF-8 (parallel HDF5 cannot write variable-length data)
//   other groups          owned by the writer of that format (e.g. /fields for "field")
//
// Datasets never depend on the decomposition: a 3D grid field is one global (nx, ny, nz)
// dataset (z fastest) written collectively, each rank its own hyperslab.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/grid_array.hpp"
#include "stratus/core/scalar.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io {

/// Version of the common layout above; bumped when it changes incompatibly.
inline constexpr int kFileFormatVersion = 1;

/// A Stratus HDF5 file opened for parallel writing (collective over `comm`).
class H5Writer {
 public:
  /// Creates (truncates) `path` with the MPI-IO driver and writes the common root attributes
  /// and /stratus/deck. Throws RuntimeError naming the path if it cannot be created.
  H5Writer(MPI_Comm comm, const std::string& path, const std::string& format,
           const std::string& resolved_deck);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;

  /// Creates group `path` (and its parents) if missing. Collective.
  void create_group(const std::string& path);
  /// Attributes on an existing object (group or dataset) at `object`. Collective, same value on
  /// every rank.
  void write_attribute(const std::string& object, const std::string& name,
                       const std::string& value);
  void write_attribute(const std::string& object, const std::string& name, std::int64_t value);
  void write_attribute(const std::string& object, const std::string& name, double value);
  void write_attribute(const std::string& object, const std::string& name,
                       const std::vector<double>& value);
  void write_attribute(const std::string& object, const std::string& name,
                       const std::vector<std::int64_t>& value);

  /// Writes the interior of `field` (shape extent + 2 * ghost per axis; a device View through
  /// stratus::grid_array) as this rank's block of the global dataset `dataset` of shape
  /// `global_cells`. Collective.
  void write_field(const std::string& dataset, const GridArray& field, int ghost,
                   const GridBlock& block, std::array<std::int64_t, 3> global_cells);

  /// Flushes and closes (collective); a second close() does nothing, any other call afterwards
  /// throws RuntimeError. Called by the destructor if not done before.
  void close();

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  MPI_Comm comm_;
  std::string path_;
  hid_t file_ = -1;
};

/// HDF5 library version, e.g. "1.10.8".
std::string hdf5_version();

/// Text description of a Stratus HDF5 file for `stratus info`: format and version, who wrote
/// it and when, attributes, every dataset with shape and type, and (with `show_deck`) the
/// resolved deck. Serial. Throws InputError if the file is missing, is not HDF5, or was not
/// written by Stratus.
std::string describe_file(const std::string& path, bool show_deck);

/// Reads a whole 3D dataset serially (tests and tools); returns values in C order and sets
/// `dims`. Throws InputError if missing.
std::vector<double> read_dataset_3d(const std::string& path, const std::string& dataset,
                                    std::array<std::int64_t, 3>& dims);

/// Reads the string dataset /stratus/deck of a Stratus file.
std::string read_deck_text(const std::string& path);

}  // namespace stratus::io
