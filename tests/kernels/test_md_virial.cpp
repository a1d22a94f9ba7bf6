// The pair kernels' virial tensor (its diagonal W_aa = sum over pairs of r_ij,a f_ij,a) against
// the strain derivative of the energy: positions and box scaled along one axis a by (1 + e),
// W_aa = -dU/de at e = 0 (U depends on the positions through the r_ij alone, and each r_ij,a
// scales by 1 + e). The derivative is the central difference (U(+e) - U(-e)) / (2 e) with
// e = 1e-5: its truncation error is U''' e^2 / 6, about 1e-8 of W here (each power of the
// strain brings a factor of at most ~14 from r^-12), and its round-off 1e-13 |U| / e, about 1e-8
// of W; both far below the 1e-6 tolerance, which a wrong component (or a trace split evenly)
// misses by orders of magnitude. The configuration is drawn again until no pair crosses a
// cutoff within the strain (the potential is truncated, not shifted: a crossing would be a jump
// of the energy). Full, half and cluster lists (double; float to its precision) give the same
// tensor, and its trace is the scalar virial sum r_ij . f_ij of a host loop. SHAKE's per-cluster
// tensor is sum_i x_i,a fc_i,a of its constraint forces.
#include "stratus/kernels/md/constraints.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/cluster_builder.hpp"
#include "stratus/solvers/md/lj_tables.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace stratus::md_virial_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;
using stratus::md::ClusterPairs;
using stratus::md::make_lj_cut;
using stratus::md::NeighborBuilder;

constexpr Real kStrain = 1e-5;

/// A perturbed fcc block of n^3 cells at density 0.8442 (box n a), `ntypes` random types, with
/// its periodic ghosts within `range`.
HostAtoms perturbed_fcc(int n, int ntypes, Real range, unsigned seed) {
  const Real lat = std::cbrt(4 / 0.8442);
  HostAtoms a = fcc_block(n, lat);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<Real> u(-0.12, 0.12);
  for (int i = 0; i < a.nlocal; ++i) {
    a.type[i] = static_cast<int>(gen() % ntypes);
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  }
  add_periodic_ghosts(a, n * lat, range);
  return a;
}

/// True when no pair (local with any atom) has a squared distance that the strain along any
/// axis, (1 + e)^2 on its a component for |e| <= strain, moves across its cutoff (with a
/// margin of 4 on the strain).
bool no_pair_crosses(const HostAtoms& a, const std::vector<Real>& cut, int ntypes, Real strain) {
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = 0; j < a.nall(); ++j) {
      if (j == i) continue;
      Real d[3], r2 = 0;
      for (int k = 0; k < 3; ++k) {
        d[k] = a.x[i][k] - a.x[j][k];
        r2 += d[k] * d[k];
      }
      const Real rc = cut[static_cast<std::size_t>(a.type[i] * ntypes + a.type[j])];
      for (int k = 0; k < 3; ++k)
        if (std::fabs(r2 - rc * rc) <= 4 * (2 * strain + strain * strain) * d[k] * d[k])
          return false;
    }
  return true;
}

/// The configuration scaled along axis `axis` by 1 + e (ghosts too: the box scales with it).
std::vector<Vec3> strained(const HostAtoms& a, int axis, Real e) {
  std::vector<Vec3> x = a.x;
  for (auto& p : x) p[axis] *= 1 + e;
  return x;
}

/// Energy and virial of the full lists at positions x.
PairResult full_result(const HostAtoms& a, const std::vector<Vec3>& xh, const LJCut& pair,
                       Real list_cutoff) {
  const auto x = to_device(xh);
  NeighborBuilder builder;
  NeighborList list;
  builder.build(x, to_device(a.id), a.nlocal, a.nall(), list_cutoff, list);
  Vectors f("f", a.nall());
  return compute_pair_forces(pair, x, to_device(a.type), a.nlocal, list, f);
}

