// Device kernels of the pseudo-spectral Navier-Stokes solver: the nonlinear term in physical
// space, the fused stage update (projection, dealiasing, forcing, integrating factor, low-storage
// Runge-Kutta), and the per-mode tables. Pure Kokkos; views and scalars by value.
#pragma once

#include "stratus/kernels/spectral/modes.hpp"

namespace stratus::kernels::spectral {

/// Forcing applied in the stage update.
enum class ForcingKind { none, kolmogorov, linear };

/// What a stage update needs besides the arrays.
struct StageParams {
  double factor = 1;    ///< the nonlinear term is factor * nl (normalisation and sign)
  double a = 0, b = 1;  ///< low-storage coefficients: q = a q + dt r; v = v + b q
  double dt = 0;
  bool last = false;      ///< last stage: v = E(1) v (back to the frame of the new time)
  bool vorticity = true;  ///< prepare i k x u of the next stage too (rotational form)
  ForcingKind forcing = ForcingKind::none;
  double kolmogorov_amplitude = 0;  ///< f_x = F sin(k_f y)
  std::int64_t kolmogorov_mode = 1;
  double linear_coefficient = 0;      ///< f = c u on the band (constant injection)
  double band_lo2 = 0, band_hi2 = 0;  ///< |k|^2 range of the linear forcing
};

/// table(iz, iy, ix) = exp(-nu |k|^2 tau) for the integrating factor over a time tau, at the
/// modes the dealiasing keeps (the only ones the stage update reads; the others are left).
inline void decay_table(const Modes& m, double nu, double tau, const ModeTable& table) {
  const KeptModes kept = kept_modes(m);
  Kokkos::parallel_for(
      "spectral::decay_table", kept_range(kept),
      KOKKOS_LAMBDA(const std::int64_t jz, const std::int64_t jy, const std::int64_t jx) {
        const std::int64_t iz = kept.stored(2, jz), iy = kept.stored(1, jy),
                           ix = kept.stored(0, jx);
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        table(iz, iy, ix) = kmath::exp(-nu * (k[0] * k[0] + k[1] * k[1] + k[2] * k[2]) * tau);
      });
}

/// Energy of the modes in the forcing band, 1/2 sum |u|^2 over kept modes with band_lo2 <=
/// |k|^2 <= band_hi2; with `vorticity`, also om = i k x u.
/// `skip_dropped`: modes dropped by dealiasing are not touched (om must hold zeros there, as
/// every array of the solver's step does); otherwise om is set everywhere.
inline double prepare_stage(const Modes& m, const SpectralVec& u, const SpectralVec& om,
                            bool vorticity, double band_lo2, double band_hi2,
                            bool skip_dropped = true) {
  double band = 0;
  const KeptModes kept = skip_dropped ? kept_modes(m) : every_mode(m);
  Kokkos::parallel_reduce(
      "spectral::prepare_stage", kept_range(kept),
      KOKKOS_LAMBDA(const std::int64_t jz, const std::int64_t jy, const std::int64_t jx,
                    double& e) {
        const std::int64_t iz = kept.stored(2, jz), iy = kept.stored(1, jy),
                           ix = kept.stored(0, jx);
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const Complex a[3] = {u.x(iz, iy, ix), u.y(iz, iy, ix), u.z(iz, iy, ix)};
        if (vorticity) {
          Complex w[3];
          curl(k, a, w);
          om.x(iz, iy, ix) = w[0];
          om.y(iz, iy, ix) = w[1];
          om.z(iz, iy, ix) = w[2];
        }
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if (k2 >= band_lo2 && k2 <= band_hi2 && k2 > 0)
          e += 0.5 * m.weight(mm[2]) * (norm2(a[0]) + norm2(a[1]) + norm2(a[2]));
      },
      band);
  return band;
}

/// u x omega at one point, written over om; returns |u_x|/dx + |u_y|/dy + |u_z|/dz there (the
/// advective CFL rate).
KOKKOS_INLINE_FUNCTION double cross_point(const double u[3], double om[3], double inv_dx,
                                          double inv_dy, double inv_dz) {
  const double wx = om[0], wy = om[1], wz = om[2];
  om[0] = u[1] * wz - u[2] * wy;
  om[1] = u[2] * wx - u[0] * wz;
  om[2] = u[0] * wy - u[1] * wx;
  return kmath::fabs(u[0]) * inv_dx + kmath::fabs(u[1]) * inv_dy + kmath::fabs(u[2]) * inv_dz;
}

/// u x omega at every point, written over omega; returns max(|u|/dx + |v|/dy + |w|/dz), the
/// advective CFL rate. `dims` = 2: u_z = omega_x = omega_y = 0 (only omega_z is read).
inline double cross_product(const RealVec& u, const RealVec& om, int dims, double inv_dx,
                            double inv_dy, double inv_dz) {
  double rate = 0;
  Kokkos::parallel_reduce(
      "spectral::cross_product", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k, double& r) {
        const double ux = u.x(i, j, k), uy = u.y(i, j, k);
        if (dims == 2) {
          const double wz = om.z(i, j, k);
          om.x(i, j, k) = uy * wz;
          om.y(i, j, k) = -ux * wz;
          const double c = kmath::fabs(ux) * inv_dx + kmath::fabs(uy) * inv_dy;
          r = c > r ? c : r;
          return;
        }
        const double uu[3] = {ux, uy, u.z(i, j, k)};
        double w[3] = {om.x(i, j, k), om.y(i, j, k), om.z(i, j, k)};
        const double c = cross_point(uu, w, inv_dx, inv_dy, inv_dz);
        om.x(i, j, k) = w[0];
        om.y(i, j, k) = w[1];
        om.z(i, j, k) = w[2];
        r = c > r ? c : r;
      },
      Kokkos::Max<double>(rate));
  return rate;
}

