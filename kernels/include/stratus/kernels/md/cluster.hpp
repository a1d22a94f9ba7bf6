// Cluster-pair lists and their force kernel, the scheme of GROMACS's CPU kernels (Pall and Hess,
// Comput. Phys. Commun. 184 (2013) 2641): atoms are grouped into clusters of kCluster = 4 that
// are close in space (columns in x and y, sorted by z, cut into runs of 4), and the list pairs
// clusters, not atoms. The kernel then computes all 4 x 4 interactions of a cluster pair in
// vector lanes, from contiguous per-cluster coordinates: no gather in the inner loop, and the
// reactions go to 4 contiguous slots of the j cluster. A 16-bit mask per cluster pair says which
// of the 16 atom pairs count; the kernel reads it only where some must be skipped (a cluster
// with itself, ghosts), elsewhere the cutoff test alone decides (empty lanes lie far away).
//
// Each pair once over all ranks: local clusters pair with local clusters of equal or higher
// index (within one cluster, atom a < b) and with the clusters of upper ghosts (GhostSides in
// types.hpp: of the two copies of a pair that crosses a subdomain face, one on each side, exactly
// one is upper), all 16 atom pairs of such an entry counting; lower ghosts are in no cluster.
// Ghosts' forces go home through the reverse plan.
//
// Compute precision T: double, or float ("mixed": coordinates relative to the clusters' origin
// rounded to float, the pair style in float, forces summed in float per cluster lane and in
// double per atom; energy and virial summed in double). In float with one LJ form the row loop
// also exists for AVX2 and AVX-512 registers, chosen at run time (cluster_wide.inc). Host
// back-ends only: the GPU keeps the full lists' layout (pair.hpp).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/kernels/md/topology.hpp"

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include <cstdint>
#include <type_traits>

