// The direct Ewald reference (ewald_reference.hpp) checked against what it must satisfy: the
// Madelung constant of rock salt, forces that are minus the gradient of the energy, Newton's
// third law, the virial identity W = E of a homogeneous degree -1 potential, the virial
// tensor's diagonal as the strain derivative of the energy, and independence of the splitting
// parameter alpha. Host only; no Kokkos or MPI.
#include "ewald_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using stratus::md_test::ewald_coulomb;
using stratus::md_test::EwaldResult;

namespace {

using Vec = std::array<double, 3>;

// The Madelung constant of NaCl referred to the nearest-neighbour distance: the energy per ion
// pair is -M q^2 / a (e.g. C. Kittel, "Introduction to Solid State Physics", ch. 3; digits from
// the rapidly converging series of D. Borwein, J. M. Borwein, K. F. Taylor, J. Math. Phys. 26
// (1985) 2999).
constexpr double kMadelungNaCl = 1.747564594633182;

/// A rock-salt crystal of nx * ny * nz conventional cells (edge 2, nearest neighbours 1 apart),
/// unit charges alternating, shifted by `origin`.
void rock_salt(int nx, int ny, int nz, Vec origin, std::vector<Vec>& x, std::vector<double>& q) {
  x.clear();
  q.clear();
  for (int i = 0; i < 2 * nx; ++i)
    for (int j = 0; j < 2 * ny; ++j)
      for (int k = 0; k < 2 * nz; ++k) {
        x.push_back({origin[0] + i, origin[1] + j, origin[2] + k});
        q.push_back((i + j + k) % 2 == 0 ? 1.0 : -1.0);
      }
}

/// n random charges in `box` no closer than dmin (minimum image), uniform in [-1, 1], shifted
/// to a net charge `net`.
void random_charges(std::size_t n, Vec box, double dmin, double net, unsigned seed,
                    std::vector<Vec>& x, std::vector<double>& q) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  x.clear();
  q.clear();
  while (x.size() < n) {
    const Vec p{box[0] * u(rng), box[1] * u(rng), box[2] * u(rng)};
    bool ok = true;
    for (const Vec& o : x) {
      double r2 = 0;
      for (int c = 0; c < 3; ++c) {
        double d = p[c] - o[c];
        d -= box[c] * std::round(d / box[c]);
        r2 += d * d;
      }
      if (r2 < dmin * dmin) ok = false;
    }
    if (ok) x.push_back(p);
  }
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    q.push_back(2 * u(rng) - 1);
    sum += q.back();
  }
  for (double& qi : q) qi += (net - sum) / static_cast<double>(n);
}

double rms_force(const EwaldResult& r) {
  double s = 0;
  for (const Vec& f : r.force) s += f[0] * f[0] + f[1] * f[1] + f[2] * f[2];
  return std::sqrt(s / static_cast<double>(r.force.size()));
}

double max_abs_force_difference(const EwaldResult& a, const EwaldResult& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.force.size(); ++i)
    for (int c = 0; c < 3; ++c) m = std::max(m, std::abs(a.force[i][c] - b.force[i][c]));
  return m;
}

}  // namespace

TEST(EwaldReference, MadelungConstantOfRockSalt) {
  std::vector<Vec> x;
  std::vector<double> q;
  rock_salt(1, 1, 1, {0.0, 0.0, 0.0}, x, q);
  const auto r = ewald_coulomb(x, q, {2.0, 2.0, 2.0}, 1.0);
  const double per_pair = r.energy / 4;  // 8 ions, 4 ion pairs
  std::printf("NaCl 8 ions: alpha %.6f rc %.6f kc %.6f, energy per ion pair %.15f, error %.3e\n",
              r.alpha, r.rcut, r.kcut, per_pair, per_pair + kMadelungNaCl);
  EXPECT_NEAR(per_pair, -kMadelungNaCl, 1e-9);
  // Every ion sits at a centre of inversion: no force.
  EXPECT_LT(max_abs_force_difference(r, EwaldResult{0, std::vector<Vec>(8, Vec{}), 0}), 1e-10);

  // A 2 x 1 x 1 supercell in an elongated box, shifted off the lattice origin and partly
  // outside the box: the same energy per pair, and qqrd2e scales it.
  rock_salt(2, 1, 1, {-0.37, 0.21, 1.6}, x, q);
  const double qqrd2e = 332.06371;
  const auto r2 = ewald_coulomb(x, q, {4.0, 2.0, 2.0}, qqrd2e);
  const double per_pair2 = r2.energy / (8 * qqrd2e);
  std::printf("NaCl 16 ions, box 4x2x2: energy per ion pair %.15f, error %.3e\n", per_pair2,
              per_pair2 + kMadelungNaCl);
  EXPECT_NEAR(per_pair2, -kMadelungNaCl, 1e-9);
}

