// The unit systems of md.units, as LAMMPS defines them (its `units` command), so that a data file
// and its coefficients mean the same in both codes:
//   lj    reduced: lengths sigma, energies epsilon, masses m, time tau, k_B = 1, charges reduced
//   real  lengths Angstrom, energies kcal/mol, masses g/mol, time fs, temperature K, pressure
//         atm, charges e
//   metal lengths Angstrom, energies eV, masses g/mol, time ps, temperature K, pressure bar,
//         charges e
// The constants are LAMMPS's (src/update.cpp, `units real` and `units metal`): with them a step-0
// energy or pressure agrees with `lmp` to the last digits, not only to the precision of CODATA.
//
// Inside the solver every quantity stays in the deck's units except the mass, which the kernels
// take as m * mvv2e ("kinetic mass", energy / velocity^2). Then a = f / (m mvv2e) = f ftm2v / m
// (ftm2v = 1 / mvv2e in every system) and the kinetic energy is 1/2 (m mvv2e) v^2 in energy units:
// no kernel sees a conversion factor. Temperatures enter as k_B T (energy), pressures leave
// as (2 KE + W) / (3 V) * nktv2p.
#pragma once

namespace stratus::md {

enum class UnitSystem { lj, real, metal };

struct Units {
  UnitSystem system = UnitSystem::lj;
  std::string name;   ///< "lj", "real", "metal"
  double boltz = 1;   ///< k_B in energy / temperature
  double mvv2e = 1;   ///< mass * velocity^2 to energy
  double nktv2p = 1;  ///< energy / volume to pressure
  double qqr2e = 1;   ///< q_i q_j / r to energy (Coulomb's constant, dielectric 1)
  double mv2d = 1;    ///< mass / volume to density (g/mol / Angstrom^3 to g/cm^3: 1 / 0.6022...)
  // Names, for logs, thermo headers and deck documentation.
  const char *length = "", *time = "", *energy = "", *mass = "", *temperature = "", *pressure = "",
             *charge = "", *density = "";
  // H5MD unit strings (the H5MD units module; "sigma" and "tau" go to reduced_unit attributes).
  const char *h5md_length = "", *h5md_time = "";

  /// The constants and names of `system`.
  static Units of(UnitSystem system);
};

}  // namespace stratus::md
