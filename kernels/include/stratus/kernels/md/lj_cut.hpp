// Truncated Lennard-Jones pair style: e(r) = 4 eps [(sig/r)^12 - (sig/r)^6] (- e(rc) if shifted)
// for r < rc, per pair of types. A `Pair` for compute_pair_forces (pair.hpp).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/types.hpp"

#include <cstdint>
#include <cstring>

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
  /// Beyond this squared distance every type pair is zero.
  KOKKOS_INLINE_FUNCTION Real reach_sq() const { return max_cutoff * max_cutoff; }

  /// fpair = F/r and energy e(r) for types ti, tj at squared distance rsq; zero if rsq >= rc^2.
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real& fpair,
                                         Real& energy) const {
    // Selects instead of branching, so that the batched loops of pair.hpp vectorise.
    const bool in = rsq < cutsq(ti, tj);
    const Real r2inv = 1 / rsq;
    const Real r6inv = r2inv * r2inv * r2inv;
    fpair = in ? r6inv * (lj1(ti, tj) * r6inv - lj2(ti, tj)) * r2inv : Real(0);
    energy = in ? r6inv * (lj3(ti, tj) * r6inv - lj4(ti, tj)) - offset(ti, tj) : Real(0);
  }
};

}  // namespace stratus::kernels::md

namespace stratus::kernels::md {

/// The charged-pair call of pair.hpp from a style's parts() (van der Waals and Coulomb apart):
/// fpair is their sum.
template <class Derived>
struct ChargedPairCall {
  KOKKOS_INLINE_FUNCTION void operator()(Real rsq, int ti, int tj, Real qiqj, Real& fpair,
                                         Real& evdwl, Real& ecoul) const {
    Real fv, fc;
    static_cast<const Derived&>(*this).parts(rsq, ti, tj, qiqj, fv, fc, evdwl, ecoul);
    fpair = fv + fc;
  }
};

/// lj/cut/coul/cut: LJCut plus Coulomb's e(r) = qqrd2e q_i q_j / r for r < rc_coul (one global
/// Coulomb cutoff, dielectric 1, no shift), as LAMMPS's pair style of that name. A charged
/// `Pair` (pair.hpp).
struct LJCutCoulCut : ChargedPairCall<LJCutCoulCut> {
  static constexpr bool kCharged = true;
  LJCut lj;
  Real qqrd2e = 1;      ///< Coulomb's constant in the deck's units (Units::qqr2e)
  Real cut_coulsq = 0;  ///< rc_coul^2
  KOKKOS_INLINE_FUNCTION Real reach_sq() const {
    return lj.reach_sq() > cut_coulsq ? lj.reach_sq() : cut_coulsq;
  }

  /// The two terms apart: F/r and e of the LJ and of the Coulomb interaction.
  KOKKOS_INLINE_FUNCTION void parts(Real rsq, int ti, int tj, Real qiqj, Real& fvdwl, Real& fcoul,
                                    Real& evdwl, Real& ecoul) const {
    lj(rsq, ti, tj, fvdwl, evdwl);
    const Real r2inv = 1 / rsq;
    ecoul = rsq < cut_coulsq ? qqrd2e * qiqj * kmath::sqrt(r2inv) : Real(0);
    fcoul = ecoul * r2inv;  // F / r = qq / r^3
  }
};

}  // namespace stratus::kernels::md

