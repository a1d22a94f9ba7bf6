// Barostat (barostat.hpp): host code on replicated values.
#include "stratus/solvers/md/barostat.hpp"

#include <cmath>

namespace stratus::md {

namespace {

/// The cell's degrees of freedom: one shared strain rate, or one per axis.
double cell_dof(Coupling c) { return c == Coupling::aniso ? 3.0 : 1.0; }

}  // namespace

Barostat::Barostat(const BarostatSettings& settings, double volume)
    : chain(settings.chain, cell_dof(settings.coupling), settings.kt, settings.period),
      volume0(volume),
      settings_(settings),
      mass_(static_cast<double>(settings.natoms + 1) * settings.kt * settings.period *
            settings.period) {
  // Every link of the cell's chain weighs kT tau_p^2, the first too (as LAMMPS's fix npt
  // takes it, so that both codes run the same equations); its target is dof kT.
  if (!chain.q.empty()) chain.q[0] = settings.kt * settings.period * settings.period;
}

double Barostat::cell_k2() const {
  double k2 = 0;
  for (const double w : omega_dot) k2 += mass_ * w * w;
  return k2;
}

void Barostat::chain_half_step(double half_dt, std::int64_t step) {
  const double s = chain.half_step(cell_k2(), half_dt, step, "md.barostat.damping");
  for (double& w : omega_dot) w *= s;
}

void Barostat::kick(const std::array<double, 3>& pressure, double k2, double volume,
                    double half_dt) {
  // The MTK term 2K / (d N) (d = 3 barostatted axes) keeps the volume distribution exact.
  const double mtk = k2 / (3.0 * static_cast<double>(settings_.natoms));
  const double mean = (pressure[0] + pressure[1] + pressure[2]) / 3.0;
  for (int a = 0; a < 3; ++a) {
    const double p = settings_.coupling == Coupling::iso ? mean : pressure[a];
    omega_dot[a] += half_dt * ((p - settings_.pressure) * volume + mtk) / mass_;
  }
}

std::array<double, 3> Barostat::velocity_scale(double half_dt) const {
  const double trace =
      (omega_dot[0] + omega_dot[1] + omega_dot[2]) / (3.0 * static_cast<double>(settings_.natoms));
  std::array<double, 3> s{};
  for (int a = 0; a < 3; ++a) s[a] = std::exp(-half_dt * (omega_dot[a] + trace));
  return s;
}

std::array<double, 3> Barostat::box_scale(double dt) const {
  std::array<double, 3> s{};
  for (int a = 0; a < 3; ++a) s[a] = std::exp(dt * omega_dot[a]);
  return s;
}

double Barostat::energy(double volume) const {
  return 0.5 * cell_k2() + settings_.pressure * (volume - volume0) + chain.energy();
}

}  // namespace stratus::md
