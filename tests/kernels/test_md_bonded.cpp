// Bonded styles (kernels/md/bonded.hpp): each term's force against the central finite difference
// of its energy, forces summing to zero (translation) with zero torque (rotation), energies at
// geometries whose angles are known, the virial tensor's diagonal (sum_a x_a f_a per axis) and
// its strain derivative, and the generic kernel's sums over a list with shared atoms.
#include "stratus/kernels/md/bonded.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace stratus::md_bonded_test {

using namespace stratus::kernels::md;

constexpr double kPi = 3.14159265358979323846;
constexpr double kDeg = kPi / 180.0;

/// A one-type coefficient table on the device.
TypeCoeffs coeffs(const std::vector<double>& values) {
  TypeCoeffs c("test::coeffs", 1, values.size());
  auto h = Kokkos::create_mirror_view(c);
  for (std::size_t k = 0; k < values.size(); ++k) h(0, k) = values[k];
  Kokkos::deep_copy(c, h);
  return c;
}

/// Energy, forces and virial of one term at positions x, evaluated on the device.
template <int N, class Style>
BondedSums run_term(const Style& style, const std::array<std::array<double, 3>, N>& x,
                    std::array<std::array<double, 3>, N>* forces = nullptr) {
  Vectors xv("test::x", N), fv("test::f", N);
  TermList<N> list("test::terms", 1);
  auto hx = Kokkos::create_mirror_view(xv);
  auto hl = Kokkos::create_mirror_view(list);
  hl(0, 0) = 0;
  for (int a = 0; a < N; ++a) {
    hl(0, 1 + a) = a;
    for (int d = 0; d < 3; ++d) hx(a, d) = x[a][d];
  }
  Kokkos::deep_copy(xv, hx);
  Kokkos::deep_copy(list, hl);
  const BondedSums s = bonded_forces<N>(style, list, 1, xv, fv);
  if (forces) {
    auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fv);
    for (int a = 0; a < N; ++a)
      for (int d = 0; d < 3; ++d) (*forces)[a][d] = hf(a, d);
    for (int d = 0; d < 3; ++d) {
      double w = 0;  // W_dd = sum_a x_a,d f_a,d
      for (int a = 0; a < N; ++a) w += x[a][d] * hf(a, d);
      EXPECT_NEAR(s.virial[d], w, 1e-12 * (1 + std::abs(w)));
    }
  }
  return s;
}

/// Energy and forces of one term at positions x, evaluated on the device.
template <int N, class Style>
double evaluate(const Style& style, const std::array<std::array<double, 3>, N>& x,
                std::array<std::array<double, 3>, N>* forces = nullptr) {
  return run_term<N>(style, x, forces).energy;
}

/// The virial tensor's diagonal against the strain derivative, at 10 random geometries near
/// x0 (moved away from the origin, where x_a f_a would vanish): every atom's coordinate d scaled
/// by 1 + e, W_dd = -dE/de at e = 0 (E depends on the atoms' differences only, whose d
/// components all scale by 1 + e). Central difference with e = 1e-5: its truncation (e^2 / 6
/// times the third derivative) and round-off (1e-16 E / e) are both below 1e-9 of the term's
/// scale here; the tolerance is 1e-7 of the largest component (or of 1).
template <int N, class Style>
void check_strain(const Style& style, const std::array<std::array<double, 3>, N>& x0,
                  std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  constexpr double e = 1e-5;
  for (int trial = 0; trial < 10; ++trial) {
    auto x = x0;
    for (auto& p : x)
      for (double& c : p) c += jitter(gen) + 2.0;
    std::array<std::array<double, 3>, N> f{};
    const BondedSums s = run_term<N>(style, x, &f);
    const double largest =
        std::max({std::abs(s.virial[0]), std::abs(s.virial[1]), std::abs(s.virial[2]), 1.0});
    for (int d = 0; d < 3; ++d) {
      auto xp = x, xm = x;
      for (int a = 0; a < N; ++a) {
        xp[a][d] *= 1 + e;
        xm[a][d] *= 1 - e;
      }
      const double derivative = -(evaluate<N>(style, xp) - evaluate<N>(style, xm)) / (2 * e);
      EXPECT_NEAR(s.virial[d], derivative, 1e-7 * largest) << "trial " << trial << " axis " << d;
    }
  }
}

