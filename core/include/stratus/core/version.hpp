// What this build of Stratus is made of, for `stratus --version` and for file metadata.
#pragma once

#include <string>
#include <vector>

namespace stratus {

/// Stratus release version, e.g. "0.1.0".
const char* stratus_version();
/// git describe of the source tree at build time ("unknown" outside a git checkout).
const char* git_revision();
/// Kokkos version, e.g. "3.4.1".
std::string kokkos_version();
/// Kokkos backends compiled into this build, from Kokkos's own configuration macros,
/// device backends first (e.g. {"OpenMP", "Serial"}).
std::vector<std::string> kokkos_backends();
/// Name of the default Kokkos execution space (where kernels run), e.g. "OpenMP".
std::string kokkos_default_space();
/// MPI library version string (first line), e.g. "Open MPI v4.1.4".
std::string mpi_library_version();

}  // namespace stratus