namespace stratus::kernels::md {

/// Atoms per cluster.
inline constexpr int kCluster = 4;

/// Columns in x and y over which atoms are sorted into clusters: ncol[0] x ncol[1] columns of
/// size 1 / inv over [lo, ...); buckets b = group * ncols + cx * ncol[1] + cy, group 0 for local
/// atoms, 1 for ghosts.
struct ColumnGrid {
  Kokkos::Array<int, 2> ncol{1, 1};
  Kokkos::Array<Real, 2> lo{0, 0}, inv{0, 0};
  /// Column coordinate along axis d of position v (clamped to the grid).
  KOKKOS_INLINE_FUNCTION int cell(int d, Real v) const {
    const Real c = (v - lo[d]) * inv[d];
    return c < 0 ? 0 : (c >= Real(ncol[d]) ? ncol[d] - 1 : static_cast<int>(c));
  }
  [[nodiscard]] KOKKOS_INLINE_FUNCTION int ncols() const { return ncol[0] * ncol[1]; }
};

/// A rank's atoms in clusters (storage owned and sized by the solver's ClusterBuilder):
/// clusters [0, nlocal) hold local atoms, [nlocal, nall) upper ghosts; a lane of a partial cluster
/// holds atom -1. Coordinates xq(c, d, lane) are relative to `origin`, in the compute type T.
template <class T>
struct Clusters {
  int nlocal = 0;
  int nall = 0;
  int nlower = 0;  ///< lower ghosts, in no cluster (the last bucket of the sort)
  ColumnGrid grid{};
  Kokkos::Array<Real, 3> origin{0, 0, 0};
  Real pad_spacing = 1;  ///< distance between empty lanes, beyond every cutoff
  Kokkos::View<int* [kCluster], Kokkos::LayoutRight, DevMemSpace> atom;
  Kokkos::View<int* [kCluster], Kokkos::LayoutRight, DevMemSpace> type;
  Kokkos::View<T* [3][kCluster], Kokkos::LayoutRight, DevMemSpace> xq;
  /// Charged styles: each lane's charge and the two LJ factors of its type (cluster_coul.hpp),
  /// par(c, 0, lane) = q, par(c, 1 + k, lane) = factor k; zeros in empty lanes. Set at a build.
  Kokkos::View<T* [3][kCluster], Kokkos::LayoutRight, DevMemSpace> par;
  Kokkos::View<Real* [6], Kokkos::LayoutRight, DevMemSpace> bbox;  ///< lo xyz, hi xyz at build
  /// Force on each lane, force(t, c, d * kCluster + lane), in one copy per host thread t
  /// (summed in double by cluster_forces_to_atoms).
  Kokkos::View<T* * [3 * kCluster], Kokkos::LayoutRight, DevMemSpace> force;
  Kokkos::View<int*, DevMemSpace> bucket_cluster;  ///< first cluster of each bucket (+ end)
};

/// Cluster pairs in compressed rows: the j clusters of i cluster c are j(k) for k in
/// [start(c), start(c) + count(c)), with the atom pairs that count in mask(k) (bit 4 a + b: lane a
/// of i with lane b of j). The first unmasked(c) entries of a row need no mask (every pair within
/// the cutoff counts: local clusters j > c and upper ghosts' clusters, with no excluded pair);
/// the rest do (the cluster with itself, and clusters with a special pair left out).
struct ClusterList {
  Kokkos::View<int*, DevMemSpace> start;
  Kokkos::View<int*, DevMemSpace> count;
  Kokkos::View<int*, DevMemSpace> unmasked;  ///< of count(c): the entries that need no mask
  Kokkos::View<int*, DevMemSpace> j;
  Kokkos::View<std::uint16_t*, DevMemSpace> mask;
};

/// Scratch of the sort into clusters: atoms by bucket, then by (z, index) within a bucket.
struct ClusterSort {
  Kokkos::View<int*, DevMemSpace> bucket_count;
  Kokkos::View<int*, DevMemSpace> bucket_start;
  Kokkos::View<int*, DevMemSpace> atom_bucket;
  Kokkos::View<int*, DevMemSpace> slot_atom;
};

/// Sorts atoms into buckets (local [0, nlocal), upper ghosts of [nlocal, nall)): their counts
/// into s.bucket_count, their offsets into s.bucket_start, and the lower ghosts, which no
/// cluster holds, into one more bucket at the end (2 ncols + 2 offsets in all).
inline void cluster_bucket_atoms(const Vectors& x, const GhostSides& side, int nlocal, int nall,
                                 const ColumnGrid& g, const ClusterSort& s) {
  const int ncols = g.ncols();
  const auto bucket = s.atom_bucket;
  Kokkos::parallel_for(
      "md::cluster_bucket", Kokkos::RangePolicy<DevExecSpace>(0, nall), KOKKOS_LAMBDA(const int i) {
        bucket(i) =
            !paired_with_locals(side, nlocal, i)
                ? 2 * ncols
                : (i < nlocal ? 0 : ncols) + g.cell(0, x(i, 0)) * g.ncol[1] + g.cell(1, x(i, 1));
      });
  counting_sort(bucket, nall, 2 * ncols + 1, s.bucket_count, s.bucket_start, s.slot_atom);
}

/// Sorts each bucket's atoms by (z, index) (an in-place heap sort: any bucket size) and counts
/// its clusters into c.bucket_cluster (scanned: nbuckets + 1 entries). Returns the number of
/// clusters of local atoms and of all atoms.
template <class T>
Kokkos::pair<int, int> cluster_sort_buckets(const Vectors& x, const ClusterSort& s,
                                            const Clusters<T>& c) {
  const int ncols = c.grid.ncols();
  const int nb = 2 * ncols;
  const auto start = s.bucket_start;
  const auto slot = s.slot_atom;
  const auto bc = c.bucket_cluster;
  Kokkos::parallel_for(
      "md::cluster_sort", Kokkos::RangePolicy<DevExecSpace>(0, nb), KOKKOS_LAMBDA(const int b) {
        int* const a = &slot(start(b));
        const int n = start(b + 1) - start(b);
        const auto less = [&](int p, int q) {
          const Real zp = x(p, 2), zq = x(q, 2);
          return zp < zq || (zp == zq && p < q);
        };
        const auto sift = [&](int root, int end) {  // heap of a[0 .. end)
          for (;;) {
            int child = 2 * root + 1;
            if (child >= end) return;
            if (child + 1 < end && less(a[child], a[child + 1])) ++child;
            if (!less(a[root], a[child])) return;
            const int t = a[root];
            a[root] = a[child];
            a[child] = t;
            root = child;
          }
        };
        for (int r = n / 2 - 1; r >= 0; --r) sift(r, n);
        for (int end = n - 1; end > 0; --end) {
          const int t = a[0];
          a[0] = a[end];
          a[end] = t;
          sift(0, end);
        }
      });
  Kokkos::pair<int, int> counts{0, 0};
  Kokkos::parallel_scan(
      "md::cluster_count_scan", Kokkos::RangePolicy<DevExecSpace>(0, nb),
      KOKKOS_LAMBDA(const int b, int& acc, const bool final) {
        if (final) bc(b) = acc;
        acc += (start(b + 1) - start(b) + kCluster - 1) / kCluster;
        if (final && b == nb - 1) bc(nb) = acc;
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bc);
  counts.first = h(ncols);
  counts.second = h(nb);
  return counts;
}

/// Fills the lanes (atom, type) and build-time bounding boxes of every cluster from the sorted
/// buckets.
template <class T>
void cluster_fill(const Vectors& x, const Types& type, const ClusterSort& s, const Clusters<T>& c) {
  const int nb = 2 * c.grid.ncols();
  const auto start = s.bucket_start;
  const auto slot = s.slot_atom;
  const auto bc = c.bucket_cluster;
  const auto atom = c.atom;
  const auto ctype = c.type;
  const auto bbox = c.bbox;
  Kokkos::parallel_for(
      "md::cluster_fill", Kokkos::RangePolicy<DevExecSpace>(0, nb), KOKKOS_LAMBDA(const int b) {
        const int n = start(b + 1) - start(b);
        for (int k = bc(b); k < bc(b + 1); ++k) {
          Real lo[3], hi[3];
          for (int d = 0; d < 3; ++d) {
            lo[d] = Kokkos::reduction_identity<Real>::min();
            hi[d] = Kokkos::reduction_identity<Real>::max();
          }
          for (int l = 0; l < kCluster; ++l) {
            const int pos = (k - bc(b)) * kCluster + l;
            const int i = pos < n ? slot(start(b) + pos) : -1;
            atom(k, l) = i;
            ctype(k, l) = i >= 0 ? type(i) : 0;
            if (i < 0) continue;
            for (int d = 0; d < 3; ++d) {
              lo[d] = x(i, d) < lo[d] ? x(i, d) : lo[d];
              hi[d] = x(i, d) > hi[d] ? x(i, d) : hi[d];
            }
          }
          for (int d = 0; d < 3; ++d) {
            bbox(k, d) = lo[d];
            bbox(k, 3 + d) = hi[d];
          }
        }
      });
}

/// Calls visit(j) for the clusters j that may hold an atom within `cut` of local cluster i's
/// bounding box, in a fixed order (local clusters j >= i, then ghost clusters): those of the
/// columns within reach in x and y whose boxes overlap the z range left by the column's
/// distance (a superset of the clusters whose boxes come within `cut`; the caller tests atoms).
template <class T, class Visit>
KOKKOS_INLINE_FUNCTION void for_each_cluster_near(const Clusters<T>& c, const Real cut, const int i,
                                                  Visit&& visit) {
  const ColumnGrid& g = c.grid;
  Real lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = c.bbox(i, d);
    hi[d] = c.bbox(i, 3 + d);
  }
  const Real cutsq = cut * cut;
  const int x0 = g.cell(0, lo[0] - cut), x1 = g.cell(0, hi[0] + cut);
  const int y0 = g.cell(1, lo[1] - cut), y1 = g.cell(1, hi[1] + cut);
  // The gap between [a, b] and [lo, hi] along one axis (0 when they overlap).
  const auto gap = [](Real a, Real b, Real l, Real h) {
    return l > b ? l - b : (a > h ? a - h : Real(0));
  };
  const bool grid = g.inv[0] > 0 && g.inv[1] > 0;
  const Real wx = grid ? 1 / g.inv[0] : 0, wy = grid ? 1 / g.inv[1] : 0;  // column widths
  for (int group = 0; group < 2; ++group)
    for (int cx = x0; cx <= x1; ++cx) {
      const Real gx = gap(g.lo[0] + cx * wx, g.lo[0] + (cx + 1) * wx, lo[0], hi[0]);
      for (int cy = y0; cy <= y1; ++cy) {
        // The column's own distance in x and y: corner columns are often out of reach, and
        // what is left of the cutoff bounds the range in z.
        const Real gy = gap(g.lo[1] + cy * wy, g.lo[1] + (cy + 1) * wy, lo[1], hi[1]);
        const Real left = cutsq - gx * gx - gy * gy;
        if (grid && left <= 0) continue;
        const Real zcut = grid ? kmath::sqrt(left) : cut;
        const int b = group * g.ncols() + cx * g.ncol[1] + cy;
        // A bucket's clusters are sorted by z, so are their boxes' tops: skip those below.
        int j = c.bucket_cluster(b), end = c.bucket_cluster(b + 1);
        for (int len = end - j; len > 0;) {
          const int half = len / 2;
          if (lo[2] - c.bbox(j + half, 5) >= zcut) {
            j += half + 1;
            len -= half + 1;
          } else {
            len = half;
          }
        }
        if (group == 0 && j < i) j = i;
        for (; j < end; ++j) {
          if (c.bbox(j, 2) - hi[2] >= zcut) break;  // the rest are further up
          visit(j);
        }
      }
    }
}

#if !defined(__CUDA_ARCH__)
/// One 16-byte vector register of T (GCC/Clang vector extensions, SSE2 and up; with wider
/// -march GCC may fuse two): 4 floats, so one per j cluster, or 2 doubles, two per j cluster.
typedef float ClusterVecFloat __attribute__((vector_size(16)));
typedef double ClusterVecDouble __attribute__((vector_size(16)));
template <class T>
struct ClusterVecOf;
template <>
struct ClusterVecOf<float> {
  using type = ClusterVecFloat;
};
template <>
struct ClusterVecOf<double> {
  using type = ClusterVecDouble;
};
#endif

/// The position of the lowest set bit of v != 0.
KOKKOS_INLINE_FUNCTION int lowest_bit(const unsigned v) {
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(v)) - 1;
#else
  return __builtin_ctz(v);
#endif
}

