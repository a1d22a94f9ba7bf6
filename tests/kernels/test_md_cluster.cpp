// Cluster-pair lists and their force kernel (kernels/md/cluster.hpp,
// solvers/md/cluster_builder.hpp): the atom pairs the masks select are exactly those of a half list
// (every pair closer than the list cutoff with a local atom, once over all ranks: local pairs once,
// local-ghost pairs with the upper ghosts only), against brute force; the forces, once the ghosts'
// rows are added to their owners, and the energy and virial equal the full-list ones to 1e-12 in
// double, to the float's precision in mixed precision (1e-5 of the largest force, 1e-6 of the
// energy), with one type (the uniform form) and two (the tables). The np1 runs use two threads
// (per-thread force copies).
#include "stratus/kernels/md/lj_cut.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/cluster_builder.hpp"
#include "stratus/solvers/md/lj_tables.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace stratus::md_cluster_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;
using stratus::md::ClusterPairs;
using stratus::md::make_lj_cut;
using stratus::md::NeighborBuilder;

// The atom pairs (i, j) the masks of a cluster list select, each as often as it is selected.
template <class T>
std::multiset<std::pair<int, int>> selected_pairs(const ClusterPairs<T>& cp) {
  const auto& c = cp.clustered();
  const auto& l = cp.list();
  auto atom = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.atom);
  auto start = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l.start);
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l.count);
  auto unmasked = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l.unmasked);
  auto js = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l.j);
  auto ms = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), l.mask);
  std::multiset<std::pair<int, int>> out;
  for (int i = 0; i < c.nlocal; ++i) {
    for (int n = start(i); n < start(i) + count(i); ++n) {
      const int j = js(n);
      // Unmasked entries first: local clusters above i and upper ghosts' clusters (no
      // excluded pair here: every pair within the cutoff counts); then the masked one, i
      // itself. A local j is never below i.
      if (n < start(i) + unmasked(i)) {
        EXPECT_NE(j, i) << "row " << i;
      } else {
        EXPECT_EQ(j, i) << "row " << i;
      }
      if (j < c.nlocal) {
        EXPECT_GE(j, i);
      }
      EXPECT_NE(ms(n), 0) << "an empty mask is listed";
      for (int a = 0; a < kCluster; ++a)
        for (int b = 0; b < kCluster; ++b)
          if ((ms(n) >> (kCluster * a + b)) & 1u) {
            EXPECT_GE(atom(i, a), 0);
            EXPECT_GE(atom(j, b), 0);
            out.insert({atom(i, a), atom(j, b)});
          }
    }
  }
  return out;
}

// The pairs a half list must hold, by brute force: (i local, j local or ghost) closer than
// `cutoff`, a local pair once (under either atom), a local-ghost pair when the ghost is upper
// (add_periodic_ghosts: the first nonzero offset of its image positive).
std::multiset<std::pair<int, int>> expected_pairs(const HostAtoms& a, Real cutoff) {
  std::multiset<std::pair<int, int>> want;
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = 0; j < a.nall(); ++j) {
      if (j == i || (j < a.nlocal && j < i)) continue;
      Real r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
      if (r2 >= cutoff * cutoff) continue;
      if (j >= a.nlocal && (j >= int(a.side.size()) || a.side[j] != kGhostUpper)) continue;
      want.insert({i, j});
    }
  return want;
}

// Unordered view of local pairs: (i, j) and (j, i) for local atoms are the same pair.
std::multiset<std::pair<int, int>> canonical(const std::multiset<std::pair<int, int>>& s,
                                             int nlocal) {
  std::multiset<std::pair<int, int>> out;
  for (auto [i, j] : s)
    out.insert(j < nlocal && j < i ? std::make_pair(j, i) : std::make_pair(i, j));
  return out;
}

template <class T>
void check_pairs(const HostAtoms& a, Real cutoff) {
  ClusterPairs<T> cp;
  cp.build(to_device(a.x), to_device(a.id), to_device(a.type), sides_on_device(a), a.nlocal,
           a.nall(), cutoff);
  const auto got = canonical(selected_pairs(cp), a.nlocal);
  const auto want = expected_pairs(a, cutoff);
  // Float coordinates may move a pair within 1e-6 of the cutoff across it: none is that close
  // in these configurations, so the sets must be equal.
  EXPECT_EQ(got, want) << "cutoff " << cutoff << ", " << a.nlocal << " local atoms, "
                       << a.nall() - a.nlocal << " ghosts";
  EXPECT_EQ(cp.cluster_pairs() > 0, !want.empty());
}

