// The scalar types of Stratus, for host and device code alike (no Kokkos here: host-only
// targets include this; device code gets it through types.hpp).
#pragma once

#include <cstdint>

namespace stratus {

/// Floating-point type of every field, position and energy in Stratus.
using Real = double;

/// Global (decomposition-independent) identifiers: atoms, cells.
using GlobalId = std::int64_t;

}  // namespace stratus
