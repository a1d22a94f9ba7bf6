// What a run shows while it runs (the progress line) and what it reports at its end (the run
// summary, printed and written to OUTPUT_DIR/NAME.summary.json). Used by the shared time loop
// (run_loop.cpp); docs/running.md describes both.
#pragma once

#include "run_config.hpp"
#include "stratus/core/context.hpp"
#include "stratus/io/deck.hpp"
#include "stratus/solvers/solver.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace stratus {

/// output.progress_every in seconds (infinity for "off"); throws DeckError at the key.
double progress_interval(const io::Deck& deck);

/// Rank 0: opens the run's log file OUTPUT_DIR/NAME.log (appended to, after a separator line
/// that says when, which version and which deck) and writes the resolved deck to
/// OUTPUT_DIR/NAME.deck.toml, with run.name filled in so that it runs as the same run.
/// A file that cannot be written is a warning, not an error.
void open_run_log(const Context& ctx, const io::Deck& deck);

/// The resolved deck (Deck::to_toml) with an empty run.name replaced by the run's name.
std::string resolved_deck_text(const io::Deck& deck);

/// The live progress line of rank 0: step / total, %, elapsed, ETA, throughput in the
/// solver's unit, simulated time per day or hour, time since the last checkpoint. Redrawn in
/// place at most 4 times a second on a terminal, else logged every `plain_interval` seconds.
class Progress {
 public:
  Progress(const Logger& log, const Solver& solver, std::int64_t final_step, double start,
           double plain_interval);
  ~Progress() { log_.end_progress(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// Rank 0, once a step with the clock `now`: shows the line when it is due.
  /// `last_checkpoint_at` is the clock of the last checkpoint (or nothing: none yet).
  void update(double now, std::optional<double> last_checkpoint_at) {
    if (now >= next_) show(now, last_checkpoint_at);
  }
  /// The line as it would be shown at `now` (for tests and the docs).
  [[nodiscard]] std::string line(double now, std::optional<double> last_checkpoint_at) const;

 private:
  void show(double now, std::optional<double> last_checkpoint_at);

  const Logger& log_;
  const Solver& solver_;
  Solver::TimeUnits units_;
  double work_per_step_;
  std::string work_unit_;
  std::int64_t first_step_, final_step_;
  double start_, first_time_;
  double interval_;
  double next_;
};

/// How a run's time loop ended and what it did: the Driver's side of the summary.
/// Number of hosts of `comm`: ranks that share memory count once. Collective.
int count_nodes(MPI_Comm comm);

struct RunRecord {
  std::string status;       ///< "finished", "stopped: signal", "stopped: walltime"
  std::string stop_detail;  ///< e.g. "SIGTERM" (empty when finished)
  std::int64_t first_step = 0, last_step = 0, final_step = 0;
  double first_time = 0, last_time = 0;  ///< simulated time at the first and last step
  double wall = 0;   ///< seconds of the time loop on this rank (outputs and checkpoints in)
  double setup = 0;  ///< seconds from the process start to the time loop (rank 0)
  int checkpoints = 0;
  double checkpoint_seconds = 0;
  /// Two levels (checkpoint.local): copies to the durable directory completed, their seconds
  /// (in the background), and the seconds the loop waited for them (a stop, the end).
  int flushes = 0;
  double flush_seconds = 0, flush_wait_seconds = 0;
  std::optional<std::uint64_t> device_peak;  ///< this rank's sampled peak (CUDA builds)
};

/// Prints the run summary (wall time, throughput, phases, memory, checkpoints, cost,
/// warnings) and writes it as JSON to OUTPUT_DIR/NAME.summary.json. Collective.
void report_run(Context& ctx, const RunConfig& config, const Solver& solver,
                const RunRecord& record);

/// "1:02:03" or "2:03" (minutes:seconds): a compact clock for progress lines.
std::string clock_duration(double seconds);

/// `text` as a JSON string literal (quotes, backslashes and control characters escaped).
std::string json_string(std::string_view text);

}  // namespace stratus