TEST(EwaldReference, ForcesAreMinusTheEnergyGradient) {
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{4.0, 5.0, 6.5};
  random_charges(20, box, 0.8, 0.0, 12345u, x, q);
  const auto r = ewald_coulomb(x, q, box, 1.0);
  // Hold alpha (and so both cutoffs) fixed while the positions move. Five-point central
  // difference, error O(h^4).
  const double h = 1e-4;
  double err2 = 0, f2 = 0, max_err = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      const auto energy_at = [&](double dx) {
        auto y = x;
        y[i][c] += dx;
        return ewald_coulomb(y, q, box, 1.0, 1e-12, r.alpha).energy;
      };
      const double fd =
          -(-energy_at(2 * h) + 8 * energy_at(h) - 8 * energy_at(-h) + energy_at(-2 * h)) /
          (12 * h);
      const double d = r.force[i][c] - fd;
      err2 += d * d;
      f2 += fd * fd;
      max_err = std::max(max_err, std::abs(d));
    }
  const double rel_rms = std::sqrt(err2 / f2);
  const double rel_max = max_err / rms_force(r);
  std::printf(
      "20 random charges: alpha %.6f rc %.6f kc %.6f, force vs finite difference: "
      "relative RMS %.3e, max |dF| / rms F %.3e\n",
      r.alpha, r.rcut, r.kcut, rel_rms, rel_max);
  EXPECT_LT(rel_rms, 1e-7);
  EXPECT_LT(rel_max, 1e-7);
}

TEST(EwaldReference, ForcesSumToZero) {
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{4.0, 5.0, 6.5};
  for (double net : {0.0, 1.7}) {
    random_charges(20, box, 0.8, net, 777u, x, q);
    const auto r = ewald_coulomb(x, q, box, 1.0);
    Vec sum{0.0, 0.0, 0.0};
    for (const Vec& f : r.force)
      for (int c = 0; c < 3; ++c) sum[c] += f[c];
    const double norm = std::sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
    std::printf("net charge %.1f: |sum F| = %.3e, rms F = %.3e, ratio %.3e\n", net, norm,
                rms_force(r), norm / rms_force(r));
    EXPECT_LT(norm / rms_force(r), 1e-12);
  }
}

TEST(EwaldReference, VirialEqualsEnergyForCoulomb) {
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{5.0, 4.5, 6.0};
  for (double net : {0.0, -2.3}) {
    random_charges(30, box, 0.7, net, 4242u, x, q);
    const auto r = ewald_coulomb(x, q, box, 332.06371);
    const double rel = std::abs(r.virial - r.energy) / std::abs(r.energy);
    std::printf("net charge %.1f: energy %.12f, virial %.12f, relative difference %.3e\n", net,
                r.energy, r.virial, rel);
    EXPECT_LT(rel, 1e-10);
  }
}

// The virial tensor's diagonal is the strain derivative of the energy: positions and box scaled
// along one axis a by 1 + e (alpha fixed), W_aa = -dE/de by central differences at e = 1e-5
// (truncation e^2 / 6 times the third derivative, about 1e-9 of W; the sums' truncation moves
// with the box by less than their tolerance 1e-13, 1e-8 of W once divided by 2 e), to 1e-7 of
// the largest component; its trace is the scalar virial. Neutral and charged (the background).
TEST(EwaldReference, VirialTensorIsTheStrainDerivative) {
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{5.0, 4.5, 6.0};
  constexpr double e = 1e-5;
  for (double net : {0.0, -2.3}) {
    random_charges(30, box, 0.7, net, 4243u, x, q);
    const auto r = ewald_coulomb(x, q, box, 332.06371, 1e-13);
    const double trace = r.virial_tensor[0] + r.virial_tensor[1] + r.virial_tensor[2];
    EXPECT_NEAR(trace, r.virial, 1e-12 * std::abs(r.virial));
    const double largest = std::max(
        {std::abs(r.virial_tensor[0]), std::abs(r.virial_tensor[1]), std::abs(r.virial_tensor[2])});
    for (int a = 0; a < 3; ++a) {
      double energy[2];
      for (int side = 0; side < 2; ++side) {
        const double scale = side == 0 ? 1 + e : 1 - e;
        auto y = x;
        for (Vec& p : y) p[a] *= scale;
        Vec b = box;
        b[a] *= scale;
        energy[side] = ewald_coulomb(y, q, b, 332.06371, 1e-13, r.alpha).energy;
      }
      const double derivative = -(energy[0] - energy[1]) / (2 * e);
      std::printf("net charge %.1f, axis %d: W_aa %.12g, -dE/de %.12g, relative %.2e\n", net, a,
                  r.virial_tensor[a], derivative,
                  std::abs(derivative - r.virial_tensor[a]) / std::abs(r.virial_tensor[a]));
      EXPECT_NEAR(r.virial_tensor[a], derivative, 1e-7 * largest) << "axis " << a;
    }
  }
}

