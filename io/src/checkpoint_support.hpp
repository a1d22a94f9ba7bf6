// Private helpers shared by the checkpoint writer and reader.
#pragma once

#include "stratus/core/agree.hpp"

#include "h5_support.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

namespace stratus::io::detail {

/// Manifest line of one written block: "block NAME START... COUNT... CHECKSUM" (hex), and
/// " @OFFSET" when a part stores the block's values at OFFSET of its 1D dataset.
std::string block_line(const std::string& dataset, const std::vector<hsize_t>& start,
                       const std::vector<hsize_t>& count, std::uint64_t checksum,
                       std::optional<std::uint64_t> stored_at = std::nullopt);

}  // namespace stratus::io::detail
