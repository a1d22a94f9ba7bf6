// Velocity-Verlet halves, kinetic sums, velocity initialisation and the Langevin thermostat
// force for atoms [0, n). Masses are per type. Random draws use the counter-based generator of
// random.hpp keyed by global ids, so they do not depend on atom order or decomposition.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"
#include "stratus/kernels/random.hpp"

#include <cstdint>

namespace stratus::kernels::md {

/// Three summed Reals, usable as a Kokkos reduction value.
struct Sum3 {
  Real v[3] = {0, 0, 0};
  /// Adds o (the reduction join).
  KOKKOS_INLINE_FUNCTION void operator+=(const Sum3& o) {
    for (int d = 0; d < 3; ++d) v[d] += o.v[d];
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sum3& o) volatile {
    for (int d = 0; d < 3; ++d) v[d] = v[d] + o.v[d];
  }
};

/// Half kick: v += dt_half * f / m.
inline void verlet_kick(const Vectors& v, const Vectors& f, const Types& type,
                        const TypeMasses& masses, Real dt_half, int n) {
  Kokkos::parallel_for(
      "md::verlet_kick", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Real s = dt_half / masses(type(i));
        for (int d = 0; d < 3; ++d) v(i, d) += s * f(i, d);
      });
}

/// Drift: x += dt * v.
inline void verlet_drift(const Vectors& x, const Vectors& v, Real dt, int n) {
  Kokkos::parallel_for(
      "md::verlet_drift", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) x(i, d) += dt * v(i, d);
      });
}

/// Kinetic energy sum_i 1/2 m_i |v_i|^2.
inline Real kinetic_energy(const Vectors& v, const Types& type, const TypeMasses& masses, int n) {
  Real ke = 0;
  Kokkos::parallel_reduce(
      "md::kinetic_energy", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, Real& acc) {
        acc += Real(0.5) * masses(type(i)) *
               (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
      },
      ke);
  return ke;
}

/// The kinetic tensor's diagonal sum_i 1/2 m_i v_i,a^2 (a = x, y, z; their sum is the kinetic
/// energy).
inline Sum3 kinetic_tensor(const Vectors& v, const Types& type, const TypeMasses& masses, int n) {
  Sum3 ke;
  Kokkos::parallel_reduce(
      "md::kinetic_tensor", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, Sum3& acc) {
        const Real m = Real(0.5) * masses(type(i));
        for (int d = 0; d < 3; ++d) acc.v[d] += m * v(i, d) * v(i, d);
      },
      ke);
  return ke;
}

/// Total momentum sum_i m_i v_i.
inline Kokkos::Array<Real, 3> momentum(const Vectors& v, const Types& type,
                                       const TypeMasses& masses, int n) {
  Sum3 p;
  Kokkos::parallel_reduce(
      "md::momentum", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i, Sum3& acc) {
        const Real m = masses(type(i));
        for (int d = 0; d < 3; ++d) acc.v[d] += m * v(i, d);
      },
      p);
  return {p.v[0], p.v[1], p.v[2]};
}

/// v *= factor (velocity rescaling).
inline void scale_velocities(const Vectors& v, Real factor, int n) {
  Kokkos::parallel_for(
      "md::scale_velocities", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) v(i, d) *= factor;
      });
}

/// v_d *= factor_d, per axis (a barostat's coupling to the velocities).
inline void scale_velocities(const Vectors& v, Kokkos::Array<Real, 3> factor, int n) {
  Kokkos::parallel_for(
      "md::scale_velocities_axes", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) v(i, d) *= factor[d];
      });
}

/// x_d = origin_d + (x_d - origin_d) factor_d: an affine dilation of positions [0, n) (a box
/// that scales about its corner `origin`).
inline void dilate_positions(const Vectors& x, Kokkos::Array<Real, 3> origin,
                             Kokkos::Array<Real, 3> factor, int n) {
  Kokkos::parallel_for(
      "md::dilate_positions", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) x(i, d) = origin[d] + (x(i, d) - origin[d]) * factor[d];
      });
}

/// v += dv (e.g. dv = -P / M removes the centre-of-mass motion).
inline void shift_velocities(const Vectors& v, Kokkos::Array<Real, 3> dv, int n) {
  Kokkos::parallel_for(
      "md::shift_velocities", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        for (int d = 0; d < 3; ++d) v(i, d) += dv[d];
      });
}

/// Langevin thermostat: f += -gamma m v + sqrt(2 gamma m kT / dt) N(0, 1), the normal keyed by
/// (seed, rng_stream_langevin, step, id, component). Call after the pair forces, with the
/// velocities of the current half step.
inline void langevin_force(const Vectors& f, const Vectors& v, const Types& type,
                           const TypeMasses& masses, const Ids& id, Real gamma, Real kT, Real dt,
                           std::uint64_t seed, std::int64_t step, int n) {
  const auto ustep = static_cast<std::uint64_t>(step);
  Kokkos::parallel_for(
      "md::langevin_force", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Real m = masses(type(i));
        const Real sigma = kmath::sqrt(2 * gamma * m * kT / dt);
        const auto gid = static_cast<std::uint64_t>(id(i));
        for (int d = 0; d < 3; ++d) {
          const Real r = rng_normal(seed, rng_stream_langevin, ustep, gid, d);
          f(i, d) += -gamma * m * v(i, d) + sigma * r;
        }
      });
}

/// v(i, d) = sqrt(kT / m) N(0, 1) keyed by (seed, rng_stream_velocity, id, d): the same atom
/// gets the same velocity at any rank count or ordering. The net momentum is not removed.
inline void init_velocities(const Vectors& v, const Types& type, const TypeMasses& masses,
                            const Ids& id, Real kT, std::uint64_t seed, int n) {
  Kokkos::parallel_for(
      "md::init_velocities", Kokkos::RangePolicy<DevExecSpace>(0, n), KOKKOS_LAMBDA(const int i) {
        const Real s = kmath::sqrt(kT / masses(type(i)));
        const auto gid = static_cast<std::uint64_t>(id(i));
        for (int d = 0; d < 3; ++d) v(i, d) = s * rng_normal(seed, rng_stream_velocity, gid, d, 0);
      });
}

}  // namespace stratus::kernels::md