/// Bit 4 a + b set when lane a of the i cluster (xi, yi, zi) and lane b of the j cluster
/// (coordinates q[d * kCluster + b]) are closer than sqrt(cutsq), whatever the lanes hold.
template <class T>
KOKKOS_INLINE_FUNCTION unsigned near_bits(const T* xi, const T* yi, const T* zi, const T* q,
                                          const T cutsq) {
  unsigned bits = 0;
#if defined(__CUDA_ARCH__)
  for (int a = 0; a < kCluster; ++a)
    for (int b = 0; b < kCluster; ++b) {
      const T dx = xi[a] - q[b], dy = yi[a] - q[kCluster + b], dz = zi[a] - q[2 * kCluster + b];
      bits |= static_cast<unsigned>(dx * dx + dy * dy + dz * dz < cutsq) << (kCluster * a + b);
    }
#else
  using V = typename ClusterVecOf<T>::type;
  constexpr int W = sizeof(V) / sizeof(T);
  constexpr int H = kCluster / W;
  V xj[H], yj[H], zj[H];
  __builtin_memcpy(xj, q, sizeof(xj));
  __builtin_memcpy(yj, q + kCluster, sizeof(yj));
  __builtin_memcpy(zj, q + 2 * kCluster, sizeof(zj));
  for (int a = 0; a < kCluster; ++a)
    for (int h = 0; h < H; ++h) {
      const V dx = xi[a] - xj[h], dy = yi[a] - yj[h], dz = zi[a] - zj[h];
      const auto in = dx * dx + dy * dy + dz * dz < cutsq;
      unsigned lanes = 0;
#if defined(__SSE2__)
      if constexpr (W == 4)
        lanes = static_cast<unsigned>(__builtin_ia32_movmskps(reinterpret_cast<V>(in)));
      else
        lanes = static_cast<unsigned>(__builtin_ia32_movmskpd(reinterpret_cast<V>(in)));
#else
      for (int l = 0; l < W; ++l) lanes |= static_cast<unsigned>(in[l] & 1) << l;
#endif
      bits |= lanes << (kCluster * a + h * W);
    }
#endif
  return bits;
}

