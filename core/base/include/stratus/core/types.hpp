// Kokkos space aliases: the one place that says where data lives. Part of Stratus::base, the
// Kokkos-only floor under the kernels (this directory holds nothing that needs MPI or I/O).
#pragma once

#include "stratus/core/scalar.hpp"

#include <Kokkos_Core.hpp>

namespace stratus {

/// Execution and memory spaces of the device (the default Kokkos backend) and of the host.
using DevExecSpace = Kokkos::DefaultExecutionSpace;
using DevMemSpace = DevExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;
using HostMemSpace = Kokkos::HostSpace;

/// A 3D array of Reals on the device, indexed (i, j, k) = (x, y, z); z varies fastest.
using Field3D = Kokkos::View<Real***, Kokkos::LayoutRight, DevMemSpace>;

}  // namespace stratus
