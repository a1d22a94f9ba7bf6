// Approximate Riemann solvers for the Euler equations in the frame of a face: HLLC (Toro,
// Spruce & Speares 1994), HLLE (Harten, Lax & van Leer 1983 with Einfeldt's 1988 wave speeds)
// and Rusanov (local Lax-Friedrichs). Each takes the primitive states left and right of the face
// with the normal velocity in slot 1 and returns the flux in the same rotated frame. Header-only
// device functions: the kernels dispatch on the enum, never through virtual calls.
#pragma once

#include "stratus/kernels/euler/gas.hpp"

namespace stratus::kernels::euler {

enum class RiemannSolver : int { hllc = 0, hlle = 1, rusanov = 2 };

/// Physical flux along the normal (slot 1) of a primitive state w with conserved state u.
KOKKOS_FORCEINLINE_FUNCTION Vars normal_flux(const Vars& w, const Vars& u) {
  Vars f;
  const Real un = w[1];
  f[0] = u[1];
  f[1] = u[1] * un + w[4];
  f[2] = u[2] * un;
  f[3] = u[3] * un;
  f[4] = (u[4] + w[4]) * un;
  return f;
}

/// Einfeldt's estimates of the slowest and fastest signal speeds (Roe averages bound the
/// one-sided sound speeds). il, ir: the inverse densities 1 / wl[0], 1 / wr[0] (divisions are
/// the dearest operations of a face: each is taken once).
KOKKOS_FORCEINLINE_FUNCTION void wave_speeds(const Gas& gas, const Vars& wl, const Vars& wr,
                                             Real il, Real ir, Real& sl, Real& sr) {
  const Real pl = wl[4] * il, pr = wr[4] * ir;  // p / rho
  const Real cl = kmath::sqrt(gas.gamma * pl);
  const Real cr = kmath::sqrt(gas.gamma * pr);
  const Real ql = kmath::sqrt(wl[0]), qr = kmath::sqrt(wr[0]);
  const Real inv = 1 / (ql + qr);
  const Real u = (ql * wl[1] + qr * wr[1]) * inv;
  const Real v = (ql * wl[2] + qr * wr[2]) * inv;
  const Real w = (ql * wl[3] + qr * wr[3]) * inv;
  const Real g1 = gas.gamma - 1;
  const Real hl =
      (gas.gamma / g1) * pl + Real(0.5) * (wl[1] * wl[1] + wl[2] * wl[2] + wl[3] * wl[3]);
  const Real hr =
      (gas.gamma / g1) * pr + Real(0.5) * (wr[1] * wr[1] + wr[2] * wr[2] + wr[3] * wr[3]);
  const Real h = (ql * hl + qr * hr) * inv;
  const Real c2 = g1 * (h - Real(0.5) * (u * u + v * v + w * w));
  const Real c = kmath::sqrt(c2 > 0 ? c2 : Real(0));
  sl = wl[1] - cl < u - c ? wl[1] - cl : u - c;
  sr = wr[1] + cr > u + c ? wr[1] + cr : u + c;
}

// The solvers below are written with selects instead of branches (both sides are computed, the
// one the states call for is kept), so that the face loops vectorise; the discarded side may
// hold NaN or infinity (no code traps on floating-point exceptions).

KOKKOS_FORCEINLINE_FUNCTION Vars flux_rusanov(const Gas& gas, const Vars& wl, const Vars& wr) {
  const Vars ul = to_conserved(gas, wl), ur = to_conserved(gas, wr);
  const Vars fl = normal_flux(wl, ul), fr = normal_flux(wr, ur);
  const Real al = kmath::fabs(wl[1]) + sound_speed(gas, wl[0], wl[4]);
  const Real ar = kmath::fabs(wr[1]) + sound_speed(gas, wr[0], wr[4]);
  const Real s = al > ar ? al : ar;
  Vars f;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v)
    f[v] = Real(0.5) * (fl[v] + fr[v]) - Real(0.5) * s * (ur[v] - ul[v]);
  return f;
}

