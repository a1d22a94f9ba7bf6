// Pair forces: the generic kernel with LJCut against analytic single-pair values, the finite-
// difference gradient of the total energy, Newton's third law, the shift, the virial, the tail
// correction, and the LAMMPS bench in.lj lattice energy and pressure.
#include "stratus/kernels/md/lj_cut.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/lj_tables.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace stratus::md_pair_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;
using stratus::md::lj_tail_correction;
using stratus::md::make_lj_cut;
using stratus::md::NeighborBuilder;

// Two types: (eps, sigma, rc) = (1, 1, 2.5) for 0-0, (0.7, 1.2, 3.0) for 0-1, (1.3, 0.9, 2.2)
// for 1-1.
const std::vector<Real> eps2{1.0, 0.7, 0.7, 1.3};
const std::vector<Real> sig2{1.0, 1.2, 1.2, 0.9};
const std::vector<Real> cut2{2.5, 3.0, 3.0, 2.2};

Real lj(Real eps, Real sig, Real r) {
  return 4 * eps * (std::pow(sig / r, 12) - std::pow(sig / r, 6));
}
Real lj_force(Real eps, Real sig, Real r) {  // -de/dr
  return 24 * eps * (2 * std::pow(sig / r, 12) - std::pow(sig / r, 6)) / r;
}

// Builds a list (cutoff rc + skin) and evaluates the forces of all local atoms.
struct System {
  HostAtoms atoms;
  Vectors x, f;
  Types type;
  Ids id;
  NeighborBuilder builder;
  NeighborList list;

  System(HostAtoms a, Real list_cutoff) : atoms(std::move(a)) {
    x = to_device(atoms.x);
    f = Vectors("f", atoms.nall());
    type = to_device(atoms.type);
    id = to_device(atoms.id);
    builder.build(x, id, atoms.nlocal, atoms.nall(), list_cutoff, list);
  }
  PairResult compute(const LJCut& pair) {
    return compute_pair_forces(pair, x, type, atoms.nlocal, list, f);
  }
  void set_x(const std::vector<Vec3>& h) { Kokkos::deep_copy(x, to_device(h)); }
};

HostAtoms two_atoms(Real r, int t0, int t1) {
  HostAtoms a;
  a.x = {{0.1, 0.2, 0.3}, {0.1 + r * 0.6, 0.2 + r * 0.8, 0.3}};
  a.type = {t0, t1};
  a.id = {4, 9};
  a.nlocal = 2;
  return a;
}

TEST(MdPair, SinglePairEnergyForceVirial) {
  const auto pair = make_lj_cut(2, eps2, sig2, cut2, false);
  EXPECT_EQ(pair.max_cutoff, 3.0);
  for (Real r : {0.95, 1.12, 1.7, 2.9}) {
    System s(two_atoms(r, 0, 1), 3.5);
    const PairResult res = s.compute(pair);
    EXPECT_NEAR(res.energy, lj(0.7, 1.2, r), 1e-12 * (1 + std::fabs(lj(0.7, 1.2, r))));
    const Real fr = lj_force(0.7, 1.2, r);  // repulsive > 0, along x_0 - x_1
    const Real dir[3] = {-0.6, -0.8, 0};
    // W_aa = d_a f_a = r fr dir_a^2 (d = x_0 - x_1 = r dir): 0.36, 0.64 and 0 of r . f.
    for (int d = 0; d < 3; ++d)
      EXPECT_NEAR(res.virial[d], r * fr * dir[d] * dir[d], 1e-12 * (1 + std::fabs(r * fr)));
    const auto f = to_host(s.f, 2);
    for (int d = 0; d < 3; ++d) {
      EXPECT_NEAR(f[0][d], fr * dir[d], 1e-12 * (1 + std::fabs(fr)));
      EXPECT_NEAR(f[1][d], -fr * dir[d], 1e-12 * (1 + std::fabs(fr)));
    }
  }
  System far(two_atoms(3.0, 0, 1), 3.5);  // at the cutoff: nothing
  const PairResult res = far.compute(pair);
  EXPECT_EQ(res.energy, 0);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(res.virial[d], 0);
}

