// `stratus submit DECK ...`: a Slurm jobscript from jobscripts/stratus.sbatch, printed and
// handed to sbatch.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/solvers/solver.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace stratus::app {

/// The options of `stratus submit`, as given on the command line.
struct SubmitOptions {
  std::string deck;
  std::vector<std::string> overrides;  ///< --set KEY=VALUE, handed on to `stratus run`
  std::string output_dir;
  std::string job_name;  ///< default: the run's name (run.name or the deck's stem)
  int nodes = 1;
  int ntasks_per_node = 0;  ///< 0: one rank per node, or one per GPU
  int cpus_per_task = 0;    ///< 0: not asked (Slurm's default, one)
  int gpus_per_node = 0;
  std::string partition;
  std::string account;
  std::string time;
  bool spot = false;
  int max_restarts = 10;
  std::string signal_lead = "120s";
  std::string fallback_partition;
  std::string watch;  ///< aws, gcp, azure or empty
  std::string watch_url;
  double watch_interval = 5;
  std::string launcher = "srun";
  std::string srun_mpi = "pmix";
  int chain = 1;
  std::string stratus_bin;  ///< default: this executable
  std::string script;       ///< also write the jobscript to this file
  bool dry_run = false;
  /// The environment sbatch runs with (and the job inherits): the one before MPI_Init, which
  /// adds variables that an mpirun inside the job would take as its parent's.
  std::vector<std::string> environment;
};

/// Declares the options of the `submit` subcommand.
void add_submit_options(CLI::App* cmd, SubmitOptions& o);

/// The jobscript for `o` (already validated) from `tmpl`, the text of jobscripts/stratus.sbatch.
/// Every value that reaches the script's shell is single-quoted. Throws InputError when an
/// option is not valid, naming it, what is expected and what was found.
std::string render_jobscript(const SubmitOptions& o, const std::string& run_name,
                             const std::string& tmpl);

/// Checks the deck (with the overrides), prints the jobscript and, unless --dry-run, submits it
/// (`--chain N`: N jobs, each after the previous with --dependency=afterany). Returns the exit
/// code; throws InputError for bad options or decks, RuntimeError when sbatch fails.
int submit(const Context& ctx, const SolverRegistry& registry, const SubmitOptions& o);

/// This process's environment, as KEY=VALUE strings (taken before MPI is initialized).
std::vector<std::string> environment_snapshot();

/// `s` as one single-quoted shell word: no expansion of any kind happens inside it.
std::string shell_quote(const std::string& s);

}  // namespace stratus::app
