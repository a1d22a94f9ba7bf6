// Finite-volume fluxes and updates of the Euler / Navier-Stokes equations on a block with
// ghost cells: face fluxes along one axis (reconstruction + Riemann solver + viscous terms),
// the fourth-order face-average corrections, the Runge-Kutta stage update and physical
// boundary ghosts. Pure Kokkos. Reductions over the state live in reductions.hpp.
//
// Face index convention: along axis a, face index i is the face between cells i-1 and i, so
// the faces of the interior cells are [g, g + n] and flux(5 * a + v, i, j, k) is stored at
// the index of the cell on its high side.
#pragma once

#include "stratus/kernels/euler/gas.hpp"
#include "stratus/kernels/euler/reconstruct.hpp"
#include "stratus/kernels/euler/riemann.hpp"

namespace stratus::kernels::euler {

/// Spatial scheme.
struct Scheme {
  Reconstruction reconstruction = Reconstruction::plm;
  Limiter limiter = Limiter::mc;
  RiemannSolver riemann = RiemannSolver::hllc;
  bool fourth_order = false;  ///< WENO5 with point-value / face-average corrections
  bool viscous = false;
};

/// Rotates a state into the frame of axis a: slot 1 = normal velocity, 2 and 3 tangential.
KOKKOS_INLINE_FUNCTION Vars rotate(const Vars& w, int a) {
  return Vars{w[0], w[1 + a], w[1 + (a + 1) % 3], w[1 + (a + 2) % 3], w[4]};
}
KOKKOS_INLINE_FUNCTION Vars unrotate(const Vars& f, int a) {
  Vars out;
  out[0] = f[0];
  out[1 + a] = f[1];
  out[1 + (a + 1) % 3] = f[2];
  out[1 + (a + 2) % 3] = f[3];
  out[4] = f[4];
  return out;
}

KOKKOS_INLINE_FUNCTION bool physical(const Vars& w) { return w[0] > 0 && w[4] > 0; }

/// Viscous and heat-conduction flux (to be subtracted from the inviscid one) through face
/// (a; i, j, k) from the primitive variables `w`: face-centred gradients from the two cells and,
/// for tangential derivatives, central differences averaged over both cells (needs edge
/// ghosts). Second order.
KOKKOS_INLINE_FUNCTION Vars viscous_flux(const State& w, const Grid& grid, const Gas& gas, int a,
                                         int i, int j, int k) {
  // c = 0..2 velocity components, 3 temperature
  const Real inv_r = 1 / gas.gas_constant;
  auto cell = [&](int di, int dj, int dk, Real out[4]) {
    const int ii = i + di, jj = j + dj, kk = k + dk;
    out[0] = w(1, ii, jj, kk);
    out[1] = w(2, ii, jj, kk);
    out[2] = w(3, ii, jj, kk);
    out[3] = w(4, ii, jj, kk) / w(0, ii, jj, kk) * inv_r;
  };
  int l[3] = {0, 0, 0};
  l[a] = -1;
  Real qr[4], ql[4];
  cell(0, 0, 0, qr);
  cell(l[0], l[1], l[2], ql);
  Real grad[3][4];
  for (int c = 0; c < 4; ++c) grad[a][c] = (qr[c] - ql[c]) / grid.dx[a];
  for (int d = 0; d < 3; ++d) {
    if (d == a) continue;
    if (!grid.active(d)) {
      for (int c = 0; c < 4; ++c) grad[d][c] = 0;
      continue;
    }
    int e[3] = {0, 0, 0};
    e[d] = 1;
    Real rp[4], rm[4], lp[4], lm[4];
    cell(e[0], e[1], e[2], rp);
    cell(-e[0], -e[1], -e[2], rm);
    cell(l[0] + e[0], l[1] + e[1], l[2] + e[2], lp);
    cell(l[0] - e[0], l[1] - e[1], l[2] - e[2], lm);
    for (int c = 0; c < 4; ++c)
      grad[d][c] = Real(0.25) * (rp[c] - rm[c] + lp[c] - lm[c]) / grid.dx[d];
  }
  Real vel[3];
  for (int c = 0; c < 3; ++c) vel[c] = Real(0.5) * (qr[c] + ql[c]);
  const Real temperature = Real(0.5) * (qr[3] + ql[3]);
  const Real mu = viscosity(gas, temperature);
  const Real cp = gas.gamma * gas.gas_constant / (gas.gamma - 1);
  const Real kappa = mu * cp / gas.prandtl;
  const Real div = grad[0][0] + grad[1][1] + grad[2][2];
  Vars f{};
  Real work = 0;
  for (int c = 0; c < 3; ++c) {
    const Real tau = mu * (grad[a][c] + grad[c][a]) - (c == a ? Real(2) / 3 * mu * div : Real(0));
    f[1 + c] = tau;
    work += vel[c] * tau;
  }
  f[4] = work + kappa * grad[a][3];
  return f;
}

/// Primitive variables of the cells of `box`: w(v, cell) = (rho, u, v, w, p).
inline void primitives(const State& u, const State& w, const IndexBox& box, const Gas& gas) {
  if (box.empty()) return;
  Kokkos::parallel_for(
      "euler::primitives", policy(box), KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const Vars p = to_primitive(gas, load(u, i, j, k));
        for (int v = 0; v < kVars; ++v) w(v, i, j, k) = p[v];
      });
}

