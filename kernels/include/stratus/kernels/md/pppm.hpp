// Particle-particle particle-mesh (PPPM) kernels for the reciprocal part of Ewald sums
// (Hockney and Eastwood, Computer Simulation Using Particles, 1988; the optimal influence
// function and ik differentiation as in Deserno and Holm, J. Chem. Phys. 109 (1998) 7678):
// charge assignment of order P (cardinal B-splines, whose Fourier transform is sinc^P), the
// influence function, the solve in k-space, and the interpolation of the field back to the atoms.
// The solver (stratus::md::Pppm) owns the grids and the FFT; these are its device kernels.
//
// Grids are (x, y, z) with z fastest, periodic, of n[d] points of spacing h[d] = L[d] / n[d],
// point m at m * h (the box starts at the origin). Spectral data are [kz][ky][kx] (the layout of
// stratus::fft::DistributedFft).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"

#include <cstdint>

namespace stratus::kernels::md {

/// The largest charge-assignment order supported.
inline constexpr int kMaxPppmOrder = 7;

using Grid3 = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>;

/// Energy and virial sums of G |F|^2 over the spectral block (kz planes but 0 and Nyquist count
/// twice: the r2c half): the energy's E_k = G |F|^2 and the virial tensor's diagonal,
/// E_k (1 - 2 (1 + k^2 / (4 g^2)) k_a^2 / k^2) for a = x, y, z.
struct SpectralSums {
  double energy = 0;
  double virial[3] = {0, 0, 0};
  KOKKOS_INLINE_FUNCTION void operator+=(const SpectralSums& o) {
    energy += o.energy;
    for (int a = 0; a < 3; ++a) virial[a] += o.virial[a];
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile SpectralSums& o) volatile {
    energy = energy + o.energy;
    for (int a = 0; a < 3; ++a) virial[a] = virial[a] + o.virial[a];
  }
};

/// Aliases |m| <= kPppmAlias per axis in the numerator of the optimal influence function.
inline constexpr int kPppmAlias = 2;
/// Per axis: a value per spectral index and alias (q = k + 2 pi m / h, U^2(q), exp(-q^2/4g^2)).
using AliasTable = Kokkos::View<double * [2 * kPppmAlias + 1], Kokkos::LayoutRight, DevMemSpace>;
using AxisTable = Kokkos::View<double*, DevMemSpace>;

/// The optimal influence function of ik differentiation (Hockney and Eastwood, eq. 8-22) on a
/// spectral block [kz][ky][kx] from per-axis tables: G(k) = 4 pi / k^2 sum_m U^2(q_m)
/// (k . q_m / q_m^2) exp(-q_m^2 / 4g^2) / (prod_d den_d)^2, q_m = k + 2 pi m / h, with den_d =
/// sum_m U^2 of axis d (the denominator is separable). G(0) = 0.
inline void optimal_influence(const AxisTable (&k)[3], const AliasTable (&q)[3],
                              const AliasTable (&u2)[3], const AliasTable (&ex)[3],
                              const AxisTable (&den)[3],
                              const Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>& g) {
  const AxisTable kx = k[0], ky = k[1], kz = k[2];
  const AliasTable qx = q[0], qy = q[1], qz = q[2], ux = u2[0], uy = u2[1], uz = u2[2], ex_ = ex[0],
                   ey = ex[1], ez = ex[2];
  const AxisTable dx = den[0], dy = den[1], dz = den[2];
  constexpr double kFourPi = 12.566370614359172953850573533118;
  constexpr int na = 2 * kPppmAlias + 1;
  Kokkos::parallel_for(
      "md::pppm_influence",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>(
          {0, 0, 0},
          {static_cast<std::int64_t>(g.extent(0)), static_cast<std::int64_t>(g.extent(1)),
           static_cast<std::int64_t>(g.extent(2))}),
      KOKKOS_LAMBDA(const std::int64_t c, const std::int64_t b, const std::int64_t a) {
        const double k0 = kx(a), k1 = ky(b), k2 = kz(c);
        const double ksq = k0 * k0 + k1 * k1 + k2 * k2;
        if (ksq == 0) {
          g(c, b, a) = 0;
          return;
        }
        double numerator = 0;
        for (int i = 0; i < na; ++i)
          for (int j = 0; j < na; ++j)
            for (int l = 0; l < na; ++l) {
              const double q0 = qx(a, i), q1 = qy(b, j), q2 = qz(c, l);
              const double qsq = q0 * q0 + q1 * q1 + q2 * q2;
              const double dot = k0 * q0 + k1 * q1 + k2 * q2;
              numerator +=
                  ux(a, i) * uy(b, j) * uz(c, l) * ex_(a, i) * ey(b, j) * ez(c, l) * dot / qsq;
            }
        const double denominator = dx(a) * dy(b) * dz(c);
        g(c, b, a) = kFourPi / ksq * numerator / (denominator * denominator);
      });
}

/// B-spline weights of order P for a point at grid coordinate u (position / h): the grid points
/// m = first - j (j = 0 .. P-1) get w[j] = M_P(u + P/2 - m), M_P the cardinal B-spline on
/// [0, P] (Essmann et al., J. Chem. Phys. 103 (1995) 8577, eq. 4.1 recursion). Sum of w = 1.
KOKKOS_INLINE_FUNCTION int bspline_weights(Real u, int order, Real* w) {
  const Real s = u + Real(0.5) * order;
  const Real fl = kmath::floor(s);
  const Real frac = s - fl;
  // M_1: 1 on [0, 1): w[0] = M(frac).
  w[0] = 1;
  for (int j = 1; j < order; ++j) w[j] = 0;
  for (int n = 2; n <= order; ++n) {
    const Real inv = Real(1) / (n - 1);
    for (int j = n - 1; j >= 0; --j) {
      const Real t = frac + j;  // M_n(t) = t M_{n-1}(t) + (n - t) M_{n-1}(t - 1), / (n - 1)
      const Real a = j < n - 1 ? w[j] : Real(0);
      const Real b = j > 0 ? w[j - 1] : Real(0);
      w[j] = (t * a + (n - t) * b) * inv;
    }
  }
  return static_cast<int>(fl);
}

/// Wraps a grid index into [0, n).
KOKKOS_INLINE_FUNCTION int wrap_index(int m, int n) {
  m %= n;
  return m < 0 ? m + n : m;
}

/// The grid indices first - j (j = 0 .. order-1) wrapped into [0, n): one division per atom and
/// axis, then a compare per point.
KOKKOS_INLINE_FUNCTION void wrapped_stencil(int first, int order, int n, int* m) {
  int w = wrap_index(first, n);
  for (int j = 0; j < order; ++j) {
    m[j] = w;
    w = w == 0 ? n - 1 : w - 1;
  }
}

/// ADDS the charges of atoms [0, nlocal) to `rho` (charge per grid point, not per volume). With
/// one thread on a host back-end the adds are plain ones; elsewhere atomic.
inline void assign_charges(const Vectors& x, const Charges& q, int nlocal, int order,
                           Kokkos::Array<Real, 3> inv_h, const Grid3& rho) {
  const int nx = static_cast<int>(rho.extent(0)), ny = static_cast<int>(rho.extent(1)),
            nz = static_cast<int>(rho.extent(2));
  constexpr bool host = Kokkos::SpaceAccessibility<DevExecSpace, Kokkos::HostSpace>::accessible;
  const bool plain = host && DevExecSpace().concurrency() == 1;
  Kokkos::parallel_for(
      "md::pppm_assign", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        Real wx[kMaxPppmOrder], wy[kMaxPppmOrder], wz[kMaxPppmOrder];
        int mx[kMaxPppmOrder], my[kMaxPppmOrder], mz[kMaxPppmOrder];
        wrapped_stencil(bspline_weights(x(i, 0) * inv_h[0], order, wx), order, nx, mx);
        wrapped_stencil(bspline_weights(x(i, 1) * inv_h[1], order, wy), order, ny, my);
        wrapped_stencil(bspline_weights(x(i, 2) * inv_h[2], order, wz), order, nz, mz);
        const Real qi = q(i);
        for (int a = 0; a < order; ++a)
          for (int b = 0; b < order; ++b) {
            const Real wxy = qi * wx[a] * wy[b];
            double* const row = &rho(mx[a], my[b], 0);
            if (plain)
              for (int c = 0; c < order; ++c) row[mz[c]] += wxy * wz[c];
            else
              for (int c = 0; c < order; ++c) Kokkos::atomic_add(&row[mz[c]], wxy * wz[c]);
          }
      });
}

