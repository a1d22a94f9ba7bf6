// Neighbour lists: exactly the pairs an O(N^2) host search finds, in the documented order
// (global id, then coordinates), on random and lattice configurations with periodic ghost
// images, plus the growth path, empty systems and the displacement check.
#include "stratus/kernels/md/neighbor.hpp"
#include "stratus/solvers/md/neighbor_builder.hpp"
#include "test_md_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace stratus::md_neighbor_test {

using namespace stratus::kernels::md;
using namespace stratus::md_test;
using stratus::md::NeighborBuilder;
using stratus::md::snapshot_positions;

// The expected list of atom i: brute-force search, sorted by (id, x, y, z, index).
std::vector<int> brute_force(const HostAtoms& a, int i, Real cutoff) {
  std::vector<int> out;
  for (int j = 0; j < a.nall(); ++j) {
    Real r2 = 0;
    for (int d = 0; d < 3; ++d) r2 += (a.x[i][d] - a.x[j][d]) * (a.x[i][d] - a.x[j][d]);
    if (j != i && r2 < cutoff * cutoff) out.push_back(j);
  }
  auto key = [&](int j) { return std::make_tuple(a.id[j], a.x[j][0], a.x[j][1], a.x[j][2], j); };
  std::sort(out.begin(), out.end(), [&](int p, int q) { return key(p) < key(q); });
  return out;
}

// The device list of every local atom, on the host.
std::vector<std::vector<int>> lists_on_host(const NeighborList& list) {
  auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.count);
  auto first = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.first);
  auto entries = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list.entries);
  std::vector<std::vector<int>> out(list.nlocal);
  for (int i = 0; i < list.nlocal; ++i)
    for (int k = 0; k < count(i); ++k) out[i].push_back(entries(first(i) + k));
  return out;
}

// Builds with `builder` into `list` and checks every local list against brute force.
void check(const HostAtoms& a, Real cutoff, NeighborBuilder& builder, NeighborList& list) {
  const auto x = to_device(a.x);
  const auto id = to_device(a.id);
  builder.build(x, id, a.nlocal, a.nall(), cutoff, list);
  ASSERT_EQ(list.nlocal, a.nlocal);
  const auto got = lists_on_host(list);
  int longest = 0;
  for (int i = 0; i < a.nlocal; ++i) {
    ASSERT_EQ(got[i], brute_force(a, i, cutoff)) << "atom " << i;
    longest = std::max(longest, static_cast<int>(got[i].size()));
  }
  EXPECT_EQ(list.max_count(), longest);
  EXPECT_GE(list.width, longest);
}

void check(const HostAtoms& a, Real cutoff) {
  NeighborBuilder builder;
  NeighborList list;
  check(a, cutoff, builder, list);
}

TEST(MdNeighbor, RandomWithPeriodicGhosts) {
  auto a = random_atoms(700, 9.0, 2, 1);
  add_periodic_ghosts(a, 9.0, 2.8);
  ASSERT_GT(a.nall(), 2 * a.nlocal);
  check(a, 2.8);
}

TEST(MdNeighbor, FccLatticeWithGhosts) {
  // in.lj lattice: many pairs sit at exactly equal distances, some bins line up with the cutoff.
  const Real lat = std::cbrt(4 / 0.8442);
  auto a = fcc_block(4, lat);
  add_periodic_ghosts(a, 4 * lat, 2.8);
  check(a, 2.8);
  check(a, lat);  // second-neighbour shell at exactly the cutoff: excluded (strict <)
}

TEST(MdNeighbor, CubicLatticeAllLocalBinsAtCutoff) {
  // nall == nlocal; extent 7 / cutoff 1.75 = 4 bins of exactly the cutoff.
  HostAtoms a;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) {
        a.x.push_back({Real(i), Real(j), Real(k)});
        a.type.push_back(0);
        a.id.push_back(1000 - static_cast<GlobalId>(a.x.size()));  // ids against the order
      }
  a.nlocal = a.nall();
  check(a, 1.75);
  check(a, std::sqrt(3.0));  // body diagonal exactly at the cutoff
}

