// Holonomic distance constraints of rigid bonds and angles (SHAKE, Ryckaert, Ciccotti and
// Berendsen, J. Comput. Phys. 23 (1977) 327; RATTLE's velocity half, Andersen, J. Comput. Phys.
// 52 (1983) 24), on clusters of an atom and up to 3 bonded partners (with an angle constraint
// for 3-atom clusters such as rigid water), as LAMMPS's fix shake and fix rattle take them.
//
// SHAKE is applied as a force (as LAMMPS does): after the forces of a step, the positions the
// next drift would reach, xs = x + dt v + c dt^2 f / m (c = 1, or 1/2 before the first step), are
// corrected by constraint forces lambda_k r_k along the current constraint vectors, the
// multipliers of a cluster solved together by Newton's method (M-SHAKE: Kraeutler, van Gunsteren
// and Huenenberger, J. Comput. Chem. 22 (2001) 501) until every constrained distance is within
// the tolerance; the forces are added to f so that the next drift lands on the
// constraints. RATTLE then removes, after the second half kick, the relative velocity along each
// constraint.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"

#include <cstdint>

namespace stratus::kernels::md {

/// Local clusters: atom(c, 0) is the centre, atom(c, 1..3) its partners (-1: none); bond k (k
/// = 1..3) holds atoms 0 and k at length(c, k - 1); length(c, 3) > 0 adds the constraint between
/// atoms 1 and 2 (an angle's far side).
struct ShakeClusters {
  Kokkos::View<int* [4], Kokkos::LayoutRight, DevMemSpace> atom { "md::shake_atoms", 0 };
  Kokkos::View<Real* [4], Kokkos::LayoutRight, DevMemSpace> length { "md::shake_lengths", 0 };
  int count = 0;
};

/// The constraints of cluster c as pairs (p, q) of cluster slots and their lengths: returns how
/// many (up to 4).
KOKKOS_INLINE_FUNCTION int cluster_constraints(const ShakeClusters& l, int c, int (&p)[4],
                                               int (&q)[4], Real (&d)[4]) {
  int n = 0;
  for (int k = 1; k < 4; ++k)
    if (l.atom(c, k) >= 0) {
      p[n] = 0;
      q[n] = k;
      d[n] = l.length(c, k - 1);
      ++n;
    }
  if (l.length(c, 3) > 0) {
    p[n] = 1;
    q[n] = 2;
    d[n] = l.length(c, 3);
    ++n;
  }
  return n;
}

/// Cluster c's constraints (cluster_constraints), its atoms' rows of `values` (predicted
/// positions or velocities; 0 for absent partners), their inverse masses, and the constraint
/// vectors r_n = x_p - x_q at the current positions. Returns the number of constraints.
KOKKOS_INLINE_FUNCTION int load_cluster(const ShakeClusters& l, int c, const Vectors& x,
                                        const Vectors& values, const Types& type,
                                        const TypeMasses& mass, int (&p)[4], int (&q)[4],
                                        Real (&d)[4], Real (&rows)[4][3], Real (&r)[4][3],
                                        Real (&im)[4]) {
  const int nc = cluster_constraints(l, c, p, q, d);
  for (int a = 0; a < 4; ++a) {
    const int i = l.atom(c, a);
    im[a] = i >= 0 ? 1 / mass(type(i)) : Real(0);
    for (int k = 0; k < 3; ++k) rows[a][k] = i >= 0 ? values(i, k) : Real(0);
  }
  for (int n = 0; n < nc; ++n)
    for (int k = 0; k < 3; ++k) r[n][k] = x(l.atom(c, p[n]), k) - x(l.atom(c, q[n]), k);
  return nc;
}

/// How constraint m's multiplier moves constraint n's vector s_p - s_q: the coefficient w with
/// d(s_p - s_q)/d(lambda_m) = cdt2 w r_m (the force lambda_m r_m acts on p_m, minus it on q_m).
KOKKOS_INLINE_FUNCTION Real constraint_coupling(const int (&p)[4], const int (&q)[4],
                                                const Real (&im)[4], int n, int m) {
  const Real on_p = p[n] == p[m] ? Real(1) : p[n] == q[m] ? Real(-1) : Real(0);
  const Real on_q = q[n] == p[m] ? Real(1) : q[n] == q[m] ? Real(-1) : Real(0);
  return on_p * im[p[n]] - on_q * im[q[n]];
}

/// Solves the n x n system A x = b (n <= 4) in place by Gaussian elimination with partial
/// pivoting: b becomes x. Returns false for a singular matrix.
KOKKOS_INLINE_FUNCTION bool solve_small(int n, Real (&A)[4][4], Real (&b)[4]) {
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (kmath::fabs(A[r][c]) > kmath::fabs(A[pivot][c])) pivot = r;
    if (!(kmath::fabs(A[pivot][c]) > Real(0))) return false;
    if (pivot != c) {
      for (int k = 0; k < n; ++k) {
        const Real t = A[c][k];
        A[c][k] = A[pivot][k];
        A[pivot][k] = t;
      }
      const Real t = b[c];
      b[c] = b[pivot];
      b[pivot] = t;
    }
    for (int r = c + 1; r < n; ++r) {
      const Real f = A[r][c] / A[c][c];
      for (int k = c; k < n; ++k) A[r][k] -= f * A[c][k];
      b[r] -= f * b[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    for (int k = c + 1; k < n; ++k) b[c] -= A[c][k] * b[k];
    b[c] /= A[c][c];
  }
  return true;
}

/// What a constraint solve reports: clusters that did not converge (the first one's centre
/// index) and the largest relative error left.
struct ShakeOutcome {
  int failed = 0;
  int first_centre = -1;
  Real worst = 0;
};

/// SHAKE: sets fc (rows of the clusters' atoms, owned and ghost; zero elsewhere beforehand) to
/// the constraint forces that bring the predicted positions xp onto the constraints, wc(centre,
/// a) to the diagonal of the cluster's virial tensor, sum_k lambda_k r_k,a^2 (a = x, y, z; the
/// force lambda_k r_k acts along the constraint vector r_k). `cdt2` is c dt^2; `inv_m` per type
/// is 1 / (m mvv2e) (the kernels' masses).
inline ShakeOutcome shake(const ShakeClusters& l, const Vectors& x, const Vectors& xp,
                          const Types& type, const TypeMasses& mass, Real cdt2, Real tolerance,
                          int iterations, const Vectors& fc, const Vectors& wc) {
  ShakeOutcome out;
  int failed = 0;
  Kokkos::parallel_reduce(
      "md::shake", Kokkos::RangePolicy<DevExecSpace>(0, l.count),
      KOKKOS_LAMBDA(const int c, int& bad) {
        int p[4], q[4];
        Real d[4], s[4][3], r[4][3], im[4], lambda[4] = {0, 0, 0, 0};
        const int nc = load_cluster(l, c, x, xp, type, mass, p, q, d, s, r, im);
        Real s0[4][3];
        for (int a = 0; a < 4; ++a)
          for (int k = 0; k < 3; ++k) s0[a][k] = s[a][k];
        bool done = false;
        for (int it = 0; it <= iterations; ++it) {
          // Residuals g_n = d_n^2 - |s_p - s_q|^2 at the current multipliers, and their
          // Jacobian -J: J_nm = 2 (s_p - s_q) . d(s_p - s_q)/d(lambda_m).
          Real g[4], J[4][4], sv[4][3];
          done = true;
          for (int n = 0; n < nc; ++n) {
            Real s2 = 0;
            for (int k = 0; k < 3; ++k) {
              sv[n][k] = s[p[n]][k] - s[q[n]][k];
              s2 += sv[n][k] * sv[n][k];
            }
            g[n] = d[n] * d[n] - s2;
            if (kmath::fabs(g[n]) > 2 * tolerance * d[n] * d[n]) done = false;
          }
          if (done || it == iterations) break;
          for (int n = 0; n < nc; ++n)
            for (int m = 0; m < nc; ++m) {
              const Real w = constraint_coupling(p, q, im, n, m);
              Real dot = 0;
              for (int k = 0; k < 3; ++k) dot += sv[n][k] * r[m][k];
              J[n][m] = 2 * cdt2 * w * dot;
            }
          if (!solve_small(nc, J, g)) break;  // singular: reported as not converged
          for (int m = 0; m < nc; ++m) lambda[m] += g[m];
          for (int a = 0; a < 4; ++a)
            for (int k = 0; k < 3; ++k) s[a][k] = s0[a][k];
          for (int m = 0; m < nc; ++m)
            for (int k = 0; k < 3; ++k) {
              s[p[m]][k] += cdt2 * im[p[m]] * lambda[m] * r[m][k];
              s[q[m]][k] -= cdt2 * im[q[m]] * lambda[m] * r[m][k];
            }
        }
        if (!done) ++bad;
        Real w[3] = {0, 0, 0};
        for (int n = 0; n < nc; ++n) {
          const int i = l.atom(c, p[n]), j = l.atom(c, q[n]);
          for (int k = 0; k < 3; ++k) {
            fc(i, k) += lambda[n] * r[n][k];
            fc(j, k) -= lambda[n] * r[n][k];
            w[k] += lambda[n] * r[n][k] * r[n][k];
          }
        }
        for (int k = 0; k < 3; ++k) wc(l.atom(c, 0), k) = w[k];
      },
      failed);
  out.failed = failed;
  if (failed > 0) {
    // Rare path: the first failing cluster and its error, for the message.
    Kokkos::View<Real[2], DevMemSpace> worst("md::shake_worst");
    Kokkos::parallel_for(
        "md::shake_worst", Kokkos::RangePolicy<DevExecSpace>(0, 1), KOKKOS_LAMBDA(const int) {
          for (int c = 0; c < l.count; ++c) {
            int p[4], q[4];
            Real d[4];
            const int nc = cluster_constraints(l, c, p, q, d);
            for (int n = 0; n < nc; ++n) {
              Real s2 = 0;
              for (int k = 0; k < 3; ++k) {
                const Real v = xp(l.atom(c, p[n]), k) - xp(l.atom(c, q[n]), k);
                s2 += v * v;
              }
              const Real e = kmath::fabs(kmath::sqrt(s2) - d[n]) / d[n];
              if (e > worst(1)) {
                worst(0) = l.atom(c, 0);
                worst(1) = e;
              }
            }
          }
        });
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), worst);
    out.first_centre = static_cast<int>(h(0));
    out.worst = h(1);
  }
  return out;
}

