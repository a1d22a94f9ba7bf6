// The deck sections of the MD solver: [md], [md.lattice], [md.velocity], [md.pair],
// [[md.pair.coeff]], [md.neighbor], [md.integrator], [md.trajectory], [md.thermo].
#include "stratus/solvers/md/md_config.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace stratus::md {

namespace {

/// [md], [md.lattice], [md.velocity], [md.data], [md.h5md]: what is simulated and where it starts.
void declare_system(Schema& schema) {
  auto& md = schema.section(
      "md",
      "Molecular dynamics. Every value is in the units of md.units: lj (reduced: lengths in "
      "sigma, energies in epsilon, masses in m, time in tau = sigma sqrt(m / epsilon), k_B = 1), "
      "real (Angstrom, kcal/mol, g/mol, fs, K, atm, e) or metal (Angstrom, eV, g/mol, ps, K, bar, "
      "e), as LAMMPS's units command defines them.",
      "md");
  md.add_string("units",
                "Units system (LAMMPS's definitions and constants); named in the log, the thermo "
                "file and the H5MD trajectory's unit attributes. real and metal need md.timestep "
                "and an initial configuration from a file.")
      .one_of({"lj", "real", "metal"})
      .set_default(std::string("lj"));
  md.add_string("precision",
                "Arithmetic of the pair interactions. double: everything in double. mixed: "
                "coordinates relative to the rank's clusters rounded to float and the pair "
                "style evaluated in float, forces summed per cluster and integrated in double "
                "(as GROMACS's default build and LAMMPS-KOKKOS's mixed mode; about 1e-6 "
                "relative in energies; docs/performance.md gives its energy drift). mixed needs "
                "cluster lists (md.neighbor.list = cluster, or auto on CPU backends), and with "
                "charges lj/cut/coul/long or coul/long, geometric-mean LJ coefficients and AVX2 "
                "or AVX-512.")
      .one_of({"double", "mixed"})
      .set_default(std::string("double"));
  md.add_real("timestep", "Time step (required with real and metal units).")
      .positive()
      .unit("time")
      .set_default(0.005);
  md.add_real_list("masses",
                   "Mass of each atom type (the number of types is the list length). With "
                   "[md.read_data], left out: the data file's Masses section when it has one; "
                   "given: it must agree with that section.")
      .at_least(1e-300)
      .unit("mass")
      .set_default(std::vector<double>{1.0});
  md.add_int_list("ranks", "MPI ranks along x, y and z; 0 lets MPI_Dims_create choose that axis.")
      .list_length(3)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{0, 0, 0});

  auto& lat = schema.section(
      "md.lattice",
      "Initial positions on a lattice filling a periodic box of cells x cells x cells unit cells.",
      "md");
  lat.optional = true;
  lat.add_string("style", "Lattice: fcc (4 atoms per cell), bcc (2) or sc (1).")
      .one_of({"fcc", "bcc", "sc"})
      .set_default(std::string("fcc"));
  lat.add_real("density",
               "Reduced number density rho (atoms per sigma^3); sets the lattice constant.")
      .positive()
      .unit("sigma^-3");
  lat.add_int_list("cells", "Unit cells along x, y and z.").list_length(3).at_least(1);
  lat.add_int("type", "Type of every lattice atom (1-based).")
      .at_least(1)
      .set_default(std::int64_t{1});

  auto& vel = schema.section(
      "md.velocity",
      "Initial velocities: Gaussian, keyed by (seed, global atom id) so they are the same at any "
      "rank count, then shifted to zero total momentum and scaled to the temperature exactly "
      "(3N - 3 degrees of freedom).",
      "md");
  vel.optional = true;
  vel.add_real("temperature", "Initial temperature.").at_least(0.0).unit("temperature");
  vel.add_int("seed", "Random seed.").at_least(1).set_default(std::int64_t{87287});

  auto& data = schema.section(
      "md.read_data",
      "Initial configuration from a LAMMPS data file (atom style atomic or full, orthogonal "
      "box; sections Masses, Atoms, Velocities, Bonds, Angles, Dihedrals, Impropers and the "
      "Coeffs sections) instead of [md.lattice]. Positions are shifted so that the box starts at "
      "the origin; ids 1..N become 0..N-1; the number of atom types must match md.masses, or is "
      "the file's when md.masses is left out and the file has Masses. Pair Coeffs are the "
      "defaults of [[md.pair.coeff]]; the bonded coefficients come from the file only. Without "
      "[md.velocity], the file's Velocities are used (zero if it has none).",
      "md");
  data.optional = true;
  data.add_string("file", "Path of the data file (relative to the working directory).");