/// The atom pairs (a, b) with b > a: those of a cluster with itself, each once.
inline constexpr unsigned kClusterUpperPairs = 0x08CEu;

/// Far from every real atom: empty lane l of cluster k sits at kClusterFar + pad_spacing (4 k +
/// l) on every axis, so that it interacts with nothing, not even another empty lane.
inline constexpr double kClusterFar = 1e6;

/// Copies the positions of every clustered atom, relative to c.origin, into c.xq (each step).
template <class T>
void cluster_positions(const Vectors& x, const Clusters<T>& c) {
  const auto atom = c.atom;
  const auto xq = c.xq;
  const auto o = c.origin;
  const Real pad = c.pad_spacing;
  Kokkos::parallel_for(
      "md::cluster_positions", Kokkos::RangePolicy<DevExecSpace>(0, c.nall),
      KOKKOS_LAMBDA(const int k) {
        for (int l = 0; l < kCluster; ++l) {
          const int i = atom(k, l);
          for (int d = 0; d < 3; ++d)
            xq(k, d, l) = i >= 0 ? static_cast<T>(x(i, d) - o[d])
                                 : static_cast<T>(kClusterFar + pad * (kCluster * k + l));
        }
      });
}

/// SETS f(i, .) of every clustered atom (local and upper ghost) to the sum of its lane's force
/// over the first `copies` copies, and to zero for the lower ghosts (the last bucket of s).
template <class T>
void cluster_forces_to_atoms(const Clusters<T>& c, const ClusterSort& s, const Vectors& f,
                             const int copies) {
  const auto atom = c.atom;
  const auto fc = c.force;
  const int nb = 2 * c.grid.ncols();
  const auto start = s.bucket_start;
  const auto slot = s.slot_atom;
  Kokkos::parallel_for(
      "md::cluster_lower_ghosts", Kokkos::RangePolicy<DevExecSpace>(0, c.nlower),
      KOKKOS_LAMBDA(const int k) {
        const int i = slot(start(nb) + k);
        for (int d = 0; d < 3; ++d) f(i, d) = 0;
      });
  Kokkos::parallel_for(
      "md::cluster_forces", Kokkos::RangePolicy<DevExecSpace>(0, c.nall),
      KOKKOS_LAMBDA(const int k) {
        for (int l = 0; l < kCluster; ++l) {
          const int i = atom(k, l);
          if (i < 0) continue;
          for (int d = 0; d < 3; ++d) {
            Real sum = Real(fc(0, k, d * kCluster + l));
            for (int t = 1; t < copies; ++t) sum += Real(fc(t, k, d * kCluster + l));
            f(i, d) = sum;
          }
        }
      });
}