/// max(|u|/dx + |v|/dy + |w|/dz) over the points (the advective CFL rate).
inline double cross_product_rate(const RealVec& u, int dims, double inv_dx, double inv_dy,
                                 double inv_dz) {
  double rate = 0;
  Kokkos::parallel_reduce(
      "spectral::cfl_rate", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k, double& r) {
        double c = kmath::fabs(u.x(i, j, k)) * inv_dx + kmath::fabs(u.y(i, j, k)) * inv_dy;
        if (dims == 3) c += kmath::fabs(u.z(i, j, k)) * inv_dz;
        r = c > r ? c : r;
      },
      Kokkos::Max<double>(rate));
  return rate;
}

/// One low-storage Runge-Kutta stage with the integrating factor, fused with the preparation of
/// the next stage. Per kept mode: r = P(factor nl) + f(u_s) (P the projection), then
/// q = a q + dt r / E_s, v = v + b q, and then either v = E_end v (last stage) or u_next =
/// E_next v and om = i k x u_next. Modes dropped by dealiasing are neither read nor written:
/// v, q, u_next and om hold zeros there (mask_dropped, zero-initialised arrays), which saves
/// about 2/3 of the memory traffic under the 2/3 rule. `us` (the velocity of this stage) may
/// be `u_next`. Returns the band energy of u_next (linear forcing).
inline double stage_update(const Modes& m, const StageParams p, const SpectralVec& nl,
                           const SpectralVec& v, const SpectralVec& q, const SpectralVec& us,
                           const SpectralVec& u_next, const SpectralVec& om,
                           const ModeTable& e_stage, const ModeTable& e_next) {
  double band = 0;
  const KeptModes kept = kept_modes(m);
  Kokkos::parallel_reduce(
      "spectral::stage_update", kept_range(kept),
      KOKKOS_LAMBDA(const std::int64_t jz, const std::int64_t jy, const std::int64_t jx,
                    double& e) {
        const std::int64_t iz = kept.stored(2, jz), iy = kept.stored(1, jy),
                           ix = kept.stored(0, jx);
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const Complex zero(0.0, 0.0);
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        Complex r[3] = {p.factor * nl.x(iz, iy, ix), p.factor * nl.y(iz, iy, ix),
                        p.factor * nl.z(iz, iy, ix)};
        if (k2 == 0.0) r[0] = r[1] = r[2] = zero;
        project(k, r);
        if (p.forcing == ForcingKind::kolmogorov) {
          // f_x = F sin(k_f y) = F (e^{i k_f y} - e^{-i k_f y}) / (2 i)
          if (mm[0] == 0 && mm[2] == 0 &&
              (mm[1] == p.kolmogorov_mode || mm[1] == -p.kolmogorov_mode))
            r[0] += Complex(0.0, mm[1] > 0 ? -0.5 : 0.5) * p.kolmogorov_amplitude;
        } else if (p.forcing == ForcingKind::linear && k2 >= p.band_lo2 && k2 <= p.band_hi2 &&
                   k2 > 0) {
          r[0] += p.linear_coefficient * us.x(iz, iy, ix);
          r[1] += p.linear_coefficient * us.y(iz, iy, ix);
          r[2] += p.linear_coefficient * us.z(iz, iy, ix);
        }
        const double inv_e = 1.0 / e_stage(iz, iy, ix);
        Complex vn[3];
        for (int c = 0; c < 3; ++c) {
          const Complex qc = p.a * q[c](iz, iy, ix) + (p.dt * inv_e) * r[c];
          q[c](iz, iy, ix) = qc;
          vn[c] = v[c](iz, iy, ix) + p.b * qc;
        }
        const double en = e_next(iz, iy, ix);
        if (p.last) {
          for (int c = 0; c < 3; ++c) v[c](iz, iy, ix) = en * vn[c];
          return;
        }
        Complex un[3];
        for (int c = 0; c < 3; ++c) {
          v[c](iz, iy, ix) = vn[c];
          un[c] = en * vn[c];
          u_next[c](iz, iy, ix) = un[c];
        }
        if (p.vorticity) {
          Complex w[3];
          curl(k, un, w);
          for (int c = 0; c < 3; ++c) om[c](iz, iy, ix) = w[c];
        }
        if (k2 >= p.band_lo2 && k2 <= p.band_hi2 && k2 > 0)
          e += 0.5 * m.weight(mm[2]) * (norm2(un[0]) + norm2(un[1]) + norm2(un[2]));
      },
      band);
  return band;
}

