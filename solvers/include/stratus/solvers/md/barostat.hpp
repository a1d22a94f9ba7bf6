// The MTK barostat (Martyna, Tobias and Klein, J. Chem. Phys. 101 (1994) 4177; the
// time-reversible splitting of Tuckerman et al., J. Phys. A 39 (2006) 5629, and Shinoda,
// Shiga and Mikami, Phys. Rev. B 69 (2004) 134103) for an orthorhombic periodic box: the cell's
// log-strain rates omega_dot_a (one shared rate with isotropic coupling, one per axis with
// anisotropic coupling), their masses W = (N + 1) kT tau_p^2, and a Nose-Hoover chain of their
// own. Host code on replicated scalars; the solver applies the factors to the atoms and the box.
//
// Per step (around velocity Verlet, with the atoms' chain inside):
//   chain_half_step; [atoms' chain]; kick(P); v *= velocity_scale(dt/2); v += f/m dt/2;
//   box, x *= box_scale(dt/2); x += v dt; box, x *= box_scale(dt/2); forces;
//   v += f/m dt/2; v *= velocity_scale(dt/2); kick(P); [atoms' chain]; chain_half_step.
// with P_a = (2 K_aa + W_aa) / V the instantaneous pressure tensor's diagonal.
#pragma once

#include "stratus/solvers/md/nose_hoover.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace stratus::md {

enum class Coupling { none, iso, aniso };

struct BarostatSettings {
  Coupling coupling = Coupling::iso;
  double pressure = 0;  ///< target, in energy per volume (md.units's pressure / nktv2p)
  double period = 0;    ///< tau_p
  int chain = 3;        ///< links of the barostat's own thermostat
  double kt = 0;        ///< k_B T of the target temperature
  std::int64_t natoms = 0;
};

class Barostat {
 public:
  Barostat(const BarostatSettings& settings, double volume);

  /// The barostat's thermostat for half_dt: scales the strain rates.
  void chain_half_step(double half_dt, std::int64_t step);
  /// omega_dot_a += half_dt F_a / W with F_a = V (P_a - P_target) + 2K / (3N) (the MTK term:
  /// `k2` = sum m v^2 of the atoms); isotropic coupling takes the mean of P_a on every axis.
  void kick(const std::array<double, 3>& pressure, double k2, double volume, double half_dt);
  /// exp(-half_dt (omega_dot_a + sum_b omega_dot_b / (3N))): the atoms' velocities scale.
  [[nodiscard]] std::array<double, 3> velocity_scale(double half_dt) const;
  /// exp(dt omega_dot_a): the box edges and the positions (about the lower corner) scale.
  [[nodiscard]] std::array<double, 3> box_scale(double dt) const;
  /// The barostat's part of the conserved quantity: sum_a W omega_dot_a^2 / 2 + P_target
  /// (V - V_0) + the chain's energy.
  [[nodiscard]] double energy(double volume) const;
  [[nodiscard]] Coupling coupling() const noexcept { return settings_.coupling; }
  [[nodiscard]] double target_pressure() const noexcept { return settings_.pressure; }
  [[nodiscard]] double mass() const noexcept { return mass_; }

  // The state a checkpoint holds (replicated): strain rates, the chain, the reference volume.
  std::vector<double> omega_dot{0.0, 0.0, 0.0};
  NoseHooverChain chain;
  double volume0 = 0;

 private:
  /// sum_a W omega_dot_a^2: twice the cell's kinetic energy.
  [[nodiscard]] double cell_k2() const;
  BarostatSettings settings_;
  double mass_ = 0;  ///< W
};

}  // namespace stratus::md