TEST(EwaldReference, IndependentOfAlpha) {
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{4.0, 5.0, 6.5};
  for (double net : {0.0, 1.7}) {
    random_charges(20, box, 0.8, net, 99u, x, q);
    const auto a = ewald_coulomb(x, q, box, 1.0);
    for (double factor : {0.5, 1.8}) {
      const auto b = ewald_coulomb(x, q, box, 1.0, 1e-12, factor * a.alpha);
      const double rel = std::abs(a.energy - b.energy) / std::abs(a.energy);
      const double frel = max_abs_force_difference(a, b) / rms_force(a);
      std::printf(
          "net charge %.1f: alpha %.6f -> %.6f: energy %.15f vs %.15f, relative "
          "difference %.3e, max |dF| / rms F %.3e\n",
          net, a.alpha, b.alpha, a.energy, b.energy, rel, frel);
      EXPECT_LT(rel, 1e-10);
      EXPECT_LT(frel, 1e-10);
    }
  }
}

TEST(EwaldReference, ConvergedAtTheTolerance) {
  // A tighter tolerance changes the result by less than the looser one promised, and a
  // translation of every charge changes nothing.
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{4.0, 5.0, 6.5};
  random_charges(20, box, 0.8, 0.0, 31u, x, q);
  const auto loose = ewald_coulomb(x, q, box, 1.0, 1e-12);
  const auto tight = ewald_coulomb(x, q, box, 1.0, 1e-15);
  const double rel = std::abs(loose.energy - tight.energy) / std::abs(tight.energy);
  const double frel = max_abs_force_difference(loose, tight) / rms_force(tight);
  std::printf("tolerance 1e-12 vs 1e-15: energy relative %.3e, max |dF| / rms F %.3e\n", rel, frel);
  EXPECT_LT(rel, 1e-11);
  EXPECT_LT(frel, 1e-11);

  auto y = x;
  for (Vec& p : y) {
    p[0] += 13.3;
    p[1] -= 2.9;
    p[2] += 0.41;
  }
  const auto moved = ewald_coulomb(y, q, box, 1.0, 1e-12, loose.alpha);
  const double trel = std::abs(moved.energy - loose.energy) / std::abs(loose.energy);
  std::printf("translated: energy relative %.3e, max |dF| / rms F %.3e\n", trel,
              max_abs_force_difference(moved, loose) / rms_force(loose));
  EXPECT_LT(trel, 1e-11);
  EXPECT_LT(max_abs_force_difference(moved, loose) / rms_force(loose), 1e-10);
}

TEST(EwaldReference, ThousandChargesInSeconds) {
  // The size the PPPM comparisons use: consistent (W = E, no net force) and quick.
  std::vector<Vec> x;
  std::vector<double> q;
  const Vec box{20.0, 20.0, 20.0};
  random_charges(1000, box, 0.9, 0.0, 2024u, x, q);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = ewald_coulomb(x, q, box, 1.0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Vec sum{0.0, 0.0, 0.0};
  for (const Vec& f : r.force)
    for (int c = 0; c < 3; ++c) sum[c] += f[c];
  const double norm = std::sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
  const double wrel = std::abs(r.virial - r.energy) / std::abs(r.energy);
  std::printf(
      "1000 charges: %.2f s, alpha %.6f rc %.6f kc %.6f, |W - E| / |E| %.3e, "
      "|sum F| / rms F %.3e\n",
      seconds, r.alpha, r.rcut, r.kcut, wrel, norm / rms_force(r));
  EXPECT_LT(wrel, 1e-10);
  EXPECT_LT(norm / rms_force(r), 1e-11);
}

TEST(EwaldReference, RejectsBadArguments) {
  const std::vector<Vec> x{{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}};
  EXPECT_THROW(ewald_coulomb(x, {1.0}, {2.0, 2.0, 2.0}, 1.0), std::invalid_argument);
  EXPECT_THROW(ewald_coulomb(x, {1.0, -1.0}, {2.0, 0.0, 2.0}, 1.0), std::invalid_argument);
  EXPECT_THROW(ewald_coulomb(x, {1.0, -1.0}, {2.0, 2.0, 2.0}, 1.0, 0.0), std::invalid_argument);
  EXPECT_TRUE(ewald_coulomb({}, {}, {2.0, 2.0, 2.0}, 1.0).force.empty());
}
