// Half neighbour lists and the half-list force kernel: every pair with a local atom listed
// exactly once (a local pair under the atom local_pair_is_mine picks, a ghost when it is upper),
// against brute force; half-mode forces, once
// the ghosts' rows are added to their owners (what AtomExchange::reverse_forces does across
// ranks), and energy and virial equal the full-list ones on random and lattice configurations
// with two types; the forces on all rows sum to zero (each pair's action and reaction);
// EnergyVirial = false leaves forces unchanged. The np1 runs use two threads (races).
#include "stratus/kernels/md/lj_cut.hpp"
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/lj_tables.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace stratus::md_half_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;
using stratus::md::lj_tail_correction;
using stratus::md::make_lj_cut;
using stratus::md::NeighborBuilder;

const std::vector<Real> eps2{1.0, 0.7, 0.7, 1.3};
const std::vector<Real> sig2{1.0, 1.2, 1.2, 0.9};
const std::vector<Real> cut2{2.5, 3.0, 3.0, 2.2};

// The device lists, on the host.
std::vector<std::vector<int>> lists_on_host(const NeighborList& list) {
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.count);
  auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.first);
  auto entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.entries);
  std::vector<std::vector<int>> out(list.nlocal);
  for (int i = 0; i < list.nlocal; ++i)
    for (int k = 0; k < count(i); ++k) out[i].push_back(entries(first(i) + k));
  return out;
}

// Checks a half list against brute force: every pair (i local, j local or ghost) closer than
// the cutoff exactly once, listed under i when j is local and local_pair_is_mine(i, j) or j is
// an upper ghost, nothing else.
void check_half(const HostAtoms& a, Real cutoff) {
  NeighborBuilder builder;
  NeighborList list;
  builder.build_half(to_device(a.x), sides_on_device(a), a.nlocal, a.nall(), cutoff, list);
  ASSERT_EQ(list.nlocal, a.nlocal);
  std::multiset<std::pair<int, int>> got, want;
  const auto lists = lists_on_host(list);
  for (int i = 0; i < a.nlocal; ++i)
    for (int j : lists[i]) got.insert({i, j});
  for (int i = 0; i < a.nlocal; ++i)
    for (int j = 0; j < a.nall(); ++j) {
      Real r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
      const bool mine = j < a.nlocal ? local_pair_is_mine(i, j)
                                     : j < int(a.side.size()) && a.side[j] == kGhostUpper;
      if (r2 < cutoff * cutoff && mine) want.insert({i, j});
    }
  EXPECT_EQ(got, want);
  // Rows never overlap; on host back-ends they are compact (room for the neighbours and a
  // sixteenth more, the builder's margin).
  auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.first);
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.count);
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t total = 0;
  for (int i = 0; i < a.nlocal; ++i) {
    spans.emplace_back(first(i), first(i) + count(i));
    total += count(i);
  }
  std::sort(spans.begin(), spans.end());
  for (std::size_t k = 1; k < spans.size(); ++k) EXPECT_LE(spans[k - 1].second, spans[k].first);
  if (!spans.empty()) {
    EXPECT_LE(spans.back().second, static_cast<std::int64_t>(list.entries.extent(0)));
  }
  if (NeighborBuilder::kCompactHalfRows && a.nlocal > 0) {
    EXPECT_LE(static_cast<std::int64_t>(list.entries.extent(0)), total + total / 16 + 64);
  }
  int longest = 0;
  for (const auto& l : lists) longest = std::max(longest, static_cast<int>(l.size()));
  EXPECT_EQ(list.max_count(), longest);
}

TEST(MdHalf, HalfListMatchesBruteForce) {
  auto r = random_atoms(700, 9.0, 2, 21);
  add_periodic_ghosts(r, 9.0, 2.8);
  check_half(r, 2.8);
  const Real lat = std::cbrt(4 / 0.8442);
  auto f = fcc_block(4, lat);
  add_periodic_ghosts(f, 4 * lat, 2.8);
  check_half(f, 2.8);
  check_half(f, lat);                         // second shell exactly at the cutoff: excluded
  auto small = random_atoms(40, 3.0, 1, 22);  // box < 2 cutoff: several images of one atom
  add_periodic_ghosts(small, 3.0, 2.0);
  check_half(small, 2.0);
  HostAtoms empty;
  check_half(empty, 2.5);
  auto ghosts_only = random_atoms(20, 3.0, 1, 23);
  ghosts_only.nlocal = 0;
  check_half(ghosts_only, 1.0);
}

