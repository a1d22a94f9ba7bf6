// The host side of the Lennard-Jones pair style (kernels/md/lj_cut.hpp): its device tables made
// from the deck's coefficients, and the long-range tail corrections.
#pragma once

#include "stratus/kernels/md/lj_cut.hpp"

#include <variant>
#include <vector>

namespace stratus::md {

struct MdConfig;

/// The device tables of every pair style, one alternative per kernel (coul/long runs those of
/// lj/cut/coul/long with epsilon 0): the force loop dispatches on it once a step (std::visit),
/// each style's kernel compiled for its own tables.
using PairTables =
    std::variant<kernels::md::LJCut, kernels::md::LJCutCoulCut, kernels::md::LJCutCoulLong>;

/// The tables of the deck's md.pair.style, from its [[md.pair.coeff]] values.
PairTables make_pair_tables(const MdConfig& config);

/// Builds the tables of kernels::md::LJCut from host arrays of eps, sigma, rc (each
/// ntypes*ntypes, row-major [ti * ntypes + tj], symmetric; sigma, rc > 0). shift: subtract e(rc)
/// so e is continuous. Throws std::invalid_argument on bad tables.
kernels::md::LJCut make_lj_cut(int ntypes, const std::vector<Real>& epsilon,
                               const std::vector<Real>& sigma, const std::vector<Real>& cutoff,
                               bool shift);

/// Long-range corrections for the truncation of LJ, assuming g(r) = 1 beyond rc.
struct LJTail {
  Real energy = 0;  ///< add to the potential energy
  /// Add to W = sum r . f (the trace: it is isotropic, virial / 3 on each diagonal component of
  /// the tensor); the pressure correction is virial / (3 V).
  Real virial = 0;
};

/// Tail corrections of a homogeneous mixture of count[t] atoms of type t in volume V, with the
/// tables of make_lj_cut. Sums over ordered type pairs (i, j) (Allen & Tildesley, Computer
/// Simulation of Liquids, 2nd ed., sec. 2.8; LAMMPS pair_lj_cut.cpp etail_ij / ptail_ij):
///   E_tail = sum_ij 8 pi N_i N_j / V eps sig^3 [ (sig/rc)^9 / 9 - (sig/rc)^3 / 3 ]
///   W_tail = sum_ij 16 pi N_i N_j / V eps sig^3 [ 2/3 (sig/rc)^9 - (sig/rc)^3 ]
/// from E_tail = 1/2 sum_ij N_i N_j / V int_rc^inf e(r) 4 pi r^2 dr and W_tail = the same with
/// -r e'(r); W_tail / (3 V) is the textbook P_tail = 16/3 pi rho^2 eps sig^3 [...] for 1 type.
/// They correct the truncation only: the shift (offset) is not undone.
LJTail lj_tail_correction(int ntypes, const std::vector<Real>& epsilon,
                          const std::vector<Real>& sigma, const std::vector<Real>& cutoff,
                          const std::vector<GlobalId>& count, Real volume);

}  // namespace stratus::md