/// The host loop's sum over pairs of r_ij . f_ij (each local pair once: half of the full sum).
Real host_virial_trace(const HostAtoms& a, const std::vector<Real>& eps,
                       const std::vector<Real>& sig, const std::vector<Real>& cut, int ntypes) {
  Real w = 0;
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = 0; j < a.nall(); ++j) {
      if (j == i) continue;
      Real r2 = 0;
      for (int k = 0; k < 3; ++k) r2 += (a.x[i][k] - a.x[j][k]) * (a.x[i][k] - a.x[j][k]);
      const auto t = static_cast<std::size_t>(a.type[i] * ntypes + a.type[j]);
      if (r2 >= cut[t] * cut[t]) continue;
      const Real s6 = std::pow(sig[t] * sig[t] / r2, 3);
      w += 0.5 * 24 * eps[t] * s6 * (2 * s6 - 1);  // r . f = -r dU/dr
    }
  return w;
}

/// The strain check and the list modes on one pair style (tables of ntypes types).
void check_pair_style(int ntypes, const std::vector<Real>& eps, const std::vector<Real>& sig,
                      const std::vector<Real>& cut) {
  const LJCut pair = make_lj_cut(ntypes, eps, sig, cut, false);
  const Real rc = *std::max_element(cut.begin(), cut.end());
  const Real list_cutoff = rc + 0.2;
  HostAtoms a;
  unsigned seed = 100;
  for (;; ++seed) {
    a = perturbed_fcc(4, ntypes, list_cutoff + 0.3, seed);
    if (no_pair_crosses(a, cut, ntypes, kStrain)) break;
    ASSERT_LT(seed, 200u) << "no configuration without a pair at a cutoff";
  }
  const PairResult full = full_result(a, a.x, pair, list_cutoff);
  Real trace = 0;
  for (int k = 0; k < 3; ++k) trace += full.virial[k];
  const Real host = host_virial_trace(a, eps, sig, cut, ntypes);
  EXPECT_NEAR(trace, host, 1e-12 * std::fabs(host));
  for (int axis = 0; axis < 3; ++axis) {
    const Real up = full_result(a, strained(a, axis, kStrain), pair, list_cutoff).energy;
    const Real down = full_result(a, strained(a, axis, -kStrain), pair, list_cutoff).energy;
    const Real derivative = -(up - down) / (2 * kStrain);
    const Real w = full.virial[axis];
    std::printf("%d types, seed %u, axis %d: W_aa %.12g, -dU/de %.12g, relative %.2e\n", ntypes,
                seed, axis, w, derivative, std::fabs(derivative - w) / std::fabs(w));
    EXPECT_NEAR(w, derivative, 1e-6 * std::fabs(w)) << "axis " << axis;
    // Not the trace split evenly: the perturbed crystal is not isotropic to this precision.
    EXPECT_GT(std::fabs(w - trace / 3), 1e-4 * std::fabs(w)) << "axis " << axis;
  }

  // Half and cluster lists: the same tensor (double to round-off, float to its precision).
  const auto x = to_device(a.x);
  const auto id = to_device(a.id);
  const auto type = to_device(a.type);
  NeighborBuilder builder;
  NeighborList half;
  builder.build_half(x, sides_on_device(a), a.nlocal, a.nall(), list_cutoff, half);
  Vectors f("f", a.nall());
  const PairResult rh = compute_pair_forces_half(pair, x, type, a.nlocal, half, f);
  ClusterPairs<double> cd;
  cd.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), list_cutoff);
  const PairResult rcd = cd.forces<true>(pair, x, f);
  for (const int bytes : {16, 64}) {
    ClusterPairs<float> cf;
    cf.limit_vector_bytes(bytes);
    cf.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), list_cutoff);
    const PairResult rcf = cf.forces<true>(pair, x, f);
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(rcf.virial[k], full.virial[k], 1e-6 * std::fabs(full.virial[k]))
          << "float clusters, " << cf.register_bytes(pair) << "-byte registers, axis " << k;
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(rh.virial[k], full.virial[k], 1e-12 * std::fabs(full.virial[k])) << "half " << k;
    EXPECT_NEAR(rcd.virial[k], full.virial[k], 1e-12 * std::fabs(full.virial[k]))
        << "double clusters " << k;
  }
  // Forces only: no virial.
  const PairResult none = cd.forces<false>(pair, x, f);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(none.virial[k], 0);
}

// One type: the uniform form (and the float kernel's wide registers where the CPU has them).
TEST(MdVirial, LennardJonesOneTypeStrainDerivative) { check_pair_style(1, {1.0}, {1.0}, {2.5}); }