  auto& h5md = schema.section(
      "md.read_h5md",
      "Initial configuration from one frame of an H5MD 1.1 file (a Stratus trajectory, or any "
      "H5MD writer's: orthogonal periodic box, positions in the length unit of md.units) "
      "instead of "
      "[md.lattice]. Takes position, box/edges, and id, species, image, velocity when present "
      "(defaults: id = row, type 1, image 0, zero velocity). The number of types is that of "
      "md.masses. Without [md.velocity], the frame's velocities are used. The charge and "
      "molecule elements give the atoms' charges and molecule ids, and a /connectivity group "
      "(as Stratus writes it: bonds, angles, dihedrals, impropers with their types and "
      "coefficients under /parameters/stratus/connectivity) the molecular topology, as a data "
      "file of atom style full would; the masses and pair coefficients come from the deck.",
      "md");
  h5md.optional = true;
  h5md.add_string("file", "Path of the H5MD file (relative to the working directory).");
  h5md.add_string("group", "Particle group under /particles.").set_default(std::string("all"));
  h5md.add_int("frame", "Frame to start from: 0 the first, -1 the last, -2 the one before, ...")
      .set_default(std::int64_t{-1});
  h5md.add_int("index_base",
               "What the file's first id and first species are: 0 in files Stratus writes, 1 in "
               "files that count atoms and types from 1.")
      .at_least(0.0)
      .at_most(1.0)
      .set_default(std::int64_t{0});
}

