// The md solver's pressure tensor (Thermo::pxx, pyy, pzz) on charged branched molecules
// (tests/md/data/branched_charged_real.data: bonds, angles, charmm dihedrals, impropers, scaled
// 1-4 special pairs, lj/cut/coul/cut), at 1, 2 and 4 ranks, half and full lists:
//  - at rest, P_aa V / nktv2p is the virial tensor's diagonal W_aa, which must be the strain
//    derivative -dU/de of the potential energy when positions and box are scaled along axis a by
//    1 + e (every contribution: pairs, bonded terms, special pairs, summed over the ranks);
//  - with the file's velocities, P_aa gains 2 KE_aa / V (KE_aa = sum 1/2 m v_a^2, a host sum);
//  - the pressure is the tensor's trace / 3 and is still lmp's (test_md_data's reference).
// The derivative is the central difference at e = 1e-5: its truncation (e^2 / 6 times the
// third derivative of U, about 1e-8 of W here) and round-off (1e-13 of the terms' magnitudes
// over e, about 1e-7 of W) are below the tolerance 1e-6 of the largest component. The potentials
// are truncated, so a pair whose distance crossed a cutoff (10 for LJ, 9 for Coulomb) would make
// the energy jump: the test measures that the strain of the closest pair to cross one is 5.3e-5,
// five times e.
#include "stratus/io/deck.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/md/units.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace stratus;

namespace {

const std::string kData = STRATUS_MD_TEST_DATA "/branched_charged_real.data";
constexpr double kStrain = 1e-5;

/// The atoms of a data file in atom style full: positions, types and velocities by line order.
struct FileAtoms {
  std::vector<std::array<double, 3>> x, v;
  std::vector<int> type;
  double box = 0;  ///< the cubic box's edge
};

FileAtoms read_atoms(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  FileAtoms a;
  std::string section;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first)) continue;
    if (line.find("xlo xhi") != std::string::npos) {
      double lo = 0, hi = 0;
      std::istringstream(line) >> lo >> hi;
      a.box = hi - lo;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(first[0]))) {
      section = first;
      continue;
    }
    if (section == "Atoms") {
      long id = 0, mol = 0;
      int type = 0;
      double q = 0;
      std::array<double, 3> x{};
      std::istringstream(line) >> id >> mol >> type >> q >> x[0] >> x[1] >> x[2];
      a.x.push_back(x);
      a.type.push_back(type - 1);
    } else if (section == "Velocities") {
      long id = 0;
      std::array<double, 3> v{};
      std::istringstream(line) >> id >> v[0] >> v[1] >> v[2];
      a.v.push_back(v);
    }
  }
  return a;
}

/// Writes `from` to `to` with the box and the positions scaled along `axis` by `scale`, and
/// without its Velocities section unless `velocities`. Rank 0 writes; collective.
void write_strained(MPI_Comm comm, const std::string& from, const std::string& to, int axis,
                    double scale, bool velocities) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    std::ifstream in(from);
    std::ofstream out(to);
    std::string line, section;
    const char* box_tags[3] = {"xlo xhi", "ylo yhi", "zlo zhi"};
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string first;
      const bool blank = !(words >> first);
      if (!blank && std::isalpha(static_cast<unsigned char>(first[0]))) section = first;
      if (line.find(box_tags[axis]) != std::string::npos) {
        double lo = 0, hi = 0;
        std::istringstream(line) >> lo >> hi;
        line = fmt::format("{:.17g} {:.17g} {}", lo * scale, hi * scale, box_tags[axis]);
      } else if (section == "Velocities" && !velocities) {
        continue;
      } else if (section == "Atoms" && !blank &&
                 !std::isalpha(static_cast<unsigned char>(first[0]))) {
        std::istringstream f(line);
        std::vector<std::string> w;
        for (std::string s; f >> s;) w.push_back(s);
        const std::size_t c = 4 + static_cast<std::size_t>(axis);
        w[c] = fmt::format("{:.17g}", std::stod(w[c]) * scale);
        line.clear();
        for (const auto& s : w) line += (line.empty() ? "" : " ") + s;
      }
      out << line << "\n";
    }
  }
  MPI_Barrier(comm);
}

/// The charged branched-molecule deck of test_md_data (lj/cut/coul/cut 10 / 9, special_bonds lj
/// 0 0 0.5, coul 0 0.5 0.8333) on `path`, with md.neighbor.list = `list`.
io::Deck deck_of(const std::string& path, const std::string& list) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck(
      "pressure.toml",
      "[run]\nsolver = \"md\"\nsteps = 0\n[md]\nunits = \"real\"\ntimestep = 1.0\nmasses = "
      "[15.035, 14.027]\n[md.read_data]\nfile = \"" +
          path +
          "\"\n[md.special_bonds]\nlj = [0.0, 0.0, 0.5]\ncoul = [0.0, 0.5, 0.8333]\n"
          "[md.pair]\ncutoff = 10.0\nstyle = \"lj/cut/coul/cut\"\ncoulomb_cutoff = 9.0\n"
          "[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 0.195\nsigma = 3.75\n"
          "[[md.pair.coeff]]\ntypes = [2, 2]\nepsilon = 0.0914\nsigma = 3.95\n"
          "[[md.pair.coeff]]\ntypes = [1, 2]\nepsilon = 0.1335\nsigma = 3.85\n"
          "[md.neighbor]\nskin = 2.0\nlist = \"" +
          list + "\"\n",
      std::vector<std::string>{}, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

/// The thermo of the deck on `path` at step 0.
md::Thermo thermo_of(const std::string& path, const std::string& list) {
  md::MdSolver solver(stratus::testing::context(), deck_of(path, list));
  return solver.thermo();
}

/// The smallest strain along any axis that moves a pair's distance across the cutoff `rc`
/// (minimum image: the box is wider than twice every cutoff).
double crossing_strain(const FileAtoms& a, double rc) {
  double smallest = 1e300;
  for (std::size_t i = 0; i < a.x.size(); ++i)
    for (std::size_t j = i + 1; j < a.x.size(); ++j) {
      double d[3], r2 = 0;
      for (int k = 0; k < 3; ++k) {
        d[k] = a.x[i][k] - a.x[j][k];
        d[k] -= a.box * std::round(d[k] / a.box);
        r2 += d[k] * d[k];
      }
      const double r = std::sqrt(r2);
      for (int k = 0; k < 3; ++k)  // dr/de = d_k^2 / r
        if (d[k] != 0) smallest = std::min(smallest, std::abs(r - rc) * r / (d[k] * d[k]));
    }
  return smallest;
}

}  // namespace

