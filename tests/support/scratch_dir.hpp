// A scratch directory per test, shared by all ranks: created by rank 0 under the system's temp
// directory (named after the prefix, rank 0's pid and the test), removed after the test.
#pragma once

#include "test_context.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace stratus::testing {

class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    const Context& ctx = context();
    char text[1024] = {};
    if (ctx.rank() == 0) {
      const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
      const std::filesystem::path dir =
          std::filesystem::temp_directory_path() /
          fmt::format("stratus-test-{}-{}-{}", prefix_, ::getpid(), info->name());
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      std::snprintf(text, sizeof text, "%s", dir.c_str());
    }
    MPI_Bcast(text, sizeof text, MPI_CHAR, 0, ctx.comm());
    dir_ = text;
  }
  void TearDown() override {
    MPI_Barrier(context().comm());
    if (context().rank() == 0) std::filesystem::remove_all(dir_);
  }
  /// Path of `name` inside the scratch directory.
  [[nodiscard]] std::string file(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace stratus::testing
