// The one Context of a test executable, created by test_main.cpp before any test runs.
#pragma once

#include "stratus/core/context.hpp"

namespace stratus::testing {

/// The Context shared by every test of this executable (MPI and Kokkos are up).
Context& context();

}  // namespace stratus::testing