// Two types of different cutoffs: the per-type tables.
TEST(MdVirial, LennardJonesTwoTypesStrainDerivative) {
  check_pair_style(2, {1.0, 0.7, 0.7, 1.3}, {1.0, 1.2, 1.2, 0.9}, {2.5, 3.0, 3.0, 2.2});
}

// SHAKE's virial column: for each cluster (three rigid waters, one bent 2-bond cluster, one lone
// bond), wc(centre, a) = sum over the cluster's atoms of x_i,a fc_i,a (the constraint forces
// lambda_k r_k act along the constraint vectors and sum to zero in the cluster), to 1e-12.
TEST(MdVirial, ShakeColumnIsTheConstraintForcesVirial) {
  constexpr int kAtoms = 14;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<Real> u(-0.05, 0.05);
  std::vector<Vec3> x(kAtoms), v(kAtoms), f(kAtoms);
  std::vector<int> type(kAtoms, 0);
  // Clusters: waters (O, H, H) at atoms 0, 3, 6; atoms 9 10 11 a centre with two partners
  // without the angle; atoms 12 13 one bond.
  const int centres[5] = {0, 3, 6, 9, 12};
  for (int m = 0; m < 5; ++m) {
    const int c = centres[m];
    const Vec3 o{1.0 + 2.5 * m, 2.0 + 0.3 * m, 3.0 - 0.2 * m};
    x[c] = o;
    x[c + 1] = {o[0] + 0.8, o[1] + 0.58, o[2]};
    if (m < 4) x[c + 2] = {o[0] - 0.8, o[1] + 0.58, o[2] + 0.1};
    for (int k = 0; k < (m < 4 ? 3 : 2); ++k)
      for (int d = 0; d < 3; ++d) {
        x[c + k][d] += u(gen);
        v[c + k][d] = 20 * u(gen);
        f[c + k][d] = 100 * u(gen);
      }
    if (m < 4)
      for (int k = 1; k < 3; ++k) type[c + k] = 1;
  }
  ShakeClusters l;
  l.atom = decltype(l.atom)("atoms", 5);
  l.length = decltype(l.length)("lengths", 5);
  l.count = 5;
  auto ha = Kokkos::create_mirror_view(l.atom);
  auto hl = Kokkos::create_mirror_view(l.length);
  for (int m = 0; m < 5; ++m) {
    const int c = centres[m];
    ha(m, 0) = c;
    ha(m, 1) = c + 1;
    ha(m, 2) = m < 4 ? c + 2 : -1;
    ha(m, 3) = -1;
    hl(m, 0) = 1.0;
    hl(m, 1) = m < 4 ? 1.0 : 0.0;
    hl(m, 2) = 0.0;
    hl(m, 3) = m < 3 ? 1.633 : 0.0;  // the waters' H-H side
  }
  Kokkos::deep_copy(l.atom, ha);
  Kokkos::deep_copy(l.length, hl);
  const Vectors xd = to_device(x), vd = to_device(v), fd = to_device(f);
  const Types td = to_device(type);
  const TypeMasses md = to_device(std::vector<Real>{16.0, 1.0});
  Vectors xp("xp", kAtoms), fc("fc", kAtoms), wc("wc", kAtoms);
  const Real dt = 0.01;
  predict_positions(xd, vd, fd, td, md, dt, dt * dt, kAtoms, xp);
  const ShakeOutcome out = shake(l, xd, xp, td, md, dt * dt, 1e-12, 500, fc, wc);
  ASSERT_EQ(out.failed, 0);
  const auto hf = to_host(fc, kAtoms), hw = to_host(wc, kAtoms);
  for (int m = 0; m < 5; ++m) {
    const int c = centres[m];
    const int n = m < 4 ? 3 : 2;
    Real largest = 0;
    for (int a = 0; a < 3; ++a) {
      Real w = 0;
      for (int k = 0; k < n; ++k) w += x[c + k][a] * hf[c + k][a];
      largest = std::max(largest, std::fabs(w));
      EXPECT_NEAR(hw[c][a], w, 1e-12 * (1 + std::fabs(w))) << "cluster " << m << " axis " << a;
    }
    EXPECT_GT(largest, 1e-3) << "cluster " << m << ": no constraint force";
  }
}

}  // namespace stratus::md_virial_test
