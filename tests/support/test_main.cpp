// GoogleTest main for Stratus: brings up MPI and Kokkos through a Context, runs the tests on
// every rank, and returns the same exit code on every rank. Ranks other than 0 print only
// their failures, prefixed with the rank.
#include "stratus/core/device.hpp"
#include "test_context.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace stratus::testing {
Context*& context_slot();
}

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                   result.file_name() ? result.file_name() : "?", result.line_number(),
                   result.summary());
    }
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  stratus::ContextOptions options;
  options.start_device = stratus::device::starter();
  stratus::Context ctx(argc, argv, options);
  stratus::testing::context_slot() = &ctx;
  if (ctx.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(ctx.rank()));
  }
  int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, ctx.comm());
  stratus::testing::context_slot() = nullptr;
  return global;
}
