// `stratus post`: analyses of a run's output files that users would otherwise script (radial
// distribution function, mean-square displacement, energy spectrum, dissipation rate), each
// written as a CSV file with a header row and `#` comment lines. See docs/analysis.md.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/solvers/solver.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace stratus::app {

/// Options of every `stratus post` analysis (each uses its own subset).
struct PostOptions {
  std::vector<std::string> inputs;  ///< the trajectory, or the field snapshot files
  std::string output;               ///< CSV file ("" or "-": standard output)
  int bins = 200;                   ///< rdf: histogram bins
  double rmax = 0;                  ///< rdf: largest distance (0: half the shortest box edge)
  std::string frames;               ///< rdf, msd: A:B:S
  std::string types;                ///< rdf: i,j (1-based types)
  double fit_from = 0.3;            ///< msd: fit window, fractions of the longest lag
  double fit_to = 0.9;
  std::int64_t snapshot = -1;  ///< spectrum: which of the files (step order; negative: from end)
  double nu = 0;               ///< dissipation: kinematic viscosity (0: from the stored deck)
};

/// Registers `stratus post` and its analyses on `app`; returns the `post` subcommand.
CLI::App* add_post_subcommand(CLI::App& app, PostOptions& options);

/// Runs the analysis chosen on the command line (`post` must have been parsed). Throws
/// InputError for bad files or options (exit 2). Every rank computes; rank 0 writes.
int run_post(Context& ctx, const SolverRegistry& registry, const CLI::App& post,
             const PostOptions& options);

/// What an analysis produced: the CSV text, and a short summary for the terminal.
struct PostResult {
  std::string csv;
  std::string summary;
};

// The analyses (post_md.cpp, post_fields.cpp).

/// Radial distribution function g(r) and running coordination number n(r).
PostResult post_rdf(const PostOptions& o);
/// Mean-square displacement vs lag time and the diffusion coefficient of its late-time slope.
PostResult post_msd(const PostOptions& o);
/// Shell-averaged kinetic energy spectrum E(k) of one snapshot.
PostResult post_spectrum(const PostOptions& o);
/// Energy and dissipation rate 2 nu sum k^2 E(k) of every snapshot.
PostResult post_dissipation(const SolverRegistry& registry, const PostOptions& o);

/// Frames A:B:S of a series of `count` (Python slice rules: A, B may be negative or empty).
/// Throws InputError naming `option` for text that is not such a slice or selects nothing.
std::vector<std::int64_t> parse_frame_slice(const std::string& text, std::int64_t count,
                                            const std::string& option);

}  // namespace stratus::app
