// The molecular topology of the md solver: bonds, angles, dihedrals and impropers from a LAMMPS
// data file, their styles and coefficients, and the special neighbours (1-2, 1-3, 1-4 partners)
// that exclude or scale the pair interactions of bonded atoms.
//
// Data flow. Every term is stored with one of its atoms, its owner (a bond with its first atom,
// the others with their second, as LAMMPS does), as a row of global ids (type, atom 0 .. atom N-1)
// in a per-atom column that migrates and is checkpointed with the atom: nothing is replicated
// over ranks. The special neighbours of each atom (global ids by level) are a column too. At each
// neighbour-list build, build() turns the owned atoms' terms into lists of local indices
// (kernels/md/bonded.hpp), each partner taken in the image closest to the owner, which the ghost
// cutoff (pair cutoff + skin) always holds for a physical molecule: a partner that is absent is
// an error naming the term. Forces on ghosts go home through AtomExchange::reverse_forces.
#pragma once

#include "stratus/io/deck.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/kernels/md/bonded.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/topology.hpp"
#include "stratus/solvers/md/atoms.hpp"
#include "stratus/solvers/md/lj_tables.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::md {

struct MdConfig;

/// Energies (sums over this rank's terms) and the virial tensor's diagonal (W_xx, W_yy, W_zz) of
/// the bonded terms and of the special pairs' scaling, from the last forces() with energy.
struct BondedEnergies {
  double bond = 0, angle = 0, dihedral = 0, improper = 0;
  double special = 0;       ///< van der Waals energy of the special pairs (scaled)
  double special_coul = 0;  ///< their Coulomb energy (scaled)
  std::array<double, 3> virial{0, 0, 0};
};

class MolecularTopology {
 public:
  /// A runtime-width column of global ids (type and atoms of terms, or special neighbours).
  using IdRows = kernels::md::IdRows;

  /// Reads the styles and coefficients (deck keys md.bond.style ..., or the data file's section
  /// comments; md.special_bonds.lj) and declares the per-atom columns on `atoms`. Throws DeckError
  /// naming the key or InputError naming the data file's line when something is missing or
  /// unsupported (a style LAMMPS defines that Stratus lacks, a charmm weight other than 0, ...).
  MolecularTopology(const io::Deck& deck, const MdConfig& config, const io::AtomConfiguration& data,
                    AtomData& atoms);

  /// True when the system has any bonded term.
  [[nodiscard]] bool active() const noexcept { return active_; }
  /// True when some special pairs are left out of the neighbour lists (a factor other than 1).
  [[nodiscard]] bool excludes() const noexcept { return active_ && excluded_levels_ != 0; }

  /// Fills the topology columns of the owned atoms [0, nlocal) from the data file (by id).
  void install(AtomData& atoms) const;
  /// Frees the host copy of the file's topology (after install()).
  void release_file() {
    by_owner_ = {};
    special_host_ = {};
  }

  /// The owned atoms' terms and scaled special pairs as local lists (after the ghosts are
  /// built). Throws RuntimeError naming the first term with an atom that is neither owned nor a
  /// ghost here.
  void build(const AtomData& atoms, std::int64_t natoms, std::int64_t step, MPI_Comm comm);
  /// Removes from `list` (rows of owned atoms) every neighbour that is a special partner at a
  /// level whose factors are not 1: those pairs are computed, scaled, by forces().
  void exclude(kernels::md::NeighborList& list, const AtomData& atoms) const;
  /// The same special pairs for cluster lists (levels 0 when none are left out).
  [[nodiscard]] kernels::md::ClusterExclusions cluster_exclusions(const AtomData& atoms) const;
  /// ADDS the bonded forces and the scaled special pairs to atoms.f (ghost rows included);
  /// energies and virial when `energy`. `q`: the charges (charged pair styles).
  BondedEnergies forces(const AtomData& atoms, const PairTables& pair,
                        const kernels::md::Charges& q, bool energy) const;

  /// The global id -> local index chains of the last build() (kernels::md::closest_image).
  [[nodiscard]] const Kokkos::View<int*, DevMemSpace>& id_head() const noexcept { return head_; }
  [[nodiscard]] const Kokkos::View<int*, DevMemSpace>& id_next() const noexcept { return next_; }

  /// Counts of the whole system, for the log.
  [[nodiscard]] std::string summary() const;

  /// The topology for an H5MD file's /connectivity (H5mdWriter::write_connectivity): one entry
  /// per kind the system has (bonds, angles, dihedrals, impropers), with its style, the
  /// coefficients as read and the system's count, holding the terms of this rank's owned atoms
  /// (from their columns; terms held rigid by md.constraints are not there: see
  /// Constraints::add_rigid_terms). Empty when the system has no topology.
  [[nodiscard]] std::vector<io::H5mdTuples> connectivity(const AtomData& atoms) const;

 private:
  struct Kind {
    std::string name;        ///< "bond", "angle", "dihedral", "improper"
    int atoms = 0;           ///< N
    int width = 0;           ///< terms per owner the column holds
    int style = 0;           ///< index of the style (per kind)
    std::int64_t total = 0;  ///< in the whole system
    kernels::md::TypeCoeffs coeffs;
    // The local lists of the last build: one TermList per N, stored here by kind.
    kernels::md::TermList<2> list2{"md::bonds", 0};
    kernels::md::TermList<3> list3{"md::angles", 0};
    kernels::md::TermList<4> list4{"md::torsions", 0};
    int count = 0;  ///< terms in the local list
  };

  [[nodiscard]] IdRows rows_of(const AtomData& atoms, const std::string& column) const;

  bool active_ = false;
  std::vector<Kind> kinds_;  ///< those the file has, in the order bond, angle, dihedral, improper
  std::array<double, 3> special_lj_{0, 0, 0}, special_coul_{0, 0, 0};
  bool charged_ = false;          ///< the pair style has a Coulomb term
  unsigned excluded_levels_ = 0;  ///< bit k: level k+1 (1-2, 1-3, 1-4) is left out of the lists
  unsigned scaled_levels_ = 0;    ///< bit k: level k+1 is computed by forces() (a factor > 0)
  int special_width_ = 0;
  std::int64_t rigid_ = 0;  ///< bonds and angles left to md.constraints
  /// Per kind (bond, angle, dihedral, improper), for connectivity(): the style, the Coeffs
  /// section's name and numbers per type (as read), and the system's count (rigid ones too).
  struct FileKind {
    std::string style, section;
    std::vector<std::vector<double>> coeffs;
    std::int64_t total = 0;
  };
  std::array<FileKind, 4> file_kinds_;
  // Host copy of the file's topology until install(): per atom id, its owned terms (kind k:
  // rows of N + 1 ids) and its special partners by level.
  std::vector<std::vector<std::vector<std::int64_t>>> by_owner_;  // [kind][id] -> flat rows
  std::vector<std::array<std::vector<std::int64_t>, 3>> special_host_;
  // Scaled special pairs of the last build: (i, j, level) local indices.
  Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace> special_pairs_ {
    "md::special_pairs", 0
  };
  int special_pair_count_ = 0;
  Kokkos::View<int*, DevMemSpace> head_{"md::id_head", 0};  // global id -> a local index
  Kokkos::View<int*, DevMemSpace> next_{"md::id_next", 0};  // local index -> next image
};

}  // namespace stratus::md
