// MD solver validation against LAMMPS's bench/in.lj and invariance under decomposition.
#include "stratus/solvers/md/md_solver.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>

using namespace stratus;

namespace {

io::Deck md_deck(const std::string& extra, const std::vector<std::string>& overrides = {}) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  const std::string text =
      "[run]\nsolver = \"md\"\nsteps = 0\n"
      "[md]\ntimestep = 0.005\n"
      "[md.lattice]\nstyle = \"fcc\"\ndensity = 0.8442\ncells = [20, 20, 20]\n"
      "[md.velocity]\ntemperature = 1.44\nseed = 87287\n"
      "[md.pair]\ncutoff = 2.5\n[[md.pair.coeff]]\ntypes = [1, 1]\nepsilon = 1.0\nsigma = 1.0\n"
      "[md.neighbor]\nskin = 0.3\n" +
      extra;
  return io::load_deck(
      "in.lj.toml", text, overrides, common_schema(registry),
      [&](const std::string& s, Schema& schema) { registry.find(s)->declare_sections(schema); });
}

/// Positions of every atom by global id, gathered on rank 0 of ctx (empty elsewhere).
std::map<GlobalId, std::array<double, 3>> gather_positions(const Context& ctx,
                                                           const md::AtomData& atoms) {
  auto x = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.x);
  auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms.id);
  std::vector<double> send;
  for (int i = 0; i < atoms.nlocal; ++i) {
    send.push_back(static_cast<double>(id(i)));
    for (int d = 0; d < 3; ++d) send.push_back(x(i, d));
  }
  int n = static_cast<int>(send.size());
  std::vector<int> counts(ctx.size()), displs(ctx.size());
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, ctx.comm());
  int total = 0;
  for (int r = 0; r < ctx.size(); ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(ctx.rank() == 0 ? total : 0);
  MPI_Gatherv(send.data(), n, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
              ctx.comm());
  std::map<GlobalId, std::array<double, 3>> out;
  for (std::size_t k = 0; k + 3 < all.size() + 1 && k < all.size(); k += 4)
    out[static_cast<GlobalId>(all[k])] = {all[k + 1], all[k + 2], all[k + 3]};
  return out;
}

}  // namespace

// LAMMPS bench/in.lj, step 0 (log.*.lj.*): PotEng -6.7733681, Press -5.0197073. Both depend only
// on the lattice and on T = 1.44 with 3N - 3 degrees of freedom, so they must match to 1e-6.
TEST(MdLJ, StepZeroMatchesLammpsBenchmark) {
  const io::Deck deck = md_deck("");
  md::MdSolver solver(stratus::testing::context(), deck);
  const md::Thermo th = solver.thermo();
  EXPECT_EQ(th.natoms, 32000);
  EXPECT_NEAR(th.temperature, 1.44, 1e-12);
  EXPECT_NEAR(th.potential, -6.7733681, 1e-6 * 6.7733681);
  EXPECT_NEAR(th.pressure, -5.0197073, 1e-6 * 5.0197073);
}

/// Largest |E(t) - E(0)| per atom over `steps` NVE steps, sampled every 50 steps.
double nve_energy_drift(const io::Deck& deck, int steps, std::int64_t* rebuilds) {
  md::MdSolver solver(stratus::testing::context(), deck);
  const double e0 = solver.thermo().total;
  double worst = 0;
  for (int s = 1; s <= steps; ++s) {
    solver.step();
    if (s % 50 == 0) worst = std::max(worst, std::abs(solver.thermo().total - e0));
  }
  *rebuilds = solver.rebuilds();
  return worst;
}