TEST(MdPressure, VirialTensorIsTheStrainDerivative) {
  Context& ctx = stratus::testing::context();
  const FileAtoms atoms = read_atoms(kData);
  ASSERT_EQ(atoms.x.size(), 320u);
  const double margin = std::min(crossing_strain(atoms, 9.0), crossing_strain(atoms, 10.0));
  if (ctx.rank() == 0)
    std::printf("smallest strain that moves a pair across a cutoff: %.3g\n", margin);
  ASSERT_GT(margin, 4 * kStrain);
  const md::Units u = md::Units::of(md::UnitSystem::real);
  // Per rank count: the 1, 2 and 4-rank runs may run at once in the same directory.
  const std::string tag = fmt::format("pressure_np{}_", ctx.size());
  const std::string rest = tag + "rest.data", up = tag + "up.data", down = tag + "down.data";
  write_strained(ctx.comm(), kData, rest, 0, 1.0, false);
  for (const char* list : {"half", "full"}) {
    SCOPED_TRACE(list);
    const md::Thermo th = thermo_of(rest, list);
    EXPECT_EQ(th.kinetic, 0.0);
    const double w[3] = {th.pxx * th.volume / u.nktv2p, th.pyy * th.volume / u.nktv2p,
                         th.pzz * th.volume / u.nktv2p};
    const double largest = std::max({std::abs(w[0]), std::abs(w[1]), std::abs(w[2])});
    EXPECT_NEAR(th.pressure, (th.pxx + th.pyy + th.pzz) / 3, 1e-14 * std::abs(th.pressure));
    for (int a = 0; a < 3; ++a) {
      write_strained(ctx.comm(), kData, up, a, 1 + kStrain, false);
      write_strained(ctx.comm(), kData, down, a, 1 - kStrain, false);
      const double n = static_cast<double>(th.natoms);
      const double u_up = thermo_of(up, list).potential * n;
      const double u_down = thermo_of(down, list).potential * n;
      const double derivative = -(u_up - u_down) / (2 * kStrain);
      if (ctx.rank() == 0)
        std::printf("%s lists, axis %d: W_aa %.12g kcal/mol, -dU/de %.12g, relative %.2e\n", list,
                    a, w[a], derivative, std::abs(derivative - w[a]) / std::abs(w[a]));
      EXPECT_NEAR(w[a], derivative, 1e-6 * largest) << "axis " << a;
    }
  }
  MPI_Barrier(ctx.comm());
  if (ctx.rank() == 0)
    for (const auto& p : {rest, up, down}) std::remove(p.c_str());
}

// The kinetic part: with the file's velocities each P_aa gains 2 KE_aa / V (KE_aa from the file,
// in kcal/mol through mvv2e), to 1e-10 of the pressure; the trace / 3 is lmp's pressure (the
// reference of MdMolecules.ChargedMoleculesAsLammpsRunsThem), to 1e-10 as there.
TEST(MdPressure, KineticTensor) {
  Context& ctx = stratus::testing::context();
  const FileAtoms atoms = read_atoms(kData);
  ASSERT_EQ(atoms.v.size(), atoms.x.size());
  const md::Units u = md::Units::of(md::UnitSystem::real);
  const double mass[2] = {15.035, 14.027};
  double ke[3] = {0, 0, 0};
  for (std::size_t i = 0; i < atoms.v.size(); ++i)
    for (int a = 0; a < 3; ++a)
      ke[a] += 0.5 * mass[atoms.type[i]] * u.mvv2e * atoms.v[i][a] * atoms.v[i][a];
  const std::string rest = fmt::format("kinetic_np{}_rest.data", ctx.size());
  write_strained(ctx.comm(), kData, rest, 0, 1.0, false);
  for (const char* list : {"half", "full"}) {
    SCOPED_TRACE(list);
    const md::Thermo moving = thermo_of(kData, list);
    const md::Thermo still = thermo_of(rest, list);
    const double p[3] = {moving.pxx, moving.pyy, moving.pzz};
    const double p0[3] = {still.pxx, still.pyy, still.pzz};
    for (int a = 0; a < 3; ++a)
      EXPECT_NEAR(p[a] - p0[a], 2 * ke[a] / moving.volume * u.nktv2p,
                  1e-10 * std::abs(moving.pressure))
          << "axis " << a;
    EXPECT_NEAR(moving.pressure, (p[0] + p[1] + p[2]) / 3, 1e-14 * std::abs(moving.pressure));
    EXPECT_NEAR(moving.pressure, 1194.16633424977, 1e-10 * 1194.17);
  }
  MPI_Barrier(ctx.comm());
  if (ctx.rank() == 0) std::remove(rest.c_str());
}
