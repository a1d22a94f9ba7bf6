// Per-atom device arrays of the MD solver. A rank's atoms are [0, nlocal) owned, then
// [nlocal, nlocal + nghost) ghosts (copies of atoms owned by a neighbour, or periodic images).
#pragma once

#include "stratus/core/types.hpp"

namespace stratus::kernels::md {

/// x(i, d): one row of 3 coordinates per atom (positions, velocities, forces).
using Vectors = Kokkos::View<Real* [3], Kokkos::LayoutRight, DevMemSpace>;
/// Atom types, 0-based.
using Types = Kokkos::View<int*, DevMemSpace>;
/// Global atom ids: the same atom has the same id on every rank and at any rank count.
using Ids = Kokkos::View<GlobalId*, DevMemSpace>;
/// Periodic image counts: unwrapped position = x + image * box length.
using Images = Kokkos::View<int* [3], Kokkos::LayoutRight, DevMemSpace>;
/// A small table per pair of types (ntypes x ntypes), e.g. LJ coefficients.
using TypeTable = Kokkos::View<Real**, Kokkos::LayoutRight, DevMemSpace>;
/// Charge per atom (charged pair styles).
using Charges = Kokkos::View<Real*, DevMemSpace>;
/// Mass per type.
using TypeMasses = Kokkos::View<Real*, DevMemSpace>;

}  // namespace stratus::kernels::md