/// RATTLE's velocity half: sets dv (rows of the clusters' atoms; zero elsewhere beforehand) to
/// the corrections that remove every constraint's relative velocity along it (to `tolerance`
/// relative). Returns the number of clusters that did not converge.
inline int rattle_velocities(const ShakeClusters& l, const Vectors& x, const Vectors& v,
                             const Types& type, const TypeMasses& mass, Real tolerance,
                             int iterations, const Vectors& dv) {
  int failed = 0;
  Kokkos::parallel_reduce(
      "md::rattle", Kokkos::RangePolicy<DevExecSpace>(0, l.count),
      KOKKOS_LAMBDA(const int c, int& bad) {
        int p[4], q[4];
        Real d[4], u[4][3], r[4][3], im[4];
        const int nc = load_cluster(l, c, x, v, type, mass, p, q, d, u, r, im);
        bool done = false;
        for (int it = 0; it < iterations && !done; ++it) {
          done = true;
          for (int n = 0; n < nc; ++n) {
            Real rv = 0, r2 = 0, v2 = 0;
            for (int k = 0; k < 3; ++k) {
              const Real dvk = u[p[n]][k] - u[q[n]][k];
              rv += r[n][k] * dvk;
              r2 += r[n][k] * r[n][k];
              v2 += dvk * dvk;
            }
            if (kmath::fabs(rv) <= tolerance * kmath::sqrt(r2 * v2) + Real(1e-300)) continue;
            done = false;
            const Real g = rv / (r2 * (im[p[n]] + im[q[n]]));
            for (int k = 0; k < 3; ++k) {
              u[p[n]][k] -= g * im[p[n]] * r[n][k];
              u[q[n]][k] += g * im[q[n]] * r[n][k];
            }
          }
        }
        if (!done) ++bad;
        for (int a = 0; a < 4; ++a) {
          const int i = l.atom(c, a);
          if (i < 0) continue;
          for (int k = 0; k < 3; ++k) dv(i, k) = u[a][k] - v(i, k);
        }
      },
      failed);
  return failed;
}