TEST(MdPair, ShiftMakesEnergyContinuousAtCutoff) {
  const auto plain = make_lj_cut(2, eps2, sig2, cut2, false);
  const auto shifted = make_lj_cut(2, eps2, sig2, cut2, true);
  // Just inside rc: the shifted energy is 0 up to |e'(rc)| * (rc - r) ~ 0.07 * 2e-12.
  const Real rc = 2.2, below = rc * (1 - 1e-12);
  System s(two_atoms(below, 1, 1), 2.5);
  EXPECT_NEAR(s.compute(shifted).energy, 0, 1e-12);
  EXPECT_NEAR(s.compute(plain).energy, lj(1.3, 0.9, rc), 1e-12);
  ASSERT_GT(std::fabs(lj(1.3, 0.9, rc)), 0.01);  // the unshifted jump is large
  System in(two_atoms(1.5, 1, 1), 2.5);          // shift changes energy, not force
  const Real e_plain = in.compute(plain).energy;
  const auto f_plain = to_host(in.f, 2);
  EXPECT_NEAR(in.compute(shifted).energy, e_plain - lj(1.3, 0.9, rc), 1e-13);
  EXPECT_EQ(to_host(in.f, 2), f_plain);
}

// A cluster of atoms of two types, no two closer than 0.85.
HostAtoms cluster(int n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<Real> u(0, 4.5);
  HostAtoms a;
  while (a.nall() < n) {
    const Vec3 p{u(gen), u(gen), u(gen)};
    bool ok = true;
    for (const auto& q : a.x) {
      const Real r2 = (p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                      (p[2] - q[2]) * (p[2] - q[2]);
      ok = ok && r2 > 0.85 * 0.85;
    }
    if (!ok) continue;
    a.x.push_back(p);
    a.type.push_back(a.nall() % 2);
    a.id.push_back(100 - a.nall());
  }
  a.nlocal = n;
  return a;
}

TEST(MdPair, ForcesAreMinusEnergyGradientAndSumToZero) {
  const auto pair = make_lj_cut(2, eps2, sig2, cut2, true);
  auto a = cluster(40, 11);
  System s(a, 3.0 + 0.3);  // skin 0.3: the list stays valid for the small displacements below
  const PairResult base = s.compute(pair);
  const auto f = to_host(s.f, a.nlocal);
  // Host double sum of the energy: the kernel's 1/2-weighted full-list sum must agree.
  Real e_host = 0;
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = i + 1; j < a.nlocal; ++j) {
      const int t = a.type[i] * 2 + a.type[j];
      Real r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
      const Real r = std::sqrt(r2);
      if (r < cut2[t]) e_host += lj(eps2[t], sig2[t], r) - lj(eps2[t], sig2[t], cut2[t]);
    }
  EXPECT_NEAR(base.energy, e_host, 1e-12 * std::fabs(e_host));
  // Central differences, h = 1e-5: truncation ~ h^2 |e'''| ~ 1e-8, roundoff ~ 1e-16 |E| / h.
  const Real h = 1e-5;
  Vec3 total{0, 0, 0};
  Real fmax = 0;
  for (int i = 0; i < a.nlocal; ++i) {
    for (int d = 0; d < 3; ++d) {
      auto xp = a.x, xm = a.x;
      xp[i][d] += h;
      xm[i][d] -= h;
      s.set_x(xp);
      const Real ep = s.compute(pair).energy;
      s.set_x(xm);
      const Real em = s.compute(pair).energy;
      EXPECT_NEAR(f[i][d], -(ep - em) / (2 * h), 1e-6 * (1 + std::fabs(f[i][d])))
          << "atom " << i << " dim " << d;
      total[d] += f[i][d];
      fmax = std::max(fmax, std::fabs(f[i][d]));
    }
  }
  ASSERT_GT(fmax, 1.0);  // a meaningful test: the cluster is not force-free
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(total[d], 0, 1e-12 * fmax * a.nlocal);
}

