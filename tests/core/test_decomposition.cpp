// CartDecomposition: process grid, neighbours, block and box splits, owners, input errors.
// Every test runs on all ranks; results of other ranks are gathered with MPI where needed.
#include "stratus/core/decomposition.hpp"
#include "stratus/core/error.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace stratus {
namespace {

MPI_Comm comm() { return testing::context().comm(); }
int nranks() { return testing::context().size(); }

// Gathers `n` ints from every rank, rank-major.
std::vector<int> allgather(const int* mine, int n) {
  std::vector<int> all(static_cast<std::size_t>(n) * nranks());
  MPI_Allgather(mine, n, MPI_INT, all.data(), n, MPI_INT, comm());
  return all;
}

std::vector<std::int64_t> allgather64(const std::int64_t* mine, int n) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(n) * nranks());
  MPI_Allgather(mine, n, MPI_INT64_T, all.data(), n, MPI_INT64_T, comm());
  return all;
}

std::vector<double> allgatherd(const double* mine, int n) {
  std::vector<double> all(static_cast<std::size_t>(n) * nranks());
  MPI_Allgather(mine, n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, comm());
  return all;
}

const std::vector<std::array<int, 3>> kHints{{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 1}, {1, 1, 0}};

// The hint that puts every rank along `axis`.
std::array<int, 3> all_on_axis(int axis) {
  std::array<int, 3> h{1, 1, 1};
  h[axis] = nranks();
  return h;
}

TEST(Decomposition, DimsMultiplyToRankCountAndHonourHint) {
  for (const auto& hint : kHints) {
    CartDecomposition d(comm(), {true, true, true}, hint);
    EXPECT_EQ(d.size(), nranks());
    EXPECT_EQ(d.dims()[0] * d.dims()[1] * d.dims()[2], nranks());
    for (int a = 0; a < 3; ++a) {
      if (hint[a] > 0) {
        EXPECT_EQ(d.dims()[a], hint[a]) << "axis " << a;
      }
      EXPECT_GE(d.dims()[a], 1);
    }
  }
  for (int a = 0; a < 3; ++a) {
    CartDecomposition d(comm(), {false, false, false}, all_on_axis(a));
    EXPECT_EQ(d.dims(), all_on_axis(a));
  }
}

TEST(Decomposition, RanksMatchTheGivenCommunicator) {
  CartDecomposition d(comm(), {true, false, true});
  EXPECT_EQ(d.rank(), testing::context().rank());
  int cart_size = 0;
  MPI_Comm_size(d.comm(), &cart_size);
  EXPECT_EQ(cart_size, nranks());
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(d.comm(), comm(), &result);
  EXPECT_TRUE(result == MPI_CONGRUENT || result == MPI_IDENT) << "reordered ranks";
}

TEST(Decomposition, CoordsRoundTripThroughRankAt) {
  for (const auto& hint : kHints) {
    CartDecomposition d(comm(), {true, false, true}, hint);
    EXPECT_EQ(d.rank_at(d.coords()), d.rank());
    // Every rank's coords, gathered: distinct, in range, and mapped back to that rank.
    const auto all = allgather(d.coords().data(), 3);
    std::vector<int> seen(nranks(), 0);
    for (int r = 0; r < nranks(); ++r) {
      std::array<int, 3> c{all[3 * r], all[3 * r + 1], all[3 * r + 2]};
      for (int a = 0; a < 3; ++a) {
        EXPECT_GE(c[a], 0);
        EXPECT_LT(c[a], d.dims()[a]);
      }
      const int back = d.rank_at(c);
      EXPECT_EQ(back, r);
      if (back >= 0 && back < nranks()) ++seen[back];
    }
    for (int r = 0; r < nranks(); ++r) EXPECT_EQ(seen[r], 1) << "rank " << r;
    // Periodic axes wrap, the non-periodic one does not.
    const auto& c = d.coords();
    const auto& n = d.dims();
    EXPECT_EQ(d.rank_at({c[0] + n[0], c[1], c[2] - 2 * n[2]}), d.rank());
    EXPECT_EQ(d.rank_at({c[0], n[1], c[2]}), MPI_PROC_NULL);
    EXPECT_EQ(d.rank_at({c[0], -1, c[2]}), MPI_PROC_NULL);
  }
}

