// Bonded interactions of molecular topologies: bond, angle, dihedral and improper styles as
// LAMMPS defines them (same coefficients, same units), one generic kernel over a rank's list of
// terms, and the special-neighbour queries (1-2, 1-3, 1-4 partners) that pair lists use to
// exclude or scale the pairs of bonded atoms.
//
// A term of N atoms is a row of a TermList<N>: its type, then the N atoms' local indices (owned
// atoms or ghosts, in one periodic image: the solver picks, at each list build, the image of
// every partner closest to the term's owner, so no minimum image is needed here). A style is a
// copyable struct with
//   KOKKOS_INLINE_FUNCTION Real operator()(int type, const Real (&x)[N][3], Real (&f)[N][3]) const
// that returns the term's energy and sets the force on each of its atoms. The forces of a term sum
// to zero, so the virial sum_a x_a f_a (each diagonal component) does not depend on the image
// chosen.
//
// Formulas (LAMMPS's documentation of each style; energies in the deck's units, angles given in
// degrees in the data file and converted once on the host):
//   bond harmonic       E = K (r - r0)^2
//   angle harmonic      E = K (theta - theta0)^2
//   dihedral charmm     E = K [1 + cos(n phi - d)]            (weight w = 0: 1-4 pairs come from
//                                                              special_bonds)
//   dihedral opls       E = K1/2 (1 + cos phi) + K2/2 (1 - cos 2 phi) + K3/2 (1 + cos 3 phi)
//                           + K4/2 (1 - cos 4 phi)
//   improper harmonic   E = K (chi - chi0)^2, chi the angle (0 .. 180 degrees) between the planes
//                       (i, j, k) and (j, k, l)
// phi is the dihedral angle of atoms i j k l in the IUPAC convention (trans = 180 degrees), from
// atan2 (no acos near 0 or 180), and its gradient is Blondel and Karplus's, J. Comput. Chem. 17
// (1996) 1132, which stays finite where sin(phi) = 0.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"

