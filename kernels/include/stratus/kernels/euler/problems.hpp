// Initial conditions of the Euler test problems, evaluated at a point, and the kernel that sets
// cell averages from them (3-point Gauss quadrature per active axis for smooth problems).
#pragma once

#include "stratus/kernels/euler/gas.hpp"

namespace stratus::kernels::euler {

enum class ProblemKind : int {
  riemann = 0,            ///< left | right states split at x = x0 (Sod, Lax, ...)
  shu_osher = 1,          ///< left | right with density (1 + amplitude sin(k x)) on the right
  riemann2d = 2,          ///< four constant quadrants around (centre x, centre y)
  kelvin_helmholtz = 3,   ///< dense band moving against a light background, seeded v
  isentropic_vortex = 4,  ///< Shu's vortex advected by a uniform flow (exact: a translation)
  sedov = 5,              ///< pressure spike in a sphere of `radius` in a cold uniform gas
  taylor_green = 6        ///< compressible Taylor-Green vortex (Mach number `mach`)
};

/// Parameters of a problem (primitive states are (rho, u, v, w, p)).
struct Problem {
  ProblemKind kind = ProblemKind::riemann;
  Vars left{}, right{};
  Kokkos::Array<Vars, 4> quadrants{};  ///< upper right, upper left, lower left, lower right
  Real x0 = 0.5;
  Kokkos::Array<Real, 3> centre{}, velocity{};
  Real strength = 5;    ///< vortex strength beta
  Real amplitude = 0;   ///< Shu-Osher density / Kelvin-Helmholtz velocity perturbation
  Real wavenumber = 5;  ///< Shu-Osher
  Real mach = 0.1;      ///< Taylor-Green
  Real radius = 0;      ///< Sedov
  Real p_inside = 0, p_ambient = 1e-5;  ///< Sedov
};

/// Primitive state of the problem at point x (a global box with origin lo and `length`).
KOKKOS_INLINE_FUNCTION Vars problem_state(const Problem& p, const Gas& gas,
                                          const Kokkos::Array<Real, 3>& lo,
                                          const Kokkos::Array<Real, 3>& length,
                                          const Kokkos::Array<bool, 3>& active, const Real x[3]) {
  const Real pi = kmath::pi<Real>();
  Vars w{};
  switch (p.kind) {
    case ProblemKind::riemann:
      return x[0] < p.x0 ? p.left : p.right;
    case ProblemKind::shu_osher:
      if (x[0] < p.x0) return p.left;
      w = p.right;
      w[0] *= 1 + p.amplitude * kmath::sin(p.wavenumber * x[0]);
      return w;
    case ProblemKind::riemann2d: {
      const bool right = x[0] >= p.centre[0], up = x[1] >= p.centre[1];
      return p.quadrants[up ? (right ? 0 : 1) : (right ? 3 : 2)];
    }
    case ProblemKind::kelvin_helmholtz: {
      const Real s = (x[1] - lo[1]) / length[1];  // 0..1 across the box
      const bool inside = s > Real(0.25) && s < Real(0.75);
      const Real sigma = Real(0.05) / kmath::sqrt(Real(2));
      const Real g = kmath::exp(-(s - Real(0.25)) * (s - Real(0.25)) / (2 * sigma * sigma)) +
                     kmath::exp(-(s - Real(0.75)) * (s - Real(0.75)) / (2 * sigma * sigma));
      w[0] = inside ? Real(2) : Real(1);
      w[1] = inside ? Real(0.5) : Real(-0.5);
      w[2] = p.amplitude * kmath::sin(4 * pi * (x[0] - lo[0]) / length[0]) * g;
      w[3] = 0;
      w[4] = Real(2.5);
      return w;
    }
    case ProblemKind::isentropic_vortex: {
      // Nearest periodic image of the centre on the active axes.
      Real d[2];
      for (int a = 0; a < 2; ++a) {
        d[a] = x[a] - p.centre[a];
        if (active[a]) {
          if (d[a] > Real(0.5) * length[a]) d[a] -= length[a];
          if (d[a] < Real(-0.5) * length[a]) d[a] += length[a];
        }
      }
      const Real r2 = d[0] * d[0] + d[1] * d[1];
      const Real g = gas.gamma;
      const Real e = kmath::exp(Real(0.5) * (1 - r2));
      const Real dt = -(g - 1) * p.strength * p.strength / (8 * g * pi * pi) * e * e;
      const Real rho = kmath::pow(1 + dt, 1 / (g - 1));
      const Real du = p.strength / (2 * pi) * e;
      w[0] = rho;
      w[1] = p.velocity[0] - du * d[1];
      w[2] = p.velocity[1] + du * d[0];
      w[3] = p.velocity[2];
      w[4] = kmath::pow(rho, g);
      return w;
    }
    case ProblemKind::sedov: {
      Real r2 = 0;
      for (int a = 0; a < 3; ++a)
        if (active[a]) r2 += (x[a] - p.centre[a]) * (x[a] - p.centre[a]);
      w[0] = 1;
      w[4] = r2 < p.radius * p.radius ? p.p_inside : p.p_ambient;
      return w;
    }
    case ProblemKind::taylor_green: {
      // Box [0, 2 pi L)^3, V0 = 1, rho0 = 1, p0 = 1 / (gamma M^2); isothermal start.
      Real s[3];
      for (int a = 0; a < 3; ++a) s[a] = 2 * pi * (x[a] - lo[a]) / length[a];
      const Real p0 = 1 / (gas.gamma * p.mach * p.mach);
      const Real pr =
          p0 + (kmath::cos(2 * s[0]) + kmath::cos(2 * s[1])) * (kmath::cos(2 * s[2]) + 2) / 16;
      w[0] = pr / p0;
      w[1] = kmath::sin(s[0]) * kmath::cos(s[1]) * kmath::cos(s[2]);
      w[2] = -kmath::cos(s[0]) * kmath::sin(s[1]) * kmath::cos(s[2]);
      w[3] = 0;
      w[4] = pr;
      return w;
    }
  }
  return w;
}

/// True for the problems whose cell averages are taken by quadrature (smooth fields).
inline bool problem_is_smooth(ProblemKind k) {
  return k == ProblemKind::isentropic_vortex || k == ProblemKind::taylor_green ||
         k == ProblemKind::kelvin_helmholtz;
}

/// Sets the interior cells of `u` to the problem's conserved state: the cell average by
/// 3-point Gauss quadrature per active axis when `quadrature`, else the value at the centre.
inline void set_problem(const State& u, const Grid& grid, const Gas& gas, const Problem& prob,
                        bool quadrature) {
  const Kokkos::Array<bool, 3> active{grid.active(0), grid.active(1), grid.active(2)};
  const int nq = quadrature ? 3 : 1;
  Kokkos::parallel_for(
      "euler::set_problem", policy(interior(grid)),
      KOKKOS_LAMBDA(const int i, const int j, const int k) {
        const Real gx[3] = {-kmath::sqrt(Real(0.6)) / 2, 0, kmath::sqrt(Real(0.6)) / 2};
        const Real gw[3] = {Real(5) / 18, Real(8) / 18, Real(5) / 18};
        const int idx[3] = {i, j, k};
        Vars sum{};
        for (int q0 = 0; q0 < (active[0] ? nq : 1); ++q0)
          for (int q1 = 0; q1 < (active[1] ? nq : 1); ++q1)
            for (int q2 = 0; q2 < (active[2] ? nq : 1); ++q2) {
              const int q[3] = {q0, q1, q2};
              Real x[3];
              Real weight = 1;
              for (int a = 0; a < 3; ++a) {
                x[a] = grid.centre(a, idx[a]);
                if (nq == 3 && active[a]) {
                  x[a] += gx[q[a]] * grid.dx[a];
                  weight *= gw[q[a]];
                }
              }
              const Vars c =
                  to_conserved(gas, problem_state(prob, gas, grid.lo, grid.length, active, x));
              for (int v = 0; v < kVars; ++v) sum[v] += weight * c[v];
            }
        for (int v = 0; v < kVars; ++v) u(v, i, j, k) = sum[v];
      });
}

/// Number of interior cells whose centre lies within `radius` of `centre` (active axes).
inline std::int64_t count_cells_within(const Grid& grid, Kokkos::Array<Real, 3> centre,
                                       Real radius) {
  std::int64_t count = 0;
  Kokkos::parallel_reduce(
      "euler::count_cells_within", policy(interior(grid)),
      KOKKOS_LAMBDA(const int i, const int j, const int k, std::int64_t& acc) {
        const int idx[3] = {i, j, k};
        Real r2 = 0;
        for (int a = 0; a < 3; ++a)
          if (grid.active(a)) {
            const Real d = grid.centre(a, idx[a]) - centre[a];
            r2 += d * d;
          }
        if (r2 < radius * radius) ++acc;
      },
      count);
  return count;
}

}  // namespace stratus::kernels::euler