// All 26 offsets and the index of the opposite one.
std::vector<std::array<int, 3>> offsets() {
  std::vector<std::array<int, 3>> o;
  for (int i = -1; i <= 1; ++i)
    for (int j = -1; j <= 1; ++j)
      for (int k = -1; k <= 1; ++k)
        if (i != 0 || j != 0 || k != 0) o.push_back({i, j, k});
  return o;
}

TEST(Decomposition, PeriodicNeighboursAreSymmetric) {
  const auto offs = offsets();
  const int no = static_cast<int>(offs.size());
  for (const auto& hint : kHints) {
    CartDecomposition d(comm(), {true, true, true}, hint);
    std::vector<int> mine(no);
    for (int o = 0; o < no; ++o) {
      mine[o] = d.neighbor(offs[o]);
      ASSERT_NE(mine[o], MPI_PROC_NULL);
      const auto& c = d.coords();
      EXPECT_EQ(mine[o], d.rank_at({c[0] + offs[o][0], c[1] + offs[o][1], c[2] + offs[o][2]}));
    }
    const auto table = allgather(mine.data(), no);
    for (int o = 0; o < no; ++o) {
      const int opposite = no - 1 - o;  // offsets() is symmetric about its middle
      ASSERT_EQ(offs[opposite][0], -offs[o][0]);
      const int n = mine[o];
      ASSERT_GE(n, 0);
      ASSERT_LT(n, nranks());
      EXPECT_EQ(table[static_cast<std::size_t>(n) * no + opposite], d.rank())
          << "offset " << offs[o][0] << offs[o][1] << offs[o][2];
    }
    // One rank along a periodic axis: that rank is its own neighbour along it.
    for (int a = 0; a < 3; ++a) {
      if (d.dims()[a] != 1) continue;
      EXPECT_EQ(d.neighbor(a, -1), d.rank());
      EXPECT_EQ(d.neighbor(a, +1), d.rank());
      EXPECT_FALSE(d.at_wall(a, -1));
      EXPECT_FALSE(d.at_wall(a, +1));
    }
  }
}

TEST(Decomposition, WallsHaveNoNeighbour) {
  for (const std::array<bool, 3> periodic :
       {std::array<bool, 3>{false, false, false}, std::array<bool, 3>{true, false, true}}) {
    for (int axis = 0; axis < 3; ++axis) {
      CartDecomposition d(comm(), periodic, all_on_axis(axis));
      const auto& c = d.coords();
      for (int a = 0; a < 3; ++a) {
        for (int dir : {-1, 1}) {
          std::array<int, 3> expect_c = c;
          expect_c[a] += dir;
          const bool wall = !periodic[a] && (dir < 0 ? c[a] == 0 : c[a] == d.dims()[a] - 1);
          EXPECT_EQ(d.at_wall(a, dir), wall) << "axis " << a << " dir " << dir;
          if (wall) {
            EXPECT_EQ(d.neighbor(a, dir), MPI_PROC_NULL) << "axis " << a << " dir " << dir;
          } else {
            EXPECT_NE(d.neighbor(a, dir), MPI_PROC_NULL);
            EXPECT_EQ(d.neighbor(a, dir), d.rank_at(expect_c));
          }
        }
      }
      // A diagonal across a wall has no neighbour either.
      if (d.at_wall(1, -1)) {
        EXPECT_EQ(d.neighbor({1, -1, 1}), MPI_PROC_NULL);
      }
    }
  }
  // Non-periodic with one rank: every neighbour is MPI_PROC_NULL.
  CartDecomposition d(comm(), {false, false, false});
  if (nranks() == 1) {
    for (const auto& o : offsets()) EXPECT_EQ(d.neighbor(o), MPI_PROC_NULL);
  }
}

