// The rows of the cluster-pair list (cluster.hpp): for each local cluster i, the clusters j
// within the list cutoff of it, with the mask of the atom pairs that count. The candidates come
// from for_each_cluster_near; which of their 16 atom pairs are within the cutoff is one test of
// 4 x 4 lanes. In float on CPUs with AVX-512 that test is one 16-lane register per candidate
// (cluster_fill_row_avx512, chosen at run time as the kernel's width is); elsewhere four 4-lane
// ones (near_bits). The rows are the same either way (the same float arithmetic, lane by lane).
#pragma once

#include "stratus/kernels/md/cluster.hpp"

#include <cstdint>
#include <type_traits>

namespace stratus::kernels::md {

namespace detail {

/// Row i of the list while it is filled: cluster i's lanes and the entries found so far. Unmasked
/// entries are stored from the front of the row, masked ones from its back (moved after the
/// others by finish()).
template <class T>
struct ClusterRow {
  T xi[kCluster], yi[kCluster], zi[kCluster];
  // The range of each lane's special ids (a quick test before its row is searched; empty:
  // lo > hi).
  std::int64_t slo[kCluster], shi[kCluster];
  int i, k0, nu = 0, nm = 0;

  KOKKOS_INLINE_FUNCTION ClusterRow(const Clusters<T>& c, const Ids& id,
                                    const ClusterExclusions& ex, const int row, const int capacity)
      : i(row), k0(row * capacity) {
    for (int a = 0; a < kCluster; ++a) {
      xi[a] = c.xq(i, 0, a);
      yi[a] = c.xq(i, 1, a);
      zi[a] = c.xq(i, 2, a);
      const int ia = c.atom(i, a);
      slo[a] = 1;
      shi[a] = 0;
      const int ns = ex.levels != 0 && ia >= 0 ? ex.nspecial(ia, 2) : 0;
      for (int k = 0; k < ns; ++k) {
        const std::int64_t g = ex.special(ia, k);
        slo[a] = k == 0 || g < slo[a] ? g : slo[a];
        shi[a] = k == 0 || g > shi[a] ? g : shi[a];
      }
    }
  }

  /// Takes cluster j, whose lanes within the cutoff of ours are the bits of `mask` (bit 4 a + b:
  /// lane a of i, lane b of j), keeping the pairs that count (once: b > a in the cluster itself;
  /// every pair with another local cluster or an upper ghost's; no excluded special pair);
  /// nothing when none does.
  KOKKOS_INLINE_FUNCTION void take(const Clusters<T>& c, const Ids& id, const ClusterExclusions& ex,
                                   const ClusterList& list, const int capacity, const int j,
                                   unsigned mask) {
    if (mask == 0) return;
    if (j == i) mask &= kClusterUpperPairs;
    // Without a branch per pair: the pairs that may be special (the id within the lane's range),
    // searched below. A run without exclusions needs none of this (nor j's ids).
    unsigned maybe = 0;
    if (ex.levels != 0)
      for (int b = 0; b < kCluster; ++b) {
        const int jb = c.atom(j, b);
        const std::int64_t gj = jb >= 0 ? id(jb) : -2;
        for (int a = 0; a < kCluster; ++a)
          maybe |= static_cast<unsigned>(gj >= slo[a] && gj <= shi[a])
                   << static_cast<unsigned>(kCluster * a + b);
      }
    bool masked = j == i;
    for (unsigned rest = mask & maybe; rest != 0; rest &= rest - 1) {
      const int bitpos = lowest_bit(rest);
      const int level = special_level(ex.special, ex.nspecial, c.atom(i, bitpos / kCluster),
                                      id(c.atom(j, bitpos % kCluster)));
      if (level > 0 && ((ex.levels >> (level - 1)) & 1u)) {
        mask &= ~(1u << bitpos);
        masked = true;
      }
    }
    if (mask == 0) return;
    const int k = nu + nm < capacity ? (masked ? k0 + capacity - 1 - nm : k0 + nu) : -1;
    if (k >= 0) {
      list.j(k) = j;
      list.mask(k) = static_cast<std::uint16_t>(mask);
    }
    nu += masked ? 0 : 1;
    nm += masked ? 1 : 0;
  }

  /// Moves the masked entries (last found first) after the others and sets start(i), count(i)
  /// and unmasked(i); returns the row's length.
  KOKKOS_INLINE_FUNCTION int finish(const ClusterList& list, const int capacity) const {
    if (nu + nm <= capacity)
      for (int t = 0; t < nm; ++t) {
        list.j(k0 + nu + t) = list.j(k0 + capacity - nm + t);
        list.mask(k0 + nu + t) = list.mask(k0 + capacity - nm + t);
      }
    list.start(i) = k0;
    list.count(i) = nu + nm;
    list.unmasked(i) = nu;
    return nu + nm;
  }
};

/// Fills row i with the 16-byte test (near_bits); returns its length.
template <class T>
KOKKOS_INLINE_FUNCTION int cluster_fill_row(const Clusters<T>& c, const Ids& id, const Real cut,
                                            const int capacity, const ClusterList& list,
                                            const ClusterExclusions& ex, const int i) {
  const T cutsq = static_cast<T>(cut * cut);
  ClusterRow<T> row(c, id, ex, i, capacity);
  for_each_cluster_near(c, cut, i, [&](const int j) {
    row.take(c, id, ex, list, capacity, j,
             near_bits(row.xi, row.yi, row.zi, &c.xq(j, 0, 0), cutsq));
  });
  return row.finish(list, capacity);
}

#if defined(STRATUS_CLUSTER_WIDE)
/// Candidates a row gathers before testing them 16 lanes at a time; a row with more (a long
/// cutoff in small clusters) is filled by cluster_fill_row instead.
inline constexpr int kRowCandidates = 512;

/// Lane 4 a + b of the result: v[a] (a cluster's 4 values, each against the 4 lanes of another).
__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))) inline __m512 spread_lanes(
    const float* v) {
  return _mm512_setr_ps(v[0], v[0], v[0], v[0], v[1], v[1], v[1], v[1], v[2], v[2], v[2], v[2],
                        v[3], v[3], v[3], v[3]);
}

