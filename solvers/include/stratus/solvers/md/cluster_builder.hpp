// Cluster-pair lists of the md solver: the host side of kernels/md/cluster.hpp. Owns the
// clusters, the list and the scratch of the sort (grown only, reused across builds), sizes the
// column grid, and runs the force kernel with one force copy per host thread, kept between steps.
// Charged styles (lj/cut/coul/long) run kernels/md/cluster_coul.hpp with the LJ factors of
// lj_factors and the special pairs of molecules left out (ClusterCharges).
#pragma once

#include "stratus/kernels/md/cluster.hpp"
#include "stratus/kernels/md/cluster_coul.hpp"
#include "stratus/kernels/md/cluster_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
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

/// The LJ factors of the charged cluster kernel (kernels/md/cluster_coul.hpp): factor(t, 0) = a_t,
/// factor(t, 1) = b_t with lj1(ti, tj) = a_i a_j and lj2(ti, tj) = b_i b_j to 1e-12 relative for
/// every type pair, one LJ cutoff for every pair that has LJ (cutsq), shifted or not (o12, o6 as
/// CoulLongClusterForm). Empty when the tables do not factor so (other mixing rules, explicit
/// coefficients off the geometric means, several LJ cutoffs).
struct LJFactors {
  Kokkos::View<Real* [2], DevMemSpace> factor;
  Real cutsq = 0, o12 = 0, o6 = 0;
};
inline std::optional<LJFactors> lj_factors(const kernels::md::LJCut& lj) {
  const int n = lj.ntypes;
  const auto h1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lj.lj1);
  const auto h2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lj.lj2);
  const auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lj.cutsq);
  const auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lj.offset);
  LJFactors out;
  out.factor = Kokkos::View<Real* [2], DevMemSpace>("md::lj_factors", n);
  auto hf = Kokkos::create_mirror_view(out.factor);
  for (int t = 0; t < n; ++t) {
    if (h1(t, t) < 0 || h2(t, t) < 0) return std::nullopt;
    hf(t, 0) = std::sqrt(h1(t, t));
    hf(t, 1) = std::sqrt(h2(t, t));
  }
  const auto near = [](Real a, Real b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
  bool cut = false, shifted = false;
  for (int t = 0; t < n; ++t)
    for (int u = 0; u < n; ++u) {
      if (!near(hf(t, 0) * hf(u, 0), h1(t, u)) || !near(hf(t, 1) * hf(u, 1), h2(t, u)))
        return std::nullopt;
      if (h1(t, u) == 0 && h2(t, u) == 0) continue;  // no LJ: its cutoff does not matter
      if (cut && hc(t, u) != out.cutsq) return std::nullopt;
      out.cutsq = hc(t, u);
      cut = true;
      shifted = shifted || ho(t, u) != 0;
    }
  if (shifted) {
    out.o6 = 1 / (out.cutsq * out.cutsq * out.cutsq);
    out.o12 = out.o6 * out.o6;
    // The offsets must be those of the shifted form, e(rc) = lj3 rc^-12 - lj4 rc^-6.
    for (int t = 0; t < n; ++t)
      for (int u = 0; u < n; ++u) {
        const Real e = h1(t, u) / 12 * out.o12 - h2(t, u) / 6 * out.o6;
        if (std::abs(e - ho(t, u)) > 1e-12 * (std::abs(ho(t, u)) + 1e-300)) return std::nullopt;
      }
  }
  Kokkos::deep_copy(out.factor, hf);
  return out;
}

/// What a build of molecules needs: the special pairs to leave out and, for the charged kernel,
/// the atoms' charges and their types' LJ factors (lj empty: no charges).
struct ClusterCharges {
  kernels::md::Charges q;
  Kokkos::View<Real* [2], DevMemSpace> lj;
  kernels::md::ClusterExclusions exclusions;
};

/// Cluster pairs in compute type T (double, or float for md.precision = "mixed").
template <class T>
class ClusterPairs {
 public:
  using Vectors = kernels::md::Vectors;

