// Truncated Lennard-Jones pair style: e(r) = 4 eps [(sig/r)^12 - (sig/r)^6] (- e(rc) if shifted)
// for r < rc, per pair of types. A `Pair` for compute_pair_forces (pair.hpp).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"

namespace stratus::kernels::md {

/// Lennard-Jones with a cutoff per type pair; tables are ntypes x ntypes on the device, made by
/// stratus::md::make_lj_cut (solvers/md/lj_tables.hpp).
struct LJCut {
  TypeTable lj1;     ///< 48 eps sig^12
  TypeTable lj2;     ///< 24 eps sig^6
  TypeTable lj3;     ///< 4 eps sig^12
  TypeTable lj4;     ///< 4 eps sig^6
  TypeTable cutsq;   ///< rc^2
  TypeTable offset;  ///< e(rc) when shifted, else 0
  int ntypes = 0;
  Real max_cutoff = 0;  ///< largest rc over type pairs (for the neighbour list)

  /// fpair = F/r and energy e(r) for types ti, tj at squared distance rsq; zero if rsq >= rc^2.
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real& fpair,
                                         Real& energy) const {
    if (rsq >= cutsq(ti, tj)) {
      fpair = 0;
      energy = 0;
      return;
    }
    const Real r2inv = 1 / rsq;
    const Real r6inv = r2inv * r2inv * r2inv;
    fpair = r6inv * (lj1(ti, tj) * r6inv - lj2(ti, tj)) * r2inv;
    energy = r6inv * (lj3(ti, tj) * r6inv - lj4(ti, tj)) - offset(ti, tj);
  }
};

}  // namespace stratus::kernels::md

namespace stratus::kernels::md {

/// lj/cut/coul/cut: LJCut plus Coulomb's e(r) = qqrd2e q_i q_j / r for r < rc_coul (one global
/// Coulomb cutoff, dielectric 1, no shift), as LAMMPS's pair style of that name. A charged
/// `Pair` (pair.hpp).
struct LJCutCoulCut {
  static constexpr bool kCharged = true;
  LJCut lj;
  Real qqrd2e = 1;      ///< Coulomb's constant in the deck's units (Units::qqr2e)
  Real cut_coulsq = 0;  ///< rc_coul^2

  /// The two terms apart: F/r and e of the LJ and of the Coulomb interaction.
  KOKKOS_INLINE_FUNCTION void parts(Real rsq, int ti, int tj, Real qiqj, Real& fvdwl, Real& fcoul,
                                    Real& evdwl, Real& ecoul) const {
    lj(rsq, ti, tj, fvdwl, evdwl);
    const Real r2inv = 1 / rsq;
    ecoul = rsq < cut_coulsq ? qqrd2e * qiqj * kmath::sqrt(r2inv) : Real(0);
    fcoul = ecoul * r2inv;  // F / r = qq / r^3
  }
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real qiqj, Real& fpair,
                                         Real& evdwl, Real& ecoul) const {
    Real fv, fc;
    parts(rsq, ti, tj, qiqj, fv, fc, evdwl, ecoul);
    fpair = fv + fc;
  }
};

}  // namespace stratus::kernels::md

namespace stratus::kernels::md {

/// lj/cut/coul/long: LJCut plus the real-space part of an Ewald sum, e(r) = qqrd2e q_i q_j
/// erfc(g r) / r for r < rc_coul, whose reciprocal part a k-space solver adds (PPPM). As
/// LAMMPS's pair style of that name (with exact erfc: LAMMPS's default tables and polynomial
/// erfc agree with it to about 1e-6 relative). A charged `Pair` (pair.hpp); kLongRange tells the
/// special pairs to remove the reciprocal part of their unscaled Coulomb term.
struct LJCutCoulLong {
  static constexpr bool kCharged = true;
  static constexpr bool kLongRange = true;
  LJCut lj;
  Real qqrd2e = 1;
  Real cut_coulsq = 0;
  Real g_ewald = 0;  ///< set once the k-space solver has chosen it

  KOKKOS_INLINE_FUNCTION void parts(Real rsq, int ti, int tj, Real qiqj, Real& fvdwl, Real& fcoul,
                                    Real& evdwl, Real& ecoul) const {
    lj(rsq, ti, tj, fvdwl, evdwl);
    if (rsq >= cut_coulsq) {
      fcoul = 0;
      ecoul = 0;
      return;
    }
    const Real r2inv = 1 / rsq;
    const Real r = kmath::sqrt(rsq);
    const Real gr = g_ewald * r;
    const Real erfc_gr = kmath::erfc(gr);
    const Real prefactor = qqrd2e * qiqj / r;
    // 2 / sqrt(pi) = 1.1283791670955126
    ecoul = prefactor * erfc_gr;
    fcoul = prefactor * (erfc_gr + Real(1.1283791670955126) * gr * kmath::exp(-gr * gr)) * r2inv;
  }
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real qiqj, Real& fpair,
                                         Real& evdwl, Real& ecoul) const {
    Real fv, fc;
    parts(rsq, ti, tj, qiqj, fv, fc, evdwl, ecoul);
    fpair = fv + fc;
  }
};

}  // namespace stratus::kernels::md
