// Spectral Navier-Stokes: exact decay of the Taylor-Green vortex (2D) and the ABC flow (3D),
// divergence at round-off in a random field, temporal order of RK3 and RK4 from a dt sweep, and
// the same run on 1, 2 and 4 ranks with slab and pencil transforms agreeing to round-off with a
// serial run (every test runs at the rank count of its ctest: 1, 2, 4).
#include "stratus/core/error.hpp"
#include "stratus/solvers/spectral.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

using namespace stratus;

namespace {

io::Deck spectral_deck(const std::string& body, const std::vector<std::string>& overrides = {}) {
  SolverRegistry registry;
  register_builtin_solvers(registry);
  std::vector<io::Override> o;
  for (const auto& s : overrides) o.push_back(io::Override::from_set(s));
  return io::load_deck("test.toml",
                       "[run]\nsolver = \"spectral\"\nsteps = 0\n[spectral.fft]\nplanner = "
                       "\"estimate\"\n" +
                           body,
                       o, common_schema(registry), [&](const std::string& s, Schema& schema) {
                         registry.find(s)->declare_sections(schema);
                       });
}

double max_relative(double a, double b) { return std::abs(a - b) / std::abs(b); }

/// The velocity on this rank's block, on the host.
std::vector<double> velocity(SpectralSolver& s) {
  std::vector<double> out;
  for (int c = 0; c < 3; ++c) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.velocity(c));
    out.insert(out.end(), h.data(), h.data() + h.size());
  }
  return out;
}

double global_max(MPI_Comm comm, double v) {
  double g = 0;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, MPI_MAX, comm);
  return g;
}

const char* kRandom3d =
    "[spectral]\npoints = [16, 12, 18]\nbox = [6.283185307179586, 5.0, 7.0]\nviscosity = 0.02\n"
    "[spectral.initial]\ntype = \"random\"\nenergy = 0.5\npeak = 2.5\nseed = 7\n";

}  // namespace

// 2D Taylor-Green: the nonlinear term is a gradient, so with the integrating factor the energy
// is (U^2/4) exp(-4 nu k^2 t) to round-off at any dt.
TEST(Spectral, TaylorGreen2DDecaysExactly) {
  const io::Deck deck = spectral_deck(
      "[spectral]\npoints = [32, 32]\nviscosity = 0.05\n[spectral.time]\ndt = 0.02\n"
      "[spectral.initial]\ntype = \"taylor_green\"\nmodes = [2, 2, 1]\n");
  SpectralSolver s(stratus::testing::context(), deck);
  double worst = 0;
  for (int n = 0; n <= 200; ++n) {
    if (n % 20 == 0) {
      const auto d = s.diagnostics();
      const double exact = 0.25 * std::exp(-4.0 * 0.05 * 4.0 * d.time);
      worst = std::max(worst, max_relative(d.energy, exact));
      EXPECT_LT(d.max_div, 1e-13);
    }
    s.step();
  }
  EXPECT_LT(worst, 1e-10);
  if (stratus::testing::context().rank() == 0)
    std::printf("TGV 2D: max relative energy error over 200 steps %.2e\n", worst);
}

// 3D ABC flow (A = B = C = 1, k = 1): a Beltrami field (u x omega = 0), energy 3/2 exp(-2 nu t).
TEST(Spectral, AbcFlowDecaysExactly) {
  for (const char* form : {"rotational", "skew"}) {
    const io::Deck deck = spectral_deck(
        fmt::format("[spectral]\npoints = [16, 16, 16]\nviscosity = 0.1\nnonlinear = \"{}\"\n"
                    "[spectral.time]\ndt = 0.05\nscheme = \"rk3\"\n[spectral.initial]\n"
                    "type = \"abc\"\n",
                    form));
    SpectralSolver s(stratus::testing::context(), deck);
    EXPECT_NEAR(s.diagnostics().energy, 1.5, 1e-14);
    double worst = 0;
    for (int n = 1; n <= 100; ++n) {
      s.step();
      if (n % 10 == 0) {
        const auto d = s.diagnostics();
        worst = std::max(worst, max_relative(d.energy, 1.5 * std::exp(-2.0 * 0.1 * d.time)));
      }
    }
    EXPECT_LT(worst, 1e-10) << form;
    if (stratus::testing::context().rank() == 0)
      std::printf("ABC (%s): max relative energy error over 100 steps %.2e\n", form, worst);
  }
}

