// One H5MD frame from the md solver's device arrays: copies the owned rows to host memory and
// appends them (io's writer is host-only and never sees a View).
#pragma once

#include "stratus/io/h5md.hpp"
#include "stratus/kernels/md/types.hpp"
#include "stratus/solvers/md/atoms.hpp"

#include <cstdint>
#include <vector>

namespace stratus::md {

/// Appends rows [0, nlocal) of the device views as one frame (collective; see
/// io::H5mdWriter::append for the checks). Rows beyond a view's extent are not copied, so an
/// `nlocal` larger than the arrays is refused by the writer.
void append_frame(io::H5mdWriter& writer, std::int64_t step, double time,
                  const kernels::md::Vectors& x, const kernels::md::Vectors& v,
                  const kernels::md::Types& type, const kernels::md::Ids& id,
                  const kernels::md::Images& image, int nlocal);

/// The extra trajectory elements of `atoms`: every column flagged `trajectory` besides the
/// built-in position, velocity, type, id and image (which the writer always has), in column
/// order, float64 for real columns and int64 for integer ones. Throws RuntimeError for a
/// flagged column of another kind (a record), which has no numbers to write.
std::vector<io::H5mdElement> trajectory_extras(const AtomData& atoms);

/// Appends the owned atoms as one frame: the built-in columns and every extra element of
/// trajectory_extras(atoms), which `writer` must have been created with. Collective.
void append_frame(io::H5mdWriter& writer, std::int64_t step, double time, const AtomData& atoms);

}  // namespace stratus::md
