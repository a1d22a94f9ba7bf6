// Serial readers for post-processing (`stratus post`): every frame of an H5MD trajectory that
// Stratus wrote, and the velocity field of a grid snapshot (spectral or euler field file).
// Every failure is an InputError naming the file, what was expected and what was found.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io {

/// What a trajectory holds, read once when it is opened.
struct TrajectoryInfo {
  std::string path;
  std::int64_t natoms = 0;
  std::int64_t frames = 0;
  std::array<double, 3> box{};     ///< box edges of frame 0 (orthorhombic, periodic)
  std::vector<std::int64_t> step;  ///< per frame
  std::vector<double> time;        ///< per frame
  bool has_image = false;          ///< /particles/all/image present: positions can be unwrapped
  bool has_species = false;
  std::string length_unit;  ///< "sigma" (reduced) or the physical unit, "" if none is stored
  std::string time_unit;    ///< "tau" (reduced) or the physical unit, "" if none is stored
};

/// One frame: positions (natoms x 3, row = atom), images (natoms x 3, empty without image
/// data), species (natoms, all 0 without species data) and the box edges of that frame.
struct TrajectoryFrame {
  std::vector<double> position;
  std::vector<int> image;
  std::vector<int> species;
  std::array<double, 3> box{};
};

/// Opens an H5MD trajectory (stratus_format "h5md", particle group /particles/all, periodic
/// orthorhombic box) and reads its metadata. Throws InputError when the file is missing, is
/// not HDF5, is another kind of Stratus file (a checkpoint, a field file), or lacks a dataset.
TrajectoryInfo read_trajectory_info(const std::string& path);

/// Reads frame `frame` (0 <= frame < info.frames) of the trajectory. Throws InputError.
TrajectoryFrame read_trajectory_frame(const TrajectoryInfo& info, std::int64_t frame);

/// The velocity field of a grid snapshot (a "field" file of the spectral or the euler solver),
/// each component stored (z, y, x) with x fastest, as in the file.
struct VelocitySnapshot {
  std::string path;
  std::string solver;  ///< "spectral" (u, v, w) or "euler" (velocity_x, ...)
  std::int64_t step = 0;
  double time = 0;
  std::array<std::int64_t, 3> points{};  ///< (nx, ny, nz)
  std::array<double, 3> length{};        ///< box edges (x, y, z)
  std::array<std::vector<double>, 3> velocity;
  std::vector<double> density;  ///< euler only (empty for spectral)
  std::string deck;             ///< /stratus/deck: the resolved deck of the run
};

/// Reads the velocity of a field file. Throws InputError when the file is missing, is not a
/// Stratus "field" file, or holds no velocity (u, v, w or velocity_x, velocity_y, velocity_z).
VelocitySnapshot read_velocity_snapshot(const std::string& path);

/// The step of a field file (/fields@step), after the same checks of its kind, without reading
/// the fields (to put many files in order). Throws InputError.
std::int64_t read_velocity_snapshot_step(const std::string& path);

}  // namespace stratus::io
