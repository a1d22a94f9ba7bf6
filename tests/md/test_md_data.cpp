// Initial configurations from LAMMPS data files: parsing, errors with file:line, and the same
// physics as the equivalent lattice deck.
#include "stratus/io/lammps_data.hpp"
#include "stratus/solvers/md/lattice.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

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
  EXPECT_EQ(parse_error(kHeader + "Pair Coeffs\n\n1 1.0 1.0\n"),
            "x.data:9: expected a section Masses, Atoms or Velocities, found 'Pair Coeffs' "
            "(coefficients come "
            "from the deck)");
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
  const double a = md::lattice_constant("fcc", 0.8442);
  Box whole;
  for (int d = 0; d < 3; ++d) whole.hi[d] = a * 6;
  const auto sites = md::lattice_sites("fcc", 0.8442, cells, whole);
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
