// The cluster-pair kernel of lj/cut/coul/long (and coul/long, its LJ zero) on host back-ends with
// AVX2 or AVX-512 registers, in double or float (mixed precision): the scheme of cluster.hpp with
// charges, and with the special pairs of molecules left out by the list's masks
// (ClusterExclusions; the topology computes them, scaled, with their reciprocal-space
// correction).
//
// No table is read in the loop: each lane carries its atom's charge and two LJ factors of its
// type, a and b, with lj1(ti, tj) = 48 eps sig^12 = a_i a_j and lj2 = 24 eps sig^6 = b_i b_j.
// They exist when every type pair's coefficients are the geometric means of the types' own
// (LAMMPS's default mixing, and any table with one atom type carrying LJ, as rigid water); other
// tables take the half lists (stratus::md::lj_factors says which).
#pragma once

#include "stratus/kernels/md/cluster.hpp"
#include "stratus/kernels/md/lj_cut.hpp"

#include <cstdint>
#include <type_traits>

namespace stratus::kernels::md {

/// The per-row constants of the charged cluster kernel in compute type T.
template <class T>
struct CoulLongClusterForm {
  T qqrd2e = 1;       ///< Coulomb's constant
  T g_ewald = 0;      ///< the Ewald splitting parameter
  T cut_coulsq = 0;   ///< Coulomb cutoff squared
  T cut_ljsq = 0;     ///< LJ cutoff squared (one for every type pair)
  T o12 = 0, o6 = 0;  ///< rc^-12 and rc^-6 when LJ is shifted, else 0 (e(rc) = lj3 o12 - lj4 o6)
};

/// Per-lane parameters of the charged kernel (Clusters::par) from the atoms' charges q and the LJ
/// factors (a, b) of their types, lj(t, 0..1); zeros in empty lanes. At each build.
template <class T>
void cluster_fill_params(const Clusters<T>& c, const Types& type, const Charges& q,
                         const Kokkos::View<Real* [2], DevMemSpace>& lj) {
  const auto atom = c.atom;
  const auto par = c.par;
  Kokkos::parallel_for(
      "md::cluster_params", Kokkos::RangePolicy<DevExecSpace>(0, c.nall),
      KOKKOS_LAMBDA(const int k) {
        for (int l = 0; l < kCluster; ++l) {
          const int i = atom(k, l);
          par(k, 0, l) = i >= 0 ? static_cast<T>(q(i)) : T(0);
          par(k, 1, l) = i >= 0 ? static_cast<T>(lj(type(i), 0)) : T(0);
          par(k, 2, l) = i >= 0 ? static_cast<T>(lj(type(i), 1)) : T(0);
        }
      });
}

namespace detail {

/// Constants of the charged kernel's arithmetic in T: exp(x) = 2^k e^r for x in [kExpLowest, 0]
/// (k rounded by adding kMagic, whose bits then hold k; e^r by its Taylor series of degree
/// kExpDegree, relative error below 1e-14 in double, 1e-8 in float), and Abramowitz and Stegun
/// 7.1.26 for erfc (absolute error below 1.5e-7, as LAMMPS's lj/cut/coul/long).
template <class T>
struct CoulLongConstants;
template <class T>
struct CoulLongErfc {
  static constexpr T kP = T(0.3275911), kA1 = T(0.254829592), kA2 = T(-0.284496736),
                     kA3 = T(1.421413741), kA4 = T(-1.453152027), kA5 = T(1.061405429),
                     kTwoOverSqrtPi = T(1.1283791670955126), kLog2e = T(1.4426950408889634);
};
template <>
struct CoulLongConstants<double> : CoulLongErfc<double> {
  static constexpr double kExpLowest = -700, kMagic = 6755399441055744.0;  // 1.5 2^52
  static constexpr long kMagicBits = 0x4338000000000000L, kExponentBias = 1023;
  static constexpr int kMantissaBits = 52;
  static constexpr double kLn2Hi = 0.693145751953125, kLn2Lo = 1.4286068203094173e-06;
  static constexpr int kExpDegree = 11;
  static constexpr double kExpPoly[kExpDegree + 1] = {
      1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
      1.0 / 120,      1.0 / 24,      1.0 / 6,      0.5,         1.0,        1.0};
};
template <>
struct CoulLongConstants<float> : CoulLongErfc<float> {
  static constexpr float kExpLowest = -80, kMagic = 12582912.0f;  // 1.5 2^23
  static constexpr int kMagicBits = 0x4B400000, kExponentBias = 127, kMantissaBits = 23;
  static constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  static constexpr int kExpDegree = 7;
  static constexpr float kExpPoly[kExpDegree + 1] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24,
                                                     1.0f / 6,    0.5f,       1.0f,       1.0f};
};

#if defined(STRATUS_CLUSTER_WIDE)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define STRATUS_CC_BYTES 32
#define STRATUS_CC_TARGET "avx2,fma"
#define STRATUS_CC_ROW cluster_coul_row_avx2
#include "stratus/kernels/md/cluster_coul.inc"
#define STRATUS_CC_BYTES 64
#define STRATUS_CC_TARGET "avx512f,avx512vl,avx512dq,avx2,fma"
#define STRATUS_CC_ROW cluster_coul_row_avx512
#include "stratus/kernels/md/cluster_coul.inc"
#pragma GCC diagnostic pop
#endif

/// Whether this build and CPU run the charged cluster kernel (AVX2 at least).
inline bool cluster_coul_supported(const int vector_bytes) {
#if defined(STRATUS_CLUSTER_WIDE)
  return vector_bytes >= 32;
#else
  (void)vector_bytes;
  return false;
#endif
}

/// The charged cluster-pair kernel over the list (as cluster_pair_forces): forces into the
/// threads' copies of c.force, energies (vdW into energy, Coulomb into coul) and the virial's
/// diagonal summed in double. vector_bytes: 32 or 64 (cluster_coul_supported).
template <bool EnergyVirial, class T>
PairResult cluster_coul_long_forces(const CoulLongClusterForm<T>& p, const Clusters<T>& c,
                                    const ClusterList& list, const int copies,
                                    const int vector_bytes) {
  PairResult result;
#if defined(STRATUS_CLUSTER_WIDE)
  const auto start = list.start;
  const auto count = list.count;
  const auto unmasked = list.unmasked;
  const T* const xq = c.xq.data();
  const T* const par = c.par.data();
  const int* const js = list.j.data();
  const std::uint16_t* const ms = list.mask.data();
  const auto force = c.force;
  const Kokkos::Experimental::UniqueToken<DevExecSpace> token;
  Kokkos::parallel_reduce(
      "md::cluster_coul_long_forces", Kokkos::RangePolicy<DevExecSpace>(0, c.nlocal),
      [=](const int i, PairResult& acc) {
        const int t = copies == 1 ? 0 : thread_copy(token);
        T* const fbase = &force(t, 0, 0);
        const int n0 = start(i), n1 = n0 + unmasked(i), n2 = n0 + count(i);
        double s[5] = {0, 0, 0, 0, 0};
        if (vector_bytes >= 64)
          cluster_coul_row_avx512<EnergyVirial>(xq, par, js, ms, n0, n1, n2, i, p, fbase, s);
        else
          cluster_coul_row_avx2<EnergyVirial>(xq, par, js, ms, n0, n1, n2, i, p, fbase, s);
        if constexpr (EnergyVirial) {
          acc.energy += s[0];
          acc.coul += s[1];
          for (int a = 0; a < 3; ++a) acc.virial[a] += s[2 + a];
        }
        release_thread_copy(token, t, copies);
      },
      result);
#else
  (void)p;
  (void)c;
  (void)list;
  (void)copies;
  (void)vector_bytes;
#endif
  return result;
}

}  // namespace detail
}  // namespace stratus::kernels::md
