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
struct PrimitivesKernel {
  Flat u, w;
  Gas gas;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t c = u.index(i, j, k);
    const Vars p = to_primitive(gas, load(u, c));
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) w(v, c) = p[v];
  }
};
inline void primitives(const State& u, const State& w, const IndexBox& box, const Gas& gas) {
  for_each_cell("euler::primitives", box, PrimitivesKernel{flat(u), flat(w), gas});
}

/// True when the scheme reads primitive variables (PLM, first order, viscous terms): the
/// solver keeps them in a view filled by primitives() before the fluxes.
inline bool needs_primitives(const Scheme& sch) {
  return sch.viscous || sch.reconstruction == Reconstruction::plm ||
         sch.reconstruction == Reconstruction::first_order;
}

/// The frame of axis a, worked out once per launch (no branch on the axis runs per face):
/// slot v of a rotated state (normal velocity in slot 1, the tangential ones in 2 and 3) is
/// variable var[v] of the stored state; the neighbour along a of flat cell c is c + step.
struct Frame {
  Kokkos::Array<int, kVars> var;
  std::int64_t step;
};
inline Frame frame(int a, const Flat& f) {
  return Frame{{0, 1 + a, 1 + (a + 1) % 3, 1 + (a + 2) % 3, 4}, f.s[a]};
}

/// Left and right states of the face of axis a on the low side of flat cell c, in the frame
/// of a, reconstructed from the cells of `src` along a: primitive variables for PLM and first
/// order, conserved ones for WENO. A non-physical result falls back to first order at that
/// face. Returns primitive states.
template <Reconstruction R, Limiter L>
KOKKOS_FORCEINLINE_FUNCTION void face_states(const Flat& src, const Gas& gas, const Frame& fr,
                                             std::int64_t c, Vars& wl, Vars& wr) {
  constexpr int width = stencil_width(R);
  Real q[kVars][2 * width];
  STRATUS_UNROLL
  for (int s = 0; s < 2 * width; ++s) {
    const std::int64_t cell = c + (s - width) * fr.step;
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) q[v][s] = src(fr.var[v], cell);
  }
  Vars l, r, cl, cr;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v) {
    reconstruct_face<R, L>(q[v], l[v], r[v]);
    cl[v] = q[v][width - 1];
    cr[v] = q[v][width];
  }
  if constexpr (reconstructs_conserved(R)) {
    l = to_primitive(gas, l);
    r = to_primitive(gas, r);
    cl = to_primitive(gas, cl);
    cr = to_primitive(gas, cr);
  }
  const bool ok = physical(l) & physical(r);
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v) {
    wl[v] = ok ? l[v] : cl[v];
    wr[v] = ok ? r[v] : cr[v];
  }
}

/// Inviscid fluxes through the faces along axis a, second-order path: flux(5 a + v, face).
/// `src` holds the variables R reconstructs (conserved for WENO, primitive otherwise).
template <Reconstruction R, Limiter L, RiemannSolver RS>
struct FaceFluxKernel {
  Flat src, flux;
  Gas gas;
  Frame fr;
  int a;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t c = src.index(i, j, k);
    Vars wl, wr;
    face_states<R, L>(src, gas, fr, c, wl, wr);
    const Vars f = riemann_flux<RS>(gas, wl, wr);
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) flux(kVars * a + fr.var[v], c) = f[v];
  }
  static void launch(const State& u, const State& w, const State& flux, int a,
                     const IndexBox& faces, const Gas& gas) {
    const Flat src = flat(reconstructs_conserved(R) ? u : w);
    for_each_cell("euler::face_fluxes", faces,
                  FaceFluxKernel{src, flat(flux), gas, frame(a, src), a});
  }
};

/// Subtracts the viscous and heat-conduction flux from flux(5 a + v, face) (its own pass, so
/// that the inviscid kernels have no branch).
struct ViscousFluxKernel {
  State w, flux;
  Grid grid;
  Gas gas;
  int a;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const Vars fv = viscous_flux(w, grid, gas, a, i, j, k);
    for (int v = 0; v < kVars; ++v) flux(kVars * a + v, i, j, k) -= fv[v];
  }
};

/// K<R, L, RS>::launch(args...) for the scheme's reconstruction, limiter and Riemann solver:
/// the one switch, on the host, that picks a kernel compiled for that combination.
template <template <Reconstruction, Limiter, RiemannSolver> class K, Reconstruction R, Limiter L,
          class... A>
