// One global transpose of a distributed transform: the ranks of a communicator exchange the
// blocks of a 3D complex array so that the axis split in the input becomes whole and an axis
// whole in the input becomes split (MPI_Alltoallv; one pack and one unpack kernel).
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/mpi_buffer.hpp"
#include "stratus/fft/distributed_fft.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <vector>

namespace stratus::fft {

/// How a rank stores its block: extents of the logical axes (0, 1, 2) and the storage order
/// (order[0] outermost, order[2] contiguous).
struct BlockLayout {
  std::array<std::int64_t, 3> extent{};
  std::array<int, 3> order{0, 1, 2};
  [[nodiscard]] std::int64_t size() const { return extent[0] * extent[1] * extent[2]; }
};

/// A (begin, extent) range along one axis for each rank of a communicator.
using Ranges = std::vector<std::array<std::int64_t, 2>>;

class Transpose {
 public:
  /// `in`/`out`: this rank's layouts; axis `split_in` is split over `comm` in the input as
  /// `in_ranges` says (whole in the output), axis `split_out` is whole in the input and split as
  /// `out_ranges` says in the output. The third axis is the same on every rank of `comm`.
  /// `transport`: how MPI reaches the buffers. Not collective; `comm` is borrowed.
  Transpose(MPI_Comm comm, BlockLayout in, BlockLayout out, int split_in, int split_out,
            const Ranges& in_ranges, const Ranges& out_ranges, MpiTransport transport);

  /// Collective over the communicator. `in` and `out` are distinct device arrays.
  void execute(const Complex* in, Complex* out);

  /// The single-rank transpose: a permutation of the axes (public: nvcc takes device lambdas
  /// only in public members).
  void local_permute(const Complex* in, Complex* out) const;

 private:
  MPI_Comm comm_;
  int size_ = 1;
  BlockLayout in_, out_;
  int split_in_, split_out_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  // device tables: owner rank of each global index along split_out / split_in, and per rank
  // the begin and extent of its range and the offset of its part of the buffer
  Kokkos::View<int*, DevMemSpace> owner_out_, owner_in_;
  Kokkos::View<std::int64_t*, DevMemSpace> out_begin_, out_extent_, send_offset_;
  Kokkos::View<std::int64_t*, DevMemSpace> in_begin_, in_extent_, recv_offset_;
  MpiBuffer<Complex> send_, recv_;
};

}  // namespace stratus::fft
