// Integrator kernels: exact kick/drift on dyadic numbers, kinetic energy and momentum against
// host sums, velocity scaling/shifting, and random draws (Langevin noise, initial velocities)
// that belong to the atom's global id, not to where the atom is stored.
#include "stratus/kernels/md/integrate.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <random>
#include <vector>

namespace stratus::md_integrate_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;

const std::vector<Real> masses_h{1.0, 4.0, 0.5};

// n atoms with dyadic coordinates/velocities/forces (all products below exact in binary).
struct Dyadic {
  std::vector<Vec3> x, v, f;
  std::vector<int> type;
  std::vector<GlobalId> id;
};
Dyadic dyadic(int n) {
  std::mt19937 gen(3);
  Dyadic a;
  for (int i = 0; i < n; ++i) {
    Vec3 x, v, f;
    for (int d = 0; d < 3; ++d) {
      x[d] = static_cast<int>(gen() % 1024) / 64.0;
      v[d] = (static_cast<int>(gen() % 512) - 256) / 128.0;
      f[d] = (static_cast<int>(gen() % 512) - 256) / 16.0;
    }
    a.x.push_back(x);
    a.v.push_back(v);
    a.f.push_back(f);
    a.type.push_back(i % 3);
    a.id.push_back(7 * i + 2);
  }
  return a;
}

TEST(MdIntegrate, KickAndDriftAreExact) {
  const int n = 1000, m = 900;  // atoms >= m are untouched
  const auto a = dyadic(n);
  auto x = to_device(a.x), v = to_device(a.v), f = to_device(a.f);
  const auto type = to_device(a.type);
  const auto masses = to_device(masses_h);
  const Real dt = 0.125;
  verlet_kick(v, f, type, masses, dt / 2, m);
  verlet_drift(x, v, dt, m);
  const auto vh = to_host(v, n), xh = to_host(x, n);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      const Real vn = i < m ? a.v[i][d] + dt / 2 * a.f[i][d] / masses_h[a.type[i]] : a.v[i][d];
      const Real xn = i < m ? a.x[i][d] + dt * vn : a.x[i][d];
      ASSERT_EQ(vh[i][d], vn);
      ASSERT_EQ(xh[i][d], xn);
    }
}

TEST(MdIntegrate, KineticEnergyMomentumScaleShift) {
  const int n = 5000;
  auto a = dyadic(n);
  std::mt19937_64 gen(4);
  std::normal_distribution<Real> g(0.3, 1.0);  // non-zero mean: non-zero momentum
  for (auto& vi : a.v)
    for (auto& c : vi) c = g(gen);
  auto v = to_device(a.v);
  const auto type = to_device(a.type);
  const auto masses = to_device(masses_h);
  auto host_sums = [&](const std::vector<Vec3>& vel, Real& ke, Vec3& p) {
    ke = 0;
    p = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
      const Real mi = masses_h[a.type[i]];
      for (int d = 0; d < 3; ++d) {
        ke += 0.5 * mi * vel[i][d] * vel[i][d];
        p[d] += mi * vel[i][d];
      }
    }
  };
  Real ke;
  Vec3 p;
  host_sums(a.v, ke, p);
  EXPECT_NEAR(kinetic_energy(v, type, masses, n), ke, 1e-12 * ke);
  auto pd = momentum(v, type, masses, n);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(pd[d], p[d], 1e-11 * std::fabs(p[d]) + 1e-9);
  EXPECT_EQ(kinetic_energy(v, type, masses, 0), 0);

  // Remove the centre-of-mass velocity, then rescale: zero momentum, KE scaled by factor^2.
  Real mtot = 0;
  for (int i = 0; i < n; ++i) mtot += masses_h[a.type[i]];
  shift_velocities(v, {-pd[0] / mtot, -pd[1] / mtot, -pd[2] / mtot}, n);
  pd = momentum(v, type, masses, n);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(pd[d], 0, 1e-10);
  const Real ke0 = kinetic_energy(v, type, masses, n);
  scale_velocities(v, 1.5, n);
  EXPECT_NEAR(kinetic_energy(v, type, masses, n), 2.25 * ke0, 1e-12 * ke0);
  const auto vh = to_host(v, n);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(vh[10][d], 1.5 * (a.v[10][d] - p[d] / mtot), 1e-12);
}

// Per-id results of a per-atom kernel applied to the atoms listed in `order` (a subset of the
// atoms of `a`, in any order), stored in that order.
template <class Kernel>
std::map<GlobalId, std::array<Real, 6>> per_id(const Dyadic& a, const std::vector<int>& order,
                                               Kernel kernel) {
  Dyadic b;
  for (int i : order) {
    b.v.push_back(a.v[i]);
    b.f.push_back(a.f[i]);
    b.type.push_back(a.type[i]);
    b.id.push_back(a.id[i]);
  }
  const int n = static_cast<int>(order.size());
  auto v = to_device(b.v), f = to_device(b.f);
  kernel(v, f, to_device(b.type), to_device(b.id), n);
  const auto fh = to_host(f, n), vh = to_host(v, n);
  std::map<GlobalId, std::array<Real, 6>> out;  // (f, v) of each id
  for (int k = 0; k < n; ++k)
    out[b.id[k]] = {fh[k][0], fh[k][1], fh[k][2], vh[k][0], vh[k][1], vh[k][2]};
  return out;
}