// A random solenoidal field stays solenoidal: max |div u| <= 1e-12 over 100 steps, in both
// forms of the nonlinear term, with CFL-adaptive steps and band forcing.
TEST(Spectral, DivergenceStaysAtRoundOff) {
  for (const char* form : {"rotational", "skew"}) {
    const io::Deck deck = spectral_deck(
        fmt::format("[spectral]\npoints = [24, 24, 24]\nviscosity = 0.01\nnonlinear = \"{}\"\n"
                    "[spectral.time]\ncfl = 0.8\n[spectral.forcing]\ntype = \"band\"\n"
                    "injection = 0.1\n[spectral.initial]\ntype = \"random\"\nenergy = 0.5\n"
                    "peak = 3.0\n",
                    form));
    SpectralSolver s(stratus::testing::context(), deck);
    EXPECT_NEAR(s.diagnostics().energy, 0.5, 1e-13);
    double worst = 0, e0 = s.diagnostics().energy;
    for (int n = 1; n <= 100; ++n) {
      s.step();
      if (n % 10 == 0) worst = std::max(worst, s.diagnostics().max_div);
    }
    const auto d = s.diagnostics();
    EXPECT_LT(worst, 1e-12) << form;
    EXPECT_GT(d.cfl, 0.79);
    EXPECT_LT(d.cfl, 0.81);
    EXPECT_GT(d.energy, 0.2 * e0);  // the forcing keeps the field alive
    if (stratus::testing::context().rank() == 0)
      std::printf("random field (%s): max |div u| over 100 steps %.2e, E %.4f -> %.4f\n", form,
                  worst, e0, d.energy);
  }
}

// Temporal order from a dt sweep against a run with dt/8 of the finest step: errors fall as dt^p.
TEST(Spectral, TemporalOrder) {
  // The order does not depend on the decomposition (DecompositionInvariance covers that), and
  // the sweep is the longest test here: one rank only.
  if (stratus::testing::context().size() > 1) GTEST_SKIP() << "runs on 1 rank";
  for (const auto& [scheme, order] : {std::pair<std::string, double>{"rk3", 3.0}, {"rk4", 4.0}}) {
    const double t_end = 1.0;
    auto run = [&](double dt) {
      const io::Deck deck = spectral_deck(fmt::format(
          "[spectral]\npoints = [32, 32]\nviscosity = 0.005\n[spectral.time]\ndt = {}\n"
          "scheme = \"{}\"\n[spectral.initial]\ntype = \"random\"\nenergy = 0.5\npeak = 3.0\n",
          dt, scheme));
      SpectralSolver s(stratus::testing::context(), deck);
      const int steps = static_cast<int>(std::lround(t_end / dt));
      for (int n = 0; n < steps; ++n) s.step();
      return velocity(s);
    };
    const std::vector<double> dts{0.04, 0.02, 0.01};
    const auto ref = run(dts.back() / 8);
    std::vector<double> err;
    for (double dt : dts) {
      const auto u = run(dt);
      double e = 0;
      for (std::size_t i = 0; i < u.size(); ++i) e = std::max(e, std::abs(u[i] - ref[i]));
      err.push_back(global_max(stratus::testing::context().comm(), e));
    }
    const double p1 = std::log2(err[0] / err[1]), p2 = std::log2(err[1] / err[2]);
    if (stratus::testing::context().rank() == 0)
      std::printf("%s: errors %.3e %.3e %.3e, observed order %.3f %.3f\n", scheme.c_str(), err[0],
                  err[1], err[2], p1, p2);
    EXPECT_NEAR(p2, order, 0.2) << scheme;
    EXPECT_NEAR(p1, order, 0.35) << scheme;
  }
}