namespace detail {
/// The LJ coefficients of one lane each (V a vector of the compute type).
template <class V>
struct LJLanes {
  V lj1, lj2, lj3, lj4, cutsq, offset;
};

/// LJ in compute type T for the cluster kernel, one set of coefficients for every type pair
/// (LJCutUniform's, rounded to T).
template <class T>
struct UniformLJ {
  static constexpr bool uniform = true;
  T lj1, lj2, lj3, lj4, cutsq, offset;
  template <class V>
  KOKKOS_INLINE_FUNCTION LJLanes<V> lanes(const int*, const int*) const {
    return {V{} + lj1, V{} + lj2, V{} + lj3, V{} + lj4, V{} + cutsq, V{} + offset};
  }
};
template <class T>
UniformLJ<T> in_precision(const LJCutUniform& p) {
  return {T(p.lj1), T(p.lj2), T(p.lj3), T(p.lj4), T(p.cutsq), T(p.offset)};
}

/// LJ in compute type T from LJCut's per-type tables: lanes<V>(ti, tj) reads the coefficients
/// of lane l's types ti[l], tj[l] one by one.
template <class T>
struct TableLJ {
  static constexpr bool uniform = false;
  LJCut p;
  template <class V>
  KOKKOS_INLINE_FUNCTION LJLanes<V> lanes(const int* ti, const int* tj) const {
    LJLanes<V> l;
    for (int b = 0; b < static_cast<int>(sizeof(V) / sizeof(T)); ++b) {
      l.lj1[b] = T(p.lj1(ti[b], tj[b]));
      l.lj2[b] = T(p.lj2(ti[b], tj[b]));
      l.lj3[b] = T(p.lj3(ti[b], tj[b]));
      l.lj4[b] = T(p.lj4(ti[b], tj[b]));
      l.cutsq[b] = T(p.cutsq(ti[b], tj[b]));
      l.offset[b] = T(p.offset(ti[b], tj[b]));
    }
    return l;
  }
};
template <class T>
TableLJ<T> in_precision(const LJCut& p) {
  return {p};
}

#if !defined(__CUDA_ARCH__)
/// The copy of the forces that this thread of the kernel writes (its OpenMP thread number; a
/// token of `token` on other host back-ends, released by the caller).
template <class Token>
inline int thread_copy(const Token& token) {
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<DevExecSpace, Kokkos::OpenMP>) return omp_get_thread_num();
#endif
  return static_cast<int>(token.acquire());
}

