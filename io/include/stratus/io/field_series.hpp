// Series of grid outputs: XDMF descriptions of snapshot files (ParaView opens them as a time
// series), an appendable HDF5 file of 1D profiles (energy spectra) that is cut back to a
// checkpoint on resume, and block reads of 3D datasets (initial conditions from files).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io {

/// One snapshot of an XDMF series: an HDF5 file (path relative to the XDMF file) and its time.
struct XdmfSnapshot {
  std::string file;
  double time = 0;
};

/// Fields on a uniform grid: datasets of shape `dims` (slowest axis first, the order of the
/// file) named `scalars` in group /fields, and vectors joined from three of them. Node-centred
/// by default; cell-centred grids have dims + 1 points and their origin at the box corner.
struct XdmfGrid {
  std::array<std::int64_t, 3> dims{};  ///< values per axis, slowest first (z, y, x)
  std::array<double, 3> origin{};      ///< first point, same order as dims
  std::array<double, 3> spacing{};     ///< same order as dims
  std::vector<std::string> scalars;
  /// name, then the datasets of its X, Y and Z components
  std::vector<std::array<std::string, 4>> vectors;
  bool cell_centred = false;  ///< values at cell centres (dims cells) instead of at points
};

/// Writes `path` (an XDMF 3 temporal collection of 3DCoRectMesh grids with ORIGIN_DXDYDZ
/// geometry) atomically (temporary file and rename). Serial. Throws RuntimeError.
void write_xdmf_series(const std::string& path, const XdmfGrid& grid,
                       const std::vector<XdmfSnapshot>& snapshots);

/// Reads a double attribute of an object of an HDF5 file. Serial. Throws InputError.
double read_double_attribute(const std::string& path, const std::string& object,
                             const std::string& name);

/// Reads the block [begin, begin + extent) of the 3D double dataset `dataset` of `path`, C order.
/// Throws InputError naming the file when it is missing, is not HDF5, lacks the dataset or its
/// shape is not `expected_dims`. Serial: every rank may call it on the same file.
std::vector<double> read_block_3d(const std::string& path, const std::string& dataset,
                                  std::array<std::int64_t, 3> expected_dims,
                                  std::array<std::int64_t, 3> begin,
                                  std::array<std::int64_t, 3> extent);

/// An HDF5 file of 1D profiles over time, written by rank 0 alone (open, append, close: every
/// row is on disk when append returns):
///   /profiles/x       (n)          abscissa (e.g. wavenumber bins)
///   /profiles/step    (rows)       int64
///   /profiles/time    (rows)
///   /profiles/value   (rows, n)
/// with the common layout of Stratus files (stratus_format = "profiles", /stratus/deck) and the
/// root attribute `quantity`.
class ProfileFile {
 public:
  /// `resumed_at` < 0: creates (truncates) `path`. Otherwise keeps the rows with step <=
  /// resumed_at and drops the others (a missing file is created). Serial (rank 0).
  ProfileFile(std::string path, std::string quantity, std::vector<double> x,
              std::string resolved_deck, std::int64_t resumed_at);
  /// Appends one row of values (size of x). Throws RuntimeError naming the file.
  void append(std::int64_t step, double time, const std::vector<double>& values);
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  void create();
  std::string path_, quantity_, deck_;
  std::vector<double> x_;
};

}  // namespace stratus::io