/// Predicted positions of atoms [0, n): xp = x + dt v + cdt2 f / m.
inline void predict_positions(const Vectors& x, const Vectors& v, const Vectors& f,
                              const Types& type, const TypeMasses& mass, Real dt, Real cdt2, int n,
                              const Vectors& xp) {
  Kokkos::parallel_for(
      "md::shake_predict", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Real s = cdt2 / mass(type(i));
        for (int k = 0; k < 3; ++k) xp(i, k) = x(i, k) + dt * v(i, k) + s * f(i, k);
      });
}

}  // namespace stratus::kernels::md

namespace stratus::kernels::md {

/// Local clusters from the centres' rows (`rows`: p1 p2 p3 as global ids or -1, bond types b1 b2
/// b3, angle type or -1, 1 for a centre) of the owned atoms, partners in the image closest to
/// the centre (head/next: topology.hpp's id chains); lengths from the bond types' r0 and, for an
/// angle, the law of cosines with its theta0. Sizes `list` (grown only). Returns the id of a
/// centre with a partner absent here (-1: none) and, in `missing`, that partner's id.
template <class Rows, class Closest>
std::int64_t build_clusters(const Rows& rows, const Ids& id, int nlocal,
                            const Kokkos::View<Real*, DevMemSpace>& bond_r0,
                            const Kokkos::View<Real*, DevMemSpace>& angle_theta0,
                            const Closest& closest, ShakeClusters& list, std::int64_t& missing) {
  Kokkos::View<int*, DevMemSpace> offset("md::shake_offset", nlocal + 1);
  Kokkos::parallel_for(
      "md::shake_count", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i) { offset(i + 1) = rows(i, 7) == 1 ? 1 : 0; });
  int total = 0;
  Kokkos::parallel_scan(
      "md::shake_scan", Kokkos::RangePolicy<DevExecSpace>(0, nlocal + 1),
      KOKKOS_LAMBDA(const int i, int& acc, const bool final) {
        acc += i == 0 ? 0 : offset(i);
        if (final) offset(i) = acc;
      },
      total);
  if (static_cast<int>(list.atom.extent(0)) < total) {
    const int n = total + total / 4 + 16;
    list.atom = Kokkos::View<int* [4], Kokkos::LayoutRight, DevMemSpace>("md::shake_atoms", n);
    list.length = Kokkos::View<Real* [4], Kokkos::LayoutRight, DevMemSpace>("md::shake_lengths", n);
  }
  list.count = total;
  const auto atom = list.atom;
  const auto length = list.length;
  Kokkos::View<std::int64_t[2], DevMemSpace> lost("md::shake_lost");
  Kokkos::deep_copy(lost, std::int64_t(-1));
  Kokkos::parallel_for(
      "md::shake_fill", Kokkos::RangePolicy<DevExecSpace>(0, nlocal), KOKKOS_LAMBDA(const int i) {
        if (rows(i, 7) != 1) return;
        const int c = offset(i);
        atom(c, 0) = i;
        for (int k = 1; k < 4; ++k) {
          const std::int64_t g = rows(i, k - 1);
          int j = -1;
          if (g >= 0) {
            j = closest(i, g);
            if (j < 0 && Kokkos::atomic_compare_exchange(&lost(0), std::int64_t(-1), id(i)) == -1)
              lost(1) = g;
            if (j < 0) j = i;  // keeps the list well formed; the caller throws
          }
          atom(c, k) = j;
          length(c, k - 1) = g >= 0 ? bond_r0(rows(i, 2 + k)) : Real(0);
        }
        const std::int64_t at = rows(i, 6);
        if (at >= 0) {
          const Real b1 = length(c, 0), b2 = length(c, 1), t = angle_theta0(at);
          length(c, 3) = kmath::sqrt(b1 * b1 + b2 * b2 - 2 * b1 * b2 * kmath::cos(t));
        } else {
          length(c, 3) = 0;
        }
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lost);
  missing = h(1);
  return h(0);
}

}  // namespace stratus::kernels::md
