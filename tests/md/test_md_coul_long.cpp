// md.pair.style = "coul/long": the real-space Ewald Coulomb term alone (no Lennard-Jones), with
// PPPM as its reciprocal part, against LAMMPS on the charged molecules of test_md_data.cpp, and
// what it refuses (everything that only shapes a Lennard-Jones term).
#include "stratus/solvers/md/md_solver.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace stratus;

namespace {

const std::string kCharged = STRATUS_MD_TEST_DATA "/branched_charged_real.data";

/// The charged branched molecules (tests/md/data/branched_charged_real.data, make_branched.py)
/// under coul/long 10: `pair` adds [md.pair] keys (and may open [[md.pair.coeff]]), `tail` adds
/// [md.neighbor] keys and further sections ([md.kspace]).
io::Deck coul_long_deck(const std::string& pair, const std::string& tail,
                        const std::string& data = kCharged) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck(
      "coul_long.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\n[md]\nunits = \"real\"\ntimestep = 1.0\nmasses = "
      "[15.035, 14.027]\n[md.read_data]\nfile = \"" +
          data +
          "\"\n[md.special_bonds]\nlj = [0.0, 0.0, 0.5]\ncoul = [0.0, 0.5, 0.8333]\n[md.pair]\n"
          "style = \"coul/long\"\ncutoff = 10.0\n" +
          pair + "[md.neighbor]\nskin = 2.0\n" + tail,
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

const std::string kPppm = "[md.kspace]\nstyle = \"pppm\"\naccuracy = 1e-5\n";
/// lmp's grid and g_ewald for these molecules under coul/long 10 at 1e-5.
const std::string kPppmAsLammps = kPppm + "mesh = [15, 15, 15]\ng_ewald = 0.25980981\n";

}  // namespace

// The charged molecules under coul/long with PPPM against LAMMPS (29 Sep 2021, Debian's lmp):
//   units real; atom_style full; bond_style harmonic; angle_style harmonic;
//   dihedral_style charmm; improper_style harmonic; pair_style coul/long 10.0;
//   read_data branched_charged_real.data; pair_coeff * *; kspace_style pppm 1.0e-5;
//   kspace_modify mesh 15 15 15 gewald 0.25980981;
//   special_bonds lj 0.0 0.0 0.5 coul 0.0 0.5 0.8333; neighbor 2.0 bin; fix 1 all nve;
//   timestep 1.0; thermo_style custom step temp pe ke evdwl ecoul elong ebond eangle edihed eimp
//   press; thermo_modify norm yes format float %.15g; run 200
// Without kspace_modify lmp chooses that 15^3 grid and g_ewald 0.25980981 (estimated relative
// force accuracy 6.3700707e-06), which Stratus, asked the same, chooses too (g to 2e-4, as in
// MdMolecules.LongRangeCoulombAsLammpsRunsIt); the kspace_modify line fixes lmp's g to the
// printed 8 digits, the deck's value. No Lennard-Jones term: evdwl is exactly 0 on both sides.
// Tolerances as in LongRangeCoulombAsLammpsRunsIt; half and full lists, at 1, 2 and 4 ranks.
TEST(MdCoulLong, AsLammpsRunsIt) {
  Context& ctx = stratus::testing::context();
  {
    md::MdSolver chosen(ctx, coul_long_deck("", kPppm));
    ASSERT_NE(chosen.kspace(), nullptr);
    EXPECT_EQ(chosen.kspace()->mesh(), (std::array<int, 3>{15, 15, 15}));
    EXPECT_NEAR(chosen.kspace()->g_ewald(), 0.25980981, 2e-4 * 0.25980981);
    EXPECT_NEAR(chosen.kspace()->estimated_accuracy(), 6.3700707e-06, 1e-3 * 6.37e-6);
  }
  // temp, pe, ke, evdwl, ecoul, elong, ebond, eangle, edihed, eimp, press (per atom, kcal/mol;
  // K; atm)
  const double ref[2][11] = {
      {141.528862334354, 0.87421939543391, 0.420552309413773, 0, 1.87331620731251,
       -2.27151869928124, 0.763793923565482, 0.442248309712747, 0.0524000690998827,
       0.0139795850245293, -669.774571741837},
      {295.912335603106, 0.414091387377107, 0.879302031185072, 0, 1.80089978644639,
       -2.41968804651559, 0.704368143659458, 0.174486441196768, 0.0847117996610957,
       0.0693132629289842, -584.680818064732}};
  const double tol[2][11] = {{1e-10, 1e-5, 1e-10, 0, 1e-6, 1e-5, 1e-10, 1e-10, 1e-10, 1e-10, 1e-4},
                             {1e-5, 1e-4, 1e-5, 0, 1e-6, 1e-5, 1e-6, 1e-5, 1e-5, 1e-5, 1e-4}};
  for (const char* list : {"half", "full"}) {
    SCOPED_TRACE(list);
    md::MdSolver solver(ctx,
                        coul_long_deck("", fmt::format("list = \"{}\"\n", list) + kPppmAsLammps));
    EXPECT_EQ(solver.natoms(), 320);
    for (int at = 0; at < 2; ++at) {
      if (at == 1)
        for (int s = 0; s < 200; ++s) solver.step();
      const md::Thermo th = solver.thermo();
      const double got[11] = {th.temperature, th.potential, th.kinetic, th.pair,
                              th.coul,        th.kspace,    th.bond,    th.angle,
                              th.dihedral,    th.improper,  th.pressure};
      if (ctx.rank() == 0 && std::string(list) == "half")
        for (int q = 0; q < 11; ++q)
          std::printf("step %d quantity %d: %.15g (lmp %.15g, relative %.3g)\n", at * 200, q,
                      got[q], ref[at][q],
                      ref[at][q] != 0 ? std::abs(got[q] - ref[at][q]) / std::abs(ref[at][q])
                                      : std::abs(got[q]));
      EXPECT_EQ(th.pair, 0.0) << "step " << (at == 0 ? 0 : 200);  // no LJ: exactly zero
      for (int q = 0; q < 11; ++q)
        EXPECT_NEAR(got[q], ref[at][q], tol[at][q] * std::abs(ref[at][q]))
            << "step " << (at == 0 ? 0 : 200) << ", quantity " << q;
    }
  }
}

// coul/long is lj/cut/coul/long's kernel with epsilon 0: the two runs make the same tables and
// so the same arithmetic (bit for bit on CPUs; 1e-12 leaves room for the order of a GPU's
// atomic sums over 20 steps), and no LJ energy, force or virial is left in either.
TEST(MdCoulLong, SameAsLjCutCoulLongWithEpsilonZero) {
  Context& ctx = stratus::testing::context();
  SolverRegistry registry;
  register_builtin_solvers(registry);
  const io::Deck lj_zero = io::load_deck(
      "lj_zero.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\n[md]\nunits = \"real\"\ntimestep = 1.0\nmasses = "
      "[15.035, 14.027]\n[md.read_data]\nfile = \"" +
          kCharged +
          "\"\n[md.special_bonds]\nlj = [0.0, 0.0, 0.5]\ncoul = [0.0, 0.5, 0.8333]\n[md.pair]\n"
          "style = \"lj/cut/coul/long\"\ncutoff = 10.0\n"
          "[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.0\nsigma = 1.0\n"
          "[[md.pair.coeff]]\ntypes = [2, 2]\nepsilon = 0.0\nsigma = 1.0\n"
          "[md.neighbor]\nskin = 2.0\n" +
          kPppmAsLammps,
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
  md::MdSolver a(ctx, coul_long_deck("", kPppmAsLammps));
  md::MdSolver b(ctx, lj_zero);
  for (int s = 0; s < 20; ++s) {
    a.step();
    b.step();
  }
  const md::Thermo ta = a.thermo(), tb = b.thermo();
  EXPECT_EQ(ta.pair, 0.0);
  EXPECT_EQ(tb.pair, 0.0);
  EXPECT_NEAR(ta.coul, tb.coul, 1e-12 * std::abs(tb.coul));
  EXPECT_NEAR(ta.kspace, tb.kspace, 1e-12 * std::abs(tb.kspace));
  EXPECT_NEAR(ta.potential, tb.potential, 1e-12 * std::abs(tb.coul));
  EXPECT_NEAR(ta.pressure, tb.pressure, 1e-12 * std::abs(tb.pressure));
  EXPECT_NEAR(ta.temperature, tb.temperature, 1e-12 * tb.temperature);
}

// What has no meaning without a Lennard-Jones term is refused, naming the key (or the data
// file's line) and saying what was expected and found; and coul/long needs PPPM.
TEST(MdCoulLong, ClearErrors) {
  Context& ctx = stratus::testing::context();
  const auto error = [&](const std::string& pair, const std::string& tail,
                         const std::string& data = kCharged) {
    try {
      md::MdSolver solver(ctx, coul_long_deck(pair, tail, data));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto expect_in = [](const std::string& what, const std::string& part) {
    EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
  };
  const std::string coeff =
      error("[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.195\nsigma = 3.75\n", kPppm);
  expect_in(coeff, "md.pair.coeff[0].types");
  expect_in(coeff, "expected no [[md.pair.coeff]], found 1");
  const std::string tail = error("tail = true\n", kPppm);
  expect_in(tail, "md.pair.tail");
  expect_in(tail, "expected md.pair.tail = false, found true");
  const std::string shift = error("shift = true\n", kPppm);
  expect_in(shift, "md.pair.shift");
  expect_in(shift, "expected md.pair.shift = false, found true");
  const std::string mix = error("mix = \"arithmetic\"\n", kPppm);
  expect_in(mix, "md.pair.mix");
  expect_in(mix, "found \"arithmetic\"");
  const std::string cutoffs = error("coulomb_cutoff = 9.0\n", kPppm);
  expect_in(cutoffs, "md.pair.coulomb_cutoff");
  expect_in(cutoffs, "has one cutoff");
  EXPECT_EQ(error("coulomb_cutoff = 10.0\n", kPppm), "accepted");
  const std::string no_kspace = error("", "");
  expect_in(no_kspace, "md.kspace.style");
  expect_in(no_kspace, "md.pair.style = \"coul/long\" computes the real-space part of an Ewald");
  expect_in(no_kspace, "found \"none\"");

  // The data file with a Pair Coeffs (or PairIJ Coeffs) section: refused at its line.
  for (const std::string section : {"Pair Coeffs", "PairIJ Coeffs"}) {
    SCOPED_TRACE(section);
    const std::string path = fmt::format("coul_long_{}_{}.data",
                                         section == "Pair Coeffs" ? "pair" : "pairij", ctx.size());
    int line = 0;
    if (ctx.rank() == 0) {
      std::ifstream in(kCharged);
      std::ofstream out(path);
      std::string text;
      for (int n = 1; std::getline(in, text); ++n) {
        if (text.rfind("Bond Coeffs", 0) == 0) {  // the new section takes this line
          line = n;
          out << section << " # lj/cut/coul/long\n\n"
              << (section == "Pair Coeffs" ? "1 0.195 3.75\n2 0.0914 3.95\n"
                                           : "1 1 0.195 3.75\n1 2 0.1335 3.85\n2 2 0.0914 3.95\n")
              << "\n";
        }
        out << text << "\n";
      }
    }
    MPI_Bcast(&line, 1, MPI_INT, 0, ctx.comm());
    MPI_Barrier(ctx.comm());
    ASSERT_GT(line, 0);
    const std::string file = error("", kPppm, path);
    expect_in(file, fmt::format("{}:{}: ", path, line));
    expect_in(file, "expected no " + section + " section, found one");
    MPI_Barrier(ctx.comm());
    if (ctx.rank() == 0) std::remove(path.c_str());
  }
}