/// Forces against -dE/dx by central differences (h = 1e-6, relative 1e-6 of the largest force),
/// zero net force and zero net torque, at `trials` random geometries near `x0`.
template <int N, class Style>
void check_forces(const Style& style, const std::array<std::array<double, 3>, N>& x0,
                  std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  for (int trial = 0; trial < 20; ++trial) {
    auto x = x0;
    for (auto& p : x)
      for (double& c : p) c += jitter(gen);
    std::array<std::array<double, 3>, N> f{};
    evaluate<N>(style, x, &f);
    double largest = 0, net[3] = {0, 0, 0}, torque[3] = {0, 0, 0};
    for (int a = 0; a < N; ++a) {
      for (int d = 0; d < 3; ++d) {
        largest = std::max(largest, std::abs(f[a][d]));
        net[d] += f[a][d];
      }
      torque[0] += x[a][1] * f[a][2] - x[a][2] * f[a][1];
      torque[1] += x[a][2] * f[a][0] - x[a][0] * f[a][2];
      torque[2] += x[a][0] * f[a][1] - x[a][1] * f[a][0];
    }
    for (int d = 0; d < 3; ++d) {
      EXPECT_NEAR(net[d], 0.0, 1e-12 * (1 + largest)) << "trial " << trial;
      EXPECT_NEAR(torque[d], 0.0, 1e-11 * (1 + largest)) << "trial " << trial;
    }
    const double h = 1e-6;
    for (int a = 0; a < N; ++a)
      for (int d = 0; d < 3; ++d) {
        auto xp = x, xm = x;
        xp[a][d] += h;
        xm[a][d] -= h;
        const double fd = -(evaluate<N>(style, xp) - evaluate<N>(style, xm)) / (2 * h);
        EXPECT_NEAR(f[a][d], fd, 1e-6 * (1 + largest)) << "trial " << trial << " atom " << a;
      }
  }
}

using X2 = std::array<std::array<double, 3>, 2>;
using X3 = std::array<std::array<double, 3>, 3>;
using X4 = std::array<std::array<double, 3>, 4>;

// A chain i j k l with bond lengths 1.5, angles 110 degrees and dihedral phi (IUPAC sign).
X4 chain(double phi) {
  const double t = 110 * kDeg;
  X4 x{};
  x[1] = {0, 0, 0};
  x[2] = {1.5, 0, 0};
  x[0] = {1.5 * std::cos(t), 1.5 * std::sin(t), 0};
  x[3] = {1.5 - 1.5 * std::cos(t), 1.5 * std::sin(t) * std::cos(phi),
          1.5 * std::sin(t) * std::sin(phi)};
  return x;
}

TEST(MdBonded, BondHarmonicEnergyAndForces) {
  const BondHarmonic s{coeffs({450.0, 1.54})};
  EXPECT_NEAR(evaluate<2>(s, X2{{{0, 0, 0}, {1.64, 0, 0}}}), 450.0 * 0.1 * 0.1, 1e-12);
  check_forces<2>(s, X2{{{0, 0, 0}, {1.2, 0.6, -0.4}}}, 1);
}

TEST(MdBonded, AngleHarmonicEnergyAndForces) {
  const AngleHarmonic s{coeffs({62.1, 114.0 * kDeg})};
  // A right angle: E = K (90 - 114)^2 in radians.
  EXPECT_NEAR(evaluate<3>(s, X3{{{1.3, 0, 0}, {0, 0, 0}, {0, 2.0, 0}}}),
              62.1 * std::pow(24.0 * kDeg, 2), 1e-11);
  check_forces<3>(s, X3{{{1.3, 0.2, 0}, {0, 0, 0}, {-0.5, 1.4, 0.3}}}, 2);
}

// The dihedral sign: chain(phi) has dihedral phi in the IUPAC convention, so a charmm term with
// n = 1, d = phi0 has its minimum K [1 + cos(phi - phi0)] = 0 at phi = phi0 + 180 and is 2 K at
// phi = phi0; trans (180) gives opls energy K2 + ... as the formula says.
TEST(MdBonded, DihedralAnglesAndEnergies) {
  const DihedralCharmm charmm{coeffs({1.7, 1.0, 60.0 * kDeg})};
  EXPECT_NEAR(evaluate<4>(charmm, chain(60 * kDeg)), 2 * 1.7, 1e-12);
  EXPECT_NEAR(evaluate<4>(charmm, chain(-120 * kDeg)), 0.0, 1e-12);
  EXPECT_NEAR(evaluate<4>(charmm, chain(-60 * kDeg)), 1.7 * (1 + std::cos(-120 * kDeg)), 1e-12);
  const DihedralOpls opls{coeffs({1.411, -0.271, 3.145, 0.2})};
  for (const double deg : {180.0, 60.0, -75.0, 0.0}) {
    const double p = deg * kDeg;
    const double want = 0.5 * (1.411 * (1 + std::cos(p)) - 0.271 * (1 - std::cos(2 * p)) +
                               3.145 * (1 + std::cos(3 * p)) + 0.2 * (1 - std::cos(4 * p)));
    EXPECT_NEAR(evaluate<4>(opls, chain(p)), want, 1e-12) << deg;
  }
  const ImproperHarmonic improper{coeffs({40.0, 10.0 * kDeg})};
  for (const double deg : {25.0, -25.0, 5.0, 170.0})
    EXPECT_NEAR(evaluate<4>(improper, chain(deg * kDeg)),
                40.0 * std::pow((std::abs(deg) - 10.0) * kDeg, 2), 1e-12)
        << deg;
}