namespace stratus::kernels::md {

/// Terms of N atoms: row t is (type, atom 0, ..., atom N-1), local indices.
template <int N>
using TermList = Kokkos::View<int * [N + 1], Kokkos::LayoutRight, DevMemSpace>;

/// Coefficients per type: row t holds a style's numbers for type t.
using TypeCoeffs = Kokkos::View<Real**, Kokkos::LayoutRight, DevMemSpace>;

namespace detail {

KOKKOS_INLINE_FUNCTION Real dot3(const Real* a, const Real* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
KOKKOS_INLINE_FUNCTION void cross3(const Real* a, const Real* b, Real* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/// The dihedral angle phi of atoms 0 1 2 3 (IUPAC: trans = pi, in (-pi, pi]) and its gradient
/// with respect to each atom's position (Blondel and Karplus 1996, eqs. 27).
KOKKOS_INLINE_FUNCTION Real dihedral_angle(const Real (&x)[4][3], Real (&grad)[4][3]) {
  Real f[3], g[3], h[3];  // F = x0 - x1, G = x1 - x2, H = x3 - x2
  for (int d = 0; d < 3; ++d) {
    f[d] = x[0][d] - x[1][d];
    g[d] = x[1][d] - x[2][d];
    h[d] = x[3][d] - x[2][d];
  }
  Real a[3], b[3];  // A = F x G, B = H x G
  cross3(f, g, a);
  cross3(h, g, b);
  const Real aa = dot3(a, a), bb = dot3(b, b), gg = dot3(g, g);
  const Real gl = kmath::sqrt(gg);
  Real axb[3];
  cross3(b, a, axb);
  // cos phi = A.B / (|A||B|), sin phi = (B x A).G / (|A||B||G|)
  const Real phi = kmath::atan2(dot3(axb, g) / gl, dot3(a, b));
  const Real fg = dot3(f, g), hg = dot3(h, g);
  for (int d = 0; d < 3; ++d) {
    const Real ga = -gl / aa * a[d];  // d phi / d x0
    const Real gb = gl / bb * b[d];   // d phi / d x3
    const Real mid = fg / (aa * gl) * a[d] - hg / (bb * gl) * b[d];
    grad[0][d] = ga;
    grad[1][d] = -ga + mid;
    grad[2][d] = -gb - mid;
    grad[3][d] = gb;
  }
  return phi;
}

}  // namespace detail

/// E = K (r - r0)^2; coefficients (K, r0).
struct BondHarmonic {
  TypeCoeffs c;
  KOKKOS_INLINE_FUNCTION Real operator()(int t, const Real (&x)[2][3], Real (&f)[2][3]) const {
    Real d[3];
    for (int k = 0; k < 3; ++k) d[k] = x[0][k] - x[1][k];
    const Real r = kmath::sqrt(detail::dot3(d, d));
    const Real dr = r - c(t, 1);
    const Real fr = r > 0 ? -2 * c(t, 0) * dr / r : Real(0);  // F / r on atom 0
    for (int k = 0; k < 3; ++k) {
      f[0][k] = fr * d[k];
      f[1][k] = -fr * d[k];
    }
    return c(t, 0) * dr * dr;
  }
};

/// E = K (theta - theta0)^2, theta the angle at atom 1; coefficients (K, theta0 in radians).
struct AngleHarmonic {
  TypeCoeffs c;
  KOKKOS_INLINE_FUNCTION Real operator()(int t, const Real (&x)[3][3], Real (&f)[3][3]) const {
    Real a[3], b[3];
    for (int k = 0; k < 3; ++k) {
      a[k] = x[0][k] - x[1][k];
      b[k] = x[2][k] - x[1][k];
    }
    const Real ra2 = detail::dot3(a, a), rb2 = detail::dot3(b, b);
    const Real ra = kmath::sqrt(ra2), rb = kmath::sqrt(rb2);
    Real cs = detail::dot3(a, b) / (ra * rb);
    cs = cs > 1 ? Real(1) : (cs < -1 ? Real(-1) : cs);
    Real sn = kmath::sqrt(1 - cs * cs);
    if (sn < Real(0.001)) sn = Real(0.001);  // as LAMMPS: a straight angle keeps a finite force
    const Real dtheta = kmath::acos(cs) - c(t, 1);
    // dE/dtheta = 2 K dtheta; d theta / d cos = -1 / sin
    const Real s = 2 * c(t, 0) * dtheta / sn;  // -dE/dcos
    for (int k = 0; k < 3; ++k) {
      // d cos / d a = b / (ra rb) - cos a / ra^2, likewise for b
      f[0][k] = s * (b[k] / (ra * rb) - cs * a[k] / ra2);
      f[2][k] = s * (a[k] / (ra * rb) - cs * b[k] / rb2);
      f[1][k] = -f[0][k] - f[2][k];
    }
    return c(t, 0) * dtheta * dtheta;
  }
};

/// E = K [1 + cos(n phi - d)]; coefficients (K, n, d in radians).
struct DihedralCharmm {
  TypeCoeffs c;
  KOKKOS_INLINE_FUNCTION Real operator()(int t, const Real (&x)[4][3], Real (&f)[4][3]) const {
    Real grad[4][3];
    const Real phi = detail::dihedral_angle(x, grad);
    const Real k = c(t, 0), n = c(t, 1), arg = n * phi - c(t, 2);
    const Real de = -k * n * kmath::sin(arg);  // dE/dphi
    for (int a = 0; a < 4; ++a)
      for (int d = 0; d < 3; ++d) f[a][d] = -de * grad[a][d];
    return k * (1 + kmath::cos(arg));
  }
};

/// E = K1/2 (1 + cos phi) + K2/2 (1 - cos 2phi) + K3/2 (1 + cos 3phi) + K4/2 (1 - cos 4phi);
/// coefficients (K1, K2, K3, K4).
struct DihedralOpls {
  TypeCoeffs c;
  KOKKOS_INLINE_FUNCTION Real operator()(int t, const Real (&x)[4][3], Real (&f)[4][3]) const {
    Real grad[4][3];
    const Real phi = detail::dihedral_angle(x, grad);
    const Real k1 = c(t, 0), k2 = c(t, 1), k3 = c(t, 2), k4 = c(t, 3);
    const Real e = Real(0.5) * (k1 * (1 + kmath::cos(phi)) + k2 * (1 - kmath::cos(2 * phi)) +
                                k3 * (1 + kmath::cos(3 * phi)) + k4 * (1 - kmath::cos(4 * phi)));
    const Real de = Real(0.5) * (-k1 * kmath::sin(phi) + 2 * k2 * kmath::sin(2 * phi) -
                                 3 * k3 * kmath::sin(3 * phi) + 4 * k4 * kmath::sin(4 * phi));
    for (int a = 0; a < 4; ++a)
      for (int d = 0; d < 3; ++d) f[a][d] = -de * grad[a][d];
    return e;
  }
};

/// E = K (chi - chi0)^2, chi = |phi| of atoms i j k l (the angle between the planes (i, j, k)
/// and (j, k, l), 0 .. pi); coefficients (K, chi0 in radians).
struct ImproperHarmonic {
  TypeCoeffs c;
  KOKKOS_INLINE_FUNCTION Real operator()(int t, const Real (&x)[4][3], Real (&f)[4][3]) const {
    Real grad[4][3];
    const Real phi = detail::dihedral_angle(x, grad);
    const Real sign = phi < 0 ? Real(-1) : Real(1);
    const Real dchi = sign * phi - c(t, 1);
    const Real de = 2 * c(t, 0) * dchi * sign;  // dE/dphi
    for (int a = 0; a < 4; ++a)
      for (int d = 0; d < 3; ++d) f[a][d] = -de * grad[a][d];
    return c(t, 0) * dchi * dchi;
  }
};

/// Energy and the virial tensor's diagonal, virial[d] = sum_a x_a,d f_a,d over the terms' atoms
/// a (d = x, y, z; their sum is the scalar sum_a x_a . f_a), of a rank's terms; a Kokkos
/// reduction value.
struct BondedSums {
  Real energy = 0;
  Real virial[3] = {0, 0, 0};
  Real coul = 0;  ///< the Coulomb energy of special pairs (special_pair_forces)
  KOKKOS_INLINE_FUNCTION void operator+=(const BondedSums& o) {
    energy += o.energy;
    for (int d = 0; d < 3; ++d) virial[d] += o.virial[d];
    coul += o.coul;
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile BondedSums& o) volatile {
    energy = energy + o.energy;
    for (int d = 0; d < 3; ++d) virial[d] = virial[d] + o.virial[d];
    coul = coul + o.coul;
  }
};

/// ADDS the forces of terms [0, n) of `list` to f (atomically: terms share atoms, owned and
/// ghost); returns their energy and virial.
template <int N, class Style>
BondedSums bonded_forces(const Style& style, const TermList<N>& list, int n, const Vectors& x,
                         const Vectors& f) {
  BondedSums sums;
  Kokkos::parallel_reduce(
      "md::bonded_forces", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int t, BondedSums& acc) {
        Real xs[N][3], fs[N][3];
        for (int a = 0; a < N; ++a)
          for (int d = 0; d < 3; ++d) xs[a][d] = x(list(t, 1 + a), d);
        acc.energy += style(list(t, 0), xs, fs);
        for (int a = 0; a < N; ++a)
          for (int d = 0; d < 3; ++d) {
            Kokkos::atomic_add(&f(list(t, 1 + a), d), fs[a][d]);
            acc.virial[d] += xs[a][d] * fs[a][d];
          }
      },
      sums);
  return sums;
}

}  // namespace stratus::kernels::md