void launch_for_riemann(RiemannSolver rs, const A&... args) {
  switch (rs) {
    case RiemannSolver::hlle:
      return K<R, L, RiemannSolver::hlle>::launch(args...);
    case RiemannSolver::rusanov:
      return K<R, L, RiemannSolver::rusanov>::launch(args...);
    default:
      return K<R, L, RiemannSolver::hllc>::launch(args...);
  }
}
template <template <Reconstruction, Limiter, RiemannSolver> class K, class... A>
void launch_for_scheme(const Scheme& sch, const A&... args) {
  using Rc = Reconstruction;
  switch (sch.reconstruction) {
    case Rc::first_order:  // no limiter
      return launch_for_riemann<K, Rc::first_order, Limiter::mc>(sch.riemann, args...);
    case Rc::weno5:
      return launch_for_riemann<K, Rc::weno5, Limiter::mc>(sch.riemann, args...);
    case Rc::weno5z:
      return launch_for_riemann<K, Rc::weno5z, Limiter::mc>(sch.riemann, args...);
    default:
      switch (sch.limiter) {
        case Limiter::minmod:
          return launch_for_riemann<K, Rc::plm, Limiter::minmod>(sch.riemann, args...);
        case Limiter::van_leer:
          return launch_for_riemann<K, Rc::plm, Limiter::van_leer>(sch.riemann, args...);
        default:
          return launch_for_riemann<K, Rc::plm, Limiter::mc>(sch.riemann, args...);
      }
  }
}

/// Fluxes through the faces `faces` along axis a: flux(5 a + v, face) (second-order path).
inline void face_fluxes(const State& u, const State& w, const State& flux, int a,
                        const IndexBox& faces, const Grid& grid, const Gas& gas,
                        const Scheme& sch) {
  launch_for_scheme<FaceFluxKernel>(sch, u, w, flux, a, faces, gas);
  if (sch.viscous)
    for_each_cell("euler::viscous_fluxes", faces, ViscousFluxKernel{w, flux, grid, gas, a});
}

/// Fourth-order path, part 1: face-averaged conserved states (WENO along a), stored as
/// states(v, face) (left) and states(5 + v, face) (right).
template <Reconstruction R>
struct FaceAverageStatesKernel {
  Flat u, states;
  Gas gas;
  Frame fr;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t c = u.index(i, j, k);
    Vars wl, wr;
    face_states<R, Limiter::mc>(u, gas, fr, c, wl, wr);
    const Vars ul = to_conserved(gas, wl), ur = to_conserved(gas, wr);
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) {
      states(fr.var[v], c) = ul[v];
      states(kVars + fr.var[v], c) = ur[v];
    }
  }
};
inline void face_average_states(const State& u, const State& states, int a, const IndexBox& faces,
                                const Gas& gas, const Scheme& sch) {
  const Flat fu = flat(u), fs = flat(states);
  if (sch.reconstruction == Reconstruction::weno5z)
    for_each_cell("euler::face_average_states", faces,
                  FaceAverageStatesKernel<Reconstruction::weno5z>{fu, fs, gas, frame(a, fu)});
  else
    for_each_cell("euler::face_average_states", faces,
                  FaceAverageStatesKernel<Reconstruction::weno5>{fu, fs, gas, frame(a, fu)});
}

/// The flat distances to the neighbours along the active axes other than a (0 for the others:
/// their second difference is then exactly 0).
inline Kokkos::Array<std::int64_t, 2> transverse_steps(const Flat& f, const Grid& grid, int a) {
  Kokkos::Array<std::int64_t, 2> t{0, 0};
  int n = 0;
  for (int d = 0; d < 3; ++d)
    if (d != a) t[n++] = grid.active(d) ? f.s[d] : 0;
  return t;
}

/// Sum over the transverse axes (steps `t`) of the second difference of f(var, .) at cell c.
KOKKOS_FORCEINLINE_FUNCTION Real transverse_laplacian(const Flat& f, int var,
                                                      const Kokkos::Array<std::int64_t, 2>& t,
                                                      std::int64_t c) {
  const Real centre = f(var, c);
  return (f(var, c + t[0]) - 2 * centre + f(var, c - t[0])) +
         (f(var, c + t[1]) - 2 * centre + f(var, c - t[1]));
}

/// Fourth-order path, part 2: point values at face centres (face average minus h^2/24 of its
/// transverse Laplacian), the Riemann flux there (and the viscous flux), into flux(5 a + v).
/// `faces` must lie one face inside the box where states were computed, in the transverse axes.
template <Reconstruction, Limiter, RiemannSolver RS>
struct FacePointFluxKernel {
  Flat states, flux;
  Kokkos::Array<std::int64_t, 2> t;
  Gas gas;
  Frame fr;
  int a;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t c = states.index(i, j, k);
    Vars ul, ur, al, ar;
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) {
      al[v] = states(fr.var[v], c);
      ar[v] = states(kVars + fr.var[v], c);
      ul[v] = al[v] - transverse_laplacian(states, fr.var[v], t, c) / 24;
      ur[v] = ar[v] - transverse_laplacian(states, kVars + fr.var[v], t, c) / 24;
    }
    Vars wl = to_primitive(gas, ul), wr = to_primitive(gas, ur);
    const Vars avl = to_primitive(gas, al), avr = to_primitive(gas, ar);
    const bool ok = physical(wl) & physical(wr);  // else keep the face averages
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) {
      wl[v] = ok ? wl[v] : avl[v];
      wr[v] = ok ? wr[v] : avr[v];
    }
    const Vars f = riemann_flux<RS>(gas, wl, wr);
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) flux(kVars * a + fr.var[v], c) = f[v];
  }
  static void launch(const State& states, const State& flux, int a, const IndexBox& faces,
                     const Grid& grid, const Gas& gas) {
    const Flat fs = flat(states);
    for_each_cell(
        "euler::face_point_fluxes", faces,
        FacePointFluxKernel{fs, flat(flux), transverse_steps(fs, grid, a), gas, frame(a, fs), a});
  }
};
inline void face_point_fluxes(const State& w, const State& states, const State& flux, int a,
                              const IndexBox& faces, const Grid& grid, const Gas& gas,
                              const Scheme& sch) {
  // The states are already reconstructed: only the Riemann solver is chosen here.
  launch_for_riemann<FacePointFluxKernel, Reconstruction::weno5, Limiter::mc>(
      sch.riemann, states, flux, a, faces, grid, gas);
  if (sch.viscous)
    for_each_cell("euler::viscous_fluxes", faces, ViscousFluxKernel{w, flux, grid, gas, a});
}

