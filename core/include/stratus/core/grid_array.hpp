// A 3D array of doubles as host-only code sees it (io's field writers and readers): its
// extents and two copies of a box of it through host memory. Whoever owns the array supplies
// the copies: the device layer makes them for a Kokkos View (stratus/core/field_io.hpp), so
// that io never touches device memory and is compiled by the host compiler.
#pragma once

#include <array>
#include <cstddef>
#include <functional>

namespace stratus {

struct GridArray {
  using Index = std::array<std::size_t, 3>;
  /// Extents of the whole array (with any ghost layers), (x, y, z); z varies fastest.
  Index extent{};
  /// Copies the box [lo, lo + count) to `host`: count[0] x count[1] x count[2] values, z fastest.
  std::function<void(Index lo, Index count, double* host)> get;
  /// Copies `host` (the same shape) into the box [lo, lo + count).
  std::function<void(Index lo, Index count, const double* host)> put;
};

}  // namespace stratus