TEST(Decomposition, BlockRangeSplitsEvenlyLargerBlocksFirst) {
  EXPECT_EQ(CartDecomposition::block_range(10, 3, 0), (std::array<std::int64_t, 2>{0, 4}));
  EXPECT_EQ(CartDecomposition::block_range(10, 3, 1), (std::array<std::int64_t, 2>{4, 7}));
  EXPECT_EQ(CartDecomposition::block_range(10, 3, 2), (std::array<std::int64_t, 2>{7, 10}));
  for (std::int64_t n : {0, 1, 2, 5, 7, 16, 17, 100, 1001}) {
    for (int parts : {1, 2, 3, 4, 7, 8}) {
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        const auto r = CartDecomposition::block_range(n, parts, i);
        EXPECT_EQ(r[0], next) << "n=" << n << " parts=" << parts << " i=" << i;
        const std::int64_t size = r[1] - r[0];
        const std::int64_t want = n / parts + (i < n % parts ? 1 : 0);
        EXPECT_EQ(size, want) << "n=" << n << " parts=" << parts << " i=" << i;
        next = r[1];
      }
      EXPECT_EQ(next, n) << "n=" << n << " parts=" << parts;
    }
  }
  EXPECT_THROW(CartDecomposition::block_range(10, 0, 0), Error);
  EXPECT_THROW(CartDecomposition::block_range(10, 3, 3), Error);
}

// Gathers every rank's local block and checks that they tile the grid exactly once, agree with
// block_range, and that owner_of_cell names the rank whose block holds each cell.
void check_tiling(const CartDecomposition& d, std::array<std::int64_t, 3> cells) {
  const GridBlock mine = d.local_block(cells);
  for (int a = 0; a < 3; ++a) {
    const auto r = CartDecomposition::block_range(cells[a], d.dims()[a], d.coords()[a]);
    EXPECT_EQ(mine.begin[a], r[0]);
    EXPECT_EQ(mine.extent[a], r[1] - r[0]);
    EXPECT_GE(mine.extent[a], 1);
  }
  // Every cell of my block is mine.
  for (std::int64_t i = 0; i < mine.extent[0]; ++i)
    for (std::int64_t j = 0; j < mine.extent[1]; ++j)
      for (std::int64_t k = 0; k < mine.extent[2]; ++k)
        ASSERT_EQ(d.owner_of_cell(cells, {mine.begin[0] + i, mine.begin[1] + j, mine.begin[2] + k}),
                  d.rank());

  std::array<std::int64_t, 6> packed{mine.begin[0],  mine.begin[1],  mine.begin[2],
                                     mine.extent[0], mine.extent[1], mine.extent[2]};
  const auto all = allgather64(packed.data(), 6);
  std::vector<int> count(static_cast<std::size_t>(cells[0] * cells[1] * cells[2]), 0);
  std::vector<int> owner(count.size(), -1);
  std::int64_t total = 0;
  for (int r = 0; r < nranks(); ++r) {
    const std::int64_t* b = &all[6 * static_cast<std::size_t>(r)];
    total += b[3] * b[4] * b[5];
    for (std::int64_t i = b[0]; i < b[0] + b[3]; ++i)
      for (std::int64_t j = b[1]; j < b[1] + b[4]; ++j)
        for (std::int64_t k = b[2]; k < b[2] + b[5]; ++k) {
          ASSERT_TRUE(i >= 0 && i < cells[0] && j >= 0 && j < cells[1] && k >= 0 && k < cells[2]);
          const auto idx = static_cast<std::size_t>((i * cells[1] + j) * cells[2] + k);
          ++count[idx];
          owner[idx] = r;
        }
  }
  EXPECT_EQ(total, cells[0] * cells[1] * cells[2]);
  int bad = 0;
  for (std::int64_t i = 0; i < cells[0]; ++i)
    for (std::int64_t j = 0; j < cells[1]; ++j)
      for (std::int64_t k = 0; k < cells[2]; ++k) {
        const auto idx = static_cast<std::size_t>((i * cells[1] + j) * cells[2] + k);
        if (count[idx] != 1 || d.owner_of_cell(cells, {i, j, k}) != owner[idx]) ++bad;
      }
  EXPECT_EQ(bad, 0) << "cells covered other than once, or owned by another rank than the "
                       "one whose block holds them";
}

