// The atoms of one rank, on the device.
#pragma once

#include "stratus/kernels/md/types.hpp"

namespace stratus::md {

using kernels::md::Ids;
using kernels::md::Images;
using kernels::md::Types;
using kernels::md::Vectors;

/// Owned atoms are [0, nlocal); ghosts follow at [nlocal, nlocal + nghost). Ghosts carry x,
/// type and id only (v, f and image of a ghost are meaningless). Arrays are sized by
/// `capacity()` >= nlocal + nghost and grown by reserve().
struct AtomData {
  Vectors x{"md::x", 0};
  Vectors v{"md::v", 0};
  Vectors f{"md::f", 0};
  Types type{"md::type", 0};
  Ids id{"md::id", 0};
  Images image{"md::image", 0};
  int nlocal = 0;
  int nghost = 0;

  [[nodiscard]] int capacity() const { return static_cast<int>(x.extent(0)); }
  [[nodiscard]] int nall() const { return nlocal + nghost; }

  /// Grows every array to at least `n` entries (with headroom), keeping the first nall()
  /// entries. Never shrinks.
  void reserve(int n) {
    if (n <= capacity()) return;
    const int grown = n + n / 4 + 16;
    Kokkos::resize(x, grown);
    Kokkos::resize(v, grown);
    Kokkos::resize(f, grown);
    Kokkos::resize(type, grown);
    Kokkos::resize(id, grown);
    Kokkos::resize(image, grown);
  }
};

}  // namespace stratus::md
