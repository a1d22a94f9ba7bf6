// NoseHooverChain (nose_hoover.hpp): host code on replicated values.
#include "stratus/solvers/md/nose_hoover.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stratus::md {

NoseHooverChain::NoseHooverChain(int length, double dof_, double kt_, double period)
    : xi(static_cast<std::size_t>(length), 0.0),
      v(static_cast<std::size_t>(length), 0.0),
      q(static_cast<std::size_t>(length), kt_ * period * period),
      dof(dof_),
      kt(kt_) {
  if (!q.empty()) q[0] = std::max(dof, 1.0) * kt * period * period;
}

namespace {

struct Propagation {
  std::vector<double> xi, v;
  double k2 = 0;     ///< sum m v^2 of what is thermostatted, tracked through the scaling
  double scale = 1;  ///< velocity scaling accumulated so far
};

/// exp(iL_NHC dt/2) in `nc` equal parts. Returns false, leaving `s` partly propagated, when a
/// part would take an exponent |dt_part v_k| above `limit` (or a value stops being finite).
bool propagate(Propagation& s, const std::vector<double>& q, double dof, double kt, double half_dt,
               int nc, double limit) {
  const std::size_t m = s.v.size();
  auto& v = s.v;
  auto force = [&](std::size_t k) {
    return k == 0 ? (s.k2 - dof * kt) / q[0] : (q[k - 1] * v[k - 1] * v[k - 1] - kt) / q[k];
  };
  const double w1 = 1.0 / (2.0 - std::cbrt(2.0));
  const double weights[3] = {w1, 1.0 - 2.0 * w1, w1};
  for (int part = 0; part < nc; ++part) {
    for (const double w : weights) {
      const double dt2 = w * half_dt / nc, dt4 = 0.5 * dt2, dt8 = 0.25 * dt2;
      v[m - 1] += force(m - 1) * dt4;
      for (std::size_t k = m - 1; k-- > 0;) {
        const double e = std::exp(-dt8 * v[k + 1]);
        v[k] = (v[k] * e + force(k) * dt4) * e;
      }
      const double f = std::exp(-dt2 * v[0]);
      s.scale *= f;
      s.k2 *= f * f;
      for (std::size_t k = 0; k < m; ++k) s.xi[k] += dt2 * v[k];
      for (std::size_t k = 0; k + 1 < m; ++k) {
        const double e = std::exp(-dt8 * v[k + 1]);
        v[k] = (v[k] * e + force(k) * dt4) * e;
      }
      v[m - 1] += force(m - 1) * dt4;
      double largest = 0;
      for (const double vk : v) largest = std::max(largest, std::abs(dt2 * vk));
      if (!(largest <= limit) || !std::isfinite(s.k2) || !std::isfinite(s.scale)) return false;
    }
  }
  return true;
}

}  // namespace

double NoseHooverChain::half_step(double k2, double half_dt, std::int64_t step,
                                  const std::string& damping_key) {
  // The parts are scalar work on replicated values: their number depends only on global sums,
  // so it is the same on every rank and at any rank count.
  constexpr double kLimit = 0.1;
  constexpr int kMaxParts = 1 << 16;
  if (v.empty()) return 1.0;
  const Propagation start{xi, v, k2, 1.0};
  for (int nc = 1;; nc *= 2) {
    Propagation s = start;
    if (propagate(s, q, dof, kt, half_dt, nc, kLimit)) {
      xi = std::move(s.xi);
      v = std::move(s.v);
      return s.scale;
    }
    if (nc >= kMaxParts)
      throw RuntimeError(fmt::format(
          "step {}: a Nose-Hoover chain does not converge in {} parts of the half step (kinetic "
          "energy {:.6g}, chain velocities {:.6g} ...): the thermostat is far too stiff for "
          "md.timestep; raise {}",
          step, kMaxParts, 0.5 * k2, v.back(), damping_key));
  }
}

double NoseHooverChain::energy() const {
  double e = 0;
  for (std::size_t k = 0; k < v.size(); ++k)
    e += 0.5 * q[k] * v[k] * v[k] + (k == 0 ? dof : 1.0) * kt * xi[k];
  return e;
}

}  // namespace stratus::md
