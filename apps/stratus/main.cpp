// The `stratus` command: run, check, info, schema, submit, post, --version.
//
// Exit codes: 0 finished, 1 runtime failure, 2 bad input or usage, 75 stopped early on request
// and resumable. See docs/errors.md.
#include "checkpoint_report.hpp"
#include "post.hpp"
#include "stratus/core/context.hpp"
#include "stratus/core/device.hpp"
#include "stratus/core/duration.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/exit_file.hpp"
#include "stratus/core/signals.hpp"
#include "stratus/io/h5file.hpp"
#include "stratus/solvers/solver.hpp"
#include "submit.hpp"
#include "version_report.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* kExitCodes =
    "Exit codes: 0 finished, 1 runtime failure, 2 bad input or usage,\n"
    "            75 stopped early on request (resumable from its checkpoint).";

struct Options {
  std::string deck;
  std::vector<std::string> overrides;
  std::string output_dir;
  std::string file;
  bool show_deck = false;
  bool verify = false;
  std::string diff_deck;
  std::string restart = "auto";
  std::string walltime;
  bool allow_deck_change = false;
  bool log_all_ranks = false;
  std::string log_level = "info";
  bool quiet = false;
  bool verbose = false;
  std::string progress_every;
};

void add_deck_options(CLI::App* cmd, Options& o) {
  cmd->add_option("DECK", o.deck, "Input deck (TOML)")->required();
  cmd->add_option("--set", o.overrides,
                  "Override a deck value: section.key=value (repeatable; same checks as the deck)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

/// The subcommands whose options live in Options.
struct Subcommands {
  CLI::App* run = nullptr;
  CLI::App* check = nullptr;
  CLI::App* info = nullptr;
  CLI::App* schema = nullptr;
};

Subcommands add_subcommands(CLI::App& app, Options& o) {
  auto* run = app.add_subcommand("run", "Run a deck");
  add_deck_options(run, o);
  run->add_option("--output-dir", o.output_dir,
                  "Directory for every output file (same as --set output.dir=DIR)");
  run->add_option("--restart", o.restart,
                  "auto: resume from the newest valid checkpoint of the run, or start at step 0 "
                  "when there is none; none: start at step 0 (deleting the run's old "
                  "checkpoints); or the path of a checkpoint to resume from")
      ->type_name("auto|none|PATH")
      ->default_str("auto");
  run->add_option("--walltime", o.walltime,
                  "Wall-time limit: write a checkpoint and stop (exit 75) before it "
                  "(e.g. 90s, 15min, 2h, 1:30:00)")
      ->type_name("DURATION");
  run->add_flag("--allow-deck-change", o.allow_deck_change,
                "Resume even if physics keys of the deck differ from the checkpoint's");
  run->add_flag("--log-all-ranks", o.log_all_ranks, "Every rank logs, prefixed with its rank");
  auto* log_level = run->add_option("--log-level", o.log_level, "error, warn, info or debug")
                        ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  auto* quiet = run->add_flag("--quiet,-q", o.quiet,
                              "Only warnings and errors on the terminal (same as --log-level "
                              "warn); the log file and the summary are still written");
  auto* verbose =
      run->add_flag("--verbose,-v", o.verbose, "Debug messages too (same as --log-level debug)");
  quiet->excludes(verbose)->excludes(log_level);
  verbose->excludes(log_level);
  run->add_option("--progress-every", o.progress_every,
                  "Without a terminal, log a progress line every DURATION (e.g. 30s, 5min), or "
                  "\"off\" (same as --set output.progress_every=...)")
      ->type_name("DURATION|off");
  run->footer(kExitCodes);

  auto* check =
      app.add_subcommand("check", "Check a deck without running it and print it resolved");
  add_deck_options(check, o);
  check->footer("Exit codes: 0 the deck is valid, 2 it is not (every problem is listed).");

  auto* info = app.add_subcommand("info", "Describe an HDF5 file written by Stratus");
  info->add_option("FILE", o.file, "Stratus HDF5 file")->required();
  info->add_flag("--deck", o.show_deck, "Also print the resolved deck stored in the file");
  info->add_flag("--verify", o.verify,
                 "Checkpoints: check the completion marker and every dataset's checksum");
  info->add_option("--diff", o.diff_deck,
                   "Checkpoints: list the deck keys whose values differ between the checkpoint's "
                   "deck and DECK")
      ->type_name("DECK");
  info->footer(
      "Exit codes: 0 described (and, with --verify, valid), 2 not a readable Stratus file or a "
      "damaged checkpoint.");

  auto* schema = app.add_subcommand(
      "schema", "Print the input reference (Markdown) generated from the parameter schema");
  return {run, check, info, schema};
}

/// `stratus run` and `stratus check`: the deck with the command line's overrides.
int run_or_check(stratus::Context& ctx, const stratus::SolverRegistry& registry, const Options& o,
                 bool check_only) {
  std::vector<stratus::io::Override> overrides;
  for (const auto& text : o.overrides) overrides.push_back(stratus::io::Override::from_set(text));
  if (!o.output_dir.empty())
    overrides.push_back(stratus::io::Override::literal_string("output.dir", o.output_dir,
                                                              "--output-dir " + o.output_dir));
  if (!o.progress_every.empty())
    overrides.push_back(stratus::io::Override::literal_string(
        "output.progress_every", o.progress_every, "--progress-every " + o.progress_every));
  const auto deck = stratus::load_run_deck(ctx, registry, o.deck, overrides);
  if (check_only) {
    stratus::check_memory(ctx, deck, registry.find(deck.string("run.solver"))->configure(deck),
                          false);
    if (ctx.rank() == 0) std::fputs(deck.to_toml().c_str(), stdout);
    return 0;
  }
  stratus::RunOptions run_options;
  run_options.restart = o.restart;
  run_options.allow_deck_change = o.allow_deck_change;
  if (!o.walltime.empty()) {
    const auto seconds = stratus::parse_duration(o.walltime);
    if (!seconds || *seconds <= 0)
      throw stratus::InputError(fmt::format("--walltime: expected {} (> 0), found \"{}\"",
                                            stratus::kDurationHelp, o.walltime));
    run_options.walltime = *seconds;
  }
  stratus::run_deck(ctx, registry, deck, run_options);
  return 0;
}

/// `stratus info FILE`: every rank reads (read-only), so a bad file fails on every rank alike;
/// a checkpoint is verified first, a damaged one reported with what is wrong.
int describe(stratus::Context& ctx, const stratus::SolverRegistry& registry, const Options& o) {
  const std::string report =
      o.verify || !o.diff_deck.empty()
          ? stratus::app::checkpoint_report(ctx, registry, o.file, o.verify, o.diff_deck)
          : std::string();
  const std::string text = stratus::io::describe_file(o.file, o.show_deck) + report;
  if (ctx.rank() == 0) std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Arguments for Kokkos (--kokkos-...) go to Kokkos, everything else to the command line.
  std::vector<char*> kokkos_args{argv[0]};
  std::vector<char*> cli_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::strncmp(argv[i], "--kokkos-", 9) == 0 ? kokkos_args : cli_args).push_back(argv[i]);

  Options o;
  CLI::App app{"Stratus: molecular dynamics and CFD on Kokkos + MPI, preemption-proof.", "stratus"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return stratus::app::version_report(); },
      "Print versions of Stratus, Kokkos (and its backends), MPI, HDF5, FFTW");

  const Subcommands sub = add_subcommands(app, o);
  CLI::App* const run = sub.run;
  CLI::App* const check = sub.check;

  stratus::app::SubmitOptions submit_options;
  submit_options.environment = stratus::app::environment_snapshot();  // before MPI_Init
  auto* submit = app.add_subcommand(
      "submit", "Write a Slurm jobscript for a deck (jobscripts/stratus.sbatch) and sbatch it");
  stratus::app::add_submit_options(submit, submit_options);

  stratus::app::PostOptions post_options;
  auto* post = stratus::app::add_post_subcommand(app, post_options);

  try {
    app.parse(static_cast<int>(cli_args.size()), cli_args.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return static_cast<int>(stratus::ExitCode::bad_input);
  }

  int kargc = static_cast<int>(kokkos_args.size());
  char** kargv = kokkos_args.data();
  // A run catches the default checkpoint signals from here on: a preemption notice during MPI's
  // start-up or the setup then stops the run after its first step, resumable (exit 75).
  std::optional<stratus::SignalWatch> early_signals;
  if (run->parsed()) early_signals.emplace(stratus::default_checkpoint_signals());
  stratus::ContextOptions context_options;
  if (run->parsed() || post->parsed())  // they launch kernels
    context_options.start_device = stratus::device::starter();
  stratus::Context ctx(kargc, kargv, context_options);
  MPI_Barrier(ctx.comm());  // every rank has started
  if (ctx.rank() == 0) stratus::record_in_exit_file("started");
  const int code = ctx.run_guarded([&]() -> int {
    ctx.configure_logging(o.log_all_ranks, o.quiet     ? stratus::LogLevel::warn
                                           : o.verbose ? stratus::LogLevel::debug
                                                       : stratus::parse_log_level(o.log_level));
    stratus::SolverRegistry registry;
    stratus::register_builtin_solvers(registry);

    if (run->parsed() || check->parsed()) return run_or_check(ctx, registry, o, check->parsed());
    if (sub.info->parsed()) return describe(ctx, registry, o);
    if (post->parsed()) return stratus::app::run_post(ctx, registry, *post, post_options);
    if (submit->parsed()) return stratus::app::submit(ctx, registry, submit_options);
    if (sub.schema->parsed()) {
      if (ctx.rank() == 0) std::fputs(stratus::input_reference_markdown(registry).c_str(), stdout);
      return 0;
    }
    return static_cast<int>(stratus::ExitCode::bad_input);
  });
  // Before MPI_Finalize: tools/stratus-mpiexec reads the ranks' own code here, and bounds the
  // teardown from then on (a host lost now leaves mpiexec waiting for its daemon).
  if (run->parsed() && ctx.rank() == 0) stratus::record_in_exit_file(std::to_string(code));
  return code;
}
