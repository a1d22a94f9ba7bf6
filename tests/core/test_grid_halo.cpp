// GridHalo: after an exchange every ghost cell (faces, edges, corners) holds the value of the
// periodically wrapped global cell it mirrors, and ghosts on a non-periodic wall are untouched;
// with both MPI transports (staged copies through host buffers on CPUs too).
#include "stratus/core/error.hpp"
#include "stratus/core/grid_halo.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace stratus {
namespace {

using Index3 = std::array<std::int64_t, 3>;

MPI_Comm comm() { return testing::context().comm(); }
int nranks() { return testing::context().size(); }

// The value of field `f` at global cell (gi, gj, gk): unique per field and cell (cells < 100).
double value(int f, std::int64_t gi, std::int64_t gj, std::int64_t gk) {
  return 1e6 * (f + 1) + static_cast<double>(gi * 10000 + gj * 100 + gk);
}
// What ghosts hold before the exchange; walls must keep it.
double sentinel(int f) { return -1.0 - f; }

std::array<int, 3> all_on_axis(int axis) {
  std::array<int, 3> h{1, 1, 1};
  h[axis] = nranks();
  return h;
}

// Fields of the block's shape with ghosts: interior = value(f, global cell), ghosts = sentinel.
std::vector<Field3D> make_fields(const GridBlock& b, int ghost, int nfields, int first_id = 0) {
  std::vector<Field3D> fields;
  for (int f = 0; f < nfields; ++f) {
    const int id = first_id + f;
    Field3D field("field" + std::to_string(id), b.extent[0] + 2 * ghost, b.extent[1] + 2 * ghost,
                  b.extent[2] + 2 * ghost);
    auto h = Kokkos::create_mirror_view(field);
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t j = 0; j < h.extent(1); ++j)
        for (std::size_t k = 0; k < h.extent(2); ++k) {
          const Index3 l{static_cast<std::int64_t>(i), static_cast<std::int64_t>(j),
                         static_cast<std::int64_t>(k)};
          bool interior = true;
          for (int a = 0; a < 3; ++a)
            interior = interior && l[a] >= ghost && l[a] < ghost + b.extent[a];
          h(i, j, k) = interior ? value(id, b.begin[0] + l[0] - ghost, b.begin[1] + l[1] - ghost,
                                        b.begin[2] + l[2] - ghost)
                                : sentinel(id);
        }
    Kokkos::deep_copy(field, h);
    fields.push_back(field);
  }
  return fields;
}

// Checks every cell of `field` (id `id`) against the expected value; returns a description of
// the mismatches, empty when all agree.
std::string check_field(const Field3D& field, int id, const GridBlock& b, int ghost,
                        const Index3& cells, const std::array<bool, 3>& periodic) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  std::int64_t bad = 0;
  std::ostringstream first;
  for (std::size_t i = 0; i < h.extent(0); ++i)
    for (std::size_t j = 0; j < h.extent(1); ++j)
      for (std::size_t k = 0; k < h.extent(2); ++k) {
        const Index3 l{static_cast<std::int64_t>(i), static_cast<std::int64_t>(j),
                       static_cast<std::int64_t>(k)};
        Index3 g{};
        bool wall = false;
        for (int a = 0; a < 3; ++a) {
          g[a] = b.begin[a] + l[a] - ghost;
          if (g[a] < 0 || g[a] >= cells[a]) {
            if (periodic[a]) {
              g[a] = ((g[a] % cells[a]) + cells[a]) % cells[a];
            } else {
              wall = true;
            }
          }
        }
        const double want = wall ? sentinel(id) : value(id, g[0], g[1], g[2]);
        if (h(i, j, k) != want) {
          if (bad < 5) {
            first << "  local (" << i << "," << j << "," << k << ") has " << h(i, j, k) << ", want "
                  << want << "\n";
          }
          ++bad;
        }
      }
  if (bad == 0) return "";
  std::ostringstream out;
  out << "field " << id << ": " << bad << " wrong cells, first ones:\n" << first.str();
  return out.str();
}

struct HaloCase {
  std::array<bool, 3> periodic;
  std::array<int, 3> hint;
  int ghost;
  int nfields;
  Index3 cells;
};

