#include "stratus/core/neighbor_exchange.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <climits>

namespace stratus {

void exchange_messages(const Neighbors& nb, int tag, MPI_Datatype type,
                       std::array<const void*, 2> send, std::array<int, 2> send_count,
                       std::array<void*, 2> recv, std::array<int, 2> recv_count) {
  std::array<MPI_Request, 4> req{MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                 MPI_REQUEST_NULL};
  // What the low neighbour sends us travels up (tag), what the high one sends down (tag + 1).
  for (int s = 0; s < 2; ++s) {
    if (nb.rank[s] == MPI_PROC_NULL) continue;
    MPI_Irecv(recv[s], recv_count[s], type, nb.rank[s], s == 0 ? tag : tag + 1, nb.comm, &req[s]);
  }
  for (int s = 0; s < 2; ++s) {
    if (nb.rank[s] == MPI_PROC_NULL) continue;
    MPI_Isend(send[s], send_count[s], type, nb.rank[s], s == 0 ? tag + 1 : tag, nb.comm,
              &req[2 + s]);
  }
  MPI_Waitall(4, req.data(), MPI_STATUSES_IGNORE);
}

std::array<int, 2> exchange_counts(const Neighbors& nb, int tag, std::array<int, 2> send) {
  std::array<int, 2> recv{0, 0};
  exchange_messages(nb, tag, MPI_INT, {&send[0], &send[1]}, {1, 1}, {&recv[0], &recv[1]}, {1, 1});
  return recv;
}

int message_bytes(std::int64_t n, std::int64_t size) {
  if (n * size > INT_MAX) {
    throw RuntimeError(fmt::format(
        "a message of {} particles ({} bytes) is too large for one MPI message", n, n * size));
  }
  return static_cast<int>(n * size);
}

ColumnExchange::ColumnExchange(const std::string& label, MpiTransport transport)
    : send_(label + ".send", transport), recv_(label + ".recv", transport) {}

void ColumnExchange::pack(const ParticleColumns& columns, Travel travel, const NeighborPlan& plan) {
  layout_ = columns.layout(travel);
  send_.reserve(layout_.stride * static_cast<std::size_t>(plan.send.rows()));
  columns.pack(travel, layout_, plan.send, send_.device().data());
}

void ColumnExchange::transfer(ParticleColumns& columns, Travel travel, const NeighborPlan& plan,
                              int tag, int begin) {
  if (layout_.stride == 0) return;  // nothing travels (the same on both sides)
  const auto stride = static_cast<std::int64_t>(layout_.stride);
  const std::array<int, 2> sent = plan.send.count, got = plan.recv_count;
  int me = 0;
  MPI_Comm_rank(plan.neighbors.comm, &me);
  if (plan.self(me)) {  // the low side receives what went up, the high side what went down
    columns.unpack(travel, layout_, send_.device().data(), begin, plan.received(),
                   BufferRows{got[0], sent[0], 0});
    return;
  }
  recv_.reserve(layout_.stride * static_cast<std::size_t>(plan.received()));
  exchange_buffers(plan.neighbors, tag, send_, {0, layout_.stride * sent[0]},
                   {message_bytes(sent[0], stride), message_bytes(sent[1], stride)}, recv_,
                   {message_bytes(got[0], stride), message_bytes(got[1], stride)});
  columns.unpack(travel, layout_, recv_.device().data(), begin, plan.received());
}

}  // namespace stratus