TEST(MdBonded, DihedralAndImproperForces) {
  check_forces<4>(DihedralCharmm{coeffs({1.7, 3.0, 0.0})}, chain(75 * kDeg), 3);
  check_forces<4>(DihedralCharmm{coeffs({0.9, 2.0, 30 * kDeg})}, chain(-140 * kDeg), 4);
  check_forces<4>(DihedralOpls{coeffs({1.411, -0.271, 3.145, 0.2})}, chain(170 * kDeg), 5);
  check_forces<4>(DihedralOpls{coeffs({1.411, -0.271, 3.145, 0.2})}, chain(-50 * kDeg), 6);
  check_forces<4>(ImproperHarmonic{coeffs({40.0, 0.0})}, chain(20 * kDeg), 7);
  check_forces<4>(ImproperHarmonic{coeffs({40.0, 35 * kDeg})}, chain(-60 * kDeg), 8);
}

// Each style's virial tensor (diagonal) is the strain derivative of its energy.
TEST(MdBonded, VirialTensorIsTheStrainDerivative) {
  check_strain<2>(BondHarmonic{coeffs({450.0, 1.54})}, X2{{{0, 0, 0}, {1.2, 0.6, -0.4}}}, 11);
  check_strain<3>(AngleHarmonic{coeffs({62.1, 114.0 * kDeg})},
                  X3{{{1.3, 0.2, 0}, {0, 0, 0}, {-0.5, 1.4, 0.3}}}, 12);
  check_strain<4>(DihedralCharmm{coeffs({0.9, 2.0, 30 * kDeg})}, chain(-140 * kDeg), 13);
  check_strain<4>(DihedralOpls{coeffs({1.411, -0.271, 3.145, 0.2})}, chain(170 * kDeg), 14);
  check_strain<4>(ImproperHarmonic{coeffs({40.0, 35 * kDeg})}, chain(-60 * kDeg), 15);
}

// Near-planar and straight geometries stay finite (atan2 form of phi; the angle's floor on sin).
TEST(MdBonded, DegenerateGeometriesStayFinite) {
  std::array<std::array<double, 3>, 4> f{};
  const double e = evaluate<4>(DihedralOpls{coeffs({1.4, -0.3, 3.1, 0.0})}, chain(1e-12), &f);
  EXPECT_TRUE(std::isfinite(e));
  for (const auto& p : f)
    for (const double c : p) EXPECT_TRUE(std::isfinite(c));
  std::array<std::array<double, 3>, 3> fa{};
  const double ea = evaluate<3>(AngleHarmonic{coeffs({50.0, 109.5 * kDeg})},
                                X3{{{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}}}, &fa);
  EXPECT_NEAR(ea, 50.0 * std::pow((180.0 - 109.5) * kDeg, 2), 1e-12);
  for (const auto& p : fa)
    for (const double c : p) EXPECT_TRUE(std::isfinite(c));
}

// Terms sharing atoms (a chain of 30 bonds, each atom in two): the kernel's atomic sums equal
// a host loop, and the energy is the sum of the terms'.
TEST(MdBonded, ListWithSharedAtoms) {
  constexpr int n = 31;
  Vectors x("test::x", n), f("test::f", n);
  TermList<2> list("test::bonds", n - 1);
  auto hx = Kokkos::create_mirror_view(x);
  auto hl = Kokkos::create_mirror_view(list);
  for (int a = 0; a < n; ++a) {
    hx(a, 0) = 1.5 * a + 0.1 * std::sin(a);
    hx(a, 1) = 0.2 * std::cos(3.0 * a);
    hx(a, 2) = 0.0;
  }
  for (int b = 0; b + 1 < n; ++b) {
    hl(b, 0) = 0;
    hl(b, 1) = b;
    hl(b, 2) = b + 1;
  }
  Kokkos::deep_copy(x, hx);
  Kokkos::deep_copy(list, hl);
  const BondedSums s = bonded_forces<2>(BondHarmonic{coeffs({300.0, 1.5})}, list, n - 1, x, f);
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  std::vector<double> want(3 * n, 0.0);
  double energy = 0;
  for (int b = 0; b + 1 < n; ++b) {
    double d[3], r2 = 0;
    for (int k = 0; k < 3; ++k) {
      d[k] = hx(b, k) - hx(b + 1, k);
      r2 += d[k] * d[k];
    }
    const double r = std::sqrt(r2);
    energy += 300.0 * (r - 1.5) * (r - 1.5);
    for (int k = 0; k < 3; ++k) {
      const double fk = -2 * 300.0 * (r - 1.5) * d[k] / r;
      want[3 * b + k] += fk;
      want[3 * (b + 1) + k] -= fk;
    }
  }
  EXPECT_NEAR(s.energy, energy, 1e-12 * energy);
  for (int a = 0; a < n; ++a)
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(hf(a, k), want[3 * a + k], 1e-10) << a;
}

}  // namespace stratus::md_bonded_test
