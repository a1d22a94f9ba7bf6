// PPPM (solvers/md/pppm.hpp) against a direct Ewald sum (ewald_reference.hpp): the measured RMS
// force error of PPPM plus the real-space erfc sum against the requested and the estimated
// accuracy, the energy, the virial tensor's diagonal, and the same forces whatever the number
// of ranks holding the atoms.
#include "ewald_reference.hpp"
#include "stratus/kernels/md/pppm.hpp"
#include "stratus/solvers/md/pppm.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace stratus::md_pppm_test {

using stratus::md_test::ewald_coulomb;

constexpr double kQqrd2e = 332.06371;  // LAMMPS's units real
// SameAtAnyRankCount: the 1-rank run's sums.
constexpr double kNorm = 16808.055165709309, kFirst = 84.735585096504394,
                 kEnergy = -4457.1845778671341;
// The scalar k-space virial (its trace) that Stratus computed before the tensor (commit c490146)
// for the grid of SameAtAnyRankCount and for the grids chosen at accuracies 1e-4 and 1e-5.
constexpr double kOldVirialFixedGrid = -3858.8414052702974;
constexpr double kOldVirial[2] = {-3619.9054422980876, -3779.3236188825567};

struct System {
  std::vector<std::array<double, 3>> x;
  std::vector<double> q;
  std::array<double, 3> box{};
};

/// 300 charges (neutral, +-1 and +-0.5), no two closer than 1.8, in a 20 x 22 x 24 box.
System random_system() {
  System s;
  s.box = {20.0, 22.0, 24.0};
  std::mt19937 gen(2024);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  while (s.x.size() < 300) {
    const std::array<double, 3> p{u(gen) * s.box[0], u(gen) * s.box[1], u(gen) * s.box[2]};
    bool clash = false;
    for (const auto& o : s.x) {
      double d2 = 0;
      for (int d = 0; d < 3; ++d) {
        double dx = p[d] - o[d];
        dx -= s.box[d] * std::round(dx / s.box[d]);
        d2 += dx * dx;
      }
      clash = clash || d2 < 1.8 * 1.8;
    }
    if (clash) continue;
    s.x.push_back(p);
    const std::size_t k = s.x.size() - 1;
    s.q.push_back((k % 2 == 0 ? 1.0 : -1.0) * (k % 4 < 2 ? 1.0 : 0.5));
  }
  return s;
}

/// Real-space part of the Ewald sum with splitting g and cutoff rc (all images): forces on every
/// atom and the energy; `virial` (if given) gets the diagonal of its virial tensor.
double real_space(const System& s, double g, double rc, std::vector<std::array<double, 3>>& f,
                  std::array<double, 3>* virial = nullptr) {
  const std::size_t n = s.x.size();
  f.assign(n, {0, 0, 0});
  double energy = 0;
  std::array<double, 3> w{0, 0, 0};
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      double d0[3];
      for (int d = 0; d < 3; ++d) {
        d0[d] = s.x[i][d] - s.x[j][d];
        d0[d] -= s.box[d] * std::round(d0[d] / s.box[d]);
      }
      for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
          for (int c = -1; c <= 1; ++c) {
            const double dx = d0[0] + a * s.box[0], dy = d0[1] + b * s.box[1],
                         dz = d0[2] + c * s.box[2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= rc * rc) continue;
            const double r = std::sqrt(r2);
            const double qq = kQqrd2e * s.q[i] * s.q[j];
            const double e = qq * std::erfc(g * r) / r;
            const double fr = (e + qq * 2.0 / std::sqrt(M_PI) * g * std::exp(-g * g * r2)) / r2;
            energy += e;
            f[i][0] += fr * dx;
            f[i][1] += fr * dy;
            f[i][2] += fr * dz;
            f[j][0] -= fr * dx;
            f[j][1] -= fr * dy;
            f[j][2] -= fr * dz;
            w[0] += fr * dx * dx;
            w[1] += fr * dy * dy;
            w[2] += fr * dz * dz;
          }
    }
  if (virial) *virial = w;
  return energy;
}