/// Coefficients of one Runge-Kutta stage: U <- a0 U0 + a1 U + a2 A + b dt L(U), then
/// A <- A + c dt L(U) (A: the classical RK4 accumulator).
struct Stage {
  Real a0 = 0, a1 = 1, a2 = 0, b = 1, c = 0;
};

/// One stage over the interior cells, L(U) = -sum_a (F(face + 1) - F(face)) / dx_a from the
/// stored fluxes (face averages: with `Fourth` the stored point fluxes get +h^2/24 of their
/// transverse Laplacian). Each cell reads only its own U0, U, A: in place is safe. U0: the
/// stage reads U0 (a0 != 0); Acc: it reads or updates A (RK4).
template <bool Fourth, bool U0, bool Acc>
struct StageUpdateKernel {
  Flat u0, u, acc, flux;
  Stage st;
  Real dt;
  Kokkos::Array<std::int64_t, 3> step;  ///< flat distance along axis a; 0 on an inactive axis
  Kokkos::Array<Real, 3> inv;           ///< 1 / dx_a (0 on an inactive axis)
  Kokkos::Array<Kokkos::Array<std::int64_t, 2>, 3> t;  ///< transverse steps of each axis
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int i, const int j, const int k) const {
    const std::int64_t c = u.index(i, j, k);
    Real rhs[kVars] = {0, 0, 0, 0, 0};
    STRATUS_UNROLL
    for (int a = 0; a < 3; ++a) {
      const std::int64_t cp = c + step[a];
      STRATUS_UNROLL
      for (int v = 0; v < kVars; ++v) {
        const int var = kVars * a + v;
        Real hi = flux(var, cp), lo = flux(var, c);
        if constexpr (Fourth) {
          hi += transverse_laplacian(flux, var, t[a], cp) / 24;
          lo += transverse_laplacian(flux, var, t[a], c) / 24;
        }
        rhs[v] -= (hi - lo) * inv[a];
      }
    }
    STRATUS_UNROLL
    for (int v = 0; v < kVars; ++v) {
      Real x = st.a1 * u(v, c) + st.b * dt * rhs[v];
      if constexpr (U0) x += st.a0 * u0(v, c);
      if constexpr (Acc) {
        x += st.a2 * acc(v, c);
        acc(v, c) += st.c * dt * rhs[v];
      }
      u(v, c) = x;
    }
  }
  static void launch(const State& u0, const State& u, const State& acc, const State& flux,
                     const Grid& grid, Stage st, Real dt) {
    const Flat ff = flat(flux);
    StageUpdateKernel kernel{flat(u0), flat(u), flat(acc), ff, st, dt, {}, {}, {}};
    for (int a = 0; a < 3; ++a) {
      kernel.step[a] = grid.active(a) ? ff.s[a] : 0;
      kernel.inv[a] = grid.active(a) ? 1 / grid.dx[a] : Real(0);
      kernel.t[a] = transverse_steps(ff, grid, a);
    }
    for_each_cell("euler::stage_update", interior(grid), kernel);
  }
};
inline void stage_update(const State& u0, const State& u, const State& acc, const State& flux,
                         const Grid& grid, bool fourth_order, Stage st, Real dt) {
  const bool u0_term = st.a0 != 0, acc_term = st.a2 != 0 || st.c != 0;
  auto run = [&](auto fourth) {
    constexpr bool f = decltype(fourth)::value;
    if (u0_term && acc_term)
      StageUpdateKernel<f, true, true>::launch(u0, u, acc, flux, grid, st, dt);
    else if (u0_term)
      StageUpdateKernel<f, true, false>::launch(u0, u, acc, flux, grid, st, dt);
    else if (acc_term)
      StageUpdateKernel<f, false, true>::launch(u0, u, acc, flux, grid, st, dt);
    else
      StageUpdateKernel<f, false, false>::launch(u0, u, acc, flux, grid, st, dt);
  };
  if (fourth_order)
    run(std::true_type{});
  else
    run(std::false_type{});
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
