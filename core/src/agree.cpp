#include "stratus/core/agree.hpp"

#include <limits>

namespace stratus {

std::string agree_on_message(MPI_Comm comm, const std::string& local) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = local.empty() ? std::numeric_limits<int>::max() : rank;
  int first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == std::numeric_limits<int>::max()) return {};
  std::string text = rank == first ? local : std::string();
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  return text;
}

}  // namespace stratus
