#include "stratus/core/particle_plan.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

namespace stratus {

ParticlePlan::ParticlePlan(MPI_Comm comm, const std::vector<int>& dest)
    : comm_(comm), rows_(dest.size()) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const auto p = static_cast<std::size_t>(ranks);
  send_counts_.assign(p, 0);
  recv_counts_.assign(p, 0);
  send_displs_.assign(p, 0);
  recv_displs_.assign(p, 0);
  bool bad = false;
  int first_bad = 0;
  for (const int d : dest) {
    if (d < -1 || d >= ranks) {
      if (!bad) first_bad = d;
      bad = true;
      continue;
    }
    if (d >= 0) ++send_counts_[static_cast<std::size_t>(d)];
  }
  // Every rank takes part in the count exchange before any throws, so none is left waiting.
  MPI_Alltoall(send_counts_.data(), 1, MPI_INT, recv_counts_.data(), 1, MPI_INT, comm);
  if (bad)
    throw RuntimeError(
        fmt::format("particle plan: destination rank {} outside [0, {})", first_bad, ranks));
  // Counting sort by destination, stable in row order.
  std::vector<std::size_t> next(p, 0);
  std::size_t sent = 0;
  for (std::size_t r = 0; r < p; ++r) {
    send_displs_[r] = static_cast<int>(sent);
    next[r] = sent;
    sent += static_cast<std::size_t>(send_counts_[r]);
    recv_displs_[r] = static_cast<int>(recv_total_);
    recv_total_ += static_cast<std::size_t>(recv_counts_[r]);
  }
  sent_ = sent;
  // One rank keeping every row in order: execute() has nothing to move, and no order is kept.
  in_place_ = ranks == 1 && sent == dest.size();
  if (in_place_) return;
  order_.resize(sent);
  for (std::size_t i = 0; i < dest.size(); ++i)
    if (dest[i] >= 0) order_[next[static_cast<std::size_t>(dest[i])]++] = i;
}

void ParticlePlan::check_length(std::size_t values, int ncomp) const {
  if (ncomp < 1 || values != rows_ * static_cast<std::size_t>(ncomp))
    throw RuntimeError(
        fmt::format("particle plan: a column of {} values with {} per row, for a plan of {} rows",
                    values, ncomp, rows_));
}

void ParticlePlan::exchange(const void* send, void* recv, std::size_t row_bytes) const {
  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &row);
  MPI_Type_commit(&row);
  MPI_Alltoallv(send, send_counts_.data(), send_displs_.data(), row, recv, recv_counts_.data(),
                recv_displs_.data(), row, comm_);
  MPI_Type_free(&row);
}

}  // namespace stratus
