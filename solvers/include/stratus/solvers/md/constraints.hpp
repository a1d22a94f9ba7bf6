// Rigid bonds and angles ([md.constraints]: SHAKE, or RATTLE = SHAKE + velocity constraints) on
// the clusters LAMMPS's fix shake takes: an atom and up to 3 partners bonded to it by constrained
// bond types, with the far side of a constrained angle in a 3-atom cluster (rigid water).
//
// Each cluster is stored with its centre atom, as a per-atom column of global ids and types that
// migrates and is checkpointed, like the bonded terms (topology.hpp); at each list build the
// centres' clusters become local lists (partners in the image closest to the centre). Ghost
// partners get their owners' predicted positions (and velocities, for RATTLE) through the ghost
// plan, and their constraint forces (velocity corrections) go home through its reverse.
#pragma once

#include "stratus/io/deck.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/kernels/md/constraints.hpp"
#include "stratus/solvers/md/atom_exchange.hpp"
#include "stratus/solvers/md/atoms.hpp"
#include "stratus/solvers/md/topology.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stratus::md {

struct MdConfig;

class Constraints {
 public:
  /// Finds the clusters of the deck's constrained bond and angle types in the data file and
  /// declares the columns. Throws DeckError naming md.constraints.* (a type that does not exist,
  /// a cluster LAMMPS's shapes do not cover) or InputError naming the data file.
  Constraints(const io::Deck& deck, const MdConfig& config, const io::AtomConfiguration& data,
              AtomData& atoms);

  /// Constraints in the whole system (removed from the degrees of freedom).
  [[nodiscard]] std::int64_t count() const noexcept { return constraints_; }
  [[nodiscard]] bool rattle() const noexcept { return rattle_; }
  [[nodiscard]] std::string summary() const;

  /// Fills the columns of the owned atoms [0, nlocal) from the data file, then frees it.
  void install(AtomData& atoms);
  /// Local clusters after the topology's build (its id chains). Throws RuntimeError when a
  /// partner is not here.
  void build(const AtomData& atoms, const MolecularTopology& topology, std::int64_t step,
             MPI_Comm comm);

  /// Adds the SHAKE forces to atoms.f (owned rows): `c` = 1 in a step, 1/2 before the first
  /// (the first drift takes dt^2 / 2 of the force). Stores them (and each cluster's virial
  /// tensor diagonal) in
  /// the "constraint_force" and "constraint_virial" columns. Throws RuntimeError (collective)
  /// naming the cluster when it does not converge. Collective.
  void shake(AtomData& atoms, AtomExchange& exchange, const kernels::md::TypeMasses& mass,
             double dt, double c, std::int64_t step, MPI_Comm comm);
  /// Adds the stored constraint forces to atoms.f again (forces recomputed at the same step).
  void reuse(AtomData& atoms) const;
  /// Removes the relative velocities along the constraints (RATTLE). Collective.
  void rattle_velocities(AtomData& atoms, AtomExchange& exchange,
                         const kernels::md::TypeMasses& mass, std::int64_t step, MPI_Comm comm);
  /// Adds the bonds and angles held rigid, of the clusters of this rank's owned centres, to the
  /// "bonds" and "angles" entries of `kinds` (MolecularTopology::connectivity): a bond as
  /// (centre, partner), an angle as (partner 1, centre, partner 2), owned by the centre.
  void add_rigid_terms(const AtomData& atoms, std::vector<io::H5mdTuples>& kinds) const;
  /// This rank's share of the constraint virial tensor's diagonal (W_xx, W_yy, W_zz; the clusters
  /// of its owned centres) at the last shake().
  [[nodiscard]] std::array<double, 3> local_virial(const AtomData& atoms) const;

 private:
  bool rattle_ = false;
  double tolerance_ = 1e-4;
  int iterations_ = 20;
  std::int64_t constraints_ = 0, clusters_ = 0;
  std::vector<double> bond_length_, angle_length_;  // r0 per bond type, theta0 per angle type
  Kokkos::View<Real*, DevMemSpace> bond_r0_, angle_theta0_;  // the same on the device
  // Until install(): per atom id, its cluster row (p1 p2 p3, bond types, angle type, -1 unused).
  std::vector<std::array<std::int64_t, 8>> by_centre_;
  kernels::md::ShakeClusters list_;
  kernels::md::Vectors scratch_{"md::shake_scratch", 0};  // predicted positions / velocities
  kernels::md::Vectors delta_{"md::shake_delta", 0};      // forces / velocity corrections
};

}  // namespace stratus::md