/// [md.pair], [[md.pair.coeff]], [md.neighbor], [md.integrator], [md.trajectory], [md.thermo]: how
/// it moves and what is written.
void declare_dynamics(Schema& schema) {
  auto& pair = schema.section("md.pair", "Pair interactions.", "md");
  pair.add_string("style",
                  "Pair style. lj/cut: Lennard-Jones; lj/cut/coul/cut: plus Coulomb, "
                  "qqr2e q_i q_j / r within md.pair.coulomb_cutoff (charges from a data file of "
                  "atom style full or an H5MD frame's charge element); lj/cut/coul/long: plus the "
                  "real-space part of an Ewald sum, "
                  "qqr2e q_i q_j erfc(g r) / r, whose reciprocal part is [md.kspace]; coul/long: "
                  "that real-space Coulomb term alone, no Lennard-Jones (no [[md.pair.coeff]], "
                  "tail or shift; one cutoff, md.pair.cutoff); as LAMMPS's styles of those names.")
      .one_of({"lj/cut", "lj/cut/coul/cut", "lj/cut/coul/long", "coul/long"})
      .set_default(std::string("lj/cut"));
  pair.add_real("coulomb_cutoff",
                "Cutoff of the Coulomb term of lj/cut/coul/cut, lj/cut/coul/long and coul/long; "
                "0 takes md.pair.cutoff.")
      .at_least(0.0)
      .unit("length")
      .set_default(0.0);
  pair.add_real("cutoff", "Global cutoff (used by every type pair without its own).")
      .positive()
      .unit("length");
  pair.add_bool("shift", "Shift each pair energy to zero at its cutoff.").set_default(false);
  pair.add_string("mix",
                  "Mixing rule for pairs of different types that neither [[md.pair.coeff]] nor "
                  "the data file's Pair Coeffs give (LAMMPS's pair_modify mix): geometric: "
                  "epsilon = sqrt(eps_i eps_j), sigma = sqrt(sig_i sig_j); arithmetic (Lorentz-"
                  "Berthelot): epsilon = sqrt(eps_i eps_j), sigma = (sig_i + sig_j) / 2. Per-type "
                  "cutoffs mix the same way as sigma.")
      .one_of({"geometric", "arithmetic"})
      .set_default(std::string("geometric"));
  pair.add_bool("tail", "Add analytic long-range (tail) corrections to energy and pressure.")
      .set_default(false);

  auto& coeff = schema.section(
      "md.pair.coeff",
      "Coefficients of one pair of types. Every type needs its own (types = [i, i]), here or in "
      "the data file's Pair Coeffs (which these override); a pair of different types that "
      "neither gives is mixed (md.pair.mix).",
      "md", true);
  coeff.add_int_list("types", "The two types (1-based).").list_length(2).at_least(1);
  coeff.add_real("epsilon", "Well depth.").at_least(0.0).unit("energy");
  coeff.add_real("sigma", "Zero-crossing distance.").positive().unit("length");
  coeff.add_real("cutoff", "Cutoff of this pair; 0 takes md.pair.cutoff.")
      .at_least(0.0)
      .unit("length")
      .set_default(0.0);

  auto& nb = schema.section("md.neighbor", "Verlet neighbour lists built by cell binning.", "md");
  nb.add_real("skin", "Extra distance beyond the cutoff kept in the lists.")
      .at_least(0.0)
      .unit("length")
      .set_default(0.3);
  nb.add_string("list",
                "full: every pair stored from both sides, forces summed in global-id order "
                "(bitwise the same at any rank count; the GPU layout); half: each pair once "
                "over all ranks with Newton's third law, the forces on ghost atoms sent back to "
                "their owners (about twice as fast on CPUs, sums in another order at each rank "
                "count); cluster: half lists of 4-atom clusters close in space, the 16 "
                "interactions of a cluster pair in vector lanes without gathers (the fastest on "
                "CPUs in mixed precision and for lj/cut/coul/long; molecules' excluded special "
                "pairs left out by the masks; sums in another order at each rank count; with "
                "charges: lj/cut/coul/long or coul/long, LJ coefficients that are geometric "
                "means, one LJ cutoff, and AVX2 or AVX-512 registers); auto: on CPU backends "
                "cluster in mixed precision and for lj/cut/coul/long where cluster lists take "
                "it, else half; full on GPUs.")
      .one_of({"auto", "full", "half", "cluster"})
      .set_default(std::string("auto"));
  nb.add_int("every",
             "Rebuild every this many steps; 0 rebuilds only when an atom has moved more than "
             "half the skin since the last build (checked every step, over all ranks).")
      .at_least(0)
      .set_default(std::int64_t{0});

  auto& in = schema.section(
      "md.integrator",
      "Time integration (velocity Verlet). The thermo column conserved/N (CSV: conserved) is the "
      "total energy per atom for nve and langevin and, for nvt, the chain's conserved energy per "
      "atom: KE + PE + sum_k Q_k v_k^2 / 2 + dof kT xi_1 + sum_{k>=2} kT xi_k.",
      "md");
  in.add_string("style",
                "nve; langevin (friction and noise keyed by seed, step and atom id); nvt "
                "(Nose-Hoover chain of Martyna, Klein and Tuckerman, half-step chain updates "
                "around velocity Verlet in as many Suzuki-Yoshida parts as keep each one "
                "accurate (deep quenches included), masses Q_1 = dof kT damping^2 and "
                "Q_k = kT damping^2, dof = 3N - 3; needs temperature > 0).")
      .one_of({"nve", "langevin", "nvt"})
      .set_default(std::string("nve"));
  in.add_real("temperature", "Target temperature of the thermostat.")
      .at_least(0.0)
      .unit("temperature")
      .set_default(1.0);
  in.add_real("damping",
              "Thermostat time constant: 1/gamma for langevin, the period of the chain for nvt.")
      .positive()
      .unit("time")
      .set_default(1.0);
  in.add_int("chain", "Length of the Nose-Hoover chain (nvt).")
      .at_least(1)
      .at_most(10)
      .set_default(std::int64_t{3});
  in.add_int("seed", "Seed of the Langevin noise.").at_least(1).set_default(std::int64_t{12345});

  auto& ba = schema.section(
      "md.barostat",
      "Pressure control (NPT with md.integrator.style = nvt): the barostat of Martyna, Tobias and "
      "Klein (MTK) on an orthorhombic periodic box, with a Nose-Hoover chain of its own, in the "
      "time-reversible splitting of Tuckerman et al. (2006) as LAMMPS's fix npt takes it. The box "
      "scales about its lower corner, the subdomains with it; positions scale affinely. The "
      "conserved quantity adds sum_a W omega_dot_a^2 / 2 + P (V - V_0) and the barostat chain's "
      "energy, W = (N + 1) kT damping^2. The neighbour lists are rebuilt when the motion relative "
      "to the box, or the box's shrinking, could bring an unlisted pair inside the cutoff.",
      "md");
  ba.add_string("style",
                "none; iso (one strain rate for all three axes: the shape is kept); aniso (one per "
                "axis, each driven by its diagonal pressure component).")
      .one_of({"none", "iso", "aniso"})
      .set_default(std::string("none"));
  ba.add_real("pressure", "Target pressure (required with a barostat).")
      .unit("pressure")
      .set_default(0.0);
  ba.add_real("damping",
              "Period of the barostat (required with a barostat; LAMMPS advises about 1000 "
              "time steps).")
      .at_least(0.0)
      .unit("time")
      .set_default(0.0);
  ba.add_int("chain", "Length of the barostat's Nose-Hoover chain.")
      .at_least(1)
      .at_most(10)
      .set_default(std::int64_t{3});

  auto& tr = schema.section(
      "md.trajectory",
      "Trajectory in H5MD 1.1 (OUTPUT_DIR/NAME.h5md): positions (wrapped into the box at each list "
      "build; position + image * box unwraps them), images, velocities, "
      "species and ids of every atom, in global-id order.",
      "md");
  tr.may_change_on_restart();
  tr.add_int("every", "Write a frame every this many steps, starting at step 0 (0: no trajectory).")
      .at_least(0)
      .set_default(std::int64_t{0});

  auto& th = schema.section(
      "md.thermo",
      "Thermodynamic output on stdout and in OUTPUT_DIR/NAME.thermo.csv. CSV columns: step, "
      "time, temperature, kinetic, potential, total (energies per atom), pressure, conserved; "
      "for a molecular or charged system then pair, coul, kspace, bond, angle, dihedral, "
      "improper (per atom); then pxx, pyy, pzz, the pressure tensor's diagonal "
      "((2 KE_aa + W_aa) / V with KE_aa = sum m v_a^2 / 2 and W_aa = sum r_a f_a; pressure = "
      "(pxx + pyy + pzz) / 3); last volume and density (mass / volume; g/cm^3 in real and "
      "metal units), which change under md.barostat.",
      "md");
  th.may_change_on_restart();
  th.add_int("every", "Print every this many steps (0: first and last step only).")
      .at_least(0)
      .set_default(std::int64_t{100});
}