// The GPU form (rows of a fixed stride, kernels::md::fill_half_rows) lists what the builder's
// list lists, row by row in the same order.
TEST(MdHalf, FixedStrideRowsEqualBuilderRows) {
  auto a = random_atoms(600, 8.0, 1, 31);
  add_periodic_ghosts(a, 8.0, 2.5);
  const auto x = to_device(a.x);
  NeighborBuilder builder;
  NeighborList built;
  builder.build_half(x, sides_on_device(a), a.nlocal, a.nall(), 2.5, built);
  NeighborList fixed;
  fixed.nlocal = a.nlocal;
  fixed.nall = a.nall();
  fixed.width = built.width;
  fixed.count = Kokkos::View<int*, DevMemSpace>("count", a.nlocal);
  fixed.first = Kokkos::View<std::int64_t*, DevMemSpace>("first", a.nlocal);
  fixed.entries = Kokkos::View<int*, DevMemSpace>("entries", a.nlocal * built.width);
  fill_half_rows(x, a.nlocal, 2.5 * 2.5, builder.binned(), fixed);
  EXPECT_EQ(lists_on_host(fixed), lists_on_host(built));
  auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fixed.first);
  for (int i = 0; i < a.nlocal; ++i) EXPECT_EQ(first(i), std::int64_t{i} * built.width);
}

TEST(MdHalf, HalfListGrowsRows) {
  NeighborBuilder builder;
  NeighborList list;
  const auto sparse = random_atoms(50, 10.0, 1, 24);
  builder.build_half(to_device(sparse.x), sides_on_device(sparse), 50, 50, 1.0, list);
  const int width = list.width;
  auto dense = random_atoms(800, 5.0, 1, 25);
  add_periodic_ghosts(dense, 5.0, 1.6);
  check_half(dense, 1.6);
  builder.build_half(to_device(dense.x), sides_on_device(dense), dense.nlocal, dense.nall(), 1.6,
                     list);
  EXPECT_GT(list.width, width);
  EXPECT_GE(list.width, list.max_count());
}

// The forces of rows [0, nall) with each ghost's row added to the local atom of the same id
// (the local atoms have distinct ids), as AtomExchange::reverse_forces does.
std::vector<Vec3> fold_ghosts(const HostAtoms& a, const Vectors& f) {
  auto all = to_host(f, a.nall());
  std::vector<Vec3> out(all.begin(), all.begin() + a.nlocal);
  for (int g = a.nlocal; g < a.nall(); ++g) {
    const auto owner = std::find(a.id.begin(), a.id.begin() + a.nlocal, a.id[g]);
    EXPECT_NE(owner, a.id.begin() + a.nlocal) << "ghost " << g << " has no owner";
    if (owner == a.id.begin() + a.nlocal) continue;
    for (int d = 0; d < 3; ++d) out[owner - a.id.begin()][d] += all[g][d];
  }
  return out;
}

// Full and half modes on one configuration: forces to 1e-12 relative (to the largest force),
// energy and virial to 1e-12 relative; the half-mode rows sum to zero; EnergyVirial = false
// gives bitwise the same forces.
void compare_modes(HostAtoms a, Real list_cutoff, const LJCut& pair) {
  const auto x = to_device(a.x);
  const auto id = to_device(a.id);
  const auto type = to_device(a.type);
  NeighborBuilder builder;
  NeighborList full, half;
  builder.build(x, id, a.nlocal, a.nall(), list_cutoff, full);
  builder.build_half(x, sides_on_device(a), a.nlocal, a.nall(), list_cutoff, half);
  Vectors ff("ff", a.nall()), fh("fh", a.nall()), fh0("fh0", a.nall()), ff0("ff0", a.nall());
  Kokkos::deep_copy(fh, 7.0);  // the half kernel must zero every row itself, ghosts included
  const PairResult rf = compute_pair_forces(pair, x, type, a.nlocal, full, ff);
  const PairResult rh = compute_pair_forces_half(pair, x, type, a.nlocal, half, fh);
  const PairResult rf0 = compute_pair_forces<LJCut, false>(pair, x, type, a.nlocal, full, ff0);
  const PairResult rh0 = compute_pair_forces_half<LJCut, false>(pair, x, type, a.nlocal, half, fh0);
  const auto hf = to_host(ff, a.nlocal), hh = fold_ghosts(a, fh);
  Real fmax = 0;
  for (const auto& v : hf)
    for (int d = 0; d < 3; ++d) fmax = std::max(fmax, std::fabs(v[d]));
  ASSERT_GT(fmax, 0.1);  // forces are not trivially zero
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d)
      ASSERT_NEAR(hh[i][d], hf[i][d], 1e-12 * fmax) << "atom " << i << " dim " << d;
  EXPECT_NEAR(rh.energy, rf.energy, 1e-12 * std::fabs(rf.energy));
  for (int d = 0; d < 3; ++d)
    EXPECT_NEAR(rh.virial[d], rf.virial[d], 1e-12 * std::fabs(rf.virial[d])) << "W_aa, a = " << d;
  EXPECT_EQ(to_host(ff0, a.nlocal), hf);  // forces only: bitwise identical
  const auto hh0 = fold_ghosts(a, fh0);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d) ASSERT_NEAR(hh0[i][d], hh[i][d], 1e-12 * fmax);
  EXPECT_EQ(rf0.energy, 0);
  EXPECT_EQ(rh0.energy, 0);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(rf0.virial[d], 0);
    EXPECT_EQ(rh0.virial[d], 0);
  }
  // Every pair adds f_ij to one row and -f_ij to another: all rows, ghosts included, sum to 0.
  const auto rows = to_host(fh, a.nall());
  for (int d = 0; d < 3; ++d) {
    Real sum = 0;
    for (const auto& r : rows) sum += r[d];
    EXPECT_NEAR(sum, 0, 1e-11 * fmax * a.nall()) << "dim " << d;
  }
}