// NVE conserves the total energy per atom to 1e-4. The energy is shifted to zero at the cutoff:
// with the plain truncation of in.lj every pair crossing rc changes the energy by V(rc) =
// -0.0163 epsilon, and melting the lattice changes the number of pairs inside rc, so E drifts by
// ~1e-2 per atom whatever the integrator (LAMMPS's own in.lj log shows TotEng -4.6218 at step 0
// and -4.6261 at step 100).
//
// This quick version uses 4000 atoms. The fluctuation of E/N from the force discontinuity at rc
// falls as N^-1/2 (measured here: 6.3e-5 at 32000 atoms and 1.05e-4 at 4000 over 2000 steps), so
// it is held to 2e-4; the acceptance bound, 1e-4 for the 32000-atom box over 10,000 steps, is
// asserted by MdLJSlow below (ctest -L slow).
TEST(MdLJ, NveConservesEnergy) {
  std::int64_t rebuilds = 0;
  const double drift = nve_energy_drift(
      md_deck("", {"md.lattice.cells=[10, 10, 10]", "md.pair.shift=true"}), 2000, &rebuilds);
  EXPECT_LT(drift, 2e-4);
  EXPECT_GT(rebuilds, 20);  // the lattice melts: lists are rebuilt on demand
  std::printf("NVE, 4000 atoms, 2000 steps: max |E(t) - E(0)| / N = %.3e, %lld list builds\n",
              drift, static_cast<long long>(rebuilds));
}

// The acceptance run: the full in.lj box, 10,000 steps (labelled slow).
TEST(MdLJSlow, NveConservesEnergyInLjBox10000Steps) {
  if (std::getenv("STRATUS_SLOW_TESTS") == nullptr) GTEST_SKIP() << "set STRATUS_SLOW_TESTS=1";
  std::int64_t rebuilds = 0;
  const double drift = nve_energy_drift(md_deck("", {"md.pair.shift=true"}), 10000, &rebuilds);
  EXPECT_LT(drift, 1e-4);
  std::printf("NVE, 32000 atoms, 10000 steps: max |E(t) - E(0)| / N = %.3e\n", drift);
}

// The same 200 steps at any rank count give the same positions (the acceptance asks 1e-10).
TEST(MdLJ, TrajectoryIndependentOfDecomposition) {
  Context& ctx = stratus::testing::context();
  const io::Deck deck = md_deck("", {"md.lattice.cells=[6, 6, 6]", "md.neighbor.list=full"});
  md::MdSolver solver(ctx, deck);
  for (int s = 0; s < 200; ++s) solver.step();
  const auto parallel = gather_positions(ctx, solver.atoms());
  if (ctx.rank() == 0) {
    Context serial_ctx(ctx, MPI_COMM_SELF);
    md::MdSolver serial(serial_ctx, deck);
    for (int s = 0; s < 200; ++s) serial.step();
    const auto reference = gather_positions(serial_ctx, serial.atoms());
    ASSERT_EQ(parallel.size(), reference.size());
    double worst = 0;
    for (const auto& [id, x] : reference)
      for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(parallel.at(id)[d] - x[d]));
    // Forces are summed in global-id order and the initial velocities are normalised with
    // order-independent sums, so the trajectory is bitwise the same at any rank count.
    EXPECT_EQ(worst, 0.0) << "largest position difference";
    std::printf("largest position difference after 200 steps at %d ranks: %.3e\n", ctx.size(),
                worst);
  }
  MPI_Barrier(ctx.comm());
}

// Half lists (Newton's third law, CPU) and full lists compute the same physics: after 100 steps
// of the melting lattice the energies agree to round-off amplified by 100 steps of chaos.
TEST(MdLJ, HalfAndFullListsAgree) {
  std::array<md::Thermo, 2> th;
  const std::array<std::string, 2> modes{"half", "full"};
  for (int m = 0; m < 2; ++m) {
    md::MdSolver solver(stratus::testing::context(), md_deck("", {"md.lattice.cells=[6, 6, 6]",
                                                                  "md.neighbor.list=" + modes[m]}));
    const md::Thermo t0 = solver.thermo();
    EXPECT_NEAR(t0.potential, -6.7733681, 1e-6 * 6.7733681) << modes[m];
    for (int s = 0; s < 100; ++s) solver.step();
    th[m] = solver.thermo();
  }
  EXPECT_NEAR(th[0].potential, th[1].potential, 1e-9);
  EXPECT_NEAR(th[0].kinetic, th[1].kinetic, 1e-9);
  EXPECT_NEAR(th[0].pressure, th[1].pressure, 1e-8);
}