/// [md.constraints]: SHAKE and RATTLE.
void declare_constraints(Schema& schema) {
  auto& c = schema.section(
      "md.constraints",
      "Rigid bonds and angles of a data file's (or an H5MD frame's /connectivity) molecules "
      "(LAMMPS's fix shake and fix rattle): "
      "clusters of an atom and up to 3 partners bonded to it by the listed bond types, with the "
      "far side of a listed angle type in 3-atom clusters (rigid water). Lengths and angles are "
      "the bond and angle coefficients' r0 and theta0. Each constraint removes a degree of "
      "freedom from the temperature.",
      "md");
  c.add_string("style",
               "none; shake (positions held by constraint forces, as LAMMPS's fix shake); "
               "rattle (also the velocities along the constraints removed after each step, as "
               "LAMMPS's fix rattle).")
      .one_of({"none", "shake", "rattle"})
      .set_default(std::string("none"));
  c.add_int_list("bonds", "Bond types held rigid (1-based).")
      .at_least(1)
      .set_default(std::vector<std::int64_t>{});
  c.add_int_list("angles", "Angle types held rigid (1-based; 3-atom clusters only).")
      .at_least(1)
      .set_default(std::vector<std::int64_t>{});
  c.add_real("tolerance", "Largest relative error of a constrained distance (and velocity).")
      .positive()
      .at_most(0.1)
      .set_default(1e-4);
  c.add_int("iterations",
            "Iterations at most per cluster and step (Newton steps of SHAKE, sweeps of RATTLE's "
            "velocity half); a cluster that does not converge stops the run with an error naming "
            "it.")
      .at_least(1)
      .set_default(std::int64_t{20});
}

