// Initial configurations from LAMMPS data files (atom style atomic, orthogonal boxes).
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/scalar.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io {

struct DataAtom {
  GlobalId id = 0;          ///< 0-based (the file's id - 1)
  int type = 0;             ///< 0-based
  std::array<Real, 3> x{};  ///< as in the file
  std::array<int, 3> image{};
};

/// An initial configuration read from a file (a LAMMPS data file or an H5MD frame).
struct AtomConfiguration {
  std::int64_t natoms = 0;
  int ntypes = 0;                               ///< the header's count (data), max type + 1 (H5MD)
  Box box;                                      ///< xlo xhi, ylo yhi, zlo zhi
  std::vector<Real> masses;                     ///< per type, empty without a Masses section
  std::vector<DataAtom> atoms;                  ///< every atom, in file order
  std::vector<std::array<Real, 3>> velocities;  ///< by 0-based id; empty without Velocities
};

/// Parses the text of a LAMMPS data file (`path` is used in messages). Supported: the header
/// counts "atoms" and "atom types", "xlo xhi" / "ylo yhi" / "zlo zhi", and the sections Masses,
/// Atoms (style atomic: id type x y z [ix iy iz]) and Velocities (id vx vy vz). Ids must be
/// 1..N, each once. Throws InputError naming path:line, what was expected and what was found,
/// for anything else (a tilted box, another section, a short line, a duplicate id, ...).
AtomConfiguration parse_lammps_data(const std::string& path, const std::string& text);

}  // namespace stratus::io