// A second pair style through the same kernel: e = 1, F/r = 1 inside rc. The kernel counts
// pairs and sums r^2, whatever the style.
struct CountPairs {
  Real cutsq;
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int, int, Real& fpair, Real& e) const {
    fpair = rsq < cutsq ? 1 : 0;
    e = fpair;
  }
};

TEST(MdPair, GenericKernelWithAnotherStyle) {
  auto a = cluster(30, 12);
  System s(a, 2.0);
  const PairResult res =
      compute_pair_forces(CountPairs{1.5 * 1.5}, s.x, s.type, a.nlocal, s.list, s.f);
  Real pairs = 0, d2sum[3] = {0, 0, 0};  // fpair = 1: W_aa = sum d_a^2
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = i + 1; j < a.nlocal; ++j) {
      Real r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
      if (r2 >= 1.5 * 1.5) continue;
      pairs += 1;
      for (int d = 0; d < 3; ++d) d2sum[d] += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
    }
  ASSERT_GT(pairs, 0);
  EXPECT_EQ(res.energy, pairs);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(res.virial[d], d2sum[d], 1e-12 * d2sum[d]);
}

TEST(MdPair, TailCorrection) {
  // One type, eps = sig = 1, rc = 2.5, N = 32000 at rho = 0.8442 (in.lj). Hand values:
  // E/N = 8/3 pi rho [(1/3) rc^-9 - rc^-3], P = 16/3 pi rho^2 [(2/3) rc^-9 - rc^-3].
  const Real n = 32000, rho = 0.8442, v = n / rho;
  const auto t = lj_tail_correction(1, {1.0}, {1.0}, {2.5}, {32000}, v);
  EXPECT_NEAR(t.energy / n, -0.45201262476442305, 1e-13);  // by hand (python)
  EXPECT_NEAR(t.virial / (3 * v), -0.7621346985194893, 1e-13);
  // Two types: ordered pairs (0,1) and (1,0) both count.
  const std::vector<GlobalId> counts{300, 100};
  const Real vol = 500;
  const auto m = lj_tail_correction(2, eps2, sig2, cut2, counts, vol);
  Real e = 0, w = 0;
  const Real pi = std::acos(-1.0);
  for (int i = 0; i < 2; ++i)
    for (int j = i; j < 2; ++j) {  // unordered pairs, doubled off the diagonal
      const int k = 2 * i + j;
      const Real s = sig2[k] / cut2[k], mult = i == j ? 1 : 2;
      const Real pre = mult * counts[i] * counts[j] / vol * pi * eps2[k] * std::pow(sig2[k], 3);
      e += pre * 8 * (std::pow(s, 9) / 9 - std::pow(s, 3) / 3);
      w += pre * 16 * (2 * std::pow(s, 9) / 3 - std::pow(s, 3));
    }
  EXPECT_NEAR(m.energy, e, 1e-12 * std::fabs(e));
  EXPECT_NEAR(m.virial, w, 1e-12 * std::fabs(w));
}

