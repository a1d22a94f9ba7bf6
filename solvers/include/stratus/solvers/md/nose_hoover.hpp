// A Nose-Hoover chain (Martyna, Klein and Tuckerman, J. Chem. Phys. 97 (1992) 2635) on
// replicated scalars: the thermostat of the atoms (md.integrator.style = nvt) and of the
// barostat's own degrees of freedom (md.barostat). It sees only the kinetic sum of what it
// thermostats and returns the factor by which those velocities scale, so the same code serves
// atoms and a cell.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stratus::md {

struct NoseHooverChain {
  /// `length` links at rest; masses Q_1 = dof kT period^2, Q_k = kT period^2 (k >= 2).
  NoseHooverChain(int length, double dof, double kt, double period);
  NoseHooverChain() = default;

  /// exp(iL_NHC half_dt) of Martyna, Tuckerman, Tobias and Klein (Mol. Phys. 87 (1996) 1117)
  /// with the third-order Suzuki-Yoshida factorisation, in as many equal parts (a power of two)
  /// as keep every part's exponent |dt v_k| at most 0.1: one part at equilibrium, hundreds in a
  /// deep quench. `k2` is sum m v^2 (twice the kinetic energy) of what the chain thermostats.
  /// Returns the velocity scale factor. Throws RuntimeError naming `step` and `damping_key`
  /// when 2^16 parts do not suffice.
  double half_step(double k2, double half_dt, std::int64_t step, const std::string& damping_key);
  /// sum_k Q_k v_k^2 / 2 + dof kT xi_1 + sum_{k>=2} kT xi_k.
  [[nodiscard]] double energy() const;

  std::vector<double> xi, v, q;  ///< positions, velocities, masses of the links
  double dof = 0, kt = 0;
};

}  // namespace stratus::md
