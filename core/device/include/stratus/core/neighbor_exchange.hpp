// Messages between a rank and its two neighbours along one axis (side 0 low, side 1 high), and
// the plan that moves particle rows to them: per-side send lists and counts, executed on any
// set of ParticleColumns (pack every column that travels, send, unpack). What goes where is the
// caller's: the MD atom exchange builds the lists from its geometry.
#pragma once

#include "stratus/core/mpi_buffer.hpp"
#include "stratus/core/particle_columns.hpp"

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace stratus {

/// The two neighbours of a rank along one axis. A side without one is MPI_PROC_NULL.
struct Neighbors {
  MPI_Comm comm = MPI_COMM_NULL;
  std::array<int, 2> rank{MPI_PROC_NULL, MPI_PROC_NULL};
};

// The exchanges below are collective between the neighbours. Messages travelling up (to the
// high neighbour) carry tag `tag`, those travelling down `tag + 1`: the two messages between the
// same pair of ranks (two ranks on a periodic axis) never mix.

/// Posts the receives from both neighbours, sends to both, waits. Counts are in items of
/// `type`; sides without a neighbour are skipped.
void exchange_messages(const Neighbors& nb, int tag, MPI_Datatype type,
                       std::array<const void*, 2> send, std::array<int, 2> send_count,
                       std::array<void*, 2> recv, std::array<int, 2> recv_count);

/// Exchanges one int with both neighbours (0 from a missing one).
std::array<int, 2> exchange_counts(const Neighbors& nb, int tag, std::array<int, 2> send);

/// `n` items of `size` bytes as a count of bytes for MPI; throws RuntimeError beyond INT_MAX.
int message_bytes(std::int64_t n, std::int64_t size);

/// Exchanges items of buffers: send_count[s] items of `send` from send_at[s] go to neighbour s;
/// what comes back lands in `recv`, low side first. Items travel as bytes.
template <class T>
void exchange_buffers(const Neighbors& nb, int tag, const MpiBuffer<T>& send,
                      std::array<std::size_t, 2> send_at, std::array<int, 2> send_count,
                      const MpiBuffer<T>& recv, std::array<int, 2> recv_count) {
  for (int s = 0; s < 2; ++s) send.to_mpi(send_at[s], static_cast<std::size_t>(send_count[s]));
  const auto size = static_cast<std::int64_t>(sizeof(T));
  exchange_messages(nb, tag, MPI_BYTE, {send.mpi(send_at[0]), send.mpi(send_at[1])},
                    {message_bytes(send_count[0], size), message_bytes(send_count[1], size)},
                    {recv.mpi(0), recv.mpi(static_cast<std::size_t>(recv_count[0]))},
                    {message_bytes(recv_count[0], size), message_bytes(recv_count[1], size)});
  recv.from_mpi(0, static_cast<std::size_t>(recv_count[0]) + recv_count[1]);
}

/// Rows to send to the two neighbours of one axis and how many come back.
struct NeighborPlan {
  Neighbors neighbors;
  RowParts send;                        ///< part s: the rows for neighbour s
  std::array<int, 2> recv_count{0, 0};  ///< [0] from the low neighbour, [1] from the high one
  /// Both neighbours are this rank (one rank on a periodic axis): no MPI; the low side receives
  /// what is sent up and vice versa.
  [[nodiscard]] bool self(int my_rank) const noexcept {
    return neighbors.rank[0] == my_rank && neighbors.rank[1] == my_rank;
  }
  [[nodiscard]] int received() const noexcept { return recv_count[0] + recv_count[1]; }
};

/// Executes NeighborPlans on ParticleColumns through two byte buffers that grow as needed and
/// are kept between calls. MPI reads them on the device or through host copies, as `transport`
/// says. pack() and transfer() are apart so that the caller may reorder its rows in between
/// (migration compacts the rows that stay).
class ColumnExchange {
 public:
  ColumnExchange(const std::string& label, MpiTransport transport);

  /// Packs the plan's send rows of every column that travels. The columns may change after.
  void pack(const ParticleColumns& columns, Travel travel, const NeighborPlan& plan);
  /// Sends what pack() packed (with the same columns, travel and plan) and unpacks what comes
  /// in into rows [begin, begin + plan.received()) of every column that travels, rows from the
  /// low neighbour first; the columns must hold them. Messages carry tags `tag`, `tag + 1`.
  /// Collective between the neighbours; a copy when both are this rank.
  void transfer(ParticleColumns& columns, Travel travel, const NeighborPlan& plan, int tag,
                int begin);

  /// Bytes of one row of the last pack().
  [[nodiscard]] std::size_t row_bytes() const noexcept { return layout_.stride; }

 private:
  RowLayout layout_;
  MpiBuffer<char> send_, recv_;
};

}  // namespace stratus
