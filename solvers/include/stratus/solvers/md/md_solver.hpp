// The molecular dynamics solver: Lennard-Jones atoms, velocity Verlet (NVE, Langevin,
// Nose-Hoover chain NVT),
// 3D spatial decomposition with ghost atoms, Verlet lists rebuilt on demand.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/io/series.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/solvers/md/atom_exchange.hpp"
#include "stratus/solvers/md/atoms.hpp"
#include "stratus/solvers/md/barostat.hpp"
#include "stratus/solvers/md/cluster_builder.hpp"
#include "stratus/solvers/md/constraints.hpp"
#include "stratus/solvers/md/lj_tables.hpp"
#include "stratus/solvers/md/md_config.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "stratus/solvers/md/nose_hoover.hpp"
#include "stratus/solvers/md/pppm.hpp"
#include "stratus/solvers/md/topology.hpp"
#include "stratus/solvers/solver.hpp"

#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stratus::md {

/// Global thermodynamic state in md.units (energies per atom, as LAMMPS prints them in LJ units).
struct Thermo {
  std::int64_t step = 0;
  double time = 0;
  std::int64_t natoms = 0;
  double temperature = 0;
  double kinetic = 0;    ///< per atom
  double potential = 0;  ///< per atom (with the tail correction when enabled)
  double total = 0;      ///< per atom
  double pressure = 0;   ///< (pxx + pyy + pzz) / 3
  /// The pressure tensor's diagonal, P_aa = (2 KE_aa + W_aa) / V (KE_aa = sum 1/2 m v_a^2, W_aa
  /// the virial tensor's diagonal, tail correction W_tail / 3 on each), in md.units's pressure.
  double pxx = 0, pyy = 0, pzz = 0;
  double volume = 0;
  double density = 0;  ///< mass / volume in md.units's density (g/cm^3 for real and metal)
  /// Conserved quantity per atom: total + chain energy for nvt (KE + PE + sum_k Q_k v_k^2 / 2
  /// + dof kT xi_1 + sum_{k>=2} kT xi_k), the total energy per atom for nve and langevin.
  double conserved = 0;
  /// Per atom, the potential's terms: pair (van der Waals, with the tail correction and the
  /// special pairs), coul (Coulomb, charged pair styles), bond, angle, dihedral, improper.
  double pair = 0, coul = 0, bond = 0, angle = 0, dihedral = 0, improper = 0;
  double kspace = 0;  ///< per atom: PPPM's reciprocal, self and background energy (LAMMPS's elong)
};

class MdSolver : public Solver {
 public:
  /// Sets up the decomposition, the atoms (lattice and velocities), ghosts, neighbour lists
  /// and the initial forces. Collective. Throws DeckError for inconsistent decks. The deck is
  /// read into an MdConfig and not kept.
  MdSolver(Context& ctx, const io::Deck& deck);
  ~MdSolver() override;

  // The shared time loop's hooks (see Solver); md_output.cpp. Outputs: OUTPUT_DIR/NAME.thermo.csv
  // every md.thermo.every steps, and the H5MD trajectory every md.trajectory.every steps, in
  // parts NAME.h5md, NAME.part0001.h5md, ... (a part is closed at each checkpoint).
  [[nodiscard]] std::int64_t current_step() const override { return step_; }
  [[nodiscard]] double current_time() const override { return static_cast<double>(step_) * dt_; }
  [[nodiscard]] double work_per_step() const override { return static_cast<double>(natoms_); }
  [[nodiscard]] std::string work_unit() const override { return "atom-steps"; }
  /// md.units's time (tau, fs or ps) per day, cost per 1000 of it.
  [[nodiscard]] TimeUnits time_units() const override {
    return {config_.units.time, 86400, "day", 1000};
  }
  /// One step; `prepare_output`: the thermo row is due after it (energy and virial computed).
  void advance(bool prepare_output) override;
  void declare_outputs(OutputDescriptor& outputs) override;
  // md_checkpoint.cpp
  void declare_state(StateDescriptor& state) override;
  void release_step_scratch() override;

  /// Advances one step. Collective.
  void step();
  /// Current global thermodynamic state. Collective. Recomputes the pair energy when the last
  /// step computed forces only.
  [[nodiscard]] Thermo thermo();

  [[nodiscard]] const AtomData& atoms() const noexcept { return atoms_; }
  /// The atoms, to declare a per-atom property (AtomData::add_column) before the driver takes
  /// the state's declaration: its flags then carry it through migration, ghosts and checkpoints.
  [[nodiscard]] AtomData& atoms() noexcept { return atoms_; }
  [[nodiscard]] std::int64_t natoms() const noexcept { return natoms_; }
  [[nodiscard]] std::int64_t rebuilds() const noexcept { return rebuilds_; }
  [[nodiscard]] const Box& box() const noexcept { return box_; }
  /// The PPPM solver (md.kspace.style = pppm), else null.
  [[nodiscard]] const Pppm* kspace() const noexcept { return pppm_.get(); }

