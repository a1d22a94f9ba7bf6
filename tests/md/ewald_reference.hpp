// A direct Ewald sum for tests: the Coulomb energy, forces and virial of point charges in an
// orthogonal periodic box, in double precision on the host (no Kokkos), accurate to about the
// requested relative tolerance (1e-12 by default). It is the reference against which the PPPM
// solver's forces are measured; it is not fast (O(N^2 * image shifts + N * k vectors)) and is
// meant for up to about a thousand charges.
//
// The sum (P. P. Ewald, Ann. Phys. 369 (1921) 253; the form and the notation of M. P. Allen,
// D. J. Tildesley, "Computer Simulation of Liquids", 2nd ed., OUP 2017, section 6.2, and of
// D. Frenkel, B. Smit, "Understanding Molecular Simulation", 2nd ed., 2002, section 12.1):
//
//   E / qqrd2e = E_real + E_recip + E_self + E_background, with
//   E_real       = sum_{i<j} sum_n q_i q_j erfc(alpha r) / r  +  1/2 sum_i sum_{n != 0} q_i^2
//                  erfc(alpha |n L|) / |n L|,            r = |r_i - r_j + n L| over all shifts n
//   E_recip      = (2 pi / V) sum_{k != 0} exp(-k^2 / (4 alpha^2)) / k^2 |S(k)|^2,
//                  S(k) = sum_j q_j exp(i k.r_j), k = 2 pi (mx / Lx, my / Ly, mz / Lz)
//   E_self       = -alpha / sqrt(pi) sum_i q_i^2
//   E_background = -pi (sum_i q_i)^2 / (2 V alpha^2)     (the uniform neutralising background)
//
// with tin-foil (conducting) boundary conditions: no surface dipole term. The background term
// makes the total independent of alpha for a charged system too (it is the k -> 0 limit that
// the uniform background removes; see e.g. S. W. de Leeuw, J. W. Perram, E. R. Smith, Proc. R.
// Soc. Lond. A 373 (1980) 27, and J.-M. Caillol, J. Chem. Phys. 101 (1994) 6080).
//
// Convergence: the real-space sum is cut at rc with erfc(alpha rc) ~ exp(-(alpha rc)^2) and the
// reciprocal sum at kc with exp(-kc^2 / (4 alpha^2)): both are set to `tolerance`, i.e.
// alpha rc = kc / (2 alpha) = s with exp(-s^2) = tolerance (the leading factors of the error
// estimates of J. Kolafa, J. W. Perram, Mol. Simul. 9 (1992) 351, which are smaller than these
// exponentials by further powers of s). alpha itself only sets the balance of the two costs;
// it is chosen to balance N^2/2 real-space pairs in the sphere of radius rc against N times the
// k vectors in the sphere of radius kc (the classical N^(1/6) / L scaling, J. W. Perram,
// H. G. Petersen, S. W. de Leeuw, Mol. Phys. 65 (1988) 875), and can be overridden (the result
// must not depend on it: that is one of the tests).
//
// Virial: W = sum over pairs (and periodic images) r_ij . f_ij for the real-space part, and for
// the reciprocal and background parts the same quantity defined through a uniform scaling of the
// box and positions, W = -dE/dlambda at lambda = 1 for r -> lambda r, L -> lambda L with alpha
// held fixed: W_recip = (2 pi / V) sum_k exp(-k^2/(4 alpha^2)) / k^2 |S|^2 (1 - k^2 / (2 alpha^2))
// (the trace of the usual reciprocal-space virial tensor), W_background = 3 E_background,
// W_self = 0. W is the trace of the virial tensor (P V = N k T + W / 3); for a pure Coulomb
// system, a homogeneous potential of degree -1, W = E exactly, a check of the whole sum.
// The tensor's diagonal, W_aa = -dE/de_a for the scaling r_a -> (1 + e_a) r_a, L_a -> (1 + e_a)
// L_a of one axis: sum r_a f_a over the real-space pairs, per k vector of the reciprocal sum
// E_k (1 - 2 (1 + k^2 / (4 alpha^2)) k_a^2 / k^2) (Essmann et al., J. Chem. Phys. 103 (1995)
// 8577, eq. 2.8), and E_background on each axis (it scales as 1 / V).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace stratus::md_test {

