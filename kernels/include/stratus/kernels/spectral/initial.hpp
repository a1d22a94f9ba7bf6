// Initial velocity fields of the spectral solver: Taylor-Green and ABC flows on the grid
// points, and a random solenoidal field in Fourier space whose every mode is a function of the
// seed and the mode's global wave numbers only (the same field on any number of ranks).
#pragma once

#include "stratus/kernels/random.hpp"
#include "stratus/kernels/spectral/modes.hpp"

namespace stratus::kernels::spectral {

/// Grid points of this rank: x = origin + (begin + i) * dx along each axis.
struct PointGrid {
  Kokkos::Array<std::int64_t, 3> begin{};
  Kokkos::Array<double, 3> origin{};
  Kokkos::Array<double, 3> dx{};
  KOKKOS_INLINE_FUNCTION double x(int a, std::int64_t i) const {
    return origin[a] + static_cast<double>(begin[a] + i) * dx[a];
  }
};

/// Taylor-Green vortex with wave numbers kx, ky, kz (kz unused in 2D):
/// 3D u = U sin(kx x) cos(ky y) cos(kz z), v = -U cos(kx x) sin(ky y) cos(kz z), w = 0;
/// 2D u = U sin(kx x) cos(ky y), v = -U cos(kx x) sin(ky y).
inline void taylor_green(const RealVec& u, const PointGrid g, double amplitude, double kx,
                         double ky, double kz, int dims) {
  Kokkos::parallel_for(
      "spectral::taylor_green", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k) {
        const double x = g.x(0, i), y = g.x(1, j), z = g.x(2, k);
        const double cz = dims == 3 ? kmath::cos(kz * z) : 1.0;
        u.x(i, j, k) = amplitude * kmath::sin(kx * x) * kmath::cos(ky * y) * cz;
        u.y(i, j, k) = -amplitude * kmath::cos(kx * x) * kmath::sin(ky * y) * cz;
        u.z(i, j, k) = 0.0;
      });
}

/// Arnold-Beltrami-Childress flow with wave number k: u = A sin(k z) + C cos(k y),
/// v = B sin(k x) + A cos(k z), w = C sin(k y) + B cos(k x) (curl u = k u).
inline void abc_flow(const RealVec& u, const PointGrid g, double a, double b, double c, double k) {
  Kokkos::parallel_for(
      "spectral::abc_flow", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t kk) {
        const double x = g.x(0, i), y = g.x(1, j), z = g.x(2, kk);
        u.x(i, j, kk) = a * kmath::sin(k * z) + c * kmath::cos(k * y);
        u.y(i, j, kk) = b * kmath::sin(k * x) + a * kmath::cos(k * z);
        u.z(i, j, kk) = c * kmath::sin(k * y) + b * kmath::cos(k * x);
      });
}

/// A random solenoidal field with the shell spectrum E(k) ~ k^4 exp(-2 (k / k_peak)^2) (up to
/// a factor the caller fixes): each kept mode gets a complex Gaussian vector, keyed by the
/// seed and the mode's global wave numbers, projected normal to k and scaled by
/// sqrt(E(k) / (shell density)). Modes of the self-conjugate planes (kz = 0 and the kz Nyquist
/// plane) take the conjugate of their partner -k, so the field is real. `dims` = 2: u_z = 0.
inline void random_field(const Modes& m, const SpectralVec& u, std::uint64_t seed, double k_peak,
                         int dims) {
  const double two_pi = 2.0 * kmath::pi<double>();
  Kokkos::parallel_for(
      "spectral::random_field", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        Complex a[3] = {Complex(0.0, 0.0), Complex(0.0, 0.0), Complex(0.0, 0.0)};
        if (k2 > 0 && m.kept(mm)) {
          // The key of the pair {k, -k} in a self-conjugate plane is the one with my > 0 or
          // (my = 0 and mx > 0); the other member takes the conjugate.
          const bool self_conjugate_plane = mm[2] == 0 || 2 * mm[2] == m.n[2];
          const bool flip = self_conjugate_plane && (mm[1] < 0 || (mm[1] == 0 && mm[0] < 0));
          const std::int64_t kx = flip ? -mm[0] : mm[0], ky = flip ? -mm[1] : mm[1];
          const std::uint64_t key = static_cast<std::uint64_t>(
              ((kx + m.n[0]) * (2 * m.n[1] + 1) + (ky + m.n[1])) * (m.n[2] + 1) + mm[2]);
          for (int c = 0; c < dims; ++c) {
            const double re = rng_normal(seed, rng_stream_spectral_initial, key,
                                         static_cast<std::uint64_t>(c), 0);
            const double im = rng_normal(seed, rng_stream_spectral_initial, key,
                                         static_cast<std::uint64_t>(c), 1);
            a[c] = Complex(re, flip ? -im : im);
          }
          project(k, a);
          const double kk = kmath::sqrt(k2);
          const double x = kk / k_peak;
          const double spectrum = x * x * x * x * kmath::exp(-2.0 * x * x);
          const double density = dims == 3 ? 2.0 * two_pi * k2 : two_pi * kk;  // shell area
          const double s = kmath::sqrt(spectrum / density);
          for (int c = 0; c < 3; ++c) a[c] *= s;
        }
        for (int c = 0; c < 3; ++c) u[c](iz, iy, ix) = a[c];
      });
}

}  // namespace stratus::kernels::spectral