std::string describe(const HaloCase& c, const CartDecomposition& d) {
  std::ostringstream out;
  out << "periodic " << c.periodic[0] << c.periodic[1] << c.periodic[2] << ", dims " << d.dims()[0]
      << "x" << d.dims()[1] << "x" << d.dims()[2] << ", ghost " << c.ghost << ", " << c.nfields
      << " fields, cells " << c.cells[0] << "x" << c.cells[1] << "x" << c.cells[2] << ", rank "
      << d.rank();
  return out.str();
}

void run_case(const HaloCase& c, MpiTransport transport) {
  CartDecomposition d(comm(), c.periodic, c.hint);
  const GridBlock b = d.local_block(c.cells);
  // Planned for one field more than used: exchanging fewer than planned must work.
  GridHalo halo(d, b.extent, c.ghost, c.nfields + 1, transport);
  EXPECT_EQ(halo.ghost_width(), c.ghost);
  auto fields = make_fields(b, c.ghost, c.nfields);
  halo.exchange(fields);
  for (int f = 0; f < c.nfields; ++f) {
    const std::string err = check_field(fields[f], f, b, c.ghost, c.cells, c.periodic);
    EXPECT_TRUE(err.empty()) << describe(c, d) << "\n" << err;
  }
  // A second exchange finds the same values (buffers are reused, nothing drifts).
  halo.exchange(fields);
  for (int f = 0; f < c.nfields; ++f) {
    const std::string err = check_field(fields[f], f, b, c.ghost, c.cells, c.periodic);
    EXPECT_TRUE(err.empty()) << "second exchange, " << describe(c, d) << "\n" << err;
  }
}

void run_case(const HaloCase& c) {
  run_case(c, MpiTransport::direct);
  run_case(c, MpiTransport::staged);
}

const Index3 kCells{10, 9, 8};

TEST(GridHalo, PeriodicFillsEveryGhostIncludingEdgesAndCorners) {
  for (int ghost : {1, 2}) {
    for (int nfields : {1, 2}) {
      run_case({{true, true, true}, {0, 0, 0}, ghost, nfields, kCells});
    }
  }
}

TEST(GridHalo, PeriodicWithAllRanksAlongOneAxis) {
  for (int a = 0; a < 3; ++a) {
    Index3 cells{6, 5, 7};
    cells[a] = 9;  // 4 ranks: blocks of 3, 2, 2, 2 cells
    run_case({{true, true, true}, all_on_axis(a), 2, 2, cells});
    run_case({{true, true, true}, all_on_axis(a), 1, 1, cells});
  }
}

TEST(GridHalo, PeriodicWithOneRankAlongAnAxisExchangesWithItself) {
  run_case({{true, true, true}, {1, 0, 0}, 2, 2, kCells});
  run_case({{true, true, true}, {0, 0, 1}, 1, 2, kCells});
  // Ghosts as wide as the block: the whole interior is sent.
  run_case({{true, true, true}, {1, 0, 0}, 2, 1, {2, 4, 6}});
}

TEST(GridHalo, WallsKeepTheirGhostsInteriorSidesAreFilled) {
  for (int ghost : {1, 2}) {
    run_case({{false, true, true}, {0, 0, 0}, ghost, 2, kCells});
    run_case({{false, true, true}, all_on_axis(0), ghost, 2, {9, 6, 5}});
    run_case({{true, false, false}, {0, 0, 0}, ghost, 2, kCells});
    run_case({{true, false, false}, all_on_axis(1), ghost, 1, {6, 9, 5}});
    run_case({{false, false, false}, {0, 0, 0}, ghost, 2, kCells});
    run_case({{false, false, false}, all_on_axis(2), ghost, 2, {5, 6, 9}});
  }
}

TEST(GridHalo, ChangingTheSetOfFieldsBetweenExchanges) {
  const std::array<bool, 3> periodic{true, false, true};
  CartDecomposition d(comm(), periodic);
  const GridBlock b = d.local_block(kCells);
  GridHalo halo(d, b.extent, 2, 3, MpiTransport::staged);
  auto a = make_fields(b, 2, 1, 0);
  halo.exchange(a);
  EXPECT_EQ(check_field(a[0], 0, b, 2, kCells, periodic), "");
  // New fields, in a different order, with a new field first.
  auto more = make_fields(b, 2, 2, 1);
  auto fresh_a = make_fields(b, 2, 1, 0);
  halo.exchange({more[1], fresh_a[0], more[0]});
  EXPECT_EQ(check_field(fresh_a[0], 0, b, 2, kCells, periodic), "");
  EXPECT_EQ(check_field(more[0], 1, b, 2, kCells, periodic), "");
  EXPECT_EQ(check_field(more[1], 2, b, 2, kCells, periodic), "");
}