std::vector<int> permuted_subset(int n, unsigned seed, bool subset) {
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (!subset || i % 3 != 1) order.push_back(i);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  return order;
}

// Every atom in `sub` has the same result as in `all`, bit for bit.
using PerId = std::map<GlobalId, std::array<Real, 6>>;
void expect_same(const PerId& all, const PerId& sub) {
  for (const auto& [gid, val] : sub) ASSERT_EQ(val, all.at(gid)) << "id " << gid;
}

TEST(MdIntegrate, LangevinNoiseBelongsToTheAtom) {
  const int n = 3000;
  const auto a = dyadic(n);
  const auto masses = to_device(masses_h);
  auto langevin = [&](std::int64_t step) {
    return [=](Vectors v, Vectors f, Types type, Ids id, int m) {
      langevin_force(f, v, type, masses, id, 0.5, 1.2, 0.005, 99, step, m);
    };
  };
  std::vector<int> identity(n);
  for (int i = 0; i < n; ++i) identity[i] = i;
  const auto ref = per_id(a, identity, langevin(17));
  expect_same(ref, per_id(a, permuted_subset(n, 1, false), langevin(17)));
  expect_same(ref, per_id(a, permuted_subset(n, 2, true), langevin(17)));
  // Another step draws other numbers.
  const auto other = per_id(a, identity, langevin(18));
  int same = 0;
  for (const auto& [gid, val] : other) same += val == ref.at(gid) ? 1 : 0;
  EXPECT_EQ(same, 0);
}

TEST(MdIntegrate, LangevinFrictionAndNoiseAmplitude) {
  const int n = 40000;
  const Real gamma = 2.0, kT = 0.8, dt = 0.01;
  Dyadic a = dyadic(n);
  const auto masses = to_device(masses_h);
  // kT = 0: pure friction, exactly -gamma m v added.
  auto v = to_device(a.v), f = to_device(a.f);
  const auto type = to_device(a.type);
  const auto id = to_device(a.id);
  langevin_force(f, v, type, masses, id, gamma, 0, dt, 5, 0, n);
  auto fh = to_host(f, n);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      ASSERT_EQ(fh[i][d], a.f[i][d] + -gamma * masses_h[a.type[i]] * a.v[i][d]);
  // v = f = 0: noise only; f / sqrt(2 gamma m kT / dt) is N(0, 1) over 3n samples.
  Kokkos::deep_copy(v, 0.0);
  Kokkos::deep_copy(f, 0.0);
  langevin_force(f, v, type, masses, id, gamma, kT, dt, 5, 3, n);
  fh = to_host(f, n);
  Real s1 = 0, s2 = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) {
      const Real z = fh[i][d] / std::sqrt(2 * gamma * masses_h[a.type[i]] * kT / dt);
      s1 += z;
      s2 += z * z;
    }
  const Real m = 3.0 * n;
  EXPECT_NEAR(s1 / m, 0, 5 / std::sqrt(m));
  EXPECT_NEAR(s2 / m, 1, 5 * std::sqrt(2 / m));
}

TEST(MdIntegrate, InitialVelocitiesBelongToTheAtom) {
  const int n = 60000;
  const auto a = dyadic(n);
  const auto masses = to_device(masses_h);
  const Real kT = 1.44;
  auto init = [=](Vectors v, Vectors, Types type, Ids id, int m) {
    init_velocities(v, type, masses, id, kT, 87287, m);
  };
  std::vector<int> identity(n);
  for (int i = 0; i < n; ++i) identity[i] = i;
  const auto ref = per_id(a, identity, init);
  expect_same(ref, per_id(a, permuted_subset(n, 3, false), init));
  expect_same(ref, per_id(a, permuted_subset(n, 4, true), init));
  // Each component ~ N(0, kT / m): m v^2 / kT averages to 1 (sd sqrt(2 / 3n)).
  auto v = to_device(a.v);
  init_velocities(v, to_device(a.type), masses, to_device(a.id), kT, 87287, n);
  const auto vh = to_host(v, n);
  Real s = 0;
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) s += masses_h[a.type[i]] * vh[i][d] * vh[i][d] / kT;
  EXPECT_NEAR(s / (3.0 * n), 1, 5 * std::sqrt(2 / (3.0 * n)));
}

}  // namespace stratus::md_integrate_test
