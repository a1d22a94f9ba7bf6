// Lattice initial configurations: fcc, bcc and simple cubic, by reduced density.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/types.hpp"
#include "stratus/solvers/md/md_config.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace stratus::md {

/// Atoms per unit cell of the lattice style (fcc 4, bcc 2, sc 1).
int lattice_basis_size(LatticeStyle style);

/// Lattice constant a = (basis atoms / density)^(1/3), as LAMMPS's `lattice fcc RHO` in LJ units.
double lattice_constant(LatticeStyle style, double density);

struct LatticeSites {
  std::vector<Real> positions;  ///< x, y, z per site
  std::vector<GlobalId> ids;    ///< 0-based, ((cx * ny + cy) * nz + cz) * basis + b
};

/// The sites of a periodic block of cells[0] x cells[1] x cells[2] unit cells (box at the
/// origin) that fall inside `local` ([lo, hi) on each axis). Every site belongs to exactly one
/// rank's local box, and its id does not depend on the decomposition.
LatticeSites lattice_sites(LatticeStyle style, double density,
                           const std::vector<std::int64_t>& cells, const Box& local);

}  // namespace stratus::md
