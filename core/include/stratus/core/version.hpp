// What this build of Stratus is made of, for `stratus --version` and for file metadata (the
// Kokkos side is in stratus/core/device.hpp).
#pragma once

#include <string>
#include <vector>

namespace stratus {

/// Stratus release version, e.g. "0.1.0".
const char* stratus_version();
/// git describe of the source tree at build time ("unknown" outside a git checkout).
const char* git_revision();
/// MPI library version string (first line), e.g. "Open MPI v4.1.4".
std::string mpi_library_version();

}  // namespace stratus
