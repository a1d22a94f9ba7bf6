// One plan for moving per-particle rows between ranks, in the manner of Cabana's Distributor:
// built once from each row's destination rank (the counts are exchanged once), then executed on
// any number of columns of any trivially copyable type. Host memory; used wherever rows go to
// the rank that owns them by id (checkpoint reads, the H5MD writer's id-ordered blocks).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace stratus {

class ParticlePlan {
 public:
  /// `dest[i]` is the rank row i goes to, or -1 to drop the row. Collective over `comm`.
  /// Throws RuntimeError for a rank outside [-1, ranks).
  ParticlePlan(MPI_Comm comm, const std::vector<int>& dest);

  /// Rows this rank sends (dropped rows not counted) and receives.
  [[nodiscard]] std::size_t send_rows() const noexcept { return sent_; }
  [[nodiscard]] std::size_t recv_rows() const noexcept { return recv_total_; }

  /// Sends `ncomp` values per row of `column` (rows() * ncomp values, row-major) along the
  /// plan; returns the received rows in source-rank order, each source's rows in its row order.
  /// Collective. Throws RuntimeError when the column's length does not fit the plan.
  template <class T>
  [[nodiscard]] std::vector<T> execute(const std::vector<T>& column, int ncomp = 1) const {
    if (in_place_) {
      check_length(column.size(), ncomp);
      return column;
    }
    return send(pack(column, ncomp), ncomp);
  }
  /// The same, releasing `column` as soon as it is packed (one copy fewer at the peak).
  template <class T>
  [[nodiscard]] std::vector<T> execute(std::vector<T>&& column, int ncomp = 1) const {
    if (in_place_) {
      check_length(column.size(), ncomp);
      return std::move(column);
    }
    std::vector<T> packed = pack(column, ncomp);
    std::vector<T>().swap(column);
    return send(packed, ncomp);
  }

 private:
  /// The rows to send, in send order.
  template <class T>
  [[nodiscard]] std::vector<T> pack(const std::vector<T>& column, int ncomp) const {
    static_assert(std::is_trivially_copyable_v<T>);
    check_length(column.size(), ncomp);
    const auto width = static_cast<std::size_t>(ncomp);
    std::vector<T> packed(order_.size() * width);
    for (std::size_t k = 0; k < order_.size(); ++k)
      for (std::size_t c = 0; c < width; ++c) packed[k * width + c] = column[order_[k] * width + c];
    return packed;
  }
  /// Exchanges packed rows; returns what this rank receives.
  template <class T>
  [[nodiscard]] std::vector<T> send(const std::vector<T>& packed, int ncomp) const {
    std::vector<T> out(recv_total_ * static_cast<std::size_t>(ncomp));
    exchange(packed.data(), out.data(), sizeof(T) * static_cast<std::size_t>(ncomp));
    return out;
  }
  void check_length(std::size_t values, int ncomp) const;
  /// Alltoallv of rows of `row_bytes` bytes.
  void exchange(const void* send, void* recv, std::size_t row_bytes) const;

  MPI_Comm comm_;
  std::size_t rows_ = 0;            ///< rows of the columns the plan was built for
  std::size_t sent_ = 0;            ///< rows sent (dropped rows not counted)
  std::vector<std::size_t> order_;  ///< rows to send, by destination rank, stable (empty in place)
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;  ///< in rows
  std::size_t recv_total_ = 0;
  bool in_place_ = false;  ///< one rank, every row kept in order
};

}  // namespace stratus