// An fcc block of `cells`^3 unit cells at the in.lj density, each coordinate moved by up to
// +-`jitter`, with periodic ghosts within `ghost_cut`.
HostAtoms jittered_fcc(int cells, Real jitter, unsigned seed, Real ghost_cut) {
  const Real lat = std::cbrt(4 / 0.8442);
  auto f = fcc_block(cells, lat);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<Real> u(-jitter, jitter);
  for (auto& x : f.x)
    for (int d = 0; d < 3; ++d) x[d] += u(gen);
  add_periodic_ghosts(f, cells * lat, ghost_cut);
  return f;
}

TEST(MdCluster, MasksSelectTheHalfListPairs) {
  auto r = random_atoms(700, 9.0, 2, 41);
  add_periodic_ghosts(r, 9.0, 2.8);
  check_pairs<double>(r, 2.8);
  check_pairs<float>(r, 2.8);
  auto f = jittered_fcc(4, 0.05, 42, 2.8);
  check_pairs<double>(f, 2.8);
  check_pairs<float>(f, 2.8);
  HostAtoms empty;
  check_pairs<double>(empty, 2.5);
  auto ghosts_only = random_atoms(20, 3.0, 1, 43);
  ghosts_only.nlocal = 0;
  check_pairs<float>(ghosts_only, 1.0);
  auto sparse = random_atoms(30, 20.0, 1, 44);  // more columns than atoms: wider columns
  check_pairs<double>(sparse, 3.0);
}

// Rows longer than the first capacity are filled again: a dense box after a sparse one.
TEST(MdCluster, RowsGrow) {
  ClusterPairs<double> cp;
  const auto sparse = random_atoms(50, 10.0, 1, 45);
  cp.build(to_device(sparse.x), to_device(sparse.id), to_device(sparse.type),
           sides_on_device(sparse), 50, 50, 1.0);
  auto dense = random_atoms(900, 5.0, 1, 46);
  add_periodic_ghosts(dense, 5.0, 2.0);
  check_pairs<double>(dense, 2.0);
}

// Float rows tested 16 lanes at a time (AVX-512) are the rows of the 4-lane test, entry for entry:
// the same clusters in the same order with the same masks. The second box has rows with more
// candidates than the wide path gathers (kRowCandidates): those rows take the 4-lane path.
TEST(MdCluster, WideRowsEqualNarrowRows) {
#if defined(STRATUS_CLUSTER_WIDE)
  if (detail::cluster_vector_bytes() < 64) GTEST_SKIP() << "no AVX-512 on this CPU";
  auto liquid = jittered_fcc(5, 0.2, 48, 2.8);
  auto dense = random_atoms(900, 5.0, 1, 49);
  add_periodic_ghosts(dense, 5.0, 4.0);
  for (const auto& [a, cutoff, long_rows] :
       {std::tuple{liquid, 2.8, false}, std::tuple{dense, 4.0, true}}) {
    const auto x = to_device(a.x);
    const auto id = to_device(a.id);
    const auto type = to_device(a.type);
    ClusterPairs<float> narrow, wide;
    narrow.limit_vector_bytes(16);
    narrow.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), cutoff);
    wide.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), cutoff);
    ASSERT_EQ(wide.vector_bytes(), 64);
    const auto host = [](const auto& v) {
      return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
    };
    const auto& ln = narrow.list();
    const auto& lw = wide.list();
    const auto sn = host(ln.start), sw = host(lw.start), cn = host(ln.count), cw = host(lw.count);
    const auto un = host(ln.unmasked), uw = host(lw.unmasked);
    const auto jn = host(ln.j), jw = host(lw.j);
    const auto mn = host(ln.mask), mw = host(lw.mask);
    const int nclusters = narrow.clustered().nlocal;
    ASSERT_EQ(wide.clustered().nlocal, nclusters);
    int longest_search = 0;
    for (int i = 0; i < nclusters; ++i) {
      ASSERT_EQ(cw(i), cn(i)) << "row " << i;
      ASSERT_EQ(uw(i), un(i)) << "row " << i;
      for (int k = 0; k < cn(i); ++k) {
        ASSERT_EQ(jw(sw(i) + k), jn(sn(i) + k)) << "row " << i << " entry " << k;
        ASSERT_EQ(mw(sw(i) + k), mn(sn(i) + k)) << "row " << i << " entry " << k;
      }
      int candidates = 0;
      for_each_cluster_near(wide.clustered(), cutoff, i, [&](int) { ++candidates; });
      longest_search = std::max(longest_search, candidates);
    }
    EXPECT_EQ(longest_search > detail::kRowCandidates, long_rows)
        << "the longest search has " << longest_search << " candidates";
    EXPECT_GT(wide.cluster_pairs(), 0);
  }
#else
  GTEST_SKIP() << "no 16-lane row fill in this build (not x86-64 GCC or Clang)";
