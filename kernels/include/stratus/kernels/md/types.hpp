// Per-atom device arrays of the MD solver. A rank's atoms are [0, nlocal) owned, then
// [nlocal, nlocal + nghost) ghosts (copies of atoms owned by a neighbour, or periodic images).
#pragma once

#include "stratus/core/types.hpp"

#include <cstdint>

namespace stratus::kernels::md {

/// x(i, d): one row of 3 coordinates per atom (positions, velocities, forces).
using Vectors = Kokkos::View<Real* [3], Kokkos::LayoutRight, DevMemSpace>;
/// Atom types, 0-based.
using Types = Kokkos::View<int*, DevMemSpace>;
/// Global atom ids: the same atom has the same id on every rank and at any rank count.
using Ids = Kokkos::View<GlobalId*, DevMemSpace>;
/// Periodic image counts: unwrapped position = x + image * box length.
using Images = Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>;
/// Which side of this rank's subdomain a ghost lies on, as the ghost plan made it
/// (AtomExchange::build_ghosts): kGhostLower or kGhostUpper, 0 for an owned atom. A ghost's
/// offset from this subdomain, in subdomains along x, y and z (each -1, 0 or +1), is upper when
/// its first nonzero component is positive; the same pair seen from the other rank has the
/// opposite offset, so exactly one of its two copies is upper. Half lists (neighbor.hpp) and
/// cluster lists (cluster.hpp) pair local atoms with upper ghosts only: each local-ghost pair
/// once, with no test of ids.
using GhostSides = Kokkos::View<std::uint8_t*, DevMemSpace>;
inline constexpr std::uint8_t kGhostLower = 1;
inline constexpr std::uint8_t kGhostUpper = 2;
/// Whether atom i (local below nlocal, a ghost above) is one the lists pair local atoms with:
/// a local atom or an upper ghost.
KOKKOS_INLINE_FUNCTION bool paired_with_locals(const GhostSides& side, const int nlocal,
                                               const int i) {
  return i < nlocal || side(i) == kGhostUpper;
}
/// A small table per pair of types (ntypes x ntypes), e.g. LJ coefficients.
using TypeTable = Kokkos::View<Real**, Kokkos::LayoutRight, DevMemSpace>;
/// Charge per atom (charged pair styles).
using Charges = Kokkos::View<Real*, DevMemSpace>;
/// Mass per type.
using TypeMasses = Kokkos::View<Real*, DevMemSpace>;

}  // namespace stratus::kernels::md
