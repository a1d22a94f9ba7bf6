#include "stratus/core/agree.hpp"

#include <vector>

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

std::vector<std::string> gather_text(MPI_Comm comm, const std::string& text) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(lengths.size());
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, comm);
  std::vector<std::string> out;
  if (rank == 0)
    for (std::size_t r = 0; r < lengths.size(); ++r)
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

}  // namespace stratus
