// Cluster-pair lists of the md solver: the host side of kernels/md/cluster.hpp. Owns the
// clusters, the list and the scratch of the sort (grown only, reused across builds), sizes the
// column grid, and runs the force kernel with one force copy per host thread, kept between steps.
#pragma once

#include "stratus/kernels/md/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace stratus::md {

/// The sum of v(0 .. n).
inline int sum_of_counts(const Kokkos::View<int*, DevMemSpace>& v, int n) {
  int total = 0;
  Kokkos::parallel_reduce(
      "md::cluster_pairs", Kokkos::RangePolicy<DevExecSpace>(0, n),
      KOKKOS_LAMBDA(const int k, int& acc) { acc += v(k); }, total);
  return total;
}

/// Cluster pairs in compute type T (double, or float for md.precision = "mixed").
template <class T>
class ClusterPairs {
 public:
  using Vectors = kernels::md::Vectors;

  /// Clusters atoms [0, nlocal) (local) and [nlocal, nall) (ghosts) at positions x and lists the
  /// cluster pairs with an atom pair closer than `cutoff`, each atom pair once over all ranks
  /// (as NeighborBuilder::build_half: ghosts' forces must be sent back to their owners). Throws
  /// std::invalid_argument unless cutoff > 0.
  void build(const Vectors& x, const kernels::md::Ids& id, const kernels::md::Types& type,
             int nlocal, int nall, Real cutoff) {
    namespace kmd = kernels::md;
    if (!(cutoff > 0)) throw std::invalid_argument("ClusterPairs: cutoff must be positive");
    nall_ = nall;
    const kmd::BoundingBox all = kmd::bounding_box(x, nall);
    const kmd::BoundingBox local = kmd::bounding_box(x, nlocal);
    // Columns as wide as a cube that holds kCluster atoms at the local density.
    double volume = 1;
    for (int d = 0; d < 3; ++d) volume *= std::max(local.hi[d] - local.lo[d], 0.1 * cutoff);
    const double side = nlocal > 0 ? std::cbrt(kmd::kCluster * volume / nlocal) : cutoff;
    kmd::ColumnGrid g;
    double ext[2];
    for (int d = 0; d < 2; ++d) {
      ext[d] = nall > 0 ? all.hi[d] - all.lo[d] : 0.0;
      g.ncol[d] = static_cast<int>(std::clamp(std::floor(ext[d] / side), 1.0, 1e6));
      g.lo[d] = nall > 0 ? all.lo[d] : 0.0;
    }
    while (double(g.ncol[0]) * g.ncol[1] > double(nall) + 64) {  // sparse atoms: wider columns
      const int d = g.ncol[0] >= g.ncol[1] ? 0 : 1;
      g.ncol[d] = std::max(1, g.ncol[d] / 2);
    }
    for (int d = 0; d < 2; ++d) g.inv[d] = ext[d] > 0 ? g.ncol[d] / ext[d] : 0.0;
    c_.pad_spacing = 2 * cutoff + 1;
    for (int d = 0; d < 3; ++d) c_.origin[d] = nall > 0 ? 0.5 * (all.lo[d] + all.hi[d]) : 0.0;
    c_.grid = g;
    const int nb = 2 * g.ncols();
    grow(sort_.bucket_count, nb + 1, "md::cluster_bucket_count");
    grow(sort_.bucket_start, nb + 1, "md::cluster_bucket_start");
    grow(c_.bucket_cluster, nb + 1, "md::cluster_bucket_cluster");
    grow(sort_.atom_bucket, nall, "md::cluster_atom_bucket");
    grow(sort_.slot_atom, nall, "md::cluster_slot_atom");
    const int max_clusters = nall / kmd::kCluster + nb + 1;
    if (static_cast<int>(c_.atom.extent(0)) < max_clusters) {
      const int n = max_clusters + max_clusters / 8 + 16;
      c_.atom = decltype(c_.atom)("md::cluster_atom", n);
      c_.type = decltype(c_.type)("md::cluster_type", n);
      c_.xq = decltype(c_.xq)("md::cluster_x", n);
      c_.bbox = decltype(c_.bbox)("md::cluster_bbox", n);
      copies_ = DevExecSpace().concurrency();
      c_.force = decltype(c_.force)("md::cluster_force", copies_, n);
    }
    kmd::cluster_bucket_atoms(x, nlocal, nall, g, sort_);
    const auto counts = kmd::cluster_sort_buckets(x, sort_, c_);
    c_.nlocal = counts.first;
    c_.nall = counts.second;
    kmd::cluster_fill(x, type, sort_, c_);
    kmd::cluster_positions(x, c_);
    grow(list_.start, c_.nlocal + 1, "md::cluster_row_start");
    grow(list_.count, c_.nlocal + 1, "md::cluster_row_count");
    grow(list_.local_count, c_.nlocal + 1, "md::cluster_row_local_count");
    for (;;) {  // rows of a fixed capacity, filled again if one was longer
      const std::size_t need = static_cast<std::size_t>(c_.nlocal) * capacity_;
      if (list_.j.extent(0) < need) {
        list_.j = decltype(list_.j)("md::cluster_j", need);
        list_.mask = decltype(list_.mask)("md::cluster_mask", need);
      }
      const int longest = kmd::cluster_fill_rows(c_, id, cutoff, capacity_, list_);
      if (longest <= capacity_) break;
      capacity_ = longest + longest / 8 + 4;
    }
    pairs_ = sum_of_counts(list_.count, c_.nlocal);
  }