#endif
}

// The ghosts' rows added to the local atom of the same id (AtomExchange::reverse_forces).
std::vector<Vec3> fold_ghosts(const HostAtoms& a, const Vectors& f) {
  auto all = to_host(f, a.nall());
  std::vector<Vec3> out(all.begin(), all.begin() + a.nlocal);
  for (int g = a.nlocal; g < a.nall(); ++g) {
    const auto owner = std::find(a.id.begin(), a.id.begin() + a.nlocal, a.id[g]);
    if (owner == a.id.begin() + a.nlocal) continue;
    for (int d = 0; d < 3; ++d) out[owner - a.id.begin()][d] += all[g][d];
  }
  return out;
}

// Cluster forces (compute type T) against the full list's on one configuration.
template <class T>
void compare_with_full(const HostAtoms& a, Real list_cutoff, const LJCut& pair, Real force_tol,
                       Real energy_tol, int vector_bytes = 64) {
  const auto x = to_device(a.x);
  const auto id = to_device(a.id);
  const auto type = to_device(a.type);
  NeighborBuilder builder;
  NeighborList full;
  builder.build(x, id, a.nlocal, a.nall(), list_cutoff, full);
  Vectors ff("ff", a.nall()), fc("fc", a.nall()), fc0("fc0", a.nall());
  const PairResult rf = compute_pair_forces(pair, x, type, a.nlocal, full, ff);
  ClusterPairs<T> cp;
  cp.limit_vector_bytes(vector_bytes);
  cp.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), list_cutoff);
  Kokkos::deep_copy(fc, 7.0);  // the kernel must set every row itself, ghosts included
  const PairResult rc = cp.template forces<true>(pair, x, fc);
  const PairResult rc0 = cp.template forces<false>(pair, x, fc0);
  const auto hf = to_host(ff, a.nlocal), hc = fold_ghosts(a, fc);
  Real fmax = 0;
  for (const auto& v : hf)
    for (int d = 0; d < 3; ++d) fmax = std::max(fmax, std::fabs(v[d]));
  ASSERT_GT(fmax, 0.1);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d)
      ASSERT_NEAR(hc[i][d], hf[i][d], force_tol * fmax) << "atom " << i << " dim " << d;
  EXPECT_NEAR(rc.energy, rf.energy, energy_tol * std::fabs(rf.energy));
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(rc.virial[d], rf.virial[d], energy_tol * std::fabs(rf.virial[d])) << "W_aa " << d;
    EXPECT_EQ(rc0.virial[d], 0);
  }
  EXPECT_EQ(rc0.energy, 0);
  const auto hc0 = fold_ghosts(a, fc0);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d) ASSERT_NEAR(hc0[i][d], hc[i][d], force_tol * fmax);
}

TEST(MdCluster, ForcesEqualFullListTwoTypes) {
  const auto pair =
      make_lj_cut(2, {1.0, 0.7, 0.7, 1.3}, {1.0, 1.2, 1.2, 0.9}, {2.5, 3.0, 3.0, 2.2}, true);
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(5, lat);
  std::mt19937_64 gen(47);
  std::uniform_real_distribution<Real> u(-0.05, 0.05);
  for (int i = 0; i < a.nlocal; ++i) {
    a.type[i] = static_cast<int>(gen() % 2);
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  }
  add_periodic_ghosts(a, 5 * lat, 3.3);
  compare_with_full<double>(a, 3.3, pair, 1e-12, 1e-12);
  compare_with_full<float>(a, 3.3, pair, 1e-5, 1e-6);
}

TEST(MdCluster, ForcesEqualFullListOneType) {
  const auto pair = make_lj_cut(1, {1.0}, {1.0}, {2.5}, false);
  ASSERT_TRUE(uniform_form(pair).has_value());
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(6, lat);
  std::mt19937_64 gen(48);
  std::uniform_real_distribution<Real> u(-0.05, 0.05);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  add_periodic_ghosts(a, 6 * lat, 2.8);
  compare_with_full<double>(a, 2.8, pair, 1e-12, 1e-12);
  // The float kernel in every register width this CPU has (16 bytes always; 32 with AVX2, 64
  // with AVX-512: the widths it does not have fall back to the next one down).
  for (const int bytes : {16, 32, 64}) {
    SCOPED_TRACE("vector bytes " + std::to_string(bytes));
    compare_with_full<float>(a, 2.8, pair, 1e-5, 1e-6, bytes);
  }
  ClusterPairs<float> probe;
  std::printf("float cluster kernel: up to %d-byte registers on this CPU\n", probe.vector_bytes());
}

