// Device fields as GridArrays for host-only code (io): boxes are copied between the View and
// host memory, through one reused contiguous device buffer when the View is not in host memory.
#pragma once

#include "stratus/core/grid_array.hpp"
#include "stratus/core/types.hpp"

namespace stratus {

/// `field` as a GridArray (the View is shared, not copied).
GridArray grid_array(const Field3D& field);

}  // namespace stratus