// A random configuration of two types with no two atoms closer than rmin, in [0, box)^3.
HostAtoms spread_atoms(int n, Real box, Real rmin, unsigned seed) {
  auto a = random_atoms(4 * n, box, 2, seed);
  HostAtoms b;
  for (int i = 0; i < a.nall() && b.nall() < n; ++i) {
    bool ok = true;
    for (const auto& q : b.x) {
      Real r2 = 0;
      for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - q[d]) * (a.x[i][d] - q[d]);
      ok = ok && r2 > rmin * rmin;
    }
    if (!ok) continue;
    b.x.push_back(a.x[i]);
    b.type.push_back(a.type[i]);
    b.id.push_back(a.id[i]);
  }
  b.nlocal = b.nall();
  return b;
}

TEST(MdHalf, HalfForcesEqualFullRandomTwoTypes) {
  const auto pair = make_lj_cut(2, eps2, sig2, cut2, true);
  auto a = spread_atoms(400, 8.0, 0.8, 31);
  ASSERT_GT(a.nlocal, 300);
  add_periodic_ghosts(a, 8.0, 3.3);
  compare_modes(a, 3.3, pair);
  auto plain = make_lj_cut(2, eps2, sig2, cut2, false);
  compare_modes(a, 3.3, plain);
}

TEST(MdHalf, HalfForcesEqualFullLatticeTwoTypes) {
  const auto pair = make_lj_cut(2, eps2, sig2, cut2, false);
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(5, lat);
  std::mt19937_64 gen(32);
  std::uniform_real_distribution<Real> u(-0.05, 0.05);
  for (int i = 0; i < a.nlocal; ++i) {  // thermal-like noise, so forces do not cancel
    a.type[i] = static_cast<int>(gen() % 2);
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  }
  add_periodic_ghosts(a, 5 * lat, 3.3);
  compare_modes(a, 3.3, pair);
}

TEST(MdHalf, OneTypeFastPathMatchesTables) {
  // ntypes == 1 takes LJCut's uniform form; an equal 2-type table with all atoms of type 0
  // takes the table path: forces, energy and virial must agree.
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(5, lat);
  std::mt19937_64 gen(33);
  std::uniform_real_distribution<Real> u(-0.05, 0.05);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  add_periodic_ghosts(a, 5 * lat, 2.8);
  const auto one = make_lj_cut(1, {1.0}, {1.0}, {2.5}, true);
  const auto two =
      make_lj_cut(2, {1.0, 1.0, 1.0, 1.0}, {1.0, 1.0, 1.0, 1.0}, {2.5, 2.5, 2.5, 2.5}, true);
  ASSERT_TRUE(uniform_form(one).has_value());
  ASSERT_FALSE(uniform_form(two).has_value());
  compare_modes(a, 2.8, one);
  const auto x = to_device(a.x);
  const auto type = to_device(a.type);
  NeighborBuilder builder;
  NeighborList full;
  builder.build(x, to_device(a.id), a.nlocal, a.nall(), 2.8, full);
  Vectors f1("f1", a.nall()), f2("f2", a.nall());
  const PairResult r1 = compute_pair_forces(one, x, type, a.nlocal, full, f1);
  const PairResult r2 = compute_pair_forces(two, x, type, a.nlocal, full, f2);
  EXPECT_EQ(to_host(f1, a.nlocal), to_host(f2, a.nlocal));
  EXPECT_EQ(r1.energy, r2.energy);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(r1.virial[d], r2.virial[d]);
}

