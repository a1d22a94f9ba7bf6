// Truncated Lennard-Jones pair style: e(r) = 4 eps [(sig/r)^12 - (sig/r)^6] (- e(rc) if shifted)
// for r < rc, per pair of types. A `Pair` for compute_pair_forces (pair.hpp).
#pragma once

#include "stratus/kernels/md/types.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace stratus::kernels::md {

/// Lennard-Jones with a cutoff per type pair; tables are ntypes x ntypes on the device.
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

  /// Builds the tables from host arrays of eps, sigma, rc (each ntypes*ntypes, row-major
  /// [ti * ntypes + tj], symmetric; sigma, rc > 0). shift: subtract e(rc) so e is continuous.
  static LJCut create(int ntypes, const std::vector<Real>& epsilon, const std::vector<Real>& sigma,
                      const std::vector<Real>& cutoff, bool shift) {
    const std::size_t nn = static_cast<std::size_t>(ntypes) * ntypes;
    if (ntypes < 1 || epsilon.size() != nn || sigma.size() != nn || cutoff.size() != nn)
      throw std::invalid_argument("LJCut: tables must hold ntypes^2 = " + std::to_string(nn) +
                                  " entries");
    LJCut lj;
    lj.ntypes = ntypes;
    lj.lj1 = TypeTable("md::lj1", ntypes, ntypes);
    lj.lj2 = TypeTable("md::lj2", ntypes, ntypes);
    lj.lj3 = TypeTable("md::lj3", ntypes, ntypes);
    lj.lj4 = TypeTable("md::lj4", ntypes, ntypes);
    lj.cutsq = TypeTable("md::lj_cutsq", ntypes, ntypes);
    lj.offset = TypeTable("md::lj_offset", ntypes, ntypes);
    auto h1 = Kokkos::create_mirror_view(lj.lj1), h2 = Kokkos::create_mirror_view(lj.lj2);
    auto h3 = Kokkos::create_mirror_view(lj.lj3), h4 = Kokkos::create_mirror_view(lj.lj4);
    auto hc = Kokkos::create_mirror_view(lj.cutsq), ho = Kokkos::create_mirror_view(lj.offset);
    for (int a = 0; a < ntypes; ++a) {
      for (int b = 0; b < ntypes; ++b) {
        const std::size_t ab = static_cast<std::size_t>(a) * ntypes + b;
        const std::size_t ba = static_cast<std::size_t>(b) * ntypes + a;
        const Real eps = epsilon[ab], sig = sigma[ab], rc = cutoff[ab];
        if (eps != epsilon[ba] || sig != sigma[ba] || rc != cutoff[ba])
          throw std::invalid_argument("LJCut: coefficient tables must be symmetric");
        if (!(sig > 0) || !(rc > 0))
          throw std::invalid_argument("LJCut: sigma and cutoff must be positive");
        const Real s6 = std::pow(sig, 6), sr6 = std::pow(sig / rc, 6);
        h1(a, b) = 48 * eps * s6 * s6;
        h2(a, b) = 24 * eps * s6;
        h3(a, b) = 4 * eps * s6 * s6;
        h4(a, b) = 4 * eps * s6;
        hc(a, b) = rc * rc;
        ho(a, b) = shift ? 4 * eps * (sr6 * sr6 - sr6) : Real(0);
        if (rc > lj.max_cutoff) lj.max_cutoff = rc;
      }
    }
    Kokkos::deep_copy(lj.lj1, h1);
    Kokkos::deep_copy(lj.lj2, h2);
    Kokkos::deep_copy(lj.lj3, h3);
    Kokkos::deep_copy(lj.lj4, h4);
    Kokkos::deep_copy(lj.cutsq, hc);
    Kokkos::deep_copy(lj.offset, ho);
    return lj;
  }
};

/// Long-range corrections for the truncation of LJ, assuming g(r) = 1 beyond rc.
struct LJTail {
  Real energy = 0;  ///< add to the potential energy
  Real virial = 0;  ///< add to W = sum r . f; the pressure correction is virial / (3 V)
};

/// Tail corrections of a homogeneous mixture of count[t] atoms of type t in volume V, with the
/// tables of LJCut::create. Sums over ordered type pairs (i, j) (Allen & Tildesley, Computer
/// Simulation of Liquids, 2nd ed., sec. 2.8; LAMMPS pair_lj_cut.cpp etail_ij / ptail_ij):
///   E_tail = sum_ij 8 pi N_i N_j / V eps sig^3 [ (sig/rc)^9 / 9 - (sig/rc)^3 / 3 ]
///   W_tail = sum_ij 16 pi N_i N_j / V eps sig^3 [ 2/3 (sig/rc)^9 - (sig/rc)^3 ]
/// from E_tail = 1/2 sum_ij N_i N_j / V int_rc^inf e(r) 4 pi r^2 dr and W_tail = the same with
/// -r e'(r); W_tail / (3 V) is the textbook P_tail = 16/3 pi rho^2 eps sig^3 [...] for 1 type.
/// They correct the truncation only: the shift (offset) is not undone.
inline LJTail lj_tail_correction(int ntypes, const std::vector<Real>& epsilon,
                                 const std::vector<Real>& sigma, const std::vector<Real>& cutoff,
                                 const std::vector<GlobalId>& count, Real volume) {
  const std::size_t nn = static_cast<std::size_t>(ntypes) * ntypes;
  if (ntypes < 1 || epsilon.size() != nn || sigma.size() != nn || cutoff.size() != nn ||
      count.size() != static_cast<std::size_t>(ntypes) || !(volume > 0))
    throw std::invalid_argument("lj_tail_correction: bad table sizes or volume");
  const Real pi = 3.14159265358979323846;
  LJTail tail;
  for (int a = 0; a < ntypes; ++a) {
    for (int b = 0; b < ntypes; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * ntypes + b;
      const Real eps = epsilon[ab], sig = sigma[ab];
      const Real s3 = std::pow(sig / cutoff[ab], 3), s9 = s3 * s3 * s3;
      const Real pairs = static_cast<Real>(count[a]) * static_cast<Real>(count[b]) / volume;
      const Real scale = pi * pairs * eps * sig * sig * sig;
      tail.energy += 8 * scale * (s9 / 9 - s3 / 3);
      tail.virial += 16 * scale * (Real(2) / 3 * s9 - s3);
    }
  }
  return tail;
}

}  // namespace stratus::kernels::md