TEST(MdPair, LammpsBenchLjLatticeEnergy) {
  // in.lj: fcc at reduced density 0.8442, rc = 2.5, no shift, no tail. LAMMPS prints at step 0
  // E_pair = -6.7733681 and Press = -5.0197073 (T = 1.44, N = 32000, dof 3N - 3).
  const Real rho = 0.8442, rc = 2.5, lat = std::cbrt(4 / rho);
  // Independent lattice sum: every site within rc of the origin site.
  const Real basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  Real e_sum = 0, w_sum = 0;
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      for (int k = -3; k <= 3; ++k)
        for (const auto& b : basis) {
          const Real r = lat * std::sqrt((i + b[0]) * (i + b[0]) + (j + b[1]) * (j + b[1]) +
                                         (k + b[2]) * (k + b[2]));
          if (r == 0 || r >= rc) continue;
          e_sum += 0.5 * lj(1, 1, r);
          w_sum += 0.5 * r * lj_force(1, 1, r);
        }
  EXPECT_NEAR(e_sum, -6.7733681, 1e-7);
  const Real n = 32000, t = 1.44;
  EXPECT_NEAR(rho * w_sum / 3 + rho * t * (n - 1) / n, -5.0197073, 1e-7);

  // The kernel on a periodic 5x5x5-cell block (500 atoms) with explicit ghost images.
  auto a = fcc_block(5, lat);
  add_periodic_ghosts(a, 5 * lat, rc + 0.3);
  System s(a, rc + 0.3);
  const auto pair = make_lj_cut(1, {1.0}, {1.0}, {rc}, false);
  const PairResult res = s.compute(pair);
  EXPECT_NEAR(res.energy / a.nlocal, e_sum, 1e-12);
  for (int d = 0; d < 3; ++d)  // cubic symmetry: a third of the trace on each axis
    EXPECT_NEAR(res.virial[d] / a.nlocal, w_sum / 3, 1e-12);
  for (const auto& fi : to_host(s.f, a.nlocal))  // perfect lattice: no net force
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(fi[d], 0, 1e-12);
}

// coul/long (solvers/md, MdConfig::Pair::tabulate) runs the lj/cut/coul/long kernel with
// epsilon 0, sigma 1 and every pair's cutoff the Coulomb one: its LJ terms are then exactly zero
// (48 eps sig^12 = 24 eps sig^6 = 0, no shift), at any distance, close pairs included (no
// NaN), and forces, virial and Coulomb energy are those of the real-space Coulomb term alone.
TEST(MdPair, CoulombAloneIsLJCutCoulLongWithEpsilonZero) {
  const Real rc = 3.0;
  const LJCutCoulLong pair{{},
                           make_lj_cut(2, {0, 0, 0, 0}, {1, 1, 1, 1}, {rc, rc, rc, rc}, false),
                           332.06371,
                           rc * rc,
                           0.9};
  const HostAtoms a = random_atoms(60, 4.0, 2, 17);  // no ghosts: pairs inside the box only
  std::vector<Real> q(a.x.size());
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = (i % 2 == 0 ? 0.4 : -0.55) * (1 + 0.1 * i);
  System s(a, rc + 0.5);
  const PairResult res =
      compute_pair_forces(pair, s.x, s.type, a.nlocal, s.list, s.f, to_device_1d<Charges>(q));
  // The real-space Coulomb term pair by pair on the host (LJCutCoulLong::coulomb reads no table).
  std::vector<Vec3> f(a.x.size(), Vec3{0, 0, 0});
  Real ecoul = 0, virial[3] = {0, 0, 0}, closest = rc;
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = i + 1; j < a.nlocal; ++j) {
      Real d[3], rsq = 0;
      for (int k = 0; k < 3; ++k) {
        d[k] = a.x[i][k] - a.x[j][k];
        rsq += d[k] * d[k];
      }
      closest = std::min(closest, std::sqrt(rsq));
      Real fc = 0, ec = 0;
      pair.coulomb(rsq, 1 / rsq, q[i] * q[j], fc, ec);
      ecoul += ec;
      for (int k = 0; k < 3; ++k) {
        f[i][k] += fc * d[k];
        f[j][k] -= fc * d[k];
        virial[k] += fc * d[k] * d[k];
      }
    }
  ASSERT_LT(closest, 0.5);     // close pairs are in the test
  EXPECT_EQ(res.energy, 0.0);  // evdwl: exactly zero
  EXPECT_NEAR(res.coul, ecoul, 1e-12 * std::fabs(ecoul));
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(res.virial[k], virial[k], 1e-12 * std::fabs(virial[k]));
  const auto got = to_host(s.f, a.nlocal);
  for (int i = 0; i < a.nlocal; ++i)
    for (int k = 0; k < 3; ++k) {
      ASSERT_TRUE(std::isfinite(got[i][k])) << "atom " << i;
      EXPECT_NEAR(got[i][k], f[i][k], 1e-11 * (1 + std::fabs(f[i][k]))) << "atom " << i;
    }
}

}  // namespace stratus::md_pair_test