 private:
  /// Host copy of this rank's initial atoms (lattice sites or data-file atoms).
  struct InitialAtoms {
    std::vector<GlobalId> id;
    std::vector<int> type;
    std::vector<std::array<Real, 3>> x, v;
    std::vector<std::array<int, 3>> image;
  };
  /// Reads the data or H5MD file (when the configuration comes from one) and sets the box.
  void read_initial_configuration(const io::Deck& deck);
  /// The data file's molecules: the topology (bonded terms, special neighbours), the molecule
  /// ids and charges as per-atom columns. DeckError or InputError for what is not supported.
  void setup_molecules(const io::Deck& deck);
  /// The net charge (a warning, or an error with PPPM unless md.kspace.allow_charged) and PPPM,
  /// after the atoms exist. Collective.
  void setup_kspace(const io::Deck& deck);
  /// The data file's Masses: taken when md.masses is left at its default, else they must agree
  /// (DeckError naming md.masses and the file).
  void adopt_file_masses(const io::Deck& deck);
  /// The process grid and the atom exchange over it (DeckError naming md.ranks, or the key
  /// that sets the box, when the box cannot be split).
  void decompose(const io::Deck& deck);
  /// Nose-Hoover chain masses (nvt) and the tail correction (md.pair.tail), after the atoms.
  void setup_thermostat_and_tail();
  /// Creates this rank's atoms from [md.lattice] or [md.read_data].
  void create_atoms();
  /// Copies `atoms` to the device as the owned atoms; sets natoms_ (collective).
  void install_atoms(const InitialAtoms& atoms);
  /// Velocities of md.velocity (the deck blames that key for a temperature out of range).
  void create_velocities(const io::Deck& deck);
  /// Migrates atoms, then build_ghosts_and_list(); counts the build.
  void rebuild();
  /// Ghosts and neighbour list of the current owned atoms (no migration).
  void build_ghosts_and_list();
  /// Ghosts and list exactly as the last build made them (from x_at_build_, in the box of that
  /// build), then the ghosts of the current positions: a restore on the same layout, and the
  /// lists again after release_step_scratch().
  void rebuild_list_as_built();
  /// The thermo CSV has the potential's terms (a topology or charges).
  [[nodiscard]] bool molecular_columns() const {
    return (topology_ && topology_->active()) || config_.pair.charged();
  }
  /// Thermo row and log line of the current step; blow_up() first when a value is not finite.
  void report();
  /// Stops the run (RuntimeError, exit 1) naming the step, `what` was found and the first atom
  /// with a non-finite position, velocity or force. Collective: every rank calls it alike.
  [[noreturn]] void blow_up(const std::string& what) const;
  /// The per-atom columns a checkpoint holds (flagged `checkpoint`; the ids are its row ids).
  [[nodiscard]] std::vector<ParticleColumn*> checkpoint_columns() const;
  /// One checkpoint column of this rank's atoms: a column of checkpoint_columns(), or
  /// "position_at_build", "rank" or "slot" (the layout), on the host.
  [[nodiscard]] std::vector<double> checkpoint_reals(const std::string& name) const;
  [[nodiscard]] std::vector<std::int64_t> checkpoint_integers(const std::string& name) const;
  /// Puts a checkpoint's block of atoms where they belong: back in their saved slots with the
  /// lists of the last build (same layout: bit for bit), else to the owners of their positions.
  void place_restored(const io::CheckpointReader& in, io::ParticleColumns&& cols);
  /// Path of trajectory part `part` (0: NAME.h5md, k: NAME.partKKKK.h5md).
  [[nodiscard]] std::string trajectory_part_path(std::int64_t part) const;
  /// When forces are computed: before the first step (SHAKE predicts a half step), in a step,
  /// or again at the same step for its energy (the stored constraint forces are reused).
  enum class ForceStage { setup, step, again };
  void compute_forces(bool with_energy, ForceStage stage = ForceStage::step);
  void write_frame();
  /// Global kinetic energy summed in fixed point: the same bits at any rank count.
  [[nodiscard]] double kinetic_energy_exact() const;
  /// The global virial tensor's diagonal (W_xx, W_yy, W_zz; W_aa = sum r_a f_a, the scalar virial
  /// is their sum) of the last force computation with energy: pair, bonded terms and special
  /// pairs, the constraints' last SHAKE solve, the tail correction (W_tail / 3 on each, it is
  /// isotropic) and k-space. Collective.
  [[nodiscard]] std::array<double, 3> global_virial_tensor() const;
  /// Half-step (dt/2) update of the Nose-Hoover chain; scales the velocities. Collective.
  void chain_half_step();
  // NPT (md_npt.cpp).
  /// The barostat (md.barostat) and the total mass (the thermo's density). Collective.
  void setup_barostat();
  /// The barostat's half-step coupling to the atoms: the first half kicks the strain rates with
  /// the pressure of the last forces, then scales the velocities; the second scales, then
  /// kicks. Collective.
  void couple_barostat(bool first_half);
  /// Scales the box (about its lower corner) and the owned atoms' positions by the barostat's
  /// factors over `dt` (set_box must follow before the atoms meet their ghosts again).
  void dilate(double dt);
  /// Takes `box` as the box: the decomposition, the ghosts' shifts, PPPM and the tail
  /// correction follow it. RuntimeError naming the step when the subdomains become narrower
  /// than the ghost cutoff. Collective.
  void set_box(const Box& box);
  /// Copies box_ and box_at_build_ into the vectors a checkpoint holds.
  void sync_box_state();
  /// sum m v_a^2 per axis over every rank, order-independent. Collective.
  [[nodiscard]] std::array<double, 3> kinetic_tensor_exact() const;

