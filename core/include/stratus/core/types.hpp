// Project-wide scalar type and Kokkos space aliases: the one place that says where data lives.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace stratus {

/// Floating-point type of every field, position and energy in Stratus.
using Real = double;

/// Execution and memory spaces of the device (the default Kokkos backend) and of the host.
using DevExecSpace = Kokkos::DefaultExecutionSpace;
using DevMemSpace = DevExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;
using HostMemSpace = Kokkos::HostSpace;

/// A 3D array of Reals on the device, indexed (i, j, k) = (x, y, z); z varies fastest.
using Field3D = Kokkos::View<Real***, Kokkos::LayoutRight, DevMemSpace>;

/// Global (decomposition-independent) identifiers: atoms, cells.
using GlobalId = std::int64_t;

}  // namespace stratus