  /// SETS f(i, .) for every atom i < nall of the last build: the pair forces of the listed
  /// pairs at positions x (ghosts' rows hold the reactions their owners must add). Returns the
  /// energy and virial of the listed pairs, zeros unless EnergyVirial.
  template <bool EnergyVirial, class Pair>
  kernels::md::PairResult forces(const Pair& pair, const Vectors& x, const Vectors& f) {
    namespace kmd = kernels::md;
    if (nall_ == 0) return {};
    kmd::cluster_positions(x, c_);
    Kokkos::deep_copy(Kokkos::subview(c_.force, std::make_pair(0, copies_),
                                      std::make_pair(0, c_.nall), Kokkos::ALL),
                      T(0));
    const kmd::PairResult r = kmd::detail::with_uniform_form(pair, [&](const auto& p) {
      return kmd::detail::cluster_pair_forces<EnergyVirial>(kmd::detail::in_precision<T>(p), c_,
                                                            list_, copies_, vector_bytes_);
    });
    kmd::cluster_forces_to_atoms(c_, f, copies_);
    return r;
  }

  /// Bytes of the vector registers the float kernel uses with one LJ form: the widest this CPU
  /// has (kernels::md::detail::cluster_vector_bytes), at most `limit` (16, 32 or 64; tests
  /// compare the widths).
  void limit_vector_bytes(int limit) { vector_bytes_ = std::min(vector_bytes_, limit); }
  [[nodiscard]] int vector_bytes() const noexcept { return vector_bytes_; }
  /// Bytes of the registers forces() runs in with `pair`: the wide rows serve float with one LJ
  /// form (tables of several types and double run in 16 bytes).
  template <class Pair>
  [[nodiscard]] int register_bytes(const Pair& pair) const {
    bool uniform = false;
    if constexpr (requires { kernels::md::uniform_form(pair); })
      uniform = kernels::md::uniform_form(pair).has_value();
    return std::is_same_v<T, float> && uniform ? vector_bytes_ : 16;
  }

  /// The clusters and the list of the last build (for tests and diagnostics).
  [[nodiscard]] const kernels::md::Clusters<T>& clustered() const noexcept { return c_; }
  [[nodiscard]] const kernels::md::ClusterList& list() const noexcept { return list_; }
  /// Clusters of local atoms, of all atoms, and listed cluster pairs of the last build.
  [[nodiscard]] int local_clusters() const noexcept { return c_.nlocal; }
  [[nodiscard]] int clusters() const noexcept { return c_.nall; }
  [[nodiscard]] int cluster_pairs() const noexcept { return pairs_; }

 private:
  template <class View>
  static void grow(View& v, int n, const char* label) {
    if (static_cast<int>(v.extent(0)) < n)
      v = View(std::string(label), static_cast<std::size_t>(n + n / 8 + 16));
  }

  kernels::md::Clusters<T> c_{};
  kernels::md::ClusterList list_{};
  kernels::md::ClusterSort sort_{};
  int copies_ = 1;  ///< force copies: one per host thread
#if defined(STRATUS_CLUSTER_WIDE)
  int vector_bytes_ = kernels::md::detail::cluster_vector_bytes();
#else
  int vector_bytes_ = 16;
#endif
  int capacity_ = 16;  ///< cluster pairs a row holds
  int nall_ = 0;
  int pairs_ = 0;
};

}  // namespace stratus::md
