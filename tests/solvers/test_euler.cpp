// Euler / Navier-Stokes solver physics: Sod's shock tube against the exact Riemann solution
// (L1 convergence and the star state), each Riemann solver against the exact solver, the
// isentropic vortex's convergence order (PLM and WENO5), conservation to round-off in a periodic
// box. Runs at 1, 2 and 4 ranks: every number is a reduction over the whole grid.
#include "exact_riemann.hpp"
#include "stratus/solvers/euler.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace stratus;
namespace ke = stratus::kernels::euler;
using stratus::testing::ExactRiemann;
using stratus::testing::Primitive1D;

namespace {

io::Deck euler_deck(const std::string& body, const std::vector<std::string>& overrides = {}) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  std::vector<io::Override> ov;
  for (const auto& o : overrides) ov.push_back(io::Override::from_set(o));
  return io::load_deck("test.toml", "[run]\nsolver = \"euler\"\nsteps = 1000000\n" + body, ov,
                       common_schema(registry), [&](const std::string& s, Schema& schema) {
                         registry.find(s)->declare_sections(schema);
                       });
}

void run_to_end(EulerSolver& s) {
  while (!s.reached_end()) s.step();
}

struct Profile {
  double l1_rho = 0;     // mean |rho - exact cell average|
  double p_plateau = 0;  // mean pressure over cells in [a, b]
  double u_plateau = 0;  // mean velocity over cells in [a, b]
};

/// L1 density error against the exact solution (x0, time t) and plateau averages over [a, b].
Profile compare_1d(const EulerSolver& s, const ExactRiemann& exact, double x0, double t, double a,
                   double b, double gamma) {
  const auto& g = s.grid();
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.state());
  double sums[4] = {0, 0, 0, 0};
  for (std::int64_t i = g.g[0]; i < g.g[0] + g.n[0]; ++i) {
    const double xc = g.centre(0, static_cast<int>(i));
    const double rho = h(0, i, 0, 0), u = h(1, i, 0, 0) / rho;
    const double p = (gamma - 1) * (h(4, i, 0, 0) - 0.5 * rho * u * u);
    sums[0] += std::abs(rho - exact.average(0, xc - g.dx[0] / 2, xc + g.dx[0] / 2, t, x0));
    if (xc > a && xc < b) {
      sums[1] += p;
      sums[2] += u;
      sums[3] += 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, stratus::testing::context().comm());
  const double n = static_cast<double>(g.n[0]);
  double total_cells = n;
  MPI_Allreduce(MPI_IN_PLACE, &total_cells, 1, MPI_DOUBLE, MPI_SUM,
                stratus::testing::context().comm());
  return {sums[0] / total_cells, sums[1] / sums[3], sums[2] / sums[3]};
}

std::string riemann_deck(int n, const Primitive1D& l, const Primitive1D& r, double t_end,
                         double x0 = 0.5) {
  return fmt::format(
      "[euler]\ncells = [{}, 1, 1]\nt_end = {}\nwrite_fields = false\n"
      "[euler.boundary]\nx_lo = \"outflow\"\nx_hi = \"outflow\"\n"
      "[euler.initial]\nproblem = \"riemann\"\nx0 = {}\nleft = [{}, {}, 0, 0, {}]\n"
      "right = [{}, {}, 0, 0, {}]\n",
      n, t_end, x0, l.rho, l.u, l.p, r.rho, r.u, r.p);
}

const Primitive1D kSodL{1.0, 0.0, 1.0}, kSodR{0.125, 0.0, 0.1};

}  // namespace

// Sod at t = 0.2: the L1 density error falls about linearly with dx (shocks and contacts
// limit the order to 1) and the plateau between contact and shock holds the exact star state.
TEST(Euler, SodConvergesToExactSolution) {
  const ExactRiemann exact(kSodL, kSodR, 1.4);
  EXPECT_NEAR(exact.p_star(), 0.30313, 1e-5);
  EXPECT_NEAR(exact.u_star(), 0.92745, 1e-5);
  std::vector<double> errors;
  Profile fine;
  for (int n : {100, 200, 400}) {
    const auto deck = euler_deck(riemann_deck(n, kSodL, kSodR, 0.2));
    EulerSolver s(stratus::testing::context(), deck);
    run_to_end(s);
    EXPECT_DOUBLE_EQ(s.current_time(), 0.2);
    // Plateau between the tail of the rarefaction (x = 0.486) and the shock (x = 0.850),
    // away from the contact (x = 0.685).
    fine = compare_1d(s, exact, 0.5, 0.2, 0.72, 0.82, 1.4);
    errors.push_back(fine.l1_rho);
  }
  const double p1 = std::log2(errors[0] / errors[1]), p2 = std::log2(errors[1] / errors[2]);
  std::printf("Sod L1(rho): %.4e %.4e %.4e, orders %.3f %.3f; star p %.6f u %.6f\n", errors[0],
              errors[1], errors[2], p1, p2, fine.p_plateau, fine.u_plateau);
  EXPECT_LT(errors[2], 4e-3);
  EXPECT_GT(p1, 0.6);
  EXPECT_GT(p2, 0.6);
  EXPECT_LT(p2, 1.3);
  EXPECT_NEAR(fine.p_plateau, exact.p_star(), 2e-4 * exact.p_star());
  EXPECT_NEAR(fine.u_plateau, exact.u_star(), 5e-4 * exact.u_star());
}