// GCC 12's _mm512_broadcast_f32x4 starts from _mm512_undefined_ps(), which -Wmaybe-uninitialized
// reports once inlined (a false positive in the compiler's own header; as in cluster.hpp).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
/// Row i in float with 16-lane registers (compiled for AVX-512, called only where the CPU has
/// it): lane 4 a + b of one register tests lane a of i against lane b of a candidate j, whose
/// 4 coordinates per axis are broadcast into the register straight from memory. The arithmetic
/// per lane is near_bits's: (xi - xj)^2 + (yi - yj)^2 + (zi - zj)^2 < cut^2 in float.
__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))) inline int cluster_fill_row_avx512(
    const Clusters<float>& c, const Ids& id, const Real cut, const int capacity,
    const ClusterList& list, const ClusterExclusions& ex, const int i) {
  int cand[kRowCandidates];
  int n = 0;
  for_each_cluster_near(c, cut, i, [&](const int j) {
    if (n < kRowCandidates) cand[n] = j;
    ++n;
  });
  if (n > kRowCandidates) return cluster_fill_row(c, id, cut, capacity, list, ex, i);
  ClusterRow<float> row(c, id, ex, i, capacity);
  const __m512 xi = spread_lanes(row.xi), yi = spread_lanes(row.yi), zi = spread_lanes(row.zi);
  const __m512 cutsq = _mm512_set1_ps(static_cast<float>(cut * cut));
  const float* const xq = c.xq.data();
  for (int k = 0; k < n; ++k) {
    const int j = cand[k];
    const float* const q = xq + 3 * kCluster * j;
    const __m512 dx = _mm512_sub_ps(xi, _mm512_broadcast_f32x4(_mm_loadu_ps(q)));
    const __m512 dy = _mm512_sub_ps(yi, _mm512_broadcast_f32x4(_mm_loadu_ps(q + kCluster)));
    const __m512 dz = _mm512_sub_ps(zi, _mm512_broadcast_f32x4(_mm_loadu_ps(q + 2 * kCluster)));
    const __m512 rsq = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
                                     _mm512_mul_ps(dz, dz));
    row.take(c, id, ex, list, capacity, j,
             static_cast<unsigned>(_mm512_cmp_ps_mask(rsq, cutsq, _CMP_LT_OQ)));
  }
  return row.finish(list, capacity);
}
#pragma GCC diagnostic pop
#endif

}  // namespace detail

/// Fills row i, from start(i) = i * capacity, with the clusters j whose mask is not empty: bit
/// 4 a + b when lanes a of i and b of j hold atoms closer than `cut` (at the coordinates c.xq,
/// where empty lanes lie far from everything) that are not an excluded special pair, counted
/// once (in one local cluster b > a; between local clusters always, j > i; with the clusters of
/// upper ghosts always). count(i) = the row's length: first the unmasked(i) entries that need no
/// mask, then those that do (the last found first), as many as `capacity` stored. Returns the
/// longest row (the rows must be filled again, longer, if it exceeds the capacity). `vector_bytes`
/// 64 (cluster_vector_bytes() on a CPU with AVX-512) tests float candidates 16 lanes at a time.
template <class T>
int cluster_fill_rows(const Clusters<T>& c, const Ids& id, Real cut, int capacity,
                      const ClusterList& list, const ClusterExclusions& ex = {},
                      [[maybe_unused]] const int vector_bytes = 16) {
  // 16 lanes at a time: float clusters on a host back-end whose CPU has AVX-512.
  [[maybe_unused]] constexpr bool can_widen =
      std::is_same_v<T, float> &&
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible;
  [[maybe_unused]] const bool wide = can_widen && vector_bytes == 64;
  int longest = 0;
  Kokkos::parallel_reduce(
      "md::cluster_fill_rows", Kokkos::RangePolicy<DevExecSpace>(0, c.nlocal),
      KOKKOS_LAMBDA(const int i, int& acc) {
        int n = 0;
#if defined(STRATUS_CLUSTER_WIDE)
        if constexpr (can_widen)
          n = wide ? detail::cluster_fill_row_avx512(c, id, cut, capacity, list, ex, i)
                   : detail::cluster_fill_row(c, id, cut, capacity, list, ex, i);
        else
#endif
          n = detail::cluster_fill_row(c, id, cut, capacity, list, ex, i);
        if (n > acc) acc = n;
      },
      Kokkos::Max<int>(longest));
  return longest;
}

}  // namespace stratus::kernels::md