/// True when the scheme reads primitive variables (PLM, first order, viscous terms): the
/// solver keeps them in a view filled by primitives() before the fluxes.
inline bool needs_primitives(const Scheme& sch) {
  return sch.viscous || sch.reconstruction == Reconstruction::plm ||
         sch.reconstruction == Reconstruction::first_order;
}

/// Left and right states of face (a; i, j, k) reconstructed from the cells along a. PLM and
/// first order reconstruct primitive variables (read from `w`), WENO conserved ones (from
/// `u`); a non-physical result falls back to first order at that face. Returns primitive
/// states.
KOKKOS_INLINE_FUNCTION void face_states(const State& u, const State& w, const Gas& gas,
                                        const Scheme& sch, int a, int i, int j, int k, Vars& wl,
                                        Vars& wr) {
  const int width = stencil_width(sch.reconstruction);
  const bool conserved =
      sch.reconstruction == Reconstruction::weno5 || sch.reconstruction == Reconstruction::weno5z;
  Real q[kVars][6] = {};
  for (int s = 3 - width; s < 3 + width; ++s) {
    int ii = i, jj = j, kk = k;
    shift(a, s - 3, ii, jj, kk);
    const Vars c = load(conserved ? u : w, ii, jj, kk);
    for (int v = 0; v < kVars; ++v) q[v][s] = c[v];
  }
  Vars l, r;
  for (int v = 0; v < kVars; ++v)
    reconstruct_face(sch.reconstruction, sch.limiter, q[v], l[v], r[v]);
  wl = conserved ? to_primitive(gas, l) : l;
  wr = conserved ? to_primitive(gas, r) : r;
  if (!physical(wl) || !physical(wr)) {
    Vars cl, cr;
    for (int v = 0; v < kVars; ++v) {
      cl[v] = q[v][2];
      cr[v] = q[v][3];
    }
    wl = conserved ? to_primitive(gas, cl) : cl;
    wr = conserved ? to_primitive(gas, cr) : cr;
  }
}

/// Fluxes through the faces `faces` along axis a: flux(5 a + v, face) (second-order path).
inline void face_fluxes(const State& u, const State& w, const State& flux, int a,
                        const IndexBox& faces, const Grid& grid, const Gas& gas,
                        const Scheme& sch) {
  Kokkos::parallel_for(
      "euler::face_fluxes", policy(faces), KOKKOS_LAMBDA(const int i, const int j, const int k) {
        Vars wl, wr;
        face_states(u, w, gas, sch, a, i, j, k, wl, wr);
        Vars f = unrotate(riemann_flux(sch.riemann, gas, rotate(wl, a), rotate(wr, a)), a);
        if (sch.viscous) {
          const Vars fv = viscous_flux(w, grid, gas, a, i, j, k);
          for (int v = 0; v < kVars; ++v) f[v] -= fv[v];
        }
        for (int v = 0; v < kVars; ++v) flux(kVars * a + v, i, j, k) = f[v];
      });
}

/// Fourth-order path, part 1: face-averaged conserved states (WENO along a), stored as
/// states(v, face) (left) and states(5 + v, face) (right).
inline void face_average_states(const State& u, const State& states, int a, const IndexBox& faces,
                                const Gas& gas, const Scheme& sch) {
  Kokkos::parallel_for(
      "euler::face_average_states", policy(faces),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        Vars wl, wr;
        face_states(u, u, gas, sch, a, i, j, k, wl, wr);  // WENO: conserved variables only
        const Vars ul = to_conserved(gas, wl), ur = to_conserved(gas, wr);
        for (int v = 0; v < kVars; ++v) {
          states(v, i, j, k) = ul[v];
          states(kVars + v, i, j, k) = ur[v];
        }
      });
}

/// Sum over the active axes t != a of the second difference of view(c, .) at (i, j, k).
KOKKOS_INLINE_FUNCTION Real transverse_laplacian(const State& view, int c, const Grid& grid, int a,
                                                 int i, int j, int k) {
  Real sum = 0;
  const Real centre = view(c, i, j, k);
  for (int t = 0; t < 3; ++t) {
    if (t == a || !grid.active(t)) continue;
    int ip = i, jp = j, kp = k, im = i, jm = j, km = k;
    shift(t, 1, ip, jp, kp);
    shift(t, -1, im, jm, km);
    sum += view(c, ip, jp, kp) - 2 * centre + view(c, im, jm, km);
  }
  return sum;
}

