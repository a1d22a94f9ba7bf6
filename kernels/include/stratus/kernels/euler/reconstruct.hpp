// Reconstruction of face values from cell averages along one axis: first order (piecewise
// constant), piecewise linear with a slope limiter (minmod, MC, van Leer), and fifth-order
// WENO (Jiang & Shu 1996 weights, or the WENO-Z weights of Borges et al. 2008). Device
// functions on scalars, templates on the method (the kernels are instantiated per scheme, so no
// switch runs per face); the flux kernels apply them variable by variable.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

namespace stratus::kernels::euler {

enum class Reconstruction : int { first_order = 0, plm = 1, weno5 = 2, weno5z = 3 };
enum class Limiter : int { minmod = 0, mc = 1, van_leer = 2 };

/// Ghost cells the reconstruction needs on each side of a face.
KOKKOS_INLINE_FUNCTION constexpr int stencil_width(Reconstruction r) {
  return r == Reconstruction::first_order ? 1 : r == Reconstruction::plm ? 2 : 3;
}

/// True for the reconstructions of conserved variables (WENO); the others reconstruct
/// primitive ones.
KOKKOS_INLINE_FUNCTION constexpr bool reconstructs_conserved(Reconstruction r) {
  return r == Reconstruction::weno5 || r == Reconstruction::weno5z;
}

/// Limited slope of a cell from its left and right differences dl = q0 - q-1, dr = q+1 - q0:
/// zero at an extremum (dl dr <= 0). Written as selects, without branches, so that the face
/// loops vectorise (the discarded value may be NaN: no code traps on it).
template <Limiter L>
KOKKOS_FORCEINLINE_FUNCTION Real limited_slope(Real dl, Real dr) {
  const Real al = kmath::fabs(dl), ar = kmath::fabs(dr);
  const Real s = dl > 0 ? Real(1) : Real(-1);
  Real slope;
  if constexpr (L == Limiter::minmod) {
    slope = s * (al < ar ? al : ar);
  } else if constexpr (L == Limiter::mc) {
    const Real m = 2 * al < 2 * ar ? 2 * al : 2 * ar;
    const Real c = Real(0.5) * (al + ar);
    slope = s * (c < m ? c : m);
  } else {
    slope = 2 * dl * dr / (dl + dr);
  }
  return dl * dr > 0 ? slope : Real(0);
}

/// WENO5 value at the right face (i + 1/2) of cell i from q(i-2) .. q(i+2) = a, b, c, d, e.
/// Mirror the arguments (e, d, c, b, a) for the left face (i - 1/2). Z: the WENO-Z weights.
template <bool Z>
KOKKOS_FORCEINLINE_FUNCTION Real weno5(Real a, Real b, Real c, Real d, Real e) {
  const Real p0 = (2 * a - 7 * b + 11 * c) / 6;
  const Real p1 = (-b + 5 * c + 2 * d) / 6;
  const Real p2 = (2 * c + 5 * d - e) / 6;
  const Real t0 = a - 2 * b + c, s0 = a - 4 * b + 3 * c;
  const Real t1 = b - 2 * c + d, s1 = b - d;
  const Real t2 = c - 2 * d + e, s2 = 3 * c - 4 * d + e;
  const Real b0 = Real(13) / 12 * t0 * t0 + Real(0.25) * s0 * s0;
  const Real b1 = Real(13) / 12 * t1 * t1 + Real(0.25) * s1 * s1;
  const Real b2 = Real(13) / 12 * t2 * t2 + Real(0.25) * s2 * s2;
  Real w0, w1, w2;
  if constexpr (Z) {
    // WENO-Z: alpha_k = d_k (1 + (tau5 / (beta_k + eps))^2), tau5 = |beta0 - beta2|.
    const Real eps = Real(1e-40);
    const Real tau = kmath::fabs(b0 - b2);
    const Real r0 = tau / (b0 + eps), r1 = tau / (b1 + eps), r2 = tau / (b2 + eps);
    w0 = Real(0.1) * (1 + r0 * r0);
    w1 = Real(0.6) * (1 + r1 * r1);
    w2 = Real(0.3) * (1 + r2 * r2);
  } else {
    const Real eps = Real(1e-6);
    w0 = Real(0.1) / ((eps + b0) * (eps + b0));
    w1 = Real(0.6) / ((eps + b1) * (eps + b1));
    w2 = Real(0.3) / ((eps + b2) * (eps + b2));
  }
  return (w0 * p0 + w1 * p1 + w2 * p2) / (w0 + w1 + w2);
}

/// Left and right values at the face between cells -1 and 0 from the stencil q[0 .. 2w - 1] =
/// cells -w .. w - 1, w = stencil_width(R).
template <Reconstruction R, Limiter L>
KOKKOS_FORCEINLINE_FUNCTION void reconstruct_face(const Real* q, Real& left, Real& right) {
  if constexpr (R == Reconstruction::first_order) {
    left = q[0];
    right = q[1];
  } else if constexpr (R == Reconstruction::plm) {
    left = q[1] + Real(0.5) * limited_slope<L>(q[1] - q[0], q[2] - q[1]);
    right = q[2] - Real(0.5) * limited_slope<L>(q[2] - q[1], q[3] - q[2]);
  } else {
    constexpr bool z = R == Reconstruction::weno5z;
    left = weno5<z>(q[0], q[1], q[2], q[3], q[4]);
    right = weno5<z>(q[5], q[4], q[3], q[2], q[1]);
  }
}

}  // namespace stratus::kernels::euler
