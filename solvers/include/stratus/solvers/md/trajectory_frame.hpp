// One H5MD frame from the md solver's device arrays: copies the owned rows to host memory and
// appends them (io's writer is host-only and never sees a View).
#pragma once

#include "stratus/io/h5md.hpp"
#include "stratus/kernels/md/types.hpp"

#include <cstdint>

namespace stratus::md {

/// Appends rows [0, nlocal) of the device views as one frame (collective; see
/// io::H5mdWriter::append for the checks). Rows beyond a view's extent are not copied, so an
/// `nlocal` larger than the arrays is refused by the writer.
void append_frame(io::H5mdWriter& writer, std::int64_t step, double time,
                  const kernels::md::Vectors& x, const kernels::md::Vectors& v,
                  const kernels::md::Types& type, const kernels::md::Ids& id,
                  const kernels::md::Images& image, int nlocal);

}  // namespace stratus::md