namespace stratus::kernels::md {

/// exp(x) for x <= 0 in a form compilers vectorise (no call): x = k ln 2 + r with |r| <= ln2 / 2,
/// e^r by its Taylor series to degree 13 (relative error below 2e-16), 2^k from the exponent
/// bits; 0 below -700.
KOKKOS_INLINE_FUNCTION Real exp_nonpositive(Real x) {
  constexpr Real kLog2e = 1.4426950408889634, kLn2Hi = 0.693145751953125,
                 kLn2Lo = 1.4286068203094173e-06;
  const Real xc = x < Real(-700) ? Real(-700) : x;
  // Round to nearest for y <= 0 by truncation (no call to floor in the loop).
  const int k = -static_cast<int>(Real(0.5) - xc * kLog2e);
  const Real kf = static_cast<Real>(k);
  const Real r = (xc - kf * kLn2Hi) - kf * kLn2Lo;
  Real p = Real(1) / Real(6227020800);  // 1/13!
  constexpr Real kInvFactorial[13] = {1.0 / 479001600,
                                      1.0 / 39916800,
                                      1.0 / 3628800,
                                      1.0 / 362880,
                                      1.0 / 40320,
                                      1.0 / 5040,
                                      1.0 / 720,
                                      1.0 / 120,
                                      1.0 / 24,
                                      1.0 / 6,
                                      0.5,
                                      1.0,
                                      1.0};
  for (int k = 0; k < 13; ++k) p = p * r + kInvFactorial[k];
  const auto bits = static_cast<long long>(k + 1023) << 52;
  static_assert(sizeof(Real) == sizeof(long long), "Real is a double here");
#ifdef __CUDA_ARCH__
  const Real scale = __longlong_as_double(bits);
#else
  Real scale;
  std::memcpy(&scale, &bits, sizeof(scale));
#endif
  return x < Real(-700) ? Real(0) : p * scale;
}

/// lj/cut/coul/long: LJCut plus the real-space part of an Ewald sum, e(r) = qqrd2e q_i q_j
/// erfc(g r) / r for r < rc_coul, whose reciprocal part a k-space solver adds (PPPM). As
/// LAMMPS's pair style of that name: erfc by Abramowitz and Stegun's 7.1.26 (absolute error below
/// 1.5e-7, the form LAMMPS's Coulomb tables and its analytic path use), sharing exp(-g^2 r^2)
/// with the force. A charged `Pair` (pair.hpp); kLongRange tells the special pairs to remove the
/// reciprocal part of their unscaled Coulomb term.
struct LJCutCoulLong : ChargedPairCall<LJCutCoulLong> {
  static constexpr bool kCharged = true;
  static constexpr bool kLongRange = true;
  LJCut lj;
  Real qqrd2e = 1;
  Real cut_coulsq = 0;
  Real g_ewald = 0;  ///< set once the k-space solver has chosen it
  KOKKOS_INLINE_FUNCTION Real reach_sq() const {
    return lj.reach_sq() > cut_coulsq ? lj.reach_sq() : cut_coulsq;
  }

  /// The per-type-pair numbers of `gathered`: lj1, lj2, lj3, lj4, cutsq, offset (pair.hpp reads
  /// them once per neighbour before a batch, so that the arithmetic loop has no table lookups
  /// and vectorises without gathers).
  static constexpr int kGathered = 6;
  KOKKOS_INLINE_FUNCTION int type_count() const { return lj.ntypes; }
  KOKKOS_INLINE_FUNCTION void gather(int ti, int tj, Real* c) const {
    c[0] = lj.lj1(ti, tj);
    c[1] = lj.lj2(ti, tj);
    c[2] = lj.lj3(ti, tj);
    c[3] = lj.lj4(ti, tj);
    c[4] = lj.cutsq(ti, tj);
    c[5] = lj.offset(ti, tj);
  }
  /// operator() with the type pair's numbers given (gather).
  KOKKOS_INLINE_FUNCTION void gathered(Real rsq, Real lj1, Real lj2, Real lj3, Real lj4, Real cutsq,
                                       Real offset, Real qiqj, Real& fpair, Real& evdwl,
                                       Real& ecoul) const {
    const bool in_lj = rsq < cutsq;
    const Real r2inv = 1 / rsq;
    const Real r6inv = r2inv * r2inv * r2inv;
    const Real fv = in_lj ? r6inv * (lj1 * r6inv - lj2) * r2inv : Real(0);
    evdwl = in_lj ? r6inv * (lj3 * r6inv - lj4) - offset : Real(0);
    Real fc;
    coulomb(rsq, r2inv, qiqj, fc, ecoul);
    fpair = fv + fc;
  }
  /// The real-space Coulomb term alone.
  KOKKOS_INLINE_FUNCTION void coulomb(Real rsq, Real r2inv, Real qiqj, Real& fcoul,
                                      Real& ecoul) const {
    // Abramowitz and Stegun 7.1.26: erfc(x) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^{-x^2},
    // t = 1 / (1 + p x).
    constexpr Real p = 0.3275911, a1 = 0.254829592, a2 = -0.284496736, a3 = 1.421413741,
                   a4 = -1.453152027, a5 = 1.061405429;
    const bool in = rsq < cut_coulsq;
    const Real r = kmath::sqrt(rsq);
    const Real gr = g_ewald * r;
    const Real expm2 = exp_nonpositive(-gr * gr);
    const Real t = 1 / (1 + p * gr);
    const Real erfc_gr = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5)))) * expm2;
    const Real prefactor = qqrd2e * qiqj / r;
    // 2 / sqrt(pi) = 1.1283791670955126
    ecoul = in ? prefactor * erfc_gr : Real(0);
    fcoul = in ? prefactor * (erfc_gr + Real(1.1283791670955126) * gr * expm2) * r2inv : Real(0);
  }

  KOKKOS_INLINE_FUNCTION void parts(Real rsq, int ti, int tj, Real qiqj, Real& fvdwl, Real& fcoul,
                                    Real& evdwl, Real& ecoul) const {
    lj(rsq, ti, tj, fvdwl, evdwl);
    coulomb(rsq, 1 / rsq, qiqj, fcoul, ecoul);
  }
};

}  // namespace stratus::kernels::md