/// PPPM with `accuracy` on the system, this rank holding atoms k with k % size == rank: the
/// forces of every atom (gathered) and the energy.
struct PppmRun {
  std::vector<std::array<double, 3>> f;
  double energy = 0, g = 0, estimated = 0;
  std::array<double, 3> virial{};  ///< the k-space virial tensor's diagonal
};

PppmRun run_pppm(const System& s, double accuracy, std::array<int, 3> mesh = {0, 0, 0}) {
  Context& ctx = stratus::testing::context();
  std::vector<int> mine;
  for (std::size_t k = 0; k < s.x.size(); ++k)
    if (static_cast<int>(k) % ctx.size() == ctx.rank()) mine.push_back(static_cast<int>(k));
  const int n = static_cast<int>(mine.size());
  kernels::md::Vectors x("x", n), f("f", n);
  kernels::md::Charges q("q", n);
  auto hx = Kokkos::create_mirror_view(x);
  auto hq = Kokkos::create_mirror_view(q);
  double qsq = 0;
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) hx(i, d) = s.x[static_cast<std::size_t>(mine[i])][d];
    hq(i) = s.q[static_cast<std::size_t>(mine[i])];
  }
  for (const double v : s.q) qsq += v * v;
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(q, hq);
  Box box;
  for (int d = 0; d < 3; ++d) box.hi[d] = s.box[d];
  md::Pppm pppm(ctx, md::PppmSettings{accuracy, 5, mesh, 0.0}, box, 10.0, kQqrd2e, kQqrd2e,
                md::ChargeSums{0.0, qsq, static_cast<std::int64_t>(s.x.size())});
  const auto r = pppm.compute(x, q, n, f, true);
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  std::vector<double> all(3 * s.x.size(), 0.0);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) all[3 * static_cast<std::size_t>(mine[i]) + d] = hf(i, d);
  MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_DOUBLE, MPI_SUM,
                ctx.comm());
  PppmRun out;
  out.f.resize(s.x.size());
  for (std::size_t k = 0; k < s.x.size(); ++k)
    for (int d = 0; d < 3; ++d) out.f[k][d] = all[3 * k + d];
  out.energy = r.energy;
  out.virial = r.virial;
  out.g = pppm.g_ewald();
  out.estimated = pppm.estimated_accuracy();
  return out;
}

// The measured relative force error (RMS |F_pppm + F_real - F_ewald| over the force between two
// unit charges at 1 Angstrom) meets the request and is within a factor 3 of the estimate, at
// 1e-4 and 1e-5; the energy agrees to the same order.
TEST(Pppm, ForcesAgainstEwaldAtTheRequestedAccuracy) {
  const System s = random_system();
  const auto ref = ewald_coulomb(s.x, s.q, s.box, kQqrd2e, 1e-13);
  for (const double accuracy : {1e-4, 1e-5}) {
    SCOPED_TRACE(accuracy);
    const PppmRun k = run_pppm(s, accuracy);
    std::vector<std::array<double, 3>> fr;
    const double e_real = real_space(s, k.g, 10.0, fr);
    double err2 = 0;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      for (int d = 0; d < 3; ++d) {
        const double e = k.f[i][d] + fr[i][d] - ref.force[i][d];
        err2 += e * e;
      }
    const double measured = std::sqrt(err2 / static_cast<double>(s.x.size())) / kQqrd2e;
    std::printf(
        "accuracy %.0e: g_ewald %.6f, estimated %.3e, measured %.3e; energy %.10g vs "
        "Ewald %.10g\n",
        accuracy, k.g, k.estimated, measured, k.energy + e_real, ref.energy);
    EXPECT_LT(measured, accuracy);
    EXPECT_LT(measured, 3.0 * k.estimated);
    EXPECT_GT(measured, k.estimated / 3.0);
    EXPECT_NEAR(k.energy + e_real, ref.energy, 10 * accuracy * std::abs(ref.energy));
  }
}