struct EwaldResult {
  double energy = 0;                         ///< qqrd2e * the Ewald sum
  std::vector<std::array<double, 3>> force;  ///< per charge, qqrd2e * -dE/dr_i
  double virial = 0;                         ///< qqrd2e * sum r.f (trace; W = E for Coulomb)
  std::array<double, 3> virial_tensor{};     ///< its diagonal, W_xx, W_yy, W_zz (sum: virial)
  double alpha = 0;                          ///< the splitting parameter used (1/length)
  double rcut = 0;                           ///< the real-space cutoff used (length)
  double kcut = 0;                           ///< the reciprocal-space cutoff used (1/length)
};

/// The Coulomb energy qqrd2e * sum_{i<j, all images} q_i q_j / r (Ewald conventions: tin-foil
/// boundary, the neutralising background term -pi (sum q)^2 / (2 V alpha^2) for non-neutral
/// systems), the forces and the virial of charges q at positions x in the orthogonal periodic
/// box [0, box) (positions may lie outside it: only differences modulo the box matter), by an
/// Ewald sum whose real-space and reciprocal-space truncations are both below `tolerance`
/// relative. `alpha` > 0 overrides the splitting parameter (the cutoffs then follow from it and
/// the tolerance); alpha <= 0 (the default) chooses it to balance the two sums' costs.
inline EwaldResult ewald_coulomb(const std::vector<std::array<double, 3>>& x,
                                 const std::vector<double>& q, std::array<double, 3> box,
                                 double qqrd2e, double tolerance = 1e-12, double alpha = 0) {
  using std::numbers::pi;
  const std::size_t n = x.size();
  if (q.size() != n)
    throw std::invalid_argument("ewald_coulomb: " + std::to_string(n) + " positions but " +
                                std::to_string(q.size()) + " charges");
  for (double l : box)
    if (!(l > 0) || !std::isfinite(l))
      throw std::invalid_argument("ewald_coulomb: box edges must be finite and > 0");
  if (!(tolerance > 0 && tolerance < 1))
    throw std::invalid_argument("ewald_coulomb: tolerance must lie in (0, 1)");

  EwaldResult out;
  out.force.assign(n, {0.0, 0.0, 0.0});
  if (n == 0) return out;

  const double volume = box[0] * box[1] * box[2];
  // exp(-s^2) = tolerance: alpha rc = s and kc / (2 alpha) = s.
  const double s = std::sqrt(-std::log(tolerance));
  if (!(alpha > 0)) {
    // Costs ~ (N^2 / 2) (4 pi / 3) rc^3 / V (pairs within rc) and N (1/2) (4 pi / 3) kc^3
    // V / (2 pi)^3 (half of the k vectors within kc); with rc = s / alpha and kc = 2 alpha s
    // they are equal when alpha^6 V^2 = N pi^3, i.e. alpha = (N pi^3)^(1/6) / V^(1/3).
    alpha = std::pow(static_cast<double>(n) * pi * pi * pi, 1.0 / 6.0) / std::cbrt(volume);
  }
  const double rc = s / alpha;
  const double kc = 2.0 * alpha * s;
  out.alpha = alpha;
  out.rcut = rc;
  out.kcut = kc;

  double e_real = 0, w_real = 0;
  std::array<double, 3> wt_real{0.0, 0.0, 0.0};
  const double rc2 = rc * rc;
  const double two_alpha_over_sqrt_pi = 2.0 * alpha / std::sqrt(pi);
  // Image shifts: after the minimum-image reduction |d_c| <= L_c / 2, so |d_c + m L_c| <= rc
  // needs |m| <= rc / L_c + 1/2.
  std::array<int, 3> mmax{};
  for (int c = 0; c < 3; ++c) mmax[c] = static_cast<int>(std::ceil(rc / box[c] + 0.5));

  // The pair term at separation vector (dx, dy, dz), r2 = its square: adds the energy, r.f and
  // its components r_a f_a, and returns |f| / |r| (the force on the first charge is q_i q_j g r).
  const auto pair = [&](double dx, double dy, double dz, double r2, double qq, double weight,
                        double& g) {
    const double r = std::sqrt(r2);
    const double erfc_term = std::erfc(alpha * r) / r;
    const double gauss = two_alpha_over_sqrt_pi * std::exp(-alpha * alpha * r2);
    e_real += weight * qq * erfc_term;
    w_real += weight * qq * (erfc_term + gauss);  // r . f = -r dU/dr
    g = (erfc_term + gauss) / r2;
    wt_real[0] += weight * qq * g * dx * dx;
    wt_real[1] += weight * qq * g * dy * dy;
    wt_real[2] += weight * qq * g * dz * dz;
  };

  for (std::size_t i = 0; i < n; ++i) {
    // Self images (n != 0): no force (the shifts n and -n cancel), but energy and virial.
    if (q[i] != 0) {
      for (int a = -mmax[0]; a <= mmax[0]; ++a)
        for (int b = -mmax[1]; b <= mmax[1]; ++b)
          for (int c = -mmax[2]; c <= mmax[2]; ++c) {
            if (a == 0 && b == 0 && c == 0) continue;
            const double dx = a * box[0], dy = b * box[1], dz = c * box[2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 > rc2) continue;
            double g;
            pair(dx, dy, dz, r2, q[i] * q[i], 0.5, g);
          }
    }
    for (std::size_t j = i + 1; j < n; ++j) {
      const double qq = q[i] * q[j];
      if (qq == 0) continue;
      std::array<double, 3> d{};
      for (int c = 0; c < 3; ++c) {
        d[c] = x[i][c] - x[j][c];
        d[c] -= box[c] * std::round(d[c] / box[c]);
      }
      std::array<double, 3> f{0.0, 0.0, 0.0};
      for (int a = -mmax[0]; a <= mmax[0]; ++a) {
        const double dx = d[0] + a * box[0];
        if (dx * dx > rc2) continue;
        for (int b = -mmax[1]; b <= mmax[1]; ++b) {
          const double dy = d[1] + b * box[1];
          if (dx * dx + dy * dy > rc2) continue;
          for (int c = -mmax[2]; c <= mmax[2]; ++c) {
            const double dz = d[2] + c * box[2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 > rc2 || r2 == 0) continue;  // r2 == 0: coincident charges, undefined
            double g;
            pair(dx, dy, dz, r2, qq, 1.0, g);
            f[0] += g * dx;
            f[1] += g * dy;
            f[2] += g * dz;
          }
        }
      }
      for (int c = 0; c < 3; ++c) {
        out.force[i][c] += qq * f[c];
        out.force[j][c] -= qq * f[c];
      }
    }
  }

  // Reciprocal space: k = 2 pi m / L over the half space (m_x > 0, or m_x = 0 and m_y > 0, or
  // m_x = m_y = 0 and m_z > 0); k and -k give equal terms, hence the factors of 2 below.
  std::array<int, 3> kmax{};
  for (int c = 0; c < 3; ++c) kmax[c] = static_cast<int>(std::floor(kc * box[c] / (2 * pi)));
  // e[c][m][j] = exp(i 2 pi m x_j,c / L_c) for m = 0..kmax[c] (negative m by conjugation), each
  // from its own cos and sin so that no error accumulates with m.
  std::array<std::vector<std::vector<std::complex<double>>>, 3> e;
  for (int c = 0; c < 3; ++c) {
    e[c].assign(static_cast<std::size_t>(kmax[c]) + 1, std::vector<std::complex<double>>(n));
    for (int m = 0; m <= kmax[c]; ++m)
      for (std::size_t j = 0; j < n; ++j) {
        const double phase = 2 * pi * m * x[j][c] / box[c];
        e[c][m][j] = {std::cos(phase), std::sin(phase)};
      }
  }
  const auto power = [&](int c, int m, std::size_t j) {
    return m >= 0 ? e[c][m][j] : std::conj(e[c][-m][j]);
  };
  double e_recip = 0, w_recip = 0;
  std::array<double, 3> wt_recip{0.0, 0.0, 0.0};
  const double kc2 = kc * kc;
  const double inv_4alpha2 = 1.0 / (4 * alpha * alpha);
  std::vector<std::complex<double>> exy(n), eikr(n);
  std::vector<std::array<double, 3>> f_recip(n, {0.0, 0.0, 0.0});
  for (int a = 0; a <= kmax[0]; ++a) {
    const double kx = 2 * pi * a / box[0];
    for (int b = -kmax[1]; b <= kmax[1]; ++b) {
      if (a == 0 && b < 0) continue;
      const double ky = 2 * pi * b / box[1];
      if (kx * kx + ky * ky > kc2) continue;
      for (std::size_t j = 0; j < n; ++j) exy[j] = power(0, a, j) * power(1, b, j);
      for (int c = -kmax[2]; c <= kmax[2]; ++c) {
        if (a == 0 && b == 0 && c <= 0) continue;
        const double kz = 2 * pi * c / box[2];
        const double k2 = kx * kx + ky * ky + kz * kz;
        if (k2 > kc2) continue;
        double re = 0, im = 0;  // S(k) = sum_j q_j exp(i k.r_j)
        for (std::size_t j = 0; j < n; ++j) {
          eikr[j] = exy[j] * power(2, c, j);
          re += q[j] * eikr[j].real();
          im += q[j] * eikr[j].imag();
        }
        const double green = std::exp(-k2 * inv_4alpha2) / k2;
        const double s2 = re * re + im * im;
        e_recip += 2 * green * s2;
        w_recip += 2 * green * s2 * (1 - 2 * k2 * inv_4alpha2);
        const double kfac = 2 * (1 / k2 + inv_4alpha2);
        wt_recip[0] += 2 * green * s2 * (1 - kfac * kx * kx);
        wt_recip[1] += 2 * green * s2 * (1 - kfac * ky * ky);
        wt_recip[2] += 2 * green * s2 * (1 - kfac * kz * kz);
        // F_j = (4 pi q_j / V) sum_{all k} green k (Re S sin(k.r_j) - Im S cos(k.r_j)).
        for (std::size_t j = 0; j < n; ++j) {
          const double t = 2 * green * q[j] * (re * eikr[j].imag() - im * eikr[j].real());
          f_recip[j][0] += t * kx;
          f_recip[j][1] += t * ky;
          f_recip[j][2] += t * kz;
        }
      }
    }
  }
  const double recip_pref = 2 * pi / volume;
  e_recip *= recip_pref;
  w_recip *= recip_pref;
  for (double& w : wt_recip) w *= recip_pref;
  for (std::size_t j = 0; j < n; ++j)
    for (int c = 0; c < 3; ++c) out.force[j][c] += 2 * recip_pref * f_recip[j][c];

  double qsum = 0, q2sum = 0;
  for (double qi : q) {
    qsum += qi;
    q2sum += qi * qi;
  }
  const double e_self = -alpha / std::sqrt(pi) * q2sum;
  const double e_background = -pi * qsum * qsum / (2 * volume * alpha * alpha);

  out.energy = qqrd2e * (e_real + e_recip + e_self + e_background);
  out.virial = qqrd2e * (w_real + w_recip + 3 * e_background);
  for (std::size_t a = 0; a < 3; ++a)
    out.virial_tensor[a] = qqrd2e * (wt_real[a] + wt_recip[a] + e_background);
  for (auto& f : out.force)
    for (double& fc : f) fc *= qqrd2e;
  return out;
}

}  // namespace stratus::md_test
