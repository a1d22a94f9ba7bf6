#include "stratus/core/version.hpp"

#include <fmt/format.h>
#include <mpi.h>

namespace stratus {

const char* stratus_version() { return STRATUS_VERSION; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<std::size_t>(length));
  auto end = s.find_first_of(",\n");
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace stratus