  /// Clusters atoms [0, nlocal) (local) and the upper ghosts of [nlocal, nall) (`ghost_side`, as
  /// the ghost plan set it) at positions x and lists the cluster pairs with an atom pair closer
  /// than `cutoff`, each atom pair once over all ranks (ghosts' forces must be sent back to their
  /// owners). Throws std::invalid_argument unless cutoff > 0. With `charged`, the lanes' charges
  /// and LJ factors are set for forces_coul_long and its excluded special pairs left out of the
  /// list.
  void build(const Vectors& x, const kernels::md::Ids& id, const kernels::md::Types& type,
             const kernels::md::GhostSides& ghost_side, int nlocal, int nall, Real cutoff,
             const ClusterCharges* charged = nullptr) {
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
    grow(sort_.bucket_start, nb + 2, "md::cluster_bucket_start");
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
      c_.par = decltype(c_.par)();
      copies_ = DevExecSpace().concurrency();
      c_.force = decltype(c_.force)("md::cluster_force", copies_, n);
    }
    kmd::cluster_bucket_atoms(x, ghost_side, nlocal, nall, g, sort_);
    const auto counts = kmd::cluster_sort_buckets(x, sort_, c_);
    c_.nlocal = counts.first;
    c_.nall = counts.second;
    int lower_begin = 0;  // the lower ghosts' bucket, last
    Kokkos::deep_copy(lower_begin, Kokkos::subview(sort_.bucket_start, nb));
    c_.nlower = nall - lower_begin;
    kmd::cluster_fill(x, type, sort_, c_);
    kmd::cluster_positions(x, c_);
    if (charged && charged->lj.extent(0) > 0) {
      if (c_.par.extent(0) < c_.atom.extent(0))
        c_.par = decltype(c_.par)("md::cluster_params", c_.atom.extent(0));
      kmd::cluster_fill_params(c_, type, charged->q, charged->lj);
    }
    grow(list_.start, c_.nlocal + 1, "md::cluster_row_start");
    grow(list_.count, c_.nlocal + 1, "md::cluster_row_count");
    grow(list_.unmasked, c_.nlocal + 1, "md::cluster_row_unmasked");
    for (;;) {  // rows of a fixed capacity, filled again if one was longer
      const std::size_t need = static_cast<std::size_t>(c_.nlocal) * capacity_;
      if (list_.j.extent(0) < need) {
        list_.j = decltype(list_.j)("md::cluster_j", need);
        list_.mask = decltype(list_.mask)("md::cluster_mask", need);
      }
      const int longest = kmd::cluster_fill_rows(
          c_, id, cutoff, capacity_, list_,
          charged ? charged->exclusions : kmd::ClusterExclusions{}, vector_bytes_);
      if (longest <= capacity_) break;
      capacity_ = longest + longest / 8 + 4;
    }
    pairs_ = sum_of_counts(list_.count, c_.nlocal);
  }

  /// SETS f(i, .) for every atom i < nall of the last build: the pair forces of the listed
  /// pairs at positions x (ghosts' rows hold the reactions their owners must add, zero for the
  /// lower ones). Returns the
  /// energy and virial of the listed pairs, zeros unless EnergyVirial.
  template <bool EnergyVirial, class Pair>
  kernels::md::PairResult forces(const Pair& pair, const Vectors& x, const Vectors& f) {
    namespace kmd = kernels::md;
    if (nall_ == 0) return {};
    return framed(x, f, [&] {
      return kmd::detail::with_uniform_form(pair, [&](const auto& p) {
        return kmd::detail::cluster_pair_forces<EnergyVirial>(kmd::detail::in_precision<T>(p), c_,
                                                              list_, copies_, vector_bytes_);
      });
    });
  }

  /// forces() for lj/cut/coul/long (and coul/long) with the LJ factors `f` of its tables: the
  /// last build must have been given the charges (build's `charged`), and the CPU AVX2 at least
  /// (coul_long_supported). van der Waals into energy, the real-space Coulomb term into coul.
  template <bool EnergyVirial>
  kernels::md::PairResult forces_coul_long(const kernels::md::LJCutCoulLong& pair,
                                           const LJFactors& lj, const Vectors& x,
                                           const Vectors& f) {
    namespace kmd = kernels::md;
    if (nall_ == 0) return {};
    if (!coul_long_supported())
      throw std::logic_error("ClusterPairs: the charged kernel needs AVX2 registers");
    kmd::CoulLongClusterForm<T> p;
    p.qqrd2e = T(pair.qqrd2e);
    p.g_ewald = T(pair.g_ewald);
    p.cut_coulsq = T(pair.cut_coulsq);
    p.cut_ljsq = T(lj.cutsq);
    p.o12 = T(lj.o12);
    p.o6 = T(lj.o6);
    return framed(x, f, [&] {
      return kmd::detail::cluster_coul_long_forces<EnergyVirial>(p, c_, list_, copies_,
                                                                 vector_bytes_);
    });
  }
  /// Whether this build and CPU run the charged kernel (AVX2 registers or wider).
  [[nodiscard]] bool coul_long_supported() const {
    return kernels::md::detail::cluster_coul_supported(vector_bytes_);
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
    if constexpr (kernels::md::is_charged_v<Pair>) return vector_bytes_;  // forces_coul_long
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
  /// A force kernel's frame: the clusters' positions from x, the threads' force copies zeroed,
  /// kernel() run, and f set from the copies. Returns kernel()'s result.
  template <class Kernel>
  kernels::md::PairResult framed(const Vectors& x, const Vectors& f, Kernel&& kernel) {
    kernels::md::cluster_positions(x, c_);
    Kokkos::deep_copy(Kokkos::subview(c_.force, std::make_pair(0, copies_),
                                      std::make_pair(0, c_.nall), Kokkos::ALL),
                      T(0));
    const kernels::md::PairResult r = kernel();
    kernels::md::cluster_forces_to_atoms(c_, sort_, f, copies_);
    return r;
  }

 public:
  /// Frees the clusters, the list and the sort's scratch (the next build makes them again).
  void release() {
    c_ = {};
    list_ = {};
    sort_ = {};
  }

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