/// out_c = i k_j u_c (the derivative along axis j of every component).
inline void derivative(const Modes& m, const SpectralVec& u, int j, const SpectralVec& out) {
  Kokkos::parallel_for(
      "spectral::derivative", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const Complex ik(0.0, k[j]);
        for (int c = 0; c < 3; ++c) out[c](iz, iy, ix) = ik * u[c](iz, iy, ix);
      });
}

/// acc_c = (first ? 0 : acc_c) + u_j g_c at every point (the advective term, one j at a time).
inline void accumulate_advection(const RealVec& u, int j, const RealVec& g, const RealVec& acc,
                                 bool first) {
  Kokkos::parallel_for(
      "spectral::accumulate_advection", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t jj, const std::int64_t k) {
        const double uj = u[j](i, jj, k);
        for (int c = 0; c < 3; ++c)
          acc[c](i, jj, k) = (first ? 0.0 : acc[c](i, jj, k)) + uj * g[c](i, jj, k);
      });
}

/// out_c = u_c u_j at every point.
inline void products(const RealVec& u, int j, const RealVec& out) {
  Kokkos::parallel_for(
      "spectral::products", point_range(u.x),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t jj, const std::int64_t k) {
        const double uj = u[j](i, jj, k);
        for (int c = 0; c < 3; ++c) out[c](i, jj, k) = u[c](i, jj, k) * uj;
      });
}

/// nl_c += i k_j t_c (the divergence of u_c u_j, one j at a time).
inline void accumulate_divergence(const Modes& m, const SpectralVec& t, int j,
                                  const SpectralVec& nl) {
  Kokkos::parallel_for(
      "spectral::accumulate_divergence", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const Complex ik(0.0, k[j]);
        for (int c = 0; c < 3; ++c) nl[c](iz, iy, ix) += ik * t[c](iz, iy, ix);
      });
}

/// Energy 1/2 <|u|^2> (power = 0) or enstrophy 1/2 <|omega|^2> (power = 1: |k|^2 |u|^2, equal
/// for a solenoidal u) of the normalised spectral field u.
inline double spectral_sum(const Modes& m, const SpectralVec& u, int power) {
  double total = 0;
  Kokkos::parallel_reduce(
      "spectral::spectral_sum", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix,
                    double& e) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const double k2 = power == 0 ? 1.0 : k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        const double a2 = norm2(u.x(iz, iy, ix)) + norm2(u.y(iz, iy, ix)) + norm2(u.z(iz, iy, ix));
        e += 0.5 * m.weight(mm[2]) * k2 * a2;
      },
      total);
  return total;
}