/// Gives back copy t of thread_copy (tokens only: OpenMP thread numbers need no release; one
/// copy, 0, was never acquired).
template <class Token>
inline void release_thread_copy(const Token& token, const int t, const int copies) {
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<DevExecSpace, Kokkos::OpenMP>) return;
#endif
  if (copies != 1) token.release(t);
}
#endif

// Wider registers for the float kernel with one LJ form, chosen at run time: the function
// that holds the loop carries GCC's target attribute (so the default build can use AVX2 or
// AVX-512 where the CPU has it, and only that function is compiled for it), and all it calls
// is inlined into it. x86-64 with GCC or Clang only; elsewhere (and in nvcc) the 16-byte kernel
// runs.
#if defined(STRATUS_HOST_AVX2)
#define STRATUS_CLUSTER_WIDE 1
#include <immintrin.h>

/// Widest registers the float cluster kernel may use on this CPU: 64 (AVX-512F/VL/DQ), 32
/// (AVX2 and FMA), else 16 bytes.
inline int cluster_vector_bytes() { return host_cpu_vector_bytes(); }

typedef float WideFloat8 __attribute__((vector_size(32)));
typedef int WideInt8 __attribute__((vector_size(32)));
typedef float WideFloat16 __attribute__((vector_size(64)));
typedef int WideInt16 __attribute__((vector_size(64)));
/// Registers of L floats (8 or 16) and their lane masks.
template <int L>
struct WideFloats;
template <>
struct WideFloats<8> {
  using type = WideFloat8;
  using mask = WideInt8;
};
template <>
struct WideFloats<16> {
  using type = WideFloat16;
  using mask = WideInt16;
};

// One row of the float kernel with 8-lane (AVX2) and 16-lane (AVX-512) registers:
// cluster_row_avx2 and cluster_row_avx512, the same body (cluster_wide.inc) compiled for each.
// GCC 12's _mm512_broadcast_f32x4 starts from _mm512_undefined_ps(), which -Wmaybe-uninitialized
// reports once inlined (a false positive in the compiler's own header).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define STRATUS_WIDE_L 8
#define STRATUS_WIDE_TARGET "avx2,fma"
#define STRATUS_WIDE_ROW cluster_row_avx2
#include "stratus/kernels/md/cluster_wide.inc"
#define STRATUS_WIDE_L 16
#define STRATUS_WIDE_TARGET "avx512f,avx512vl,avx512dq,avx2,fma"
#define STRATUS_WIDE_ROW cluster_row_avx512
#include "stratus/kernels/md/cluster_wide.inc"
#pragma GCC diagnostic pop
#endif