/// [md.kspace]: long-range electrostatics.
void declare_kspace(Schema& schema) {
  auto& ks = schema.section(
      "md.kspace",
      "Long-range electrostatics for md.pair.style = lj/cut/coul/long or coul/long: PPPM "
      "(particle-particle particle-mesh, ik differentiation) on Stratus's distributed FFT, its "
      "grid and Ewald parameter chosen from a relative force accuracy as LAMMPS's kspace_style "
      "pppm does.",
      "md");
  ks.add_string("style", "none, or pppm (needed by lj/cut/coul/long and coul/long).")
      .one_of({"none", "pppm"})
      .set_default(std::string("none"));
  ks.add_real("accuracy",
              "Relative force accuracy: the RMS force error over the force between two unit "
              "charges at unit distance (LAMMPS's kspace_style pppm argument).")
      .positive()
      .at_most(0.1)
      .set_default(1e-5);
  ks.add_int("order", "Charge-assignment order (points per axis).")
      .at_least(2)
      .at_most(7)
      .set_default(std::int64_t{5});
  ks.add_int_list("mesh", "Grid points along x, y, z; [0, 0, 0]: chosen from the accuracy.")
      .list_length(3)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{0, 0, 0});
  ks.add_real("g_ewald", "Ewald splitting parameter (1/length); 0: chosen from the accuracy.")
      .at_least(0.0)
      .set_default(0.0);
  ks.add_bool("allow_charged",
              "Run a system whose net charge exceeds 1e-6 e (a uniform neutralising background "
              "is added); refused otherwise.")
      .set_default(false);
}

/// [md.bond], [md.angle], [md.dihedral], [md.improper], [md.special_bonds]: molecular
/// topologies from a LAMMPS data file (atom style full); coefficients come from its sections.
void declare_topology(Schema& schema) {
  const struct {
    const char* kind;
    std::vector<std::string> styles;
    const char* formula;
  } kinds[] = {
      {"bond", {"auto", "harmonic"}, "harmonic: E = K (r - r0)^2, coefficients K r0"},
      {"angle",
       {"auto", "harmonic"},
       "harmonic: E = K (theta - theta0)^2, coefficients K theta0 (degrees)"},
      {"dihedral",
       {"auto", "charmm", "opls"},
       "charmm: E = K [1 + cos(n phi - d)], coefficients K n d w (d in degrees, w = 0); opls: "
       "E = K1/2 (1 + cos phi) + K2/2 (1 - cos 2phi) + K3/2 (1 + cos 3phi) + K4/2 (1 - cos "
       "4phi), coefficients K1 K2 K3 K4"},
      {"improper",
       {"auto", "harmonic"},
       "harmonic: E = K (chi - chi0)^2, chi the angle between the planes (i, j, k) and (j, k, "
       "l), coefficients K chi0 (degrees)"},
  };
  for (const auto& k : kinds) {
    auto& sec = schema.section(
        std::string("md.") + k.kind,
        fmt::format("The {0}s of the data file ([md.read_data]) or of the H5MD frame's "
                    "/connectivity ([md.read_h5md]): their style; the coefficients are the file's "
                    "{1} Coeffs section (H5MD: its copy under /parameters/stratus/connectivity), "
                    "as LAMMPS's formulas take them ({2}).",
                    k.kind, std::string(1, static_cast<char>(k.kind[0] - 'a' + 'A')) + (k.kind + 1),
                    k.formula),
        "md");
    sec.add_string("style",
                   "Style of every term of this kind. auto: the Coeffs section's comment (\"# "
                   "harmonic\"; H5MD: the coefficients' @style), an error when it has none; a "
                   "named style must agree with it. Giving a style for a system without such terms "
                   "is an error.")
        .one_of(k.styles)
        .set_default(std::string("auto"));
  }
  auto& sb = schema.section(
      "md.special_bonds",
      "Scaling of the pair interactions of bonded atoms: 1-2 (bonded), 1-3 (two bonds apart) and "
      "1-4 (three) partners, found from the bonds as LAMMPS's special_bonds does.",
      "md");
  sb.add_real_list("lj",
                   "Factors of the Lennard-Jones interaction of 1-2, 1-3 and 1-4 pairs. 0 removes "
                   "the pair from the neighbour lists; between 0 and 1 the pair's interaction is "
                   "scaled; 1 leaves it whole. LAMMPS's default is 0 0 0.")
      .list_length(3)
      .at_least(0.0)
      .at_most(1.0)
      .set_default(std::vector<double>{0.0, 0.0, 0.0});
  sb.add_real_list("coul",
                   "Factors of the Coulomb interaction of 1-2, 1-3 and 1-4 pairs (charged pair "
                   "styles), as md.special_bonds.lj. LAMMPS's default is 0 0 0.")
      .list_length(3)
      .at_least(0.0)
      .at_most(1.0)
      .set_default(std::vector<double>{0.0, 0.0, 0.0});
}

}  // namespace

void MdConfig::declare(Schema& schema) {
  declare_system(schema);
  declare_dynamics(schema);
  declare_topology(schema);
  declare_kspace(schema);
  declare_constraints(schema);
}

}  // namespace stratus::md
