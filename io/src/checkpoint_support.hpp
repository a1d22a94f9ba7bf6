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

/// Manifest line of one written block: "block NAME START... COUNT... CHECKSUM" (hex).
std::string block_line(const std::string& dataset, const std::vector<hsize_t>& start,
                       const std::vector<hsize_t>& count, std::uint64_t checksum);

}  // namespace stratus::io::detail
