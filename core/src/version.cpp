#include "stratus/core/version.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

namespace stratus {

const char* stratus_version() { return STRATUS_VERSION; }

std::string kokkos_version() {
  return fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, (KOKKOS_VERSION / 100) % 100,
                     KOKKOS_VERSION % 100);
}

std::vector<std::string> kokkos_backends() {
  std::vector<std::string> b;
#ifdef KOKKOS_ENABLE_CUDA
  b.emplace_back("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  b.emplace_back("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  b.emplace_back("SYCL");
#endif
#ifdef KOKKOS_ENABLE_OPENMPTARGET
  b.emplace_back("OpenMPTarget");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  b.emplace_back("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  b.emplace_back("Threads");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  b.emplace_back("Serial");
#endif
  return b;
}

std::string kokkos_default_space() { return Kokkos::DefaultExecutionSpace::name(); }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  auto end = s.find_first_of(",\n");
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace stratus