TEST(Decomposition, LocalBlocksTileTheGridOnce) {
  for (const auto& hint : kHints) {
    CartDecomposition d(comm(), {true, false, true}, hint);
    check_tiling(d, {13, 7, 5});
    check_tiling(d, {4, 4, 4});
  }
  for (int a = 0; a < 3; ++a) {
    CartDecomposition d(comm(), {false, true, false}, all_on_axis(a));
    std::array<std::int64_t, 3> cells{3, 2, 1};
    cells[a] = nranks() + 3;  // uneven: the first 3 blocks get an extra cell
    check_tiling(d, cells);
    cells[a] = nranks();  // one cell per rank
    check_tiling(d, cells);
  }
}

TEST(Decomposition, LocalBoxMatchesUniformSplitAndTiles) {
  const Box global{{-1.0, 0.0, 2.0}, {2.0, 5.0, 3.5}};
  for (const auto& hint : kHints) {
    CartDecomposition d(comm(), {true, false, true}, hint);
    const Box box = d.local_box(global);
    for (int a = 0; a < 3; ++a) {
      const double l = global.length(a);
      const int n = d.dims()[a];
      const int c = d.coords()[a];
      EXPECT_NEAR(box.lo[a], global.lo[a] + l * c / n, 1e-12);
      EXPECT_NEAR(box.hi[a], global.lo[a] + l * (c + 1) / n, 1e-12);
      if (c == 0) {
        EXPECT_EQ(box.lo[a], global.lo[a]);
      }
      if (c == n - 1) {
        EXPECT_EQ(box.hi[a], global.hi[a]);
      }
    }
    // Neighbouring boxes share their faces exactly, and the volumes add up.
    std::array<double, 6> packed{box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2]};
    const auto all = allgatherd(packed.data(), 6);
    double volume = 0;
    for (int r = 0; r < nranks(); ++r) {
      const double* b = &all[6 * static_cast<std::size_t>(r)];
      volume += (b[3] - b[0]) * (b[4] - b[1]) * (b[5] - b[2]);
    }
    EXPECT_NEAR(volume, global.length(0) * global.length(1) * global.length(2), 1e-12);
    for (int a = 0; a < 3; ++a) {
      const int up = d.neighbor(a, +1);
      if (up == MPI_PROC_NULL || d.dims()[a] == 1 || d.coords()[a] == d.dims()[a] - 1) continue;
      EXPECT_EQ(all[6 * static_cast<std::size_t>(up) + a], box.hi[a]) << "axis " << a;
    }
  }
}