/// out = i k . u (the divergence).
inline void divergence(const Modes& m, const SpectralVec& u, const SpectralView& out) {
  Kokkos::parallel_for(
      "spectral::divergence", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        out(iz, iy, ix) = Complex(0.0, 1.0) * (k[0] * u.x(iz, iy, ix) + k[1] * u.y(iz, iy, ix) +
                                               k[2] * u.z(iz, iy, ix));
      });
}

/// max |f| over the points of a real field.
inline double max_abs(const RealView& f) {
  double r = 0;
  Kokkos::parallel_reduce(
      "spectral::max_abs", point_range(f),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k, double& x) {
        const double a = kmath::fabs(f(i, j, k));
        x = a > x ? a : x;
      },
      Kokkos::Max<double>(r));
  return r;
}

/// u = P(scale * u) on kept modes, 0 elsewhere (and at k = 0 when `zero_mean`): turns the
/// transform of an initial field into a dealiased solenoidal state.
inline void project_field(const Modes& m, const SpectralVec& u, double scale, bool zero_mean) {
  Kokkos::parallel_for(
      "spectral::project_field", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        Complex a[3] = {scale * u.x(iz, iy, ix), scale * u.y(iz, iy, ix), scale * u.z(iz, iy, ix)};
        const bool drop = !m.kept(mm) || (zero_mean && mm[0] == 0 && mm[1] == 0 && mm[2] == 0);
        if (drop) a[0] = a[1] = a[2] = Complex(0.0, 0.0);
        project(k, a);
        for (int c = 0; c < 3; ++c) u[c](iz, iy, ix) = a[c];
      });
}

/// Zeroes the modes dropped by dealiasing (kept modes are left bit for bit alone).
inline void mask_dropped(const Modes& m, const SpectralVec& u) {
  Kokkos::parallel_for(
      "spectral::mask_dropped", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        m.modes(iz, iy, ix, mm);
        if (m.kept(mm)) return;
        for (int c = 0; c < 3; ++c) u[c](iz, iy, ix) = Complex(0.0, 0.0);
      });
}

/// out = -i k . (scale nl) / |k|^2 (0 at k = 0): the total pressure p + |u|^2/2 from the
/// transform nl of u x omega (lap P = div(u x omega)).
inline void pressure_from_nonlinear(const Modes& m, const SpectralVec& nl, double scale,
                                    const SpectralView& out) {
  Kokkos::parallel_for(
      "spectral::pressure", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        std::int64_t mm[3];
        double k[3];
        m.mode_and_wavevector(iz, iy, ix, mm, k);
        const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if (k2 == 0.0 || !m.kept(mm)) {
          out(iz, iy, ix) = Complex(0.0, 0.0);
          return;
        }
        const Complex kn =
            k[0] * nl.x(iz, iy, ix) + k[1] * nl.y(iz, iy, ix) + k[2] * nl.z(iz, iy, ix);
        out(iz, iy, ix) = Complex(0.0, -scale / k2) * kn;
      });
}

/// p = p - |u|^2 / 2 at every point.
inline void subtract_kinetic(const RealVec& u, const RealView& p) {
  Kokkos::parallel_for(
      "spectral::subtract_kinetic", point_range(p),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k) {
        const double a = u.x(i, j, k), b = u.y(i, j, k), c = u.z(i, j, k);
        p(i, j, k) -= 0.5 * (a * a + b * b + c * c);
      });
}

/// Multiplies every component by s.
inline void scale(const Modes& m, const SpectralVec& u, double s) {
  Kokkos::parallel_for(
      "spectral::scale", mode_range(m),
      KOKKOS_LAMBDA(const std::int64_t iz, const std::int64_t iy, const std::int64_t ix) {
        for (int c = 0; c < 3; ++c) u[c](iz, iy, ix) *= s;
      });
}

}  // namespace stratus::kernels::spectral
