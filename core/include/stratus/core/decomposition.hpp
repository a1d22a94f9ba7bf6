// 3D Cartesian domain decomposition: which rank owns which block of a grid or of a box, and
// who its neighbours are. Built on MPI_Dims_create / MPI_Cart_create (no rank reordering).
#pragma once

#include "stratus/core/scalar.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>

namespace stratus {

/// An axis-aligned box [lo, hi).
struct Box {
  std::array<Real, 3> lo{0, 0, 0};
  std::array<Real, 3> hi{0, 0, 0};
  [[nodiscard]] Real length(int axis) const { return hi[axis] - lo[axis]; }
};

/// A block of a global grid: cells [begin, begin + extent) along each axis.
struct GridBlock {
  std::array<std::int64_t, 3> begin{0, 0, 0};
  std::array<std::int64_t, 3> extent{0, 0, 0};
  [[nodiscard]] std::int64_t cells() const { return extent[0] * extent[1] * extent[2]; }
};

class CartDecomposition {
 public:
  /// Splits the ranks of `comm` into a 3D process grid. `dims_hint[a] > 0` fixes the number of
  /// ranks along axis a, 0 lets MPI_Dims_create choose. Throws InputError if the hint cannot
  /// be met (product does not divide the rank count). Collective over `comm`.
  CartDecomposition(MPI_Comm comm, std::array<bool, 3> periodic,
                    std::array<int, 3> dims_hint = {0, 0, 0});
  ~CartDecomposition();
  CartDecomposition(const CartDecomposition&) = delete;
  CartDecomposition& operator=(const CartDecomposition&) = delete;

  /// The Cartesian communicator (owned); ranks are the same as in the `comm` given.
  [[nodiscard]] MPI_Comm comm() const noexcept { return cart_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] const std::array<int, 3>& dims() const noexcept { return dims_; }
  [[nodiscard]] const std::array<int, 3>& coords() const noexcept { return coords_; }
  [[nodiscard]] const std::array<bool, 3>& periodic() const noexcept { return periodic_; }

  /// Rank at `coords` (wrapped on periodic axes); MPI_PROC_NULL outside a non-periodic axis.
  [[nodiscard]] int rank_at(std::array<int, 3> coords) const;
  /// Rank of the neighbour at offset (dx, dy, dz), each in {-1, 0, 1}; MPI_PROC_NULL across a
  /// non-periodic boundary. On a periodic axis with one rank the neighbour is this rank.
  [[nodiscard]] int neighbor(std::array<int, 3> offset) const;
  /// Neighbour along one axis: dir = -1 (low side) or +1 (high side).
  [[nodiscard]] int neighbor(int axis, int dir) const;
  /// True when this rank's block touches the global boundary of a non-periodic axis on side dir.
  [[nodiscard]] bool at_wall(int axis, int dir) const;

  /// [begin, end) of block `index` when `n` items are split into `parts` nearly equal blocks;
  /// the first n % parts blocks get one more item.
  static std::array<std::int64_t, 2> block_range(std::int64_t n, int parts, int index);

  /// This rank's block of a global grid of `cells`. Throws InputError when an axis has fewer
  /// cells than ranks.
  [[nodiscard]] GridBlock local_block(std::array<std::int64_t, 3> cells) const;
  /// Rank owning global cell `cell` of a grid of `cells`.
  [[nodiscard]] int owner_of_cell(std::array<std::int64_t, 3> cells,
                                  std::array<std::int64_t, 3> cell) const;

  /// This rank's part of `global` (uniform split along each axis).
  [[nodiscard]] Box local_box(const Box& global) const;
  /// Rank owning point `x` of `global` (x wrapped into the box on periodic axes; points outside
  /// a non-periodic axis are clamped to the nearest block).
  [[nodiscard]] int owner_of_point(const Box& global, std::array<Real, 3> x) const;

 private:
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::array<int, 3> dims_{1, 1, 1};
  std::array<int, 3> coords_{0, 0, 0};
  std::array<bool, 3> periodic_{true, true, true};
};

}  // namespace stratus