  Context& ctx_;
  MdConfig config_;
  Box box_;
  std::unique_ptr<CartDecomposition> decomposition_;
  std::unique_ptr<AtomExchange> exchange_;
  AtomData atoms_;
  kernels::md::TypeMasses masses_;
  PairTables pair_;  ///< md.pair.style's tables
  NeighborBuilder neighbor_builder_;
  std::unique_ptr<MolecularTopology> topology_;  ///< a data file with bonded terms
  std::unique_ptr<Constraints> constraints_;     ///< md.constraints (SHAKE, RATTLE)
  BondedEnergies bonded_;  ///< local sums of the last force computation with energy
  kernels::md::NeighborList neighbors_;
  ClusterPairs<double> clusters_double_;  ///< md.neighbor.list = cluster, md.precision = double
  ClusterPairs<float> clusters_mixed_;    ///< md.neighbor.list = cluster, md.precision = mixed
  std::optional<LJFactors> cluster_lj_;   ///< lj/cut/coul/long's LJ factors, when they exist
  kernels::md::Vectors x_at_build_{"md::x_at_build", 0};
  bool lists_released_ = false;  ///< release_step_scratch() freed the lists and bins
  int ntypes_ = 1;
  std::int64_t natoms_ = 0;
  double dt_ = 0;
  double cutoff_max_ = 0, skin_ = 0;
  std::int64_t rebuild_every_ = 0;
  Integrator integrator_ = Integrator::nve;
  double target_kt_ = 0, gamma_ = 0;  ///< k_B T of the thermostat (energy), 1 / damping
  std::uint64_t langevin_seed_ = 0;
  // Nose-Hoover chain (nvt), replicated on every rank (it depends only on global sums).
  NoseHooverChain thermostat_;
  std::unique_ptr<Barostat> barostat_;  ///< md.barostat (NPT)
  Box box_at_build_;                    ///< the box at the last neighbour-list build
  /// box_ and box_at_build_ as a checkpoint holds them (NPT): lo, hi of each.
  std::vector<double> box_lo_state_, box_hi_state_, build_lo_state_, build_hi_state_;
  double total_mass_ = 0;                                   ///< global, in md.masses's unit
  double tail_energy_volume_ = 0, tail_virial_volume_ = 0;  ///< tail_energy_ V, tail_virial_ V
  double dof_ = 0;
  double tail_energy_ = 0, tail_virial_ = 0;  // global totals (tail_virial_: the trace)
  // Local sums of the last force computation with energy: energy, the virial tensor's diagonal
  // and the Coulomb energy (charged styles).
  double pair_energy_ = 0;
  std::array<double, 3> pair_virial_{0, 0, 0};
  double pair_coul_ = 0;
  std::unique_ptr<Pppm> pppm_;                   // md.kspace.style = pppm
  Pppm::Result kspace_;                          // global, of the last computation with energy
  std::unique_ptr<io::AtomConfiguration> data_;  // the initial configuration, when read from a file
  std::unique_ptr<io::H5mdWriter> trajectory_;
  std::int64_t trajectory_part_ = 0;    // index of the part being written (or the next one)
  std::int64_t trajectory_frames_ = 0;  // frames written by this process
  std::unique_ptr<io::SeriesFile> thermo_;
  std::int64_t rebuilds_at_open_ = 0;
  /// The list in use, as the checkpoint records it: 0 full, 1 half, 2 cluster (double),
  /// 3 cluster (mixed). Every mode but full computes each pair on one rank only.
  enum class ListMode : std::int64_t { full = 0, half = 1, cluster = 2, cluster_mixed = 3 };
  ListMode list_mode_ = ListMode::full;
  bool energy_wanted_ = false;     // the next step computes energy and virial
  std::int64_t energy_step_ = -1;  // step whose energy and virial pair_energy_/pair_virial_ hold
  std::int64_t step_ = 0;
  std::int64_t rebuilds_ = 0;
  std::int64_t last_rebuild_step_ = 0;
};

}  // namespace stratus::md