/// Fourth-order path, part 2: point values at face centres (face average minus h^2/24 of its
/// transverse Laplacian), the Riemann flux there (and the viscous flux), into flux(5 a + v).
/// `faces` must lie one face inside the box where states were computed, in the transverse axes.
inline void face_point_fluxes(const State& w, const State& states, const State& flux, int a,
                              const IndexBox& faces, const Grid& grid, const Gas& gas,
                              const Scheme& sch) {
  Kokkos::parallel_for(
      "euler::face_point_fluxes", policy(faces),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        Vars ul, ur, al, ar;
        for (int v = 0; v < kVars; ++v) {
          al[v] = states(v, i, j, k);
          ar[v] = states(kVars + v, i, j, k);
          ul[v] = al[v] - transverse_laplacian(states, v, grid, a, i, j, k) / 24;
          ur[v] = ar[v] - transverse_laplacian(states, kVars + v, grid, a, i, j, k) / 24;
        }
        Vars wl = to_primitive(gas, ul), wr = to_primitive(gas, ur);
        if (!physical(wl) || !physical(wr)) {  // keep the face averages
          wl = to_primitive(gas, al);
          wr = to_primitive(gas, ar);
        }
        Vars f = unrotate(riemann_flux(sch.riemann, gas, rotate(wl, a), rotate(wr, a)), a);
        if (sch.viscous) {
          const Vars fv = viscous_flux(w, grid, gas, a, i, j, k);
          for (int v = 0; v < kVars; ++v) f[v] -= fv[v];
        }
        for (int v = 0; v < kVars; ++v) flux(kVars * a + v, i, j, k) = f[v];
      });
}

/// Coefficients of one Runge-Kutta stage: U <- a0 U0 + a1 U + a2 A + b dt L(U), then
/// A <- A + c dt L(U) (A: the classical RK4 accumulator).
struct Stage {
  Real a0 = 0, a1 = 1, a2 = 0, b = 1, c = 0;
};

/// One stage over the interior cells, L(U) = -sum_a (F(face + 1) - F(face)) / dx_a from the
/// stored fluxes (face averages: with `fourth_order` the stored point fluxes get +h^2/24 of
/// their transverse Laplacian). Each cell reads only its own U0, U, A: in place is safe.
inline void stage_update(const State& u0, const State& u, const State& acc, const State& flux,
                         const Grid& grid, bool fourth_order, Stage st, Real dt) {
  Kokkos::parallel_for(
      "euler::stage_update", policy(interior(grid)),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        Real rhs[kVars] = {0, 0, 0, 0, 0};
        for (int a = 0; a < 3; ++a) {
          if (!grid.active(a)) continue;
          int ip = i, jp = j, kp = k;
          shift(a, 1, ip, jp, kp);
          const Real inv = 1 / grid.dx[a];
          for (int v = 0; v < kVars; ++v) {
            const int c = kVars * a + v;
            Real hi = flux(c, ip, jp, kp), lo = flux(c, i, j, k);
            if (fourth_order) {
              hi += transverse_laplacian(flux, c, grid, a, ip, jp, kp) / 24;
              lo += transverse_laplacian(flux, c, grid, a, i, j, k) / 24;
            }
            rhs[v] -= (hi - lo) * inv;
          }
        }
        for (int v = 0; v < kVars; ++v) {
          Real x = st.a1 * u(v, i, j, k) + st.b * dt * rhs[v];
          if (st.a0 != 0) x += st.a0 * u0(v, i, j, k);
          if (st.a2 != 0) x += st.a2 * acc(v, i, j, k);
          if (st.c != 0) acc(v, i, j, k) += st.c * dt * rhs[v];
          u(v, i, j, k) = x;
        }
      });
}

/// Physical boundary of one face.
enum class Boundary : int { periodic = 0, outflow = 1, reflecting = 2, inflow = 3 };

/// Fills the ghost layers of face (a, side: 0 low, 1 high) over the whole extent of the other
/// axes (their ghosts included). outflow: copy of the nearest interior cell; reflecting: mirror
/// image with the normal momentum reversed; inflow: the fixed conserved state `inflow`.
inline void fill_boundary(const State& u, const Grid& grid, int a, int side, Boundary type,
                          Vars inflow) {
  const int g = grid.g[a];
  const std::int64_t n = grid.n[a];
  IndexBox box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = 0;
    box.hi[d] = grid.n[d] + 2 * grid.g[d];
  }
  box.lo[a] = 0;
  box.hi[a] = g;
  Kokkos::parallel_for(
      "euler::fill_boundary", policy(box), KOKKOS_LAMBDA(const int i, const int j, const int k) {
        int dst[3] = {i, j, k};
        int src[3] = {i, j, k};
        const int d = dst[a];  // 0 .. g-1 from the outside
        if (side == 0) {
          dst[a] = d;
          src[a] = type == Boundary::outflow ? g : 2 * g - 1 - d;
        } else {
          dst[a] = static_cast<int>(n) + 2 * g - 1 - d;
          src[a] =
              type == Boundary::outflow ? static_cast<int>(n) + g - 1 : static_cast<int>(n) + d;
        }
        for (int v = 0; v < kVars; ++v) {
          Real x = type == Boundary::inflow ? inflow[v] : u(v, src[0], src[1], src[2]);
          if (type == Boundary::reflecting && v == 1 + a) x = -x;
          u(v, dst[0], dst[1], dst[2]) = x;
        }
      });
}

}  // namespace stratus::kernels::euler