TEST(GridHalo, RejectsTooManyFieldsAndWrongShapes) {
  CartDecomposition d(comm(), {true, true, true});
  const GridBlock b = d.local_block(kCells);
  GridHalo halo(d, b.extent, 1, 1, MpiTransport::direct);
  auto two = make_fields(b, 1, 2);
  EXPECT_THROW(halo.exchange(two), Error);
  auto wrong = make_fields(b, 2, 1);  // ghost width 2, halo planned for 1
  EXPECT_THROW(halo.exchange(wrong), Error);
  EXPECT_NO_THROW(halo.exchange({}));
  // Ghosts wider than the block cannot be filled from a neighbour's interior.
  EXPECT_THROW(GridHalo(d, b.extent, static_cast<int>(b.extent[2]) + 1, 1, MpiTransport::direct),
               Error);
}

}  // namespace
}  // namespace stratus

namespace stratus {
namespace {

// Per-axis ghost widths (an unused axis of one cell and width 0, as the euler solver's 2D
// grids), split-phase start()/finish(), and the after_axis callback: called once per axis, in
// order, after that axis's ghosts are in.
TEST(GridHalo, PerAxisWidthsSplitPhaseAndAfterAxis) {
  const Index3 cells{12, 1, 9};
  const std::array<int, 3> g{2, 0, 1};
  CartDecomposition d(comm(), {true, true, true}, {0, 1, 0});
  const GridBlock b = d.local_block(cells);
  GridHalo halo(d, b.extent, g, 2, MpiTransport::staged);
  EXPECT_EQ(halo.ghost_width(), 2);
  std::vector<Field3D> fields;
  for (int f = 0; f < 2; ++f) {
    Field3D field("f", b.extent[0] + 2 * g[0], 1, b.extent[2] + 2 * g[2]);
    auto h = Kokkos::create_mirror_view(field);
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t k = 0; k < h.extent(2); ++k) {
        const std::int64_t li = static_cast<std::int64_t>(i) - g[0];
        const std::int64_t lk = static_cast<std::int64_t>(k) - g[2];
        const bool inside = li >= 0 && li < b.extent[0] && lk >= 0 && lk < b.extent[2];
        h(i, 0, k) = inside ? value(f, b.begin[0] + li, 0, b.begin[2] + lk) : sentinel(f);
      }
    Kokkos::deep_copy(field, h);
    fields.push_back(field);
  }
  std::vector<int> calls;
  bool x_ghost_in_at_callback = false;
  halo.start(fields, [&](int axis) {
    calls.push_back(axis);
    if (axis == 0) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fields[0]);
      const std::int64_t gi = (b.begin[0] - 1 + cells[0]) % cells[0];
      x_ghost_in_at_callback = h(g[0] - 1, 0, g[2]) == value(0, gi, 0, b.begin[2]);
    }
  });
  EXPECT_THROW(halo.start(fields), Error);  // one exchange at a time
  halo.finish();
  EXPECT_EQ(calls, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(x_ghost_in_at_callback);
  for (int f = 0; f < 2; ++f) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fields[f]);
    int bad = 0;
    for (std::size_t i = 0; i < h.extent(0); ++i)
      for (std::size_t k = 0; k < h.extent(2); ++k) {
        const std::int64_t gi =
            ((b.begin[0] + static_cast<std::int64_t>(i) - g[0]) % cells[0] + cells[0]) % cells[0];
        const std::int64_t gk =
            ((b.begin[2] + static_cast<std::int64_t>(k) - g[2]) % cells[2] + cells[2]) % cells[2];
        if (h(i, 0, k) != value(f, gi, 0, gk)) ++bad;
      }
    EXPECT_EQ(bad, 0) << "field " << f << " rank " << d.rank();
  }
  EXPECT_THROW(halo.finish(), Error);  // nothing in flight
}

}  // namespace
}  // namespace stratus