TEST(MdNeighbor, RepeatedIdsOrderedByCoordinates) {
  // Box 3 < 2 * cutoff: images of one atom appear several times in a list (same id).
  auto a = random_atoms(40, 3.0, 1, 2);
  add_periodic_ghosts(a, 3.0, 2.0);
  check(a, 2.0);
  // Exact duplicates (same id, same place) are allowed too.
  auto b = random_atoms(30, 4.0, 1, 3);
  for (int i = 0; i < 30; ++i) {
    b.x.push_back(b.x[i]);
    b.id.push_back(b.id[i]);
    b.type.push_back(b.type[i]);
  }
  check(b, 1.5);
}

TEST(MdNeighbor, OrderDoesNotDependOnStorageOrder) {
  // Permuting local atoms gives, per id, the same sequence of neighbour (id, x).
  const auto a = random_atoms(300, 6.0, 1, 4);
  std::vector<int> perm(a.nlocal);
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  HostAtoms b = a;
  for (int i = 0; i < a.nlocal; ++i) {
    b.x[i] = a.x[perm[i]];
    b.id[i] = a.id[perm[i]];
  }
  NeighborBuilder builder;
  NeighborList la, lb;
  builder.build(to_device(a.x), to_device(a.id), a.nlocal, a.nall(), 1.7, la);
  const auto ga = lists_on_host(la);
  builder.build(to_device(b.x), to_device(b.id), b.nlocal, b.nall(), 1.7, lb);
  const auto gb = lists_on_host(lb);
  for (int i = 0; i < a.nlocal; ++i) {
    ASSERT_EQ(ga[perm[i]].size(), gb[i].size());
    for (std::size_t k = 0; k < gb[i].size(); ++k) {
      EXPECT_EQ(a.id[ga[perm[i]][k]], b.id[gb[i][k]]);
      EXPECT_EQ(a.x[ga[perm[i]][k]], b.x[gb[i][k]]);
    }
  }
}

TEST(MdNeighbor, GrowsWhenDenserAndReusesScratch) {
  NeighborBuilder builder;
  NeighborList list;
  check(random_atoms(50, 10.0, 1, 5), 1.0, builder, list);  // sparse: short rows
  const int width = list.width;
  auto dense = random_atoms(800, 5.0, 1, 6);
  add_periodic_ghosts(dense, 5.0, 1.6);
  check(dense, 1.6, builder, list);  // ~ 20 neighbours each: rows must grow
  EXPECT_GT(list.width, width);
  check(random_atoms(10, 10.0, 1, 7), 3.0, builder, list);  // smaller again, same scratch
}

TEST(MdNeighbor, EmptyAndDegenerateSystems) {
  HostAtoms empty;
  check(empty, 2.5);
  HostAtoms one;
  one.x = {{1, 2, 3}};
  one.type = {0};
  one.id = {5};
  one.nlocal = 1;
  check(one, 2.5);
  auto ghosts_only = random_atoms(20, 3.0, 1, 8);
  ghosts_only.nlocal = 0;
  check(ghosts_only, 1.0);
  HostAtoms line;  // all on the x axis: zero extent along y and z
  for (int i = 0; i < 50; ++i) {
    line.x.push_back({0.3 * i, 0, 0});
    line.type.push_back(0);
    line.id.push_back(i);
  }
  line.nlocal = 30;
  check(line, 1.0);
  auto far = random_atoms(20, 1.0, 1, 9);  // two clusters far apart: bin count is capped
  for (int i = 0; i < 20; ++i) far.x[i][0] += (i % 2) * 1.0e7;
  check(far, 0.5);
  NeighborBuilder builder;
  NeighborList list;
  EXPECT_THROW(builder.build(to_device(far.x), to_device(far.id), 20, 20, 0.0, list),
               std::invalid_argument);
}

TEST(MdNeighbor, MaxDisplacementAndSnapshot) {
  const auto a = random_atoms(100, 5.0, 1, 10);
  auto x = to_device(a.x);
  Vectors saved("saved", 0);
  snapshot_positions(x, saved, a.nlocal);
  EXPECT_EQ(max_displacement_sq(x, saved, a.nlocal), 0);
  auto moved = a.x;
  moved[17][0] += 0.3;
  moved[17][1] -= 0.4;
  moved[42][2] += 0.2;
  x = to_device(moved);
  EXPECT_NEAR(max_displacement_sq(x, saved, a.nlocal), 0.25, 1e-12);
  EXPECT_EQ(max_displacement_sq(x, saved, 0), 0);
}

}  // namespace stratus::md_neighbor_test