KOKKOS_FORCEINLINE_FUNCTION Vars flux_hlle(const Gas& gas, const Vars& wl, const Vars& wr) {
  const Vars ul = to_conserved(gas, wl), ur = to_conserved(gas, wr);
  const Vars fl = normal_flux(wl, ul), fr = normal_flux(wr, ur);
  Real sl, sr;
  wave_speeds(gas, wl, wr, 1 / wl[0], 1 / wr[0], sl, sr);
  const Real bm = sl < 0 ? sl : Real(0);
  const Real bp = sr > 0 ? sr : Real(0);
  // Both speeds zero is only possible for identical states at rest: the central flux.
  const bool degenerate = bp - bm <= 0;
  const Real inv = 1 / (bp - bm);
  Vars f;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v)
    f[v] = degenerate ? Real(0.5) * (fl[v] + fr[v])
                      : (bp * fl[v] - bm * fr[v] + bp * bm * (ur[v] - ul[v])) * inv;
  return f;
}

KOKKOS_FORCEINLINE_FUNCTION Vars flux_hllc(const Gas& gas, const Vars& wl, const Vars& wr) {
  const Vars ul = to_conserved(gas, wl), ur = to_conserved(gas, wr);
  const Vars fl = normal_flux(wl, ul), fr = normal_flux(wr, ur);
  const Real il = 1 / wl[0], ir = 1 / wr[0];
  Real sl, sr;
  wave_speeds(gas, wl, wr, il, ir, sl, sr);
  const Real ml = wl[0] * (sl - wl[1]);  // mass fluxes relative to the outer waves
  const Real mr = wr[0] * (sr - wr[1]);
  const Real ss = (wr[4] - wl[4] + ml * wl[1] - mr * wr[1]) / (ml - mr);  // contact speed
  // Star state on the side the face lies in (Toro 2009, eq. 10.39), then F* = F + S (U* - U).
  const bool left = ss >= 0;
  Vars w, u, f;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v) {
    w[v] = left ? wl[v] : wr[v];
    u[v] = left ? ul[v] : ur[v];
    f[v] = left ? fl[v] : fr[v];
  }
  const Real s = left ? sl : sr;
  const Real m = left ? ml : mr;
  const Real factor = m / (s - ss);
  Vars us;
  us[0] = factor;
  us[1] = factor * ss;
  us[2] = factor * w[2];
  us[3] = factor * w[3];
  us[4] = factor * (u[4] * (left ? il : ir) + (ss - w[1]) * (ss + w[4] / m));
  // Supersonic faces take the upwind physical flux.
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v)
    f[v] = sl >= 0 ? fl[v] : sr <= 0 ? fr[v] : f[v] + s * (us[v] - u[v]);
  return f;
}

/// The flux of solver RS (the kernels' compile-time choice).
template <RiemannSolver RS>
KOKKOS_FORCEINLINE_FUNCTION Vars riemann_flux(const Gas& gas, const Vars& wl, const Vars& wr) {
  if constexpr (RS == RiemannSolver::hlle)
    return flux_hlle(gas, wl, wr);
  else if constexpr (RS == RiemannSolver::rusanov)
    return flux_rusanov(gas, wl, wr);
  else
    return flux_hllc(gas, wl, wr);
}

/// The chosen solver's flux (run-time choice).
KOKKOS_INLINE_FUNCTION Vars riemann_flux(RiemannSolver rs, const Gas& gas, const Vars& wl,
                                         const Vars& wr) {
  switch (rs) {
    case RiemannSolver::hlle:
      return riemann_flux<RiemannSolver::hlle>(gas, wl, wr);
    case RiemannSolver::rusanov:
      return riemann_flux<RiemannSolver::rusanov>(gas, wl, wr);
    default:
      return riemann_flux<RiemannSolver::hllc>(gas, wl, wr);
  }
}

}  // namespace stratus::kernels::euler
