// ParticlePlan: rows of any column type go to the rank asked for, in a stable order; dropped
// rows vanish; one plan serves many columns; bad destinations and misfit columns are refused.
#include "stratus/core/error.hpp"
#include "stratus/core/particle_plan.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace stratus {
namespace {

MPI_Comm comm() { return testing::context().comm(); }
int nranks() { return testing::context().size(); }
int my_rank() { return testing::context().rank(); }

/// Global row g lives on rank g % ranks at start and goes to rank (g * 7 + 3) % ranks, except
/// every fifth row, which is dropped.
int destination(std::int64_t g) {
  return g % 5 == 4 ? -1 : static_cast<int>((g * 7 + 3) % nranks());
}

struct Rows {
  std::vector<std::int64_t> id;
  std::vector<double> x;  // 3 per row
  std::vector<std::int32_t> type;
  std::vector<int> dest;
};

Rows my_rows(std::int64_t n) {
  Rows r;
  for (std::int64_t g = my_rank(); g < n; g += nranks()) {
    r.id.push_back(g);
    for (int d = 0; d < 3; ++d) r.x.push_back(static_cast<double>(g) + 0.25 * d);
    r.type.push_back(static_cast<std::int32_t>(g % 3));
    r.dest.push_back(destination(g));
  }
  return r;
}

TEST(ParticlePlan, EveryRowArrivesOnceWhereAskedWithAllItsColumns) {
  constexpr std::int64_t n = 1003;
  const Rows r = my_rows(n);
  const ParticlePlan plan(comm(), r.dest);
  const auto id = plan.execute(r.id);
  const auto x = plan.execute(r.x, 3);
  const auto type = plan.execute(r.type);
  // A column given up (moved) arrives the same (at one rank, without a copy).
  EXPECT_EQ(plan.execute(std::vector<double>(r.x), 3), x);
  ASSERT_EQ(id.size(), plan.recv_rows());
  ASSERT_EQ(x.size(), 3 * plan.recv_rows());
  ASSERT_EQ(type.size(), plan.recv_rows());
  std::int64_t expected = 0;
  for (std::int64_t g = 0; g < n; ++g) expected += destination(g) == my_rank() ? 1 : 0;
  EXPECT_EQ(static_cast<std::int64_t>(id.size()), expected);
  for (std::size_t i = 0; i < id.size(); ++i) {
    EXPECT_EQ(destination(id[i]), my_rank()) << "row " << id[i];
    for (int d = 0; d < 3; ++d) EXPECT_EQ(x[3 * i + d], static_cast<double>(id[i]) + 0.25 * d);
    EXPECT_EQ(type[i], id[i] % 3);
    // Source-rank order, each source's rows in its order: ids rise within a source.
    if (i > 0 && id[i - 1] % nranks() == id[i] % nranks()) {
      EXPECT_LT(id[i - 1], id[i]);
    }
  }
  // Nothing is lost or duplicated over all ranks.
  std::int64_t got = static_cast<std::int64_t>(id.size()), total = 0;
  MPI_Allreduce(&got, &total, 1, MPI_INT64_T, MPI_SUM, comm());
  std::int64_t kept = 0;
  for (std::int64_t g = 0; g < n; ++g) kept += destination(g) >= 0 ? 1 : 0;
  EXPECT_EQ(total, kept);
}

TEST(ParticlePlan, AColumnOfAnyTrivialTypeTravelsWithTheSamePlan) {
  // A per-atom property added later (a charge, a molecule id, an image triple) is one more
  // execute() on the plan that moved the others.
  const Rows r = my_rows(64);
  const ParticlePlan plan(comm(), r.dest);
  std::vector<std::array<std::int32_t, 3>> image;
  for (const auto g : r.id)
    image.push_back({static_cast<std::int32_t>(g), -static_cast<std::int32_t>(g), 7});
  const auto id = plan.execute(r.id);
  const auto got = plan.execute(image);
  ASSERT_EQ(got.size(), id.size());
  for (std::size_t i = 0; i < id.size(); ++i) {
    EXPECT_EQ(got[i][0], id[i]);
    EXPECT_EQ(got[i][1], -id[i]);
    EXPECT_EQ(got[i][2], 7);
  }
}

TEST(ParticlePlan, ABadDestinationIsRefusedOnTheRankThatGaveIt) {
  std::vector<int> dest{0};
  if (my_rank() == 0) dest.push_back(nranks());  // one past the last rank
  bool threw = false;
  try {
    const ParticlePlan plan(comm(), dest);
  } catch (const RuntimeError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("outside [0,"), std::string::npos) << e.what();
  }
  EXPECT_EQ(threw, my_rank() == 0);
}

TEST(ParticlePlan, AColumnThatDoesNotFitThePlanIsRefused) {
  const ParticlePlan plan(comm(), std::vector<int>(4, 0));
  EXPECT_THROW((void)plan.execute(std::vector<double>(5)), RuntimeError);
  EXPECT_THROW((void)plan.execute(std::vector<double>(4), 3), RuntimeError);
}

}  // namespace
}  // namespace stratus
