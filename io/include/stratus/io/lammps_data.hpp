// Initial configurations from LAMMPS data files (atom styles atomic and full, orthogonal boxes):
// atoms, velocities, masses, the molecular topology (bonds, angles, dihedrals, impropers) and the
// coefficient sections, as read; the solver decides what it supports.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/scalar.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::io {

/// The Atoms section's layout: `atomic` (id type x y z) or `full` (id molecule type q x y z),
/// each with optional image counts ix iy iz.
enum class AtomStyle { atomic, full };

struct DataAtom {
  GlobalId id = 0;          ///< 0-based (the file's id - 1)
  int type = 0;             ///< 0-based
  std::array<Real, 3> x{};  ///< as in the file
  std::array<int, 3> image{};
  std::int64_t molecule = 0;  ///< full: the file's molecule id (0: none); atomic: 0
  Real charge = 0;            ///< full: as in the file; atomic: 0
};

/// One bonded interaction of the topology sections: its type (0-based) and its N atoms (0-based
/// ids, in the file's order), with the line it was read from (for later errors; 0 when read from
/// an H5MD file's /connectivity).
template <int N>
struct DataTerm {
  int type = 0;
  std::array<GlobalId, N> atoms{};
  int line = 0;
};

/// A coefficient section ("Pair Coeffs", "PairIJ Coeffs", "Bond Coeffs", "Angle Coeffs",
/// "Dihedral Coeffs", "Improper Coeffs"): its style comment ("Bond Coeffs # harmonic" gives
/// "harmonic", else empty), its keyword's line, and one row per type in type order, the numbers
/// after the type (PairIJ: after both types) as read.
struct CoeffSection {
  std::string name;   ///< the section's keyword ("Pair Coeffs", "PairIJ Coeffs", ...)
  std::string style;  ///< the comment of its keyword line (a style name)
  int line = 0;       ///< 0: the file has no such section
  struct Row {
    int type = 0;   ///< 0-based
    int type2 = 0;  ///< 0-based second type (PairIJ Coeffs), else equal to type
    std::vector<Real> values;
    int line = 0;
  };
  std::vector<Row> rows;
  /// Coefficients read from an H5MD file (read_h5md_frame): the dataset that holds them (line
  /// and every row's line stay 0). Messages then name the dataset and row instead of path:line.
  std::string dataset;
  [[nodiscard]] bool present() const noexcept { return line != 0 || !dataset.empty(); }
  /// Where the section (or `row` of it) was read, for messages: "PATH:LINE" in a data file,
  /// "PATH: DATASET" (", row R" for a row, R its 0-based type) in an H5MD file.
  [[nodiscard]] std::string where(const std::string& path, const Row* row = nullptr) const;
};

/// The molecular topology of a data file (all empty for atom style atomic). The terms are stored
/// by id: bonds[k] is the file's bond k + 1 (ids are 1..count, each once), whatever the row order.
/// pair_coeffs holds a Pair Coeffs section (rows[t] for type t, type2 == type) or a PairIJ Coeffs
/// section (rows (0,0), (0,1) .. (0,n-1), (1,1) .. (n-1,n-1)); a file with both is refused.
struct Topology {
  int bond_types = 0, angle_types = 0, dihedral_types = 0, improper_types = 0;
  std::vector<DataTerm<2>> bonds;
  std::vector<DataTerm<3>> angles;     ///< atoms i j k: j is the apex
  std::vector<DataTerm<4>> dihedrals;  ///< i j k l along the chain
  std::vector<DataTerm<4>> impropers;  ///< i j k l in LAMMPS's order (harmonic: i the centre)
  CoeffSection pair_coeffs, bond_coeffs, angle_coeffs, dihedral_coeffs, improper_coeffs;
};

/// An initial configuration read from a file (a LAMMPS data file or an H5MD frame).
struct AtomConfiguration {
  std::int64_t natoms = 0;
  int ntypes = 0;                               ///< the header's count (data), max type + 1 (H5MD)
  Box box;                                      ///< xlo xhi, ylo yhi, zlo zhi
  std::vector<Real> masses;                     ///< per type, empty without a Masses section
  std::vector<DataAtom> atoms;                  ///< every atom, in file order
  std::vector<std::array<Real, 3>> velocities;  ///< by 0-based id; empty without Velocities
  AtomStyle style = AtomStyle::atomic;
  /// The atoms carry charges: atom style full (data file), a charge element (H5MD frame).
  bool charges = false;
  Topology topology;
};

/// Parses the text of a LAMMPS data file (`path` is used in messages). Supported: the header
/// counts "atoms", "atom types", "bonds", "angles", "dihedrals", "impropers" and their "... types",
/// "xlo xhi" / "ylo yhi" / "zlo zhi" (the "extra ... per atom" hints are read and ignored), and
/// the sections, in any order, each at most once: Masses, Atoms (style atomic:
/// id type x y z [ix iy iz]; full: id molecule type q x y z [ix iy iz]; the style from the
/// section's comment "Atoms # full", else from the number of words, the same on every row),
/// Velocities (id vx vy vz), Bonds, Angles, Dihedrals, Impropers (id type atom1 ... atomN) and
/// the coefficient sections of CoeffSection (one row per type). Ids must be 1..N, each once; every
/// bonded term names existing, distinct atoms and a type in range; a section has as many rows as
/// the header's count, and a count > 0 needs its section (a section, its count). Throws
/// InputError naming path:line, what was expected and what was found, for anything else (a
/// tilted box, an unknown section, a short line, a duplicate id, a bond to a missing atom, ...).
AtomConfiguration parse_lammps_data(const std::string& path, const std::string& text);

}  // namespace stratus::io