// The same run on this rank count, slab and pencil, against a serial run on every rank
// (MPI_COMM_SELF): velocities agree to round-off; the random initial field is the same.
TEST(Spectral, DecompositionInvariance) {
  auto& ctx = stratus::testing::context();
  Context serial_ctx(ctx, MPI_COMM_SELF);
  for (const char* form : {"rotational", "skew"}) {
    const std::vector<std::string> set{std::string("spectral.nonlinear=\"") + form + "\"",
                                       "spectral.time.dt=0.05"};
    const io::Deck serial_deck = spectral_deck(kRandom3d, set);
    SpectralSolver serial(serial_ctx, serial_deck);
    for (int n = 0; n < 20; ++n) serial.step();
    const auto ref = velocity(serial);  // the whole grid, (x, y, z) per component
    const auto n = serial.transforms().n();
    for (const char* d : {"slab", "pencil"}) {
      if (std::string(d) == "pencil" && ctx.size() == 1) continue;
      auto over = set;
      over.push_back(std::string("spectral.fft.decomposition=\"") + d + "\"");
      const io::Deck deck = spectral_deck(kRandom3d, over);
      SpectralSolver s(ctx, deck);
      if (ctx.size() > 1) {
        EXPECT_EQ(fft::to_string(s.transforms().decomposition()), d);
      }
      for (int k = 0; k < 20; ++k) s.step();
      const auto u = velocity(s);
      const auto& b = s.transforms().real_block();
      double err = 0, scale = 0;
      std::size_t idx = 0;
      for (int c = 0; c < 3; ++c)
        for (std::int64_t i = 0; i < b.extent[0]; ++i)
          for (std::int64_t j = 0; j < b.extent[1]; ++j)
            for (std::int64_t k = 0; k < b.extent[2]; ++k) {
              const double r = ref[static_cast<std::size_t>(
                  ((c * n[0] + b.begin[0] + i) * n[1] + b.begin[1] + j) * n[2] + k)];
              err = std::max(err, std::abs(u[idx++] - r));
              scale = std::max(scale, std::abs(r));
            }
      err = global_max(ctx.comm(), err);
      scale = global_max(ctx.comm(), scale);
      EXPECT_LT(err / scale, 1e-12) << form << " " << d << " on " << ctx.size() << " ranks";
      const double e_serial = serial.diagnostics().energy;
      EXPECT_LT(max_relative(s.diagnostics().energy, e_serial), 1e-13);
      if (stratus::testing::context().rank() == 0)
        std::printf("%s, %s on %d ranks (%s): max |u - u_serial| / max |u| = %.2e after 20 steps\n",
                    form, d, ctx.size(), s.transforms().describe().c_str(), err / scale);
    }
  }
}

// Kolmogorov flow: at low Reynolds number the laminar profile u = F/(nu k_f^2) sin(k_f y) is
// the steady state; the energy tends to 1/4 (F / (nu k_f^2))^2.
TEST(Spectral, KolmogorovLaminarState) {
  const io::Deck deck = spectral_deck(
      "[spectral]\npoints = [16, 16]\nviscosity = 0.5\n[spectral.time]\ndt = 0.05\n"
      "[spectral.forcing]\ntype = \"kolmogorov\"\namplitude = 0.5\nmode = 1\n"
      "[spectral.initial]\ntype = \"taylor_green\"\namplitude = 0.01\n");
  SpectralSolver s(stratus::testing::context(), deck);
  for (int n = 0; n < 800; ++n) s.step();  // t = 40, 20 viscous times 1 / (nu k_f^2)
  const double u0 = 0.5 / 0.5;
  EXPECT_NEAR(s.diagnostics().energy, 0.25 * u0 * u0, 1e-7);
}

TEST(Spectral, BadSettingsAreRejected) {
  auto& ctx = stratus::testing::context();
  EXPECT_THROW(SpectralSolver(ctx, spectral_deck("[spectral]\npoints = [8]\nviscosity = 1.0\n")),
               io::DeckError);
  EXPECT_THROW(SpectralSolver(ctx, spectral_deck("[spectral]\npoints = [8, 8]\nviscosity = 1.0\n"
                                                 "box = [1.0, 1.0, 1.0]\n")),
               io::DeckError);
  EXPECT_THROW(SpectralSolver(ctx, spectral_deck("[spectral]\npoints = [8, 8]\nviscosity = 1.0\n"
                                                 "[spectral.initial]\ntype = \"abc\"\n")),
               io::DeckError);
  EXPECT_THROW(SpectralSolver(ctx, spectral_deck("[spectral]\npoints = [8, 8]\nviscosity = 1.0\n"
                                                 "[spectral.forcing]\ntype = \"kolmogorov\"\n"
                                                 "mode = 3\n")),
               io::DeckError);
  EXPECT_THROW(SpectralSolver(ctx, spectral_deck("[spectral]\npoints = [8, 8]\nviscosity = 1.0\n"
                                                 "[spectral.initial]\ntype = \"file\"\n"
                                                 "file = \"/nonexistent.h5\"\n")),
               io::DeckError);
}