/// ADDS q_i * scale * (the field interpolated at atom i) to f(i) for atoms [0, nlocal), the
/// field's components on the grids ex, ey, ez.
inline void interpolate_forces(const Vectors& x, const Charges& q, int nlocal, int order,
                               Kokkos::Array<Real, 3> inv_h, Real scale, const Grid3& ex,
                               const Grid3& ey, const Grid3& ez, const Vectors& f) {
  const int nx = static_cast<int>(ex.extent(0)), ny = static_cast<int>(ex.extent(1)),
            nz = static_cast<int>(ex.extent(2));
  Kokkos::parallel_for(
      "md::pppm_interpolate", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i) {
        Real wx[kMaxPppmOrder], wy[kMaxPppmOrder], wz[kMaxPppmOrder];
        int mx[kMaxPppmOrder], my[kMaxPppmOrder], mz[kMaxPppmOrder];
        wrapped_stencil(bspline_weights(x(i, 0) * inv_h[0], order, wx), order, nx, mx);
        wrapped_stencil(bspline_weights(x(i, 1) * inv_h[1], order, wy), order, ny, my);
        wrapped_stencil(bspline_weights(x(i, 2) * inv_h[2], order, wz), order, nz, mz);
        Real e[3] = {0, 0, 0};
        for (int a = 0; a < order; ++a)
          for (int b = 0; b < order; ++b) {
            const Real wxy = wx[a] * wy[b];
            const double* const rx = &ex(mx[a], my[b], 0);
            const double* const ry = &ey(mx[a], my[b], 0);
            const double* const rz = &ez(mx[a], my[b], 0);
            for (int c = 0; c < order; ++c) {
              const Real w = wxy * wz[c];
              e[0] += w * rx[mz[c]];
              e[1] += w * ry[mz[c]];
              e[2] += w * rz[mz[c]];
            }
          }
        const Real s = scale * q(i);
        for (int d = 0; d < 3; ++d) f(i, d) += s * e[d];
      });
}

}  // namespace stratus::kernels::md