// The forms of a row (batched on host threads, in SSE2 or, where the CPU has it, AVX2
// registers; one neighbour at a time on GPUs) do the same operations in the same order: bitwise
// equal forces, energy and virial, with and without the reactions, for the one-type fast path
// and the tables. Run here on whatever the back-end is, one work item walking every row (no
// races), so the GPU form is checked on CPUs too.
template <class Pair>
void compare_row_forms(const HostAtoms& a, const Pair& pair) {
  const auto x = to_device(a.x);
  const auto type = to_device(a.type);
  NeighborBuilder builder;
  NeighborList list;
  builder.build_half(x, sides_on_device(a), a.nlocal, a.nall(), 2.8, list);
  const NeighborList rows = list;
  const int nlocal = a.nlocal;
  Vectors fb("batched", a.nall()), fo("one_at_a_time", a.nall()), fw("avx2", a.nall());
  // fx, fy, fz, e, W_xx, W_yy, W_zz per form
  Kokkos::View<Real* [7], DevMemSpace> sums("sums", a.nall());
  Kokkos::View<Real* [7], DevMemSpace> sums_one("sums_one", a.nall());
  Kokkos::View<Real* [7], DevMemSpace> sums_wide("sums_wide", a.nall());
  const bool wide = host_vector_bytes() >= 32 &&
                    Kokkos::SpaceAccessibility<DevExecSpace, Kokkos::HostSpace>::accessible;
  Kokkos::parallel_for(
      "test::row_forms", Kokkos::RangePolicy<DevExecSpace>(0, 1), KOKKOS_LAMBDA(const int) {
        for (int i = 0; i < nlocal; ++i) {
          const detail::RowSums b = detail::pair_row_batched<true, true>(
              pair, x, type, Charges(), i, rows.count(i), rows.row(i), fb);
          const detail::RowSums o = detail::pair_row<true, true>(pair, x, type, Charges(), i,
                                                                 rows.count(i), rows.row(i), fo);
          const Real vb[7] = {b.fx, b.fy, b.fz, b.energy, b.virial[0], b.virial[1], b.virial[2]};
          const Real vo[7] = {o.fx, o.fy, o.fz, o.energy, o.virial[0], o.virial[1], o.virial[2]};
          for (int d = 0; d < 7; ++d) {
            sums(i, d) = vb[d];
            sums_one(i, d) = vo[d];
          }
#if defined(STRATUS_HOST_AVX2)
          if (wide) {
            const detail::RowSums w = detail::pair_row_avx2<true, true>(
                pair, x, type, Charges(), i, rows.count(i), rows.row(i), fw);
            const Real vw[7] = {w.fx, w.fy, w.fz, w.energy, w.virial[0], w.virial[1], w.virial[2]};
            for (int d = 0; d < 7; ++d) sums_wide(i, d) = vw[d];
          }
#endif
        }
      });
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums_one);
  int nonzero = 0;
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 7; ++d) {
      ASSERT_EQ(hb(i, d), ho(i, d)) << "atom " << i << " component " << d;
      nonzero += hb(i, d) != 0;
    }
  EXPECT_GT(nonzero, a.nlocal);                             // the rows did something
  EXPECT_EQ(to_host(fb, a.nall()), to_host(fo, a.nall()));  // the reactions
  if (!wide) return;
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums_wide);
  for (int i = 0; i < a.nlocal; ++i)
    for (int d = 0; d < 7; ++d)
      ASSERT_EQ(hw(i, d), ho(i, d)) << "AVX2 row, atom " << i << ", " << d;
  EXPECT_EQ(to_host(fw, a.nall()), to_host(fo, a.nall()));  // the reactions
}

TEST(MdHalf, BatchedAndOneAtATimeRowsAreBitwiseEqual) {
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(4, lat);
  std::mt19937_64 gen(34);
  std::uniform_real_distribution<Real> u(-0.08, 0.08);
  for (int i = 0; i < a.nlocal; ++i) {
    a.type[i] = static_cast<int>(gen() % 2);
    for (int d = 0; d < 3; ++d) a.x[i][d] += u(gen);
  }
  add_periodic_ghosts(a, 4 * lat, 2.8);
  compare_row_forms(a, make_lj_cut(2, eps2, sig2, cut2, true));
  compare_row_forms(a, *uniform_form(make_lj_cut(1, {1.0}, {1.0}, {2.5}, true)));
}

}  // namespace stratus::md_half_test