TEST(Decomposition, OwnerOfPointAgreesWithLocalBox) {
  const Box global{{-1.0, 0.0, 2.0}, {2.0, 5.0, 3.5}};
  std::mt19937 rng(1234 + testing::context().rank());
  for (const auto& hint : kHints) {
    for (const std::array<bool, 3> periodic :
         {std::array<bool, 3>{true, true, true}, std::array<bool, 3>{false, true, false}}) {
      CartDecomposition d(comm(), periodic, hint);
      const Box box = d.local_box(global);
      std::vector<std::array<double, 3>> points{box.lo};  // the low corner belongs to me
      for (int a = 0; a < 3; ++a) {
        // just below my high face along a
        std::array<double, 3> p = box.lo;
        p[a] = std::nextafter(box.hi[a], box.lo[a]);
        points.push_back(p);
      }
      for (const auto& p : points) {
        ASSERT_EQ(d.owner_of_point(global, p), d.rank())
            << "point " << p[0] << " " << p[1] << " " << p[2];
      }
      // Random points away from the faces (so that wrapping an image back cannot round across
      // a face): they and their periodic images belong to me.
      for (int s = 0; s < 200; ++s) {
        std::array<double, 3> p{};
        for (int a = 0; a < 3; ++a) {
          const double margin = 1e-6 * global.length(a);
          p[a] =
              std::uniform_real_distribution<double>(box.lo[a] + margin, box.hi[a] - margin)(rng);
        }
        ASSERT_EQ(d.owner_of_point(global, p), d.rank())
            << "point " << p[0] << " " << p[1] << " " << p[2];
        for (int a = 0; a < 3; ++a) {
          if (!periodic[a]) continue;
          for (int k : {-2, -1, 1, 3}) {
            auto q = p;
            q[a] += k * global.length(a);
            EXPECT_EQ(d.owner_of_point(global, q), d.rank())
                << "image " << k << " along axis " << a;
          }
        }
      }
      for (int a = 0; a < 3; ++a) {
        auto low = d.coords();
        auto high = d.coords();
        low[a] = 0;
        high[a] = d.dims()[a] - 1;
        std::array<double, 3> p = box.lo;
        p[a] = global.hi[a];
        if (periodic[a]) {
          // The upper edge of a periodic box is its lower edge.
          EXPECT_EQ(d.owner_of_point(global, p), d.rank_at(low));
        } else {
          // Outside a wall: clamped to the nearest block.
          EXPECT_EQ(d.owner_of_point(global, p), d.rank_at(high));
          p[a] = global.hi[a] + 10.0;
          EXPECT_EQ(d.owner_of_point(global, p), d.rank_at(high));
          p[a] = global.lo[a] - 10.0;
          EXPECT_EQ(d.owner_of_point(global, p), d.rank_at(low));
        }
      }
    }
  }
}

TEST(Decomposition, BadHintIsAnInputErrorNamingHintAndRanks) {
  const std::string ranks = std::to_string(nranks());
  auto expect_input_error = [&](std::array<int, 3> hint, const std::string& hint_text) {
    try {
      CartDecomposition d(comm(), {true, true, true}, hint);
      ADD_FAILURE() << "no error for hint " << hint_text;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(hint_text), std::string::npos) << what;
      EXPECT_NE(what.find(ranks + " ranks"), std::string::npos) << what;
      EXPECT_EQ(e.exit_code(), ExitCode::bad_input);
    }
  };
  // A partial hint whose product does not divide the rank count.
  const int bad = nranks() + 1;
  expect_input_error({bad, 0, 0}, "[" + std::to_string(bad) + ", 0, 0]");
  expect_input_error({0, 3 * nranks(), 0}, "[0, " + std::to_string(3 * nranks()) + ", 0]");
  // A full hint whose product is not the rank count (but divides it, when there are several).
  expect_input_error({1, 2 * nranks(), 1}, "[1, " + std::to_string(2 * nranks()) + ", 1]");
  if (nranks() > 1) expect_input_error({1, 1, 1}, "[1, 1, 1]");
  expect_input_error({-1, 0, 0}, "[-1, 0, 0]");
}

TEST(Decomposition, TooFewCellsIsAnInputErrorNamingAxisCellsAndRanks) {
  const int n = nranks();
  const char* names[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    CartDecomposition d(comm(), {true, true, true}, all_on_axis(a));
    std::array<std::int64_t, 3> cells{8, 8, 8};
    cells[a] = n - 1;  // one cell short (0 cells with one rank)
    try {
      (void)d.local_block(cells);
      ADD_FAILURE() << "no error for " << cells[a] << " cells on " << n << " ranks";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::to_string(n - 1) + " cells along " + names[a]), std::string::npos)
          << what;
      EXPECT_NE(what.find(std::to_string(n) + " ranks"), std::string::npos) << what;
    }
    cells[a] = n;
    EXPECT_NO_THROW((void)d.local_block(cells));
  }
}

}  // namespace
}  // namespace stratus
