#include "stratus/core/exit_file.hpp"

#include <cstdio>
#include <cstdlib>

namespace stratus {

void record_in_exit_file(const std::string& line) {
  const char* path = std::getenv("STRATUS_EXIT_FILE");
  if (path == nullptr || *path == '\0') return;
  if (std::FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

}  // namespace stratus