/// The cluster-pair kernel (host back-ends) with a fixed LJ form (UniformLJ or TableLJ in T).
/// For each lane a of cluster i in turn, its 4 pairs with each j cluster of the row are one
/// vector operation (4 floats, or 2 x 2 doubles, in 16-byte registers): the force on atom a
/// stays in registers over the row, the reactions go to j's 4 contiguous slots of this
/// thread's copy of the forces (in T, as GROMACS sums them; converted to double per atom by
/// cluster_forces_to_atoms). Energy and the virial's diagonal (one accumulator per axis) are
/// summed in T over a row, in double over rows.
template <bool EnergyVirial, class T, class Pair>
PairResult cluster_pair_forces(const Pair& p, const Clusters<T>& c, const ClusterList& list,
                               const int copies, const int vector_bytes = 16) {
  const auto start = list.start;
  const auto count = list.count;
  const auto unmasked = list.unmasked;
  const auto js = list.j;
  const auto ms = list.mask;
  const auto xq = c.xq;
  const auto ct = c.type;
  const auto force = c.force;
  const Kokkos::Experimental::UniqueToken<DevExecSpace> token;
  PairResult result;
  Kokkos::parallel_reduce(
      "md::cluster_pair_forces", Kokkos::RangePolicy<DevExecSpace>(0, c.nlocal),
      KOKKOS_LAMBDA(const int i, PairResult& acc) {
#if defined(__CUDA_ARCH__)  // GPUs run the full lists: never launched there
        (void)i;
        (void)acc;
#else
        using V = typename ClusterVecOf<T>::type;
        using M = decltype(V{} < V{});  // lane masks
        using MI = std::remove_cvref_t<decltype(M{}[0])>;
        constexpr int W = sizeof(V) / sizeof(T);  // lanes per vector
        constexpr int H = kCluster / W;           // vectors per cluster
        const int t = copies == 1 ? 0 : thread_copy(token);
        T* const fbase = &force(t, 0, 0);
        M bit[H];  // bit of each lane of j in a row of 4 of the mask
        for (int h = 0; h < H; ++h)
          for (int l = 0; l < W; ++l) bit[h][l] = MI(1) << (h * W + l);
        const int n0 = start(i), n1 = n0 + unmasked(i), n2 = n0 + count(i);
#if defined(STRATUS_CLUSTER_WIDE)
        if constexpr (std::is_same_v<T, float> && Pair::uniform) {
          if (vector_bytes > 16) {
            double e = 0, w[3] = {0, 0, 0};
            if (vector_bytes == 64)
              cluster_row_avx512<EnergyVirial>(xq.data(), js.data(), ms.data(), n0, n1, n2, i, p,
                                               fbase, e, w);
            else
              cluster_row_avx2<EnergyVirial>(xq.data(), js.data(), ms.data(), n0, n1, n2, i, p,
                                             fbase, e, w);
            acc.energy += e;
            for (int a = 0; a < 3; ++a) acc.virial[a] += w[a];
            release_thread_copy(token, t, copies);
            return;
          }
        }
#endif
        constexpr int P = 4;  // lanes of i per pass over the row
        for (int a0 = 0; a0 < kCluster; a0 += P) {
          T xa[P], ya[P], za[P];
          int ta[P][W];
          for (int u = 0; u < P; ++u) {
            xa[u] = xq(i, 0, a0 + u);
            ya[u] = xq(i, 1, a0 + u);
            za[u] = xq(i, 2, a0 + u);
            for (int l = 0; l < W; ++l) ta[u][l] = ct(i, a0 + u);
          }
          V fx[P][H] = {}, fy[P][H] = {}, fz[P][H] = {}, ev = {}, wx = {}, wy = {}, wz = {};
          // Lanes a0 .. a0 + P of i with cluster js(n); Masked: only the pairs of the mask
          // count (the cluster with itself, ghosts, excluded pairs), else every pair within the
          // cutoff (empty
          // lanes lie beyond it).
          const auto with = [&](const int n, auto masked) {
            constexpr bool Masked = decltype(masked)::value;
            const int j = js(n);
            const unsigned m = Masked ? ms(n) : 0u;
            const T* const q = &xq(j, 0, 0);
            T* const fj = fbase + 3 * kCluster * j;
            for (int h = 0; h < H; ++h) {
              V xj, yj, zj, gx = {}, gy = {}, gz = {};
              __builtin_memcpy(&xj, q + h * W, sizeof(V));
              __builtin_memcpy(&yj, q + kCluster + h * W, sizeof(V));
              __builtin_memcpy(&zj, q + 2 * kCluster + h * W, sizeof(V));
              for (int u = 0; u < P; ++u) {
                const LJLanes<V> k = p.template lanes<V>(ta[u], &ct(j, h * W));
                const V dx = xa[u] - xj, dy = ya[u] - yj, dz = za[u] - zj;
                const V rsq = dx * dx + dy * dy + dz * dz;
                M use = rsq < k.cutsq;
                if constexpr (Masked)
                  use &= (bit[h] & static_cast<MI>((m >> (kCluster * (a0 + u))) & 15u)) != 0;
                // 1 / 0 only on a masked lane (an atom with itself): discarded by the selects.
                const V r2inv = T(1) / rsq;
                const V r6inv = r2inv * r2inv * r2inv;
                const V fpair = use ? r6inv * (k.lj1 * r6inv - k.lj2) * r2inv : V{};
                const V ux = dx * fpair, uy = dy * fpair, uz = dz * fpair;
                fx[u][h] += ux;
                fy[u][h] += uy;
                fz[u][h] += uz;
                gx += ux;
                gy += uy;
                gz += uz;
                if constexpr (EnergyVirial) {
                  ev += use ? r6inv * (k.lj3 * r6inv - k.lj4) - k.offset : V{};
                  wx += dx * ux;
                  wy += dy * uy;
                  wz += dz * uz;
                }
              }
              V tx, ty, tz;
              __builtin_memcpy(&tx, fj + h * W, sizeof(V));
              __builtin_memcpy(&ty, fj + kCluster + h * W, sizeof(V));
              __builtin_memcpy(&tz, fj + 2 * kCluster + h * W, sizeof(V));
              tx -= gx;
              ty -= gy;
              tz -= gz;
              __builtin_memcpy(fj + h * W, &tx, sizeof(V));
              __builtin_memcpy(fj + kCluster + h * W, &ty, sizeof(V));
              __builtin_memcpy(fj + 2 * kCluster + h * W, &tz, sizeof(V));
            }
          };
          int n = n0;
          for (; n < n1; ++n) with(n, std::false_type{});  // local clusters j > i
          for (; n < n2; ++n) with(n, std::true_type{});   // the masked entries
          T* const fi = fbase + 3 * kCluster * i;
          for (int u = 0; u < P; ++u) {
            Real sx = 0, sy = 0, sz = 0;
            for (int h = 0; h < H; ++h)
              for (int l = 0; l < W; ++l) {
                sx += Real(fx[u][h][l]);
                sy += Real(fy[u][h][l]);
                sz += Real(fz[u][h][l]);
              }
            fi[a0 + u] += T(sx);
            fi[kCluster + a0 + u] += T(sy);
            fi[2 * kCluster + a0 + u] += T(sz);
          }
          if constexpr (EnergyVirial)
            for (int l = 0; l < W; ++l) {
              acc.energy += Real(ev[l]);
              acc.virial[0] += Real(wx[l]);
              acc.virial[1] += Real(wy[l]);
              acc.virial[2] += Real(wz[l]);
            }
        }
        release_thread_copy(token, t, copies);
#endif
      },
      result);
  return result;
}
}  // namespace detail

}  // namespace stratus::kernels::md
