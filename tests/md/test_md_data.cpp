// Initial configurations from LAMMPS data files: parsing, errors with file:line, and the same
// physics as the equivalent lattice deck.
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/solvers/md/lattice.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/md/trajectory_frame.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include <hdf5.h>

using namespace stratus;

namespace {

std::string parse_error(const std::string& text) {
  try {
    io::parse_lammps_data("x.data", text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

const std::string kHeader =
    "title\n\n2 atoms\n1 atom types\n0 4 xlo xhi\n0 4 ylo yhi\n0 4 zlo zhi\n\n";

}  // namespace

TEST(LammpsData, ParsesHeaderMassesAtomsVelocities) {
  const auto d = io::parse_lammps_data(
      "x.data",
      kHeader +
          "Masses\n\n1 2.5\n\nAtoms # atomic\n\n2 1 1.0 2.0 3.0 0 1 -1\n1 1 0.5 0.5 0.5\n\n"
          "Velocities\n\n1 0.1 0.2 0.3\n2 -0.1 -0.2 -0.3\n");
  EXPECT_EQ(d.natoms, 2);
  EXPECT_EQ(d.ntypes, 1);
  EXPECT_DOUBLE_EQ(d.box.hi[2], 4.0);
  ASSERT_EQ(d.masses.size(), 1u);
  EXPECT_DOUBLE_EQ(d.masses[0], 2.5);
  ASSERT_EQ(d.atoms.size(), 2u);
  EXPECT_EQ(d.atoms[0].id, 1);  // 0-based
  EXPECT_EQ(d.atoms[0].image[2], -1);
  EXPECT_DOUBLE_EQ(d.velocities[1][1], -0.2);
}

TEST(LammpsData, ErrorsNameTheLine) {
  EXPECT_EQ(parse_error(kHeader + "Atoms\n\n1 1 0 0 0\n1 1 1 1 1\n"),
            "x.data:12: atom id 1 appears twice");
  EXPECT_EQ(parse_error(kHeader + "Atoms\n\n1 1 0 0 zero\n2 1 1 1 1\n"),
            "x.data:11: expected a coordinate (a finite number), found 'zero'");
  EXPECT_EQ(parse_error(kHeader + "Atoms\n\n1 1 0 0 0\n"),
            "x.data:9: the Atoms section ends early: the file ends");
  EXPECT_EQ(parse_error(kHeader + "Atoms\n\n1 3 0 0 0\n2 1 1 1 1\n"),
            "x.data:11: expected an atom type in 1..1, found 3");
  // Pair Coeffs are read (the solver decides what to do with them); unknown sections are not.
  EXPECT_EQ(parse_error(kHeader + "Pair Coeffs\n\n1 1.0 1.0\n\nAtoms\n\n1 1 0 0 0\n2 1 1 1 1\n"),
            "accepted");
  EXPECT_EQ(parse_error(kHeader + "Foo Bar\n\n1 1.0 1.0\n"),
            "x.data:9: expected a section (Masses, Atoms, Velocities, Bonds, Angles, Dihedrals, "
            "Impropers, Pair Coeffs, PairIJ Coeffs, Bond Coeffs, Angle Coeffs, Dihedral Coeffs, "
            "Improper Coeffs), found 'Foo Bar'");
  EXPECT_EQ(
      parse_error(
          "t\n2 atoms\n1 atom types\n0 1 xlo xhi\n0 1 ylo yhi\n0 1 zlo zhi\n0 0 0 xy xz yz\n"),
      "x.data:7: tilted (triclinic) boxes are not supported; expected an orthogonal box");
  EXPECT_EQ(parse_error("t\n2 atoms\n0 1 xlo xhi\n0 1 ylo yhi\n0 1 zlo zhi\nAtoms\n\n1 1 0 0 0\n"),
            "x.data:6: the header must give a positive 'N atom types'");
}

// The fcc lattice written as a data file (box shifted to start at -3) gives the same potential
// energy and pressure as the lattice deck, at any rank count.
TEST(LammpsData, SameStateAsTheLatticeDeck) {
  Context& ctx = stratus::testing::context();
  const std::vector<std::int64_t> cells{6, 6, 6};
  const double a = md::lattice_constant(md::LatticeStyle::fcc, 0.8442);
  Box whole;
  for (int d = 0; d < 3; ++d) whole.hi[d] = a * 6;
  const auto sites = md::lattice_sites(md::LatticeStyle::fcc, 0.8442, cells, whole);
  const std::string path = "md_data_test.data";
  if (ctx.rank() == 0) {
    std::ofstream out(path);
    out << "fcc 6x6x6\n\n" << sites.ids.size() << " atoms\n1 atom types\n";
    for (const char* ax : {"x", "y", "z"})
      out << fmt::format("-3 {:.17g} {}lo {}hi\n", a * 6 - 3, ax, ax);
    out << "\nMasses\n\n1 1.0\n\nAtoms # atomic\n\n";
    for (std::size_t i = 0; i < sites.ids.size(); ++i)
      out << fmt::format("{} 1 {:.17g} {:.17g} {:.17g}\n", sites.ids[i] + 1,
                         sites.positions[3 * i] - 3, sites.positions[3 * i + 1] - 3,
                         sites.positions[3 * i + 2] - 3);
  }
  MPI_Barrier(ctx.comm());
  SolverRegistry registry;
  register_builtin_solvers(registry);
  auto load = [&](const std::string& setup) {
    return io::load_deck(
        "data.toml",
        "[run]\nsolver = \"md\"\nsteps = 0\n" + setup +
            "[md.pair]\ncutoff = 2.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 1.0\nsigma = "
            "1.0\n",
        std::vector<std::string>{}, common_schema(registry),
        [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
  };
  const io::Deck lattice_deck =
      load("[md.lattice]\ndensity = 0.8442\ncells = [6, 6, 6]\n[md.velocity]\ntemperature = 0.0\n");
  const io::Deck data_deck = load("[md.read_data]\nfile = \"" + path + "\"\n");
  md::MdSolver from_lattice(ctx, lattice_deck);
  md::MdSolver from_data(ctx, data_deck);
  EXPECT_EQ(from_data.natoms(), 864);
  const auto a_th = from_lattice.thermo();
  const auto b_th = from_data.thermo();
  EXPECT_NEAR(b_th.potential, a_th.potential, 1e-12);
  EXPECT_NEAR(b_th.pressure, a_th.pressure, 1e-11);
  EXPECT_EQ(b_th.kinetic, 0.0);
  MPI_Barrier(ctx.comm());
  if (ctx.rank() == 0) std::remove(path.c_str());
}

// The data file's Masses are the system's masses when the deck leaves md.masses out (before,
// a file with "Masses 1 39.948" ran with mass 1.0 and no warning); a deck that gives other
// masses is refused, naming both places.
TEST(LammpsData, MassesComeFromTheFileOrMustAgree) {
  Context& ctx = stratus::testing::context();
  const std::string path = "md_data_masses.data";
  if (ctx.rank() == 0) {
    std::ofstream out(path);
    out << kHeader
        << "Masses\n\n1 39.948\n\nAtoms # atomic\n\n1 1 1.0 1.0 1.0\n2 1 3.0 3.0 3.0\n\n"
           "Velocities\n\n1 0.5 0 0\n2 -0.5 0 0\n";
  }
  MPI_Barrier(ctx.comm());
  SolverRegistry registry;
  register_builtin_solvers(registry);
  auto load = [&](const std::string& extra) {
    return io::load_deck(
        "masses.toml",
        "[run]\nsolver = \"md\"\nsteps = 0\n" + extra + "[md.read_data]\nfile = \"" + path +
            "\"\n[md.pair]\ncutoff = 1.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 1.0\n"
            "sigma = 1.0\n",
        std::vector<std::string>{}, common_schema(registry),
        [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
  };
  {
    md::MdSolver solver(ctx, load(""));
    // KE per atom = (1/2) m v^2 with m = 39.948 and |v| = 0.5 for both atoms.
    EXPECT_NEAR(solver.thermo().kinetic, 0.5 * 39.948 * 0.25, 1e-12);
  }
  {
    md::MdSolver agreeing(ctx, load("[md]\nmasses = [39.948]\n"));
    EXPECT_NEAR(agreeing.thermo().kinetic, 0.5 * 39.948 * 0.25, 1e-12);
  }
  try {
    md::MdSolver conflict(ctx, load("[md]\nmasses = [1.0]\n"));
    ADD_FAILURE() << "md.masses = [1.0] accepted against the file's 39.948";
  } catch (const io::DeckError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("md.masses"), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("39.948"), std::string::npos) << what;
  }
  MPI_Barrier(ctx.comm());
  if (ctx.rank() == 0) std::remove(path.c_str());
}

namespace {

io::Deck md_deck(const std::string& setup) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck(
      "h5md.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\n" + setup +
          "[md.pair]\ncutoff = 2.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 1.0\nsigma = "
          "1.0\n",
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

std::string h5md_error(Context& ctx, const std::string& path, std::int64_t frame = -1) {
  try {
    io::read_h5md_frame(ctx.comm(), path, "all", frame, 0);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

// A liquid run for 40 steps, its state written as one H5MD frame and read back as the initial
// configuration of a new run: the same kinetic and potential energy and pressure, at any rank
// count (positions and velocities travel bit for bit; the sums may be taken in another order).
TEST(H5mdStart, SameStateAsTheRunThatWroteIt) {
  Context& ctx = stratus::testing::context();
  const std::string path = "md_h5md_start_test.h5md";
  const io::Deck lattice_deck = md_deck(
      "[md.lattice]\ndensity = 0.8442\ncells = [5, 5, 5]\n[md.velocity]\ntemperature = "
      "1.44\n");
  md::MdSolver run(ctx, lattice_deck);
  for (int s = 0; s < 40; ++s) run.step();
  const auto before = run.thermo();
  {
    const auto& a = run.atoms();
    const Box& box = run.box();
    io::H5mdWriter out(ctx.comm(), path, "deck", run.natoms(),
                       {box.length(0), box.length(1), box.length(2)}, "", "");
    stratus::md::append_frame(out, 40, 0.2, a.x, a.v, a.type, a.id, a.image, a.nlocal);
    stratus::md::append_frame(out, 41, 0.205, a.x, a.v, a.type, a.id, a.image,
                              a.nlocal);  // a later frame
  }
  const auto first = io::read_h5md_frame(ctx.comm(), path, "all", 0, 0);
  EXPECT_EQ(first.natoms, 500);
  EXPECT_EQ(first.ntypes, 1);
  ASSERT_EQ(first.velocities.size(), 500u);

  md::MdSolver resumed(ctx, md_deck("[md.read_h5md]\nfile = \"" + path + "\"\n"));
  EXPECT_EQ(resumed.natoms(), 500);
  const auto after = resumed.thermo();
  EXPECT_NEAR(after.kinetic, before.kinetic, 1e-13 * std::abs(before.kinetic));
  EXPECT_NEAR(after.potential, before.potential, 1e-12 * std::abs(before.potential));
  EXPECT_NEAR(after.pressure, before.pressure, 1e-11 * std::abs(before.pressure));
  // [md.velocity] replaces the file's velocities.
  md::MdSolver cold(ctx, md_deck("[md.read_h5md]\nfile = \"" + path +
                                 "\"\nframe = 0\n[md.velocity]\ntemperature = 0.0\n"));
  EXPECT_EQ(cold.thermo().kinetic, 0.0);
  EXPECT_NEAR(cold.thermo().potential, before.potential, 1e-12 * std::abs(before.potential));

  // Errors name the file, the object and what was expected.
  EXPECT_EQ(h5md_error(ctx, path, 2),
            path +
                ": frame 2 was asked for (md.read_h5md.frame); "
                "/particles/all/position/value has 2 frames (0 .. 1, or -1 .. -2 from the end)");
  EXPECT_EQ(h5md_error(ctx, "no_such_file.h5md"), "no_such_file.h5md: no such file");
  if (ctx.rank() == 0) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t dset = H5Dopen2(file, "/particles/all/position/value", H5P_DEFAULT);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 2);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(dset, "unit", type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, type, "nm");
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(dset);
    H5Fclose(file);
  }
  MPI_Barrier(ctx.comm());
  EXPECT_EQ(h5md_error(ctx, path),
            path +
                ": /particles/all/position/value@unit is 'nm'; the run is in Lennard-Jones "
                "reduced units (md.units = \"lj\") and does not convert physical units");
  MPI_Barrier(ctx.comm());
  if (ctx.rank() == 0) std::remove(path.c_str());
}

// md.units real and metal with LAMMPS's constants: the same 256 argon atoms (tests/md/data,
// a displaced fcc lattice with velocities) as LAMMPS 2022 (Debian's lmp) runs them with
//   units real|metal; atom_style atomic; read_data argon_UNITS.data; pair_style lj/cut 8.5;
//   pair_coeff 1 1 EPS 3.405; neighbor 2.0 bin; fix 1 all nve; timestep 1.0 (real) | 0.001
//   (metal); thermo_modify norm yes format float %.15g; run 100
// (EPS 0.2381 kcal/mol or 0.0103 eV). Step 0 tests the constants (k_B in T, mvv2e in the kinetic
// energy, nktv2p in the pressure): to 1e-12 relative. Step 100 tests the integrator's force to
// acceleration conversion: 100 steps of a hot displaced lattice amplify round-off, so 1e-8.
TEST(MdUnits, ArgonAsLammpsRunsItInRealAndMetalUnits) {
  Context& ctx = stratus::testing::context();
  struct Case {
    std::string units, eps, dt;
    // temperature, potential/N, kinetic/N, pressure at steps 0 and 100 (LAMMPS's thermo)
    double ref[2][4];
  };
  const Case cases[] = {
      {"real",
       "0.2381",
       "1.0",
       {{217.053920921601, -1.87746493317871, 0.64446917876222, 1597.34413171728},
        {135.312695820026, -1.62169701390047, 0.401765891078891, 3652.42691910182}}},
      {"metal",
       "0.0103",
       "0.001",
       {{217.053928977099, -0.081217508659138, 0.0279468269326636, 1616.57713069588},
        {135.398477018829, -0.0701387783531205, 0.0174332610426539, 3696.61142362517}}},
  };
  SolverRegistry registry;
  register_builtin_solvers(registry);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.units);
    const io::Deck deck = io::load_deck(
        "units.toml",
        "[run]\nsolver = \"md\"\nsteps = 0\n[md]\nunits = \"" + c.units + "\"\ntimestep = " + c.dt +
            "\n[md.read_data]\nfile = \"" STRATUS_MD_TEST_DATA "/argon_" + c.units +
            ".data\"\n[md.pair]\ncutoff = 8.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = " +
            c.eps + "\nsigma = 3.405\n[md.neighbor]\nskin = 2.0\n",
        std::vector<std::string>{}, common_schema(registry),
        [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
    md::MdSolver solver(ctx, deck);
    for (int at = 0; at < 2; ++at) {
      if (at == 1)
        for (int s = 0; s < 100; ++s) solver.step();
      const md::Thermo th = solver.thermo();
      const double got[4] = {th.temperature, th.potential, th.kinetic, th.pressure};
      const double tol = at == 0 ? 1e-12 : 1e-8;
      for (int q = 0; q < 4; ++q)
        EXPECT_NEAR(got[q], c.ref[at][q], tol * std::abs(c.ref[at][q]))
            << "step " << (at == 0 ? 0 : 100) << ", quantity " << q;
    }
  }
}

// A deck in physical units must say its time step (the default is in tau), and lattices are
// given by reduced densities only.
TEST(MdUnits, RealUnitsNeedATimestepAndAFile) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  const auto error = [&](const std::string& text) {
    try {
      const io::Deck deck = io::load_deck("u.toml", "[run]\nsolver = \"md\"\nsteps = 0\n" + text,
                                          std::vector<std::string>{}, common_schema(registry),
                                          [&](const std::string& s, Schema& schema) {
                                            registry.find(s)->declare_sections(schema);
                                          });
      (void)md::MdConfig::from(deck);
    } catch (const io::DeckError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string pair =
      "[md.pair]\ncutoff = 8.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.2\nsigma = 3.4\n";
  EXPECT_NE(error("[md]\nunits = \"real\"\n[md.read_data]\nfile = \"a.data\"\n" + pair)
                .find("md.units = \"real\" needs md.timestep, in fs"),
            std::string::npos);
  EXPECT_NE(error("[md]\nunits = \"metal\"\ntimestep = 0.001\n[md.lattice]\ndensity = 0.8\ncells = "
                  "[2, 2, 2]\n[md.velocity]\ntemperature = 1.0\n" +
                  pair)
                .find("a lattice is given by its reduced density"),
            std::string::npos);
  EXPECT_EQ(
      error("[md]\nunits = \"real\"\ntimestep = 1.0\n[md.read_data]\nfile = \"a.data\"\n" + pair),
      "accepted");
}

namespace {

/// The branched-molecule deck of tests/md/data/branched_real.data (make_branched.py), with the
/// pair coefficients of in.branched below (cross = false: the 1-2 pair by md.pair.mix, geometric
/// means); `extra` adds keys.
io::Deck branched_deck(const std::string& extra, const std::string& tail = "", bool charged = false,
                       const std::string& style = "lj/cut/coul/cut", bool cross = true) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck(
      "branched.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\n[md]\nunits = \"real\"\ntimestep = 1.0\nmasses = "
      "[15.035, 14.027]\n" +
          extra + "[md.read_data]\nfile = \"" STRATUS_MD_TEST_DATA "/" +
          (charged ? "branched_charged_real.data" : "branched_real.data") +
          "\"\n[md.special_bonds]\nlj = [0.0, 0.0, 0.5]\n" +
          (charged ? "coul = [0.0, 0.5, 0.8333]\n" : "") + "[md.pair]\ncutoff = 10.0\n" +
          (charged ? "style = \"" + style + "\"\ncoulomb_cutoff = 9.0\n" : "") +
          "[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.195\nsigma = 3.75\n"
          "[[md.pair.coeff]]\ntypes = [2, 2]\nepsilon = 0.0914\nsigma = 3.95\n" +
          std::string(cross ? "[[md.pair.coeff]]\ntypes = [1, 2]\nepsilon = 0.1335\nsigma = 3.85\n"
                            : "") +
          "[md.neighbor]\nskin = 2.0\n" + tail,
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

}  // namespace

// Bonds, angles, dihedrals (charmm, one type with a 60-degree phase), impropers and scaled 1-4
// pairs against LAMMPS 2022 (Debian's lmp) on the same data file:
//   units real; atom_style full; bond_style harmonic; angle_style harmonic;
//   dihedral_style charmm; improper_style harmonic; read_data branched_real.data;
//   pair_style lj/cut 10.0; pair_coeff 1 1 0.195 3.75; pair_coeff 2 2 0.0914 3.95;
//   pair_coeff 1 2 0.1335 3.85; special_bonds lj 0.0 0.0 0.5; neighbor 2.0 bin;
//   fix 1 all nve; timestep 1.0;
//   thermo_style custom step temp pe ke evdwl ebond eangle edihed eimp press; thermo_modify norm
//   yes; run 200
// Step 0 term by term to 1e-10 relative (every formula, unit and sign); step 200 to 1e-7 (the
// whole dynamics: forces on ghosts sent home, the exclusions and the 1-4 scaling kept through
// list rebuilds). At 1, 2 and 4 ranks (molecules cut by subdomain boundaries).
TEST(MdMolecules, BranchedMoleculesAsLammpsRunsThem) {
  Context& ctx = stratus::testing::context();
  // temp, pe, ke, evdwl, ebond, eangle, edihed, eimp, press (per atom, kcal/mol; K; atm)
  const double ref[2][9] = {
      {141.528862334354, 1.51904724734292, 0.420552309413773, 0.246625359940284, 0.763793923565482,
       0.442248309712747, 0.0524000690998827, 0.0139795850245293, 1276.33248731743},
      {284.323964331193, 1.09214515582936, 0.844867243676968, -0.172661961002948, 0.752721713957675,
       0.205199308769464, 0.238721319335133, 0.0681647747700327, -3880.45658461985}};
  for (const char* list : {"half", "full"}) {
    SCOPED_TRACE(list);
    md::MdSolver solver(ctx, branched_deck("", fmt::format("list = \"{}\"\n", list)));
    EXPECT_EQ(solver.natoms(), 320);
    for (int at = 0; at < 2; ++at) {
      if (at == 1)
        for (int s = 0; s < 200; ++s) solver.step();
      const md::Thermo th = solver.thermo();
      const double got[9] = {th.temperature, th.potential, th.kinetic,  th.pair,    th.bond,
                             th.angle,       th.dihedral,  th.improper, th.pressure};
      const double tol = at == 0 ? 1e-10 : 1e-7;
      for (int q = 0; q < 9; ++q)
        EXPECT_NEAR(got[q], ref[at][q], tol * std::abs(ref[at][q]))
            << "step " << (at == 0 ? 0 : 200) << ", quantity " << q;
    }
  }
}

// The same molecules with charges (summing to zero per molecule) under lj/cut/coul/cut, a
// Coulomb cutoff shorter than the LJ one, and Coulomb factors that differ from the LJ ones at
// 1-3 and 1-4 (a 1-3 pair excluded for LJ keeps half its Coulomb term), against lmp with
//   pair_style lj/cut/coul/cut 10.0 9.0; special_bonds lj 0.0 0.0 0.5 coul 0.0 0.5 0.8333
// and otherwise in.branched above (thermo also ecoul). Same tolerances.
TEST(MdMolecules, ChargedMoleculesAsLammpsRunsThem) {
  Context& ctx = stratus::testing::context();
  // temp, pe, ke, evdwl, ecoul, ebond, eangle, edihed, eimp, press
  const double ref[2][10] = {
      {141.528862334354, 1.20342989603886, 0.420552309413773, 0.246625359940284, -0.315617351304063,
       0.763793923565482, 0.442248309712747, 0.0524000690998827, 0.0139795850245293,
       1194.16633424977},
      {416.123576047581, 0.318518542062119, 1.2365091333448, -0.194495487821186, -0.784474809908956,
       0.702459228228834, 0.177544692304395, 0.358644237130575, 0.0588406821284568,
       -3765.15589257958}};
  for (const char* list : {"half", "full"}) {
    SCOPED_TRACE(list);
    md::MdSolver solver(ctx, branched_deck("", fmt::format("list = \"{}\"\n", list), true));
    for (int at = 0; at < 2; ++at) {
      if (at == 1)
        for (int s = 0; s < 200; ++s) solver.step();
      const md::Thermo th = solver.thermo();
      const double got[10] = {th.temperature, th.potential, th.kinetic,  th.pair,     th.coul,
                              th.bond,        th.angle,     th.dihedral, th.improper, th.pressure};
      const double tol = at == 0 ? 1e-10 : 1e-7;
      for (int q = 0; q < 10; ++q)
        EXPECT_NEAR(got[q], ref[at][q], tol * std::abs(ref[at][q]))
            << "step " << (at == 0 ? 0 : 200) << ", quantity " << q;
    }
  }
}

// lj/cut/coul/long with PPPM on the charged molecules against lmp's
//   pair_style lj/cut/coul/long 10.0 9.0; kspace_style pppm 1.0e-5
// (otherwise in.charged above; thermo also elong). lmp chose a 16^3 grid and g_ewald 0.28472197
// with an estimated relative force accuracy of 8.06e-6: Stratus, asked the same, chooses the same
// grid, g_ewald to 2e-4 (Newton's method stops at another point) and the same estimate. With
// lmp's grid and g_ewald fixed, every term but the Coulomb ones to 1e-8, the real-space Coulomb
// term to 1e-6 (Stratus's erfc is Abramowitz and Stegun's 7.1.26, 1.5e-7 absolute; lmp's
// tables differ from it by 3e-7 relative here),
// the k-space energy to 1e-5 (PPPM's accuracy: the two implementations alias differently), the
// pressure to 1e-4; after 200 steps the temperature to 1e-5 and the potential energy to 1e-4.
TEST(MdMolecules, LongRangeCoulombAsLammpsRunsIt) {
  Context& ctx = stratus::testing::context();
  {
    md::MdSolver chosen(ctx, branched_deck("", "[md.kspace]\nstyle = \"pppm\"\naccuracy = 1e-5\n",
                                           true, "lj/cut/coul/long"));
    ASSERT_NE(chosen.kspace(), nullptr);
    EXPECT_EQ(chosen.kspace()->mesh(), (std::array<int, 3>{16, 16, 16}));
    EXPECT_NEAR(chosen.kspace()->g_ewald(), 0.28472197, 2e-4 * 0.28472197);
    EXPECT_NEAR(chosen.kspace()->estimated_accuracy(), 8.0603897e-06, 1e-3 * 8.06e-6);
  }
  // temp, pe, ke, evdwl, ecoul, elong, ebond, eangle, edihed, eimp, press
  const double ref[2][11] = {
      {141.528862334354, 1.12087744775294, 0.420552309413773, 0.246625359940284, 2.03181006593661,
       -2.42997986552659, 0.763793923565482, 0.442248309712747, 0.0524000690998827,
       0.0139795850245293, 1172.56373809063},
      {421.344899490909, 0.286332794709774, 1.25202426994712, -0.196225747051728, 1.8962444412899,
       -2.70376779339917, 0.694735677077507, 0.176055560557463, 0.358400786151397,
       0.0608898700844004, -3758.93032247551}};
  const double tol[2][11] = {
      {1e-10, 1e-5, 1e-10, 1e-8, 1e-6, 1e-5, 1e-10, 1e-10, 1e-10, 1e-10, 1e-4},
      {1e-5, 1e-4, 1e-5, 1e-5, 1e-6, 1e-5, 1e-6, 1e-5, 1e-5, 1e-5, 1e-4}};
  md::MdSolver solver(
      ctx, branched_deck("",
                         "[md.kspace]\nstyle = \"pppm\"\naccuracy = 1e-5\nmesh = [16, 16, 16]\n"
                         "g_ewald = 0.28472197\n",
                         true, "lj/cut/coul/long"));
  for (int at = 0; at < 2; ++at) {
    if (at == 1)
      for (int s = 0; s < 200; ++s) solver.step();
    const md::Thermo th = solver.thermo();
    const double got[11] = {th.temperature, th.potential, th.kinetic, th.pair,
                            th.coul,        th.kspace,    th.bond,    th.angle,
                            th.dihedral,    th.improper,  th.pressure};
    for (int q = 0; q < 11; ++q)
      EXPECT_NEAR(got[q], ref[at][q], tol[at][q] * std::abs(ref[at][q]))
          << "step " << (at == 0 ? 0 : 200) << ", quantity " << q;
  }
}

// What the molecular setup refuses, naming the key or the file's line.
TEST(MdMolecules, ClearErrors) {
  Context& ctx = stratus::testing::context();
  const auto error = [&](const std::string& extra, const std::string& tail) {
    try {
      md::MdSolver solver(ctx, branched_deck(extra, tail));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error("", "[md.dihedral]\nstyle = \"opls\"\n")
                .find("md.dihedral.style: opls disagrees with " STRATUS_MD_TEST_DATA
                      "/branched_real.data:32, whose comment names dihedral style \"charmm\""),
            std::string::npos);
  // Cluster lists take lj/cut/coul/long alone among the charged styles, and LJ tables that factor
  // (in.branched's 1-2 sigma, 3.85, is the arithmetic mean).
  const auto charged_error = [&](const std::string& extra, const std::string& style) {
    try {
      const std::string kspace =
          style == "lj/cut/coul/long" ? "[md.kspace]\nstyle = \"pppm\"\n" : "";
      md::MdSolver solver(ctx, branched_deck(extra, kspace, true, style));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string coul_cut = charged_error("precision = \"mixed\"\n", "lj/cut/coul/cut");
  EXPECT_NE(coul_cut.find("md.precision"), std::string::npos) << coul_cut;
  EXPECT_NE(coul_cut.find("take lj/cut/coul/long and coul/long only"), std::string::npos)
      << coul_cut;
  const std::string mixing = charged_error("", "lj/cut/coul/long");
  EXPECT_EQ(mixing, "accepted");                                 // auto: half lists
  const std::string listed = error("", "list = \"cluster\"\n");  // uncharged: fine
  EXPECT_EQ(listed, "accepted");
  try {
    md::MdSolver solver(
        ctx, branched_deck("", "list = \"cluster\"\n[md.kspace]\nstyle = \"pppm\"\n", true,
                           "lj/cut/coul/long"));
    ADD_FAILURE() << "lj/cut/coul/long with arithmetic-mean coefficients took cluster lists";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("md.neighbor.list"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("geometric means"), std::string::npos) << e.what();
  }
}

// Cluster lists on molecules, against half lists on the same deck: the excluded special pairs are
// left out by the masks (and computed, scaled, by the topology), the charged kernel computes the
// lj/cut/coul/long pairs. In double every thermo quantity agrees to 1e-10 at step 0 and 1e-8
// after 100 steps (rounding only: the sums run in another order); in mixed precision (float
// pairs) the energies and the pressure to 2e-5 at step 0. Uncharged (lj/cut, special_bonds lj
// 0 0 0.5) and charged (lj/cut/coul/long with PPPM, special coul 0 0.5 0.8333; geometric 1-2
// coefficients, so that the LJ factors exist).
TEST(MdMolecules, ClusterListsAsHalfLists) {
  Context& ctx = stratus::testing::context();
  const auto quantities = [](const md::Thermo& th) {
    return std::array<double, 11>{th.temperature, th.potential, th.kinetic, th.pair,
                                  th.coul,        th.kspace,    th.bond,    th.angle,
                                  th.dihedral,    th.improper,  th.pressure};
  };
  for (const bool charged : {false, true}) {
    const std::string style = charged ? "lj/cut/coul/long" : "lj/cut/coul/cut";
    const std::string kspace =
        charged ? "[md.kspace]\nstyle = \"pppm\"\naccuracy = 1e-5\nmesh = [16, 16, 16]\n"
                  "g_ewald = 0.28472197\n"
                : "";
    const auto deck = [&](const std::string& extra, const std::string& list) {
      return branched_deck(extra, "list = \"" + list + "\"\n" + kspace, charged, style, false);
    };
    md::MdSolver half(ctx, deck("", "half"));
    md::MdSolver cluster(ctx, deck("", "cluster"));
    md::MdSolver mixed(ctx, deck("precision = \"mixed\"\n", "auto"));
    for (int at = 0; at < 2; ++at) {
      if (at == 1)
        for (int s = 0; s < 100; ++s) {
          half.step();
          cluster.step();
        }
      const auto want = quantities(half.thermo());
      const auto got = quantities(cluster.thermo());
      const double tol = at == 0 ? 1e-10 : 1e-8;
      for (std::size_t q = 0; q < want.size(); ++q)
        EXPECT_NEAR(got[q], want[q], tol * std::abs(want[q]) + 1e-300)
            << (charged ? "charged" : "uncharged") << ", step " << 100 * at << ", quantity " << q;
      if (at == 0) {
        const auto low = quantities(mixed.thermo());
        for (std::size_t q = 0; q < want.size(); ++q)
          EXPECT_NEAR(low[q], want[q], 2e-5 * std::abs(want[q]) + 1e-300)
              << (charged ? "charged" : "uncharged") << ", mixed, quantity " << q;
      }
    }
  }
}
