// Private helpers shared by the checkpoint writer and reader.
#pragma once

#include "h5_support.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <string>
#include <vector>

namespace stratus::io::detail {

/// The first non-empty `local` message over the ranks of `comm` (lowest rank wins), or "" when
/// every rank passed "". Collective: every rank gets the same answer.
std::string agree_error(MPI_Comm comm, const std::string& local);

/// A dataset creation list: chunks of shape `chunk` (rank `rank`) with the Fletcher32 filter.
Handle checksummed_dcpl(const std::string& path, int rank, const hsize_t* chunk);

/// Chunk shape of about 1 MiB for a dataset of shape `dims` (whole trailing rows first).
std::vector<hsize_t> chunk_shape(const std::vector<hsize_t>& dims);

}  // namespace stratus::io::detail
