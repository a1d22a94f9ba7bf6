// `stratus info CHECKPOINT --verify / --diff DECK`.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/solvers/solver.hpp"

#include <string>

namespace stratus::app {

/// Verifies the checkpoint `path` (marker, manifest, every checksum) when `verify`, and lists
/// the deck keys that differ from `deck_path` when it is not empty; returns the report. Throws
/// InputError when the file is not a valid checkpoint. Collective.
std::string checkpoint_report(const Context& ctx, const SolverRegistry& registry,
                              const std::string& path, bool verify, const std::string& deck_path);

}  // namespace stratus::app