// The diagonal of the k-space virial tensor plus the real-space pairs' against the direct Ewald
// sum's tensor (itself checked against its strain derivative in test_ewald_reference), to 20
// times the requested accuracy relative to the largest component. Measured: 9.8e-4 at 1e-4
// (grid 12^3; the error is largest along z, the coarsest spacing) and 5.4e-5 at 1e-5 (grid 18 x
// 20 x 20). The virial is less accurate than the energy (2.7e-5 and 2.7e-6 off here), as the
// scalar virial was before (its trace is off by 1.0e-3 and 8e-5): its formula differentiates
// the Ewald Green function exp(-k^2 / 4g^2) / k^2, not the optimal influence function the
// energy and forces use (as LAMMPS's PPPM does too). The trace is the scalar virial Stratus
// computed before the tensor, to round-off.
TEST(Pppm, VirialTensorAgainstEwald) {
  const System s = random_system();
  const auto ref = ewald_coulomb(s.x, s.q, s.box, kQqrd2e, 1e-13);
  for (int k = 0; k < 2; ++k) {
    const double accuracy = k == 0 ? 1e-4 : 1e-5;
    SCOPED_TRACE(accuracy);
    const PppmRun run = run_pppm(s, accuracy);
    std::vector<std::array<double, 3>> fr;
    std::array<double, 3> w_real{};
    real_space(s, run.g, 10.0, fr, &w_real);
    const double largest = std::max({std::abs(ref.virial_tensor[0]), std::abs(ref.virial_tensor[1]),
                                     std::abs(ref.virial_tensor[2])});
    for (int a = 0; a < 3; ++a) {
      const double w = run.virial[a] + w_real[a];
      std::printf("accuracy %.0e, axis %d: PPPM + real %.10g, Ewald %.10g, relative %.2e\n",
                  accuracy, a, w, ref.virial_tensor[a],
                  std::abs(w - ref.virial_tensor[a]) / largest);
      EXPECT_NEAR(w, ref.virial_tensor[a], 20 * accuracy * largest) << "axis " << a;
    }
    const double trace = run.virial[0] + run.virial[1] + run.virial[2];
    EXPECT_NEAR(trace, kOldVirial[k], 1e-12 * std::abs(kOldVirial[k]));
  }
}

// A fixed grid gives the same forces and energy at any rank count (atoms dealt round-robin):
// every rank sums the same grid. The sums below were printed by this test's 1-rank run; 2 and 4
// ranks must reproduce them to round-off (1e-10 relative).
TEST(Pppm, SameAtAnyRankCount) {
  const System s = random_system();
  const PppmRun run = run_pppm(s, 1e-4, {24, 25, 27});
  double norm = 0, first = 0;
  for (const auto& f : run.f) norm += std::abs(f[0]) + std::abs(f[1]) + std::abs(f[2]);
  first = run.f[0][0] + 2 * run.f[0][1] + 3 * run.f[0][2];
  std::printf("sum |F| %.17g, F_0 . (1, 2, 3) %.17g, energy %.17g\n", norm, first, run.energy);
  EXPECT_NEAR(norm, kNorm, 1e-10 * kNorm);
  EXPECT_NEAR(first, kFirst, 1e-10 * std::abs(kFirst));
  EXPECT_NEAR(run.energy, kEnergy, 1e-10 * std::abs(kEnergy));
  // The tensor's trace is the scalar virial of before, at any rank count.
  const double trace = run.virial[0] + run.virial[1] + run.virial[2];
  EXPECT_NEAR(trace, kOldVirialFixedGrid, 1e-10 * std::abs(kOldVirialFixedGrid));
}

}  // namespace stratus::md_pppm_test