// The charged kernel (lj/cut/coul/long, kernels/md/cluster_coul.hpp) against the full list's
// lj/cut/coul/long: two types whose 1-2 coefficients are the geometric means (so the LJ factors
// exist), random charges, in each register width this CPU has (32 bytes: AVX2, 64: AVX-512);
// forces to 1e-12 of the largest in double and 2e-5 in float, energies (van der Waals and
// Coulomb apart) and the virial to 1e-12 and 1e-5. Without AVX2 the kernel does not exist and
// the test says so.
TEST(MdCluster, ChargedForcesEqualFullList) {
  LJCutCoulLong pair;
  pair.lj = make_lj_cut(2, {1.0, std::sqrt(0.5), std::sqrt(0.5), 0.5},
                        {1.0, std::sqrt(1.2), std::sqrt(1.2), 1.2}, {2.5, 2.5, 2.5, 2.5}, false);
  pair.qqrd2e = 1.5;
  pair.cut_coulsq = 2.5 * 2.5;
  pair.g_ewald = 1.1;
  const auto factors = stratus::md::lj_factors(pair.lj);
  ASSERT_TRUE(factors.has_value());
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(5, lat);
  std::mt19937_64 gen(49);
  std::uniform_real_distribution<Real> u(-0.05, 0.05), uq(-1.0, 1.0);
  std::vector<Real> charge;
  for (int i = 0; i < a.nlocal; ++i) {
    a.type[i] = static_cast<int>(gen() % 2);
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  }
  add_periodic_ghosts(a, 5 * lat, 2.8);
  for (int i = 0; i < a.nall(); ++i) {
    // A ghost carries the charge of its owner (the same id).
    const auto owner = std::find(a.id.begin(), a.id.begin() + a.nlocal, a.id[i]) - a.id.begin();
    charge.push_back(owner < i ? charge[static_cast<std::size_t>(owner)] : uq(gen));
  }
  const auto x = to_device(a.x);
  const auto id = to_device(a.id);
  const auto type = to_device(a.type);
  const auto q = to_device_1d<Charges>(charge);
  NeighborBuilder builder;
  NeighborList full;
  builder.build(x, id, a.nlocal, a.nall(), 2.8, full);
  Vectors ff("ff", a.nall());
  const PairResult rf = compute_pair_forces(pair, x, type, a.nlocal, full, ff, q);
  const auto hf = to_host(ff, a.nlocal);
  Real fmax = 0;
  for (const auto& v : hf)
    for (int d = 0; d < 3; ++d) fmax = std::max(fmax, std::fabs(v[d]));
  ASSERT_GT(fmax, 0.1);
  const stratus::md::ClusterCharges extra{q, factors->factor, {}};
  const auto check = [&](auto cp, Real force_tol, Real energy_tol, int bytes) {
    SCOPED_TRACE("vector bytes " + std::to_string(bytes) + ", " +
                 std::to_string(sizeof(cp.clustered().xq(0, 0, 0))) + "-byte numbers");
    cp.limit_vector_bytes(bytes);
    if (!cp.coul_long_supported()) {
      std::printf("no AVX2 here: the charged cluster kernel does not run\n");
      return;
    }
    cp.build(x, id, type, sides_on_device(a), a.nlocal, a.nall(), 2.8, &extra);
    Vectors fc("fc", a.nall()), fc0("fc0", a.nall());
    Kokkos::deep_copy(fc, 7.0);  // every row set by the kernel
    const PairResult rc = cp.template forces_coul_long<true>(pair, *factors, x, fc);
    cp.template forces_coul_long<false>(pair, *factors, x, fc0);  // forces only
    const auto hc = fold_ghosts(a, fc), hc0 = fold_ghosts(a, fc0);
    for (int i = 0; i < a.nlocal; ++i)
      for (int d = 0; d < 3; ++d) {
        ASSERT_NEAR(hc[i][d], hf[i][d], force_tol * fmax) << "atom " << i << " dim " << d;
        ASSERT_EQ(hc0[i][d], hc[i][d]) << "forces differ without the energy, atom " << i;
      }
    EXPECT_NEAR(rc.energy, rf.energy, energy_tol * std::fabs(rf.energy));
    EXPECT_NEAR(rc.coul, rf.coul, energy_tol * std::fabs(rf.coul));
    for (int d = 0; d < 3; ++d)
      EXPECT_NEAR(rc.virial[d], rf.virial[d], energy_tol * std::fabs(rf.virial[d])) << d;
  };
  for (const int bytes : {32, 64}) {
    check(ClusterPairs<double>{}, 1e-12, 1e-12, bytes);
    check(ClusterPairs<float>{}, 2e-5, 1e-5, bytes);
  }
}

}  // namespace stratus::md_cluster_test
