// Heat solver physics: second-order convergence to the exact decaying mode, conservation of
// heat with periodic and zero-flux walls, and clear errors for grids that cannot be split.
#include "stratus/solvers/heat.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace stratus;

namespace {

io::Deck heat_deck(const std::string& body, const std::vector<std::string>& overrides = {}) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  return io::load_deck("test.toml", "[run]\nsolver = \"heat\"\nsteps = 0\n" + body, overrides,
                       common_schema(registry), [&](const std::string& s, Schema& schema) {
                         registry.find(s)->declare_sections(schema);
                       });
}

/// RMS error against the exact solution at t = 0.25 on an N^3 grid; dt = dx^2 (D = 0.1,
/// dt_fraction = 0.6), so every resolution ends at the same time after N^2 / 4 steps.
double error_at(int n, const std::string& boundary, std::vector<int> modes) {
  const io::Deck deck = heat_deck(
      fmt::format("[heat]\ncells = [{0}, {0}, {0}]\ndiffusivity = 0.1\ndt_fraction = 0.6\n"
                  "boundary = \"{1}\"\n[heat.initial]\nmodes = [{2}, {3}, {4}]\n",
                  n, boundary, modes[0], modes[1], modes[2]));
  HeatSolver solver(stratus::testing::context(), deck);
  EXPECT_NEAR(solver.dt(), 1.0 / (n * n), 1e-15);
  const int steps = n * n / 4;
  for (int s = 0; s < steps; ++s) solver.step();
  const auto d = solver.diagnostics();
  EXPECT_NEAR(d.time, 0.25, 1e-12);
  return d.l2_error / d.l2_exact;
}

}  // namespace

// FTCS with dt ~ dx^2 is second order in dx: the error must drop by 4 per doubling.
TEST(Heat, SecondOrderConvergencePeriodic) {
  const double e8 = error_at(8, "periodic", {1, 1, 1});
  const double e16 = error_at(16, "periodic", {1, 1, 1});
  const double e32 = error_at(32, "periodic", {1, 1, 1});
  EXPECT_LT(e32, 0.01);  // 8 cells per wavelength at N = 32
  const double p1 = std::log2(e8 / e16), p2 = std::log2(e16 / e32);
  EXPECT_NEAR(p1, 2.0, 0.1) << e8 << " " << e16;
  EXPECT_NEAR(p2, 2.0, 0.05) << e16 << " " << e32;
  std::printf(
      "heat periodic: relative l2 error %.4e %.4e %.4e (8, 16, 32 cells), orders %.3f %.3f\n", e8,
      e16, e32, p1, p2);
}

TEST(Heat, SecondOrderConvergenceDirichletWalls) {
  const double e8 = error_at(8, "dirichlet", {1, 2, 1});
  const double e16 = error_at(16, "dirichlet", {1, 2, 1});
  const double e32 = error_at(32, "dirichlet", {1, 2, 1});
  EXPECT_NEAR(std::log2(e8 / e16), 2.0, 0.15) << e8 << " " << e16;
  EXPECT_NEAR(std::log2(e16 / e32), 2.0, 0.1) << e16 << " " << e32;
  std::printf("heat dirichlet: relative l2 error %.4e %.4e %.4e, orders %.3f %.3f\n", e8, e16, e32,
              std::log2(e8 / e16), std::log2(e16 / e32));
}

TEST(Heat, SecondOrderConvergenceNeumannWalls) {
  const double e16 = error_at(16, "neumann", {1, 0, 2});
  const double e32 = error_at(32, "neumann", {1, 0, 2});
  EXPECT_NEAR(std::log2(e16 / e32), 2.0, 0.1) << e16 << " " << e32;
  std::printf("heat neumann: relative l2 error %.4e %.4e, order %.3f\n", e16, e32,
              std::log2(e16 / e32));
}

// Periodic and zero-flux boundaries conserve total heat to round-off.
TEST(Heat, ConservesHeatWithoutSinks) {
  for (const std::string boundary : {"periodic", "neumann"}) {
    const io::Deck deck = heat_deck(
        "[heat]\ncells = [12, 10, 14]\nbox = [1.2, 1.0, 1.4]\ndiffusivity = 0.3\nboundary = \"" +
        boundary + "\"\n[heat.initial]\nmodes = [1, 2, 1]\noffset = 1.5\n");
    HeatSolver solver(stratus::testing::context(), deck);
    const double q0 = solver.diagnostics().total_heat;
    EXPECT_NEAR(q0, 1.5 * 1.2 * 1.0 * 1.4, 1e-12);
    for (int s = 0; s < 200; ++s) solver.step();
    const auto d = solver.diagnostics();
    EXPECT_NEAR(d.total_heat, q0, 1e-12 * q0) << boundary;
    EXPECT_LT(d.max_abs, 2.5) << boundary;  // the mode decayed towards the offset
  }
}

// Dirichlet walls drain heat: the decay follows exp(-D |kappa|^2 t).
TEST(Heat, DirichletModeDecaysAtTheExactRate) {
  const io::Deck deck = heat_deck(
      "[heat]\ncells = [32, 32, 32]\ndiffusivity = 0.1\nboundary = \"dirichlet\"\n"
      "[heat.initial]\nmodes = [1, 1, 1]\n");
  HeatSolver solver(stratus::testing::context(), deck);
  const double a0 = solver.diagnostics().max_abs;
  for (int s = 0; s < 100; ++s) solver.step();
  const auto d = solver.diagnostics();
  const double pi = 3.14159265358979323846;
  const double expected = std::exp(-0.1 * 3 * pi * pi * d.time);
  EXPECT_NEAR(d.max_abs / a0, expected, 2e-3 * expected);
  std::printf(
      "heat dirichlet decay: max|u|/max|u0| = %.6f at t = %.5f, exact %.6f (%.2e relative)\n",
      d.max_abs / a0, d.time, expected, std::abs(d.max_abs / a0 - expected) / expected);
}

TEST(Heat, GridThatCannotBeSplitIsADeckError) {
  const int size = stratus::testing::context().size();
  const io::Deck deck = heat_deck(
      fmt::format("[heat]\ncells = [8, 8, 8]\ndiffusivity = 1.0\nranks = [{}, 1, 1]\n", size + 1));
  try {
    HeatSolver solver(stratus::testing::context(), deck);
    ADD_FAILURE() << "a process grid of " << size + 1 << " ranks was accepted on " << size;
  } catch (const io::DeckError& e) {
    EXPECT_NE(std::string(e.what()).find("test.toml:7:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("heat.ranks"), std::string::npos) << e.what();
  }
}

TEST(Heat, UnresolvedModeAndDirichletOffsetAreDeckErrors) {
  EXPECT_THROW(HeatSolver(stratus::testing::context(),
                          heat_deck("[heat]\ncells = [8, 8, 8]\ndiffusivity = 1.0\n"
                                    "[heat.initial]\nmodes = [5, 1, 1]\n")),
               io::DeckError);
  EXPECT_THROW(
      HeatSolver(
          stratus::testing::context(),
          heat_deck("[heat]\ncells = [8, 8, 8]\ndiffusivity = 1.0\nboundary = \"dirichlet\"\n"
                    "[heat.initial]\noffset = 1.0\n")),
      io::DeckError);
}
