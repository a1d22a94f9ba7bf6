// The exact solution of the Riemann problem of the Euler equations for an ideal gas (Toro,
// "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., ch. 4): Newton iteration
// for the star pressure, then sampling of the self-similar solution. Written for the tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stratus::testing {

struct Primitive1D {
  double rho, u, p;
};

class ExactRiemann {
 public:
  ExactRiemann(Primitive1D left, Primitive1D right, double gamma) : l_(left), r_(right), g_(gamma) {
    cl_ = std::sqrt(g_ * l_.p / l_.rho);
    cr_ = std::sqrt(g_ * r_.p / r_.rho);
    if (2 / (g_ - 1) * (cl_ + cr_) <= r_.u - l_.u)
      throw std::runtime_error("exact Riemann: vacuum is generated");
    solve();
  }

  [[nodiscard]] double p_star() const { return ps_; }
  [[nodiscard]] double u_star() const { return us_; }

  /// The solution at x/t = s.
  [[nodiscard]] Primitive1D sample(double s) const {
    const double g = g_;
    if (s <= us_) {  // left of the contact
      const auto& w = l_;
      const double c = cl_;
      if (ps_ > w.p) {  // left shock
        const double sl = w.u - c * std::sqrt((g + 1) / (2 * g) * ps_ / w.p + (g - 1) / (2 * g));
        if (s <= sl) return w;
        const double r = ps_ / w.p, k = (g - 1) / (g + 1);
        return {w.rho * (r + k) / (k * r + 1), us_, ps_};
      }
      const double head = w.u - c;
      const double cs = c * std::pow(ps_ / w.p, (g - 1) / (2 * g));
      const double tail = us_ - cs;
      if (s <= head) return w;
      if (s >= tail) return {w.rho * std::pow(ps_ / w.p, 1 / g), us_, ps_};
      const double k = 2 / (g + 1) + (g - 1) / ((g + 1) * c) * (w.u - s);
      return {w.rho * std::pow(k, 2 / (g - 1)), 2 / (g + 1) * (c + (g - 1) / 2 * w.u + s),
              w.p * std::pow(k, 2 * g / (g - 1))};
    }
    const auto& w = r_;
    const double c = cr_;
    if (ps_ > w.p) {  // right shock
      const double sr = w.u + c * std::sqrt((g + 1) / (2 * g) * ps_ / w.p + (g - 1) / (2 * g));
      if (s >= sr) return w;
      const double r = ps_ / w.p, k = (g - 1) / (g + 1);
      return {w.rho * (r + k) / (k * r + 1), us_, ps_};
    }
    const double head = w.u + c;
    const double cs = c * std::pow(ps_ / w.p, (g - 1) / (2 * g));
    const double tail = us_ + cs;
    if (s >= head) return w;
    if (s <= tail) return {w.rho * std::pow(ps_ / w.p, 1 / g), us_, ps_};
    const double k = 2 / (g + 1) - (g - 1) / ((g + 1) * c) * (w.u - s);
    return {w.rho * std::pow(k, 2 / (g - 1)), 2 / (g + 1) * (-c + (g - 1) / 2 * w.u + s),
            w.p * std::pow(k, 2 * g / (g - 1))};
  }

  /// Cell average of the density (or any field `which`: 0 rho, 1 u, 2 p) over [a, b] at time t
  /// for a discontinuity at x0 (midpoint rule on `sub` sub-intervals).
  [[nodiscard]] double average(int which, double a, double b, double t, double x0,
                               int sub = 64) const {
    double sum = 0;
    for (int q = 0; q < sub; ++q) {
      const double x = a + (q + 0.5) * (b - a) / sub;
      const auto w = sample((x - x0) / t);
      sum += which == 0 ? w.rho : which == 1 ? w.u : w.p;
    }
    return sum / sub;
  }

 private:
  // Pressure function f_K(p) and its derivative (Toro eq. 4.6, 4.7).
  void f(double p, const Primitive1D& w, double c, double& val, double& der) const {
    const double g = g_;
    if (p > w.p) {
      const double a = 2 / ((g + 1) * w.rho), b = (g - 1) / (g + 1) * w.p;
      const double q = std::sqrt(a / (p + b));
      val = (p - w.p) * q;
      der = q * (1 - (p - w.p) / (2 * (b + p)));
    } else {
      const double r = p / w.p;
      val = 2 * c / (g - 1) * (std::pow(r, (g - 1) / (2 * g)) - 1);
      der = 1 / (w.rho * c) * std::pow(r, -(g + 1) / (2 * g));
    }
  }

  void solve() {
    // Two-rarefaction guess, then Newton.
    const double g = g_, z = (g - 1) / (2 * g);
    double p = std::pow((cl_ + cr_ - (g - 1) / 2 * (r_.u - l_.u)) /
                            (cl_ / std::pow(l_.p, z) + cr_ / std::pow(r_.p, z)),
                        1 / z);
    p = std::max(p, 1e-12);
    for (int it = 0; it < 100; ++it) {
      double fl, dl, fr, dr;
      f(p, l_, cl_, fl, dl);
      f(p, r_, cr_, fr, dr);
      const double next = std::max(p - (fl + fr + r_.u - l_.u) / (dl + dr), 1e-14);
      const double change = 2 * std::abs(next - p) / (next + p);
      p = next;
      if (change < 1e-15) break;
    }
    double fl, dl, fr, dr;
    f(p, l_, cl_, fl, dl);
    f(p, r_, cr_, fr, dr);
    ps_ = p;
    us_ = 0.5 * (l_.u + r_.u) + 0.5 * (fr - fl);
  }

  Primitive1D l_, r_;
  double g_, cl_ = 0, cr_ = 0, ps_ = 0, us_ = 0;
};

}  // namespace stratus::testing
