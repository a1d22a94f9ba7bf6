// The time loop every solver shares: resume, steps, checkpoints, signals and wall-time limits.
// docs/checkpointing.md describes the guarantees; this file is where they are kept.
#include "run_config.hpp"
#include "run_report.hpp"
#include "stratus/core/device.hpp"
#include "stratus/core/duration.hpp"
#include "stratus/core/memory.hpp"
#include "stratus/core/signals.hpp"
#include "stratus/core/text.hpp"
#include "stratus/core/timers.hpp"
#include "stratus/core/watchdog.hpp"
#include "stratus/io/checkpoint_flush.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/solver.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>

namespace stratus {

namespace fs = std::filesystem;

void declare_checkpoint_section(Schema& schema) {
  auto& c = schema.section(
      "checkpoint",
      "When and where checkpoints are written (docs/checkpointing.md). A run resumes from the "
      "newest valid checkpoint by default (`stratus run --restart`).",
      "run");
  c.may_change_on_restart();
  c.add_string("dir", "Directory of the checkpoints; \"\" is OUTPUT_DIR/checkpoints.")
      .set_default(std::string());
  c.add_string("local",
               "Node-local directory (an instance's NVMe disk) for a second, faster level: each "
               "checkpoint is written and verified there, then copied to `dir` in the "
               "background while the run goes on, and counts as durable once the copy is read "
               "back equal. A stop (signal, wall time) and the end of the run wait for the copy. "
               "`keep` applies to each level. \"\": one level (`dir`). Runs on one host only "
               "for now.")
      .set_default(std::string());
  c.add_int("every", "Write a checkpoint every this many steps (0: not by step count).")
      .at_least(0)
      .set_default(std::int64_t{0});
  c.add_string("interval",
               "Write a checkpoint every this much wall time: a duration (\"30min\", \"600s\", "
               "\"1:00:00\"), \"auto\" for the Young/Daly optimum sqrt(2 C M) from the measured "
               "checkpoint cost C and `mtbi` M, or \"off\".")
      .set_default(std::string("auto"));
  c.add_string("mtbi",
               "Mean time between interruptions M used by interval = \"auto\" (a duration; for "
               "spot capacity with an interruption rate of p per hour, M = 1/p hours).")
      .set_default(std::string("6h"));
  c.add_int("keep",
            "Number of newest checkpoints kept; older ones are deleted once a newer one "
            "has been written and verified.")
      .at_least(1)
      .set_default(std::int64_t{2});
  c.add_bool("at_end",
             "Write a checkpoint when the run reaches run.steps (lets a later run "
             "with more steps continue it).")
      .set_default(true);
  c.add_string_list("signals",
                    "Signals that make the run write a checkpoint and stop with exit code 75.")
      .one_of(catchable_signal_names())
      .set_default([] {
        std::vector<std::string> names;
        for (const int s : default_checkpoint_signals()) names.push_back(signal_name(s));
        return names;
      }());
  c.add_string("walltime",
               "Wall-time limit of the run (a duration; \"\" for none). The run writes a "
               "checkpoint and stops (exit code 75) early enough to finish before it; "
               "`--walltime` and a Slurm job's time limit also count, the earliest wins.")
      .set_default(std::string());
}

namespace {

double duration_or_error(const io::Deck& deck, const std::string& key) {
  const auto& text = deck.string(key);
  const auto d = parse_duration(text);
  if (!d) throw deck.error_at(key, fmt::format("expected {}, found \"{}\"", kDurationHelp, text));
  return *d;
}

CheckpointPolicy read_policy(const io::Deck& deck, const RunOptions& options) {
  CheckpointPolicy p;
  using Interval = CheckpointPolicy::Interval;
  p.dir = deck.string("checkpoint.dir");
  if (p.dir.empty()) p.dir = (fs::path(deck.string("output.dir")) / "checkpoints").string();
  p.local = deck.string("checkpoint.local");
  p.every = deck.integer("checkpoint.every");
  const auto& interval = deck.string("checkpoint.interval");
  if (interval == "auto") {
    p.interval = Interval::automatic;
  } else if (interval == "off") {
    p.interval = Interval::off;
  } else {
    const auto d = parse_duration(interval);
    if (!d || *d <= 0)
      throw deck.error_at("checkpoint.interval",
                          fmt::format("expected \"auto\", \"off\" or {} (> 0), found \"{}\"",
                                      kDurationHelp, interval));
    p.interval = Interval::fixed;
    p.interval_seconds = *d;
  }
  p.mtbi = duration_or_error(deck, "checkpoint.mtbi");
  if (p.mtbi <= 0) throw deck.error_at("checkpoint.mtbi", "must be a duration > 0");
  p.keep = static_cast<int>(deck.integer("checkpoint.keep"));
  p.at_end = deck.boolean("checkpoint.at_end");
  p.signals = checkpoint_signals(deck);
  if (!deck.string("checkpoint.walltime").empty())
    p.walltime = duration_or_error(deck, "checkpoint.walltime");
  if (options.walltime > 0 && (p.walltime <= 0 || options.walltime < p.walltime))
    p.walltime = options.walltime;
  return p;
}

}  // namespace

double CheckpointPolicy::seconds_between(double last_cost, std::uint64_t state_bytes) const {
  switch (interval) {
    case Interval::off:
      return std::numeric_limits<double>::infinity();
    case Interval::fixed:
      return interval_seconds;
    case Interval::automatic: {
      // Young (1974) / Daly (2006): tau = sqrt(2 C M). Before the first checkpoint, C is
      // estimated from the state's size at 200 MB/s.
      const double c = last_cost > 0 ? last_cost : 0.05 + static_cast<double>(state_bytes) / 200e6;
      return std::sqrt(2.0 * c * mtbi);
    }
  }
  return std::numeric_limits<double>::infinity();
}

RunConfig RunConfig::from(const io::Deck& deck, const RunOptions& options) {
  RunConfig c;
  c.solver = deck.string("run.solver");
  c.steps = deck.integer("run.steps");
  c.price_per_node_hour = deck.real("run.price_per_node_hour");
  c.progress_every = progress_interval(deck);
  if (deck.string("run.hang_timeout") == "off") {
    c.hang_timeout = std::numeric_limits<double>::infinity();
  } else {
    c.hang_timeout = duration_or_error(deck, "run.hang_timeout");
    if (c.hang_timeout <= 0)
      throw deck.error_at("run.hang_timeout", "must be a duration > 0, or \"off\"");
  }
  c.output = io::OutputPaths::from(deck);
  c.deck_path = deck.path();
  c.deck_toml = deck.to_toml();
  c.checkpoint = read_policy(deck, options);
  return c;
}

namespace {

/// Seconds left in this Slurm job (`squeue -o %L`), or a negative value when not under Slurm
/// or when it cannot be told. Rank 0 only.
double slurm_time_left(const Logger& log) {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (job == nullptr || *job == '\0') return -1;
  for (const char* c = job; *c; ++c)
    if (*c < '0' || *c > '9') return -1;  // never hand anything else to a shell
  const std::string command = fmt::format("squeue -h -j {} -o %L 2>/dev/null", job);
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char line[128] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  if (!got) {
    log.warn("checkpoint: SLURM_JOB_ID={} but squeue gave no time limit; none assumed", job);
    return -1;
  }
  std::string text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const auto left = parse_duration(text);
  if (!left) return -1;  // UNLIMITED, NOT_SET, ...
  return *left;
}

/// Thrown when a checkpoint cannot be used with this deck (never a reason to fall back).
class DeckMismatch : public InputError {
 public:
  using InputError::InputError;
};

/// Broadcasts a list of strings from rank 0.
std::vector<std::string> bcast_strings(MPI_Comm comm, std::vector<std::string> items) {
  std::string packed;
  for (const auto& s : items) packed += s + '\n';
  int n = static_cast<int>(packed.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm);
  packed.resize(static_cast<std::size_t>(n));
  MPI_Bcast(packed.data(), n, MPI_CHAR, 0, comm);
  items.clear();
  std::size_t start = 0;
  while (start < packed.size()) {
    const auto end = packed.find('\n', start);
    items.push_back(packed.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

void remove_files(const Context& ctx, const std::vector<std::string>& paths, const char* why) {
  if (ctx.rank() != 0) return;
  for (const auto& p : paths) {
    std::error_code ec;
    fs::remove(p, ec);
    ctx.log().warn("checkpoint: removed {} ({})", p, why);
  }
}

void rename_aside(const Context& ctx, const std::string& path, const char* suffix,
                  const std::string& why) {
  if (ctx.rank() != 0) return;
  std::error_code ec;
  fs::rename(path, path + suffix, ec);
  ctx.log().warn("checkpoint: {} renamed to {}{} ({})", path, path, suffix, why);
}

// --- The resumer: which checkpoint a run continues from ---------------------------------

/// Refuses a checkpoint of another solver, or one whose deck differs from this one in a key
/// that changes the physics (DeckMismatch), unless --allow-deck-change.
void check_deck(const Context& ctx, const io::Deck& deck, const RunOptions& options,
                const io::CheckpointReader& r) {
  const auto& info = r.info();
  const std::string& name = deck.string("run.solver");
  if (info.solver != name)
    throw DeckMismatch(
        fmt::format("{}: written by solver '{}', this deck runs '{}': refusing to resume from it "
                    "(use --restart none to start fresh, or another checkpoint directory)",
                    r.path(), info.solver, name));
  io::Deck stored;
  try {
    stored = io::load_deck(r.path() + ":/stratus/deck", r.deck_text(), std::vector<io::Override>{},
                           deck.schema(), [](const std::string&, Schema&) {});
  } catch (const InputError& e) {
    throw DeckMismatch(fmt::format(
        "{}: its deck does not load with this deck's schema ({}): refusing to resume from it",
        r.path(), e.what()));
  }
  std::vector<std::string> changed;
  for (const auto& d : stored.differences(deck)) {
    if (deck.schema().may_change_on_restart(d.key)) continue;
    changed.push_back(fmt::format("  {}: {} in the checkpoint, {} now", d.key, d.before, d.after));
  }
  if (changed.empty()) return;
  if (options.allow_deck_change) {
    ctx.log().warn("checkpoint: resuming with {} changed deck key(s) (--allow-deck-change):\n{}",
                   changed.size(), join(changed, "\n"));
    return;
  }
  throw DeckMismatch(fmt::format(
      "{}: the deck changed since this checkpoint in {} key(s) that change the physics:\n{}\n"
      "Only the keys docs/input-reference.md marks \"may change on restart\" (run.steps, "
      "[output], [checkpoint], output settings) may change; "
      "pass --allow-deck-change to resume anyway, or --restart none to start fresh.",
      r.path(), changed.size(), join(changed, "\n")));
}

/// The checkpoint levels of a run: the durable directory, and the node-local one when set.
struct Levels {
  const io::CheckpointStore& durable;
  const io::CheckpointStore* local = nullptr;

  /// The node-local level first: at the same step its copy is the faster one to read.
  [[nodiscard]] std::vector<const io::CheckpointStore*> all() const {
    if (local != nullptr) return {local, &durable};
    return {&durable};
  }
  /// "node-local" or "durable": the level `path` is in.
  [[nodiscard]] const char* level_of(const std::string& path) const {
    return local != nullptr &&
                   fs::path(path).parent_path() == fs::path(local->path_for(0)).parent_path()
               ? "node-local"
               : "durable";
  }
  [[nodiscard]] std::string dirs() const {
    return local != nullptr
               ? fmt::format("{} (durable) and {} (node-local)", durable.dir(), local->dir())
               : durable.dir();
  }
};

/// The checkpoints to try, newest first (--restart auto), or the one --restart names; empty
/// for a fresh start (--restart none removes the run's checkpoints). Collective.
std::vector<std::string> restart_candidates(const Context& ctx, const RunOptions& options,
                                            const Levels& levels, const std::string& run_name) {
  const std::string& how = options.restart;
  if (how == "none") {
    std::vector<std::string> old;
    if (ctx.rank() == 0) {
      for (const auto* store : levels.all()) {
        for (const auto& e : store->list()) old.push_back(e.path);
        for (const auto& p : store->partials()) old.push_back(p);
      }
    }
    remove_files(ctx, old, "--restart none starts the run afresh");
    ctx.log().info("checkpoint: --restart none: starting from step 0");
    return {};
  }
  if (how != "auto") return {how};
  std::vector<std::string> candidates, partials;
  if (ctx.rank() == 0) {
    // Newest first over both levels; at the same step the node-local copy (listed first).
    std::vector<io::CheckpointStore::Entry> all;
    for (const auto* store : levels.all()) {
      for (auto& e : store->list()) all.push_back(std::move(e));
      for (auto& p : store->partials()) partials.push_back(std::move(p));
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.step > b.step; });
    for (const auto& e : all) candidates.push_back(e.path);
  }
  remove_files(ctx, partials, "left by a checkpoint write that never finished");
  candidates = bcast_strings(ctx.comm(), candidates);
  if (candidates.empty())
    ctx.log().info("checkpoint: no checkpoint of run '{}' in {}: starting from step 0", run_name,
                   levels.dirs());
  return candidates;
}

/// Restores `solver` from the newest usable checkpoint: verified, then checked against the
/// deck (check_deck). Returns the step resumed at, -1 for a fresh start. Collective. The deck
/// is the resumer's argument: the time loop that follows never sees it.
std::int64_t resume(Context& ctx, const io::Deck& deck, Solver& solver,
                    const StateDescriptor& state, const RunOptions& options, const Levels& levels,
                    const std::string& run_name) {
  const auto& log = ctx.log();
  const io::CheckpointStore& store = levels.durable;
  const auto candidates = restart_candidates(ctx, options, levels, run_name);
  if (candidates.empty()) return -1;
  const bool automatic = options.restart == "auto";
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const std::string& path = candidates[k];
    try {
      const double start = wall_seconds();
      io::CheckpointReader reader(ctx.comm(), path);
      reader.verify();
      const double verified = wall_seconds();
      const auto& info = reader.info();
      // The name says which step a checkpoint should hold; the verified content says which it
      // does. A file whose two disagree (copied, renamed, or written by another run) is not
      // trusted: an older checkpoint whose name and content agree is taken instead.
      if (automatic && fs::path(store.path_for(info.step)).filename() != fs::path(path).filename())
        throw InputError(fmt::format(
            "{}: holds step {}, but its name says another step: not trusted", path, info.step));
      check_deck(ctx, deck, options, reader);
      state.restore(reader);
      log.info(
          "checkpoint: resumed from {} (step {}, time {:.6g}; written with decomposition {} on {}; "
          "{} level): {:.1f} MB verified in {:.3f} s, restored in {:.3f} s",
          path, info.step, info.time, info.decomposition, info.backend, levels.level_of(path),
          static_cast<double>(reader.bytes()) / 1e6, verified - start, wall_seconds() - verified);
      // Checkpoints newer than this one belong to a history that this run now replaces.
      if (automatic)
        for (std::size_t j = 0; j < k; ++j)
          rename_aside(ctx, candidates[j], ".damaged", "it could not be resumed from: see above");
      return info.step;
    } catch (const DeckMismatch&) {
      throw;
    } catch (const InputError& e) {
      if (!automatic) throw;
      log.warn("checkpoint: cannot resume from {}\n  {}\n  trying an older checkpoint", path,
               e.what());
    }
  }
  throw InputError(fmt::format(
      "none of the {} checkpoint(s) in {} is usable (see the warnings above); move them away or "
      "run with --restart none to start from step 0",
      candidates.size(), levels.dirs()));
}

// --- The stop agreement: what every rank decides after a step ---------------------------

/// One cheap collective a step: a signal seen by any rank, and rank 0's clock decisions.
struct StopAgreement {
  int signal = 0;                 ///< the first pending signal (0: none)
  bool interval_elapsed = false;  ///< the checkpoint interval has passed (rank 0's clock)
  bool deadline_near = false;     ///< the wall-time limit leaves just time for a checkpoint

  /// `interval_elapsed` and `deadline_near` are rank 0's; every rank returns the same.
  static StopAgreement reach(MPI_Comm comm, bool interval_elapsed, bool deadline_near) {
    int flags[3] = {SignalWatch::pending(), interval_elapsed ? 1 : 0, deadline_near ? 1 : 0};
    MPI_Allreduce(MPI_IN_PLACE, flags, 3, MPI_INT, MPI_MAX, comm);
    return {flags[0], flags[1] != 0, flags[2] != 0};
  }
};

// --- The time loop ----------------------------------------------------------------------

class Driver {
 public:
  Driver(Context& ctx, const RunConfig& config, Solver& solver, const StateDescriptor& state,
         const Levels& levels, ProgressWatchdog& watchdog)
      : ctx_(ctx),
        config_(config),
        policy_(config.checkpoint),
        solver_(solver),
        state_(state),
        store_(levels.durable),
        local_(levels.local),
        watchdog_(watchdog) {
    solver_.declare_outputs(outputs_);
  }

  /// Steps the solver from `resumed_at` (-1: a fresh start) to run.steps or its end,
  /// checkpointing on the policy's schedule; throws StopRequested after the checkpoint of a
  /// signal or the wall-time limit. Collective.
  void run(std::int64_t resumed_at);

 private:
  /// The earliest of the deck's or --walltime's limit and the Slurm job's end (rank 0 logs
  /// it, with the checkpoint schedule).
  [[nodiscard]] double deadline(double start) const;
  void write_checkpoint(const char* reason);
  /// Deletes all but the newest checkpoint.keep checkpoints of `store` older than `step`
  /// (rank 0).
  void prune(const io::CheckpointStore& store, std::int64_t step) const;
  /// Rank 0: logs a finished copy to the durable level and prunes that level.
  void flushed(const io::CheckpointFlusher::Done& done);
  /// Waits for the copy to the durable level (collective): throws RuntimeError on every rank
  /// when it failed. Nothing to do with one level.
  void finish_flush();
  /// The end of the time loop, finished or stopped (`status` and `detail` of the run record):
  /// waits for the copy to the durable level, closes the outputs and reports the run.
  void end_run(std::string status, std::string detail, double start);
  /// Young/Daly on what a checkpoint costs the run: the (node-local) write. With two levels a
  /// checkpoint becomes durable only after its copy, and one copy runs at a time: never
  /// sooner than the last copy took.
  [[nodiscard]] double interval_seconds() const {
    const double tau = policy_.seconds_between(last_cost_, state_.bytes());
    return local_ != nullptr ? std::max(tau, last_flush_cost_) : tau;
  }
  /// Seconds a checkpoint write may take: the last one's, or the state at 20 MB/s.
  [[nodiscard]] double write_estimate() const {
    return last_cost_ > 0 ? last_cost_ : static_cast<double>(state_.bytes()) / 20e6;
  }
  /// Seconds a copy to the durable level may take (0 with one level): the last one's, or the
  /// state at 20 MB/s.
  [[nodiscard]] double flush_estimate() const {
    if (local_ == nullptr) return 0.0;
    return last_flush_cost_ > 0 ? last_flush_cost_ : static_cast<double>(state_.bytes()) / 20e6;
  }
  /// The summary's record of the time loop so far.
  [[nodiscard]] RunRecord record(std::string status, std::string detail, double start) const;

  Context& ctx_;
  const RunConfig& config_;
  const CheckpointPolicy& policy_;
  Solver& solver_;
  const StateDescriptor& state_;      // what a checkpoint of the solver holds
  OutputDescriptor outputs_;          // the solver's outputs and their schedule
  const io::CheckpointStore& store_;  // the durable level
  const io::CheckpointStore* local_;  // the node-local level (null: one level)
  io::CheckpointFlusher flusher_;     // rank 0: node-local -> durable copies
  int flushes_ = 0;
  double flush_seconds_ = 0, flush_wait_seconds_ = 0, last_flush_cost_ = 0;
  ProgressWatchdog& watchdog_;     // told of every step and checkpoint
  double last_cost_ = -1;          // seconds of the last checkpoint (write + verify)
  double last_checkpoint_at_ = 0;  // wall_seconds() of the last checkpoint (or the start)
  std::int64_t last_checkpoint_step_ = -1;
  int checkpoints_written_ = 0;
  double checkpoint_seconds_ = 0;
  std::int64_t first_step_ = 0, final_step_ = 0;
  double first_time_ = 0;
  DevicePeak device_peak_;
};

void Driver::prune(const io::CheckpointStore& store, std::int64_t step) const {
  if (ctx_.rank() != 0) return;
  const auto entries = store.list();
  for (std::size_t i = static_cast<std::size_t>(policy_.keep); i < entries.size(); ++i) {
    if (entries[i].step >= step) continue;
    std::error_code ec;
    fs::remove(entries[i].path, ec);
  }
}

void Driver::flushed(const io::CheckpointFlusher::Done& done) {
  const auto& log = ctx_.log();
  if (!done.error.empty()) {
    const auto kept = store_.list();
    log.warn("checkpoint: step {} not copied to the durable directory: {}. {}", done.step,
             done.error,
             kept.empty() ? std::string("The durable level holds no checkpoint yet.")
                          : fmt::format("The durable level keeps {}.", kept.front().path));
    return;
  }
  ++flushes_;
  flush_seconds_ += done.seconds;
  last_flush_cost_ = done.seconds;
  prune(store_, done.step);
  log.info(
      "checkpoint: step {} copied to {} in {:.3f} s ({:.0f} MB/s) and read back equal: "
      "durable",
      done.step, done.to, done.seconds,
      done.seconds > 0 ? static_cast<double>(done.bytes) / 1e6 / done.seconds : 0.0);
}

void Driver::finish_flush() {
  if (local_ == nullptr) return;
  char error[1024] = {};
  if (ctx_.rank() == 0) {
    const double start = wall_seconds();
    const auto done = flusher_.wait();
    flush_wait_seconds_ += wall_seconds() - start;
    if (done) {
      flushed(*done);
      if (!done->error.empty()) std::snprintf(error, sizeof error, "%s", done->error.c_str());
    }
  }
  MPI_Bcast(error, sizeof error, MPI_CHAR, 0, ctx_.comm());
  if (error[0] != '\0')
    throw RuntimeError(fmt::format(
        "the newest checkpoint is on the node-local level only ({}): copying it to {} failed: {}. "
        "A run on this host resumes from it; elsewhere the durable level's newest one is used",
        local_->dir(), store_.dir(), error));
}

void Driver::write_checkpoint(const char* reason) {
  const auto& log = ctx_.log();
  const std::int64_t step = solver_.current_step();
  const io::CheckpointStore& target = local_ != nullptr ? *local_ : store_;
  const std::string path = target.path_for(step);
  const double start = wall_seconds();
  std::uint64_t bytes = 0;
  double written = 0;
  try {
    auto t = ctx_.timers().scope("checkpoint", Phase::checkpoint);
    outputs_.sync();
    io::CheckpointWriter writer(ctx_.comm(), path, config_.deck_toml,
                                state_.info(step, solver_.current_time(), kokkos_default_space()));
    state_.save(writer);
    bytes = writer.commit();
    written = wall_seconds() - start;
    // Verify what is now on disk before anything older is deleted.
    io::CheckpointReader check(ctx_.comm(), path);
    check.verify();
  } catch (const Error& e) {
    std::error_code ec;
    const auto space = fs::space(target.dir(), ec);
    const std::string free =
        ec ? std::string()
           : fmt::format("; {:.1f} MB free in {}", space.available / 1e6, target.dir());
    const auto kept = target.list();
    throw RuntimeError(fmt::format(
        "checkpoint of step {} not written: {}{}. {}", step, e.what(), free,
        kept.empty() ? std::string("No earlier checkpoint exists.")
                     : fmt::format("The earlier checkpoint {} is intact.", kept.front().path)));
  }
  const double cost = wall_seconds() - start;
  prune(target, step);
  last_cost_ = cost;
  last_checkpoint_at_ = wall_seconds();
  last_checkpoint_step_ = step;
  ++checkpoints_written_;
  checkpoint_seconds_ += cost;
  log.info(
      "checkpoint: step {} ({}): {} {:.1f} MB written in {:.3f} s ({:.0f} MB/s), verified in "
      "{:.3f} s",
      step, reason, path, static_cast<double>(bytes) / 1e6, written,
      written > 0 ? static_cast<double>(bytes) / 1e6 / written : 0.0, cost - written);
  if (local_ != nullptr && ctx_.rank() == 0) {
    // One copy at a time: a copy still running is waited for (it is older).
    const double wait_start = wall_seconds();
    const bool waited = flusher_.busy();
    if (auto previous = flusher_.start(step, path, store_.path_for(step))) flushed(*previous);
    if (waited) flush_wait_seconds_ += wall_seconds() - wait_start;
    log.info("checkpoint: step {}: copying to {} in the background", step, store_.dir());
  }
  if (policy_.interval == CheckpointPolicy::Interval::automatic) {
    const double tau = interval_seconds();
    log.info(
        "checkpoint: interval auto: every {} (C = {:.3g} s, M = {}): expected overhead {:.2f}% "
        "writing, {:.2f}% recomputed after an interruption{}",
        format_duration(tau), cost, format_duration(policy_.mtbi), 100.0 * cost / tau,
        100.0 * 0.5 * tau / policy_.mtbi,
        local_ == nullptr
            ? std::string()
            : fmt::format("; two levels: C is the node-local write (sqrt(2 C M) = {}), the copy "
                          "to the durable level ({}) runs in the background and bounds the "
                          "interval from below",
                          format_duration(policy_.seconds_between(last_cost_, state_.bytes())),
                          last_flush_cost_ > 0 ? fmt::format("last {:.3g} s", last_flush_cost_)
                                               : std::string("not measured yet")));
  }
}

double Driver::deadline(double start) const {
  const auto& log = ctx_.log();
  // --walltime and checkpoint.walltime count from the process start (set-up and resume included).
  double deadline = policy_.walltime > 0 ? process_start_seconds() + policy_.walltime
                                         : std::numeric_limits<double>::infinity();
  if (ctx_.rank() != 0) return deadline;  // only rank 0's clock decides
  const double left = slurm_time_left(log);
  if (left >= 0 && start + left < deadline) {
    deadline = start + left;
    log.info("checkpoint: Slurm job {} ends in {}", std::getenv("SLURM_JOB_ID"),
             format_duration(left));
  }
  if (std::isfinite(deadline))
    log.info("checkpoint: wall-time limit in {}: the run stops with a checkpoint before it",
             format_duration(deadline - start));
  if (policy_.interval != CheckpointPolicy::Interval::off)
    log.info(
        "checkpoint: every {}{}{}, keeping {}, in {}", format_duration(interval_seconds()),
        policy_.interval == CheckpointPolicy::Interval::automatic ? " (auto, first estimate)" : "",
        policy_.every > 0 ? fmt::format(" and every {} steps", policy_.every) : "", policy_.keep,
        policy_.dir);
  return deadline;
}

void Driver::run(std::int64_t resumed_at) {
  const auto& log = ctx_.log();
  const std::int64_t final_step = config_.steps;
  if (resumed_at >= final_step || (resumed_at >= 0 && solver_.reached_end())) {
    log.info("run: already complete at step {} (run.steps = {}, end reached: {}): nothing to do",
             resumed_at, final_step, solver_.reached_end());
    return;
  }
  const double start = wall_seconds();
  const double deadline_at = deadline(start);
  // The run summary covers the time loop: outputs and checkpoints in, set-up and resume out.
  ctx_.timers().reset();
  outputs_.open(resumed_at);
  if (resumed_at >= 0) last_checkpoint_step_ = resumed_at;
  if (resumed_at >= 0 && local_ != nullptr && ctx_.rank() == 0) {
    // Resumed from a node-local checkpoint the durable level lacks (the copy never ran): copy
    // it now, so that losing this instance costs no more than one interval.
    std::error_code ec;
    const std::string here = local_->path_for(resumed_at), durable = store_.path_for(resumed_at);
    if (fs::exists(here, ec) && !fs::exists(durable, ec)) {
      flusher_.start(resumed_at, here, durable);
      log.info(
          "checkpoint: step {} is on the node-local level only: copying it to {} in the "
          "background",
          resumed_at, store_.dir());
    }
  }
  last_checkpoint_at_ = start;

  std::optional<SignalWatch> signals;  // run_deck installs it before the setup; tests may not
  if (!SignalWatch::active()) signals.emplace(policy_.signals);
  first_step_ = solver_.current_step();
  final_step_ = final_step;
  first_time_ = solver_.current_time();
  Progress progress(log, solver_, final_step, start, config_.progress_every);
  device_peak_.sample(start, true);
  double step_time = 0;  // moving average of one step's wall time (rank 0)
  double previous = wall_seconds();
  while (solver_.current_step() < final_step && !solver_.reached_end()) {
    const bool last = outputs_.advance(solver_, final_step);
    const std::int64_t step = solver_.current_step();
    const double now = wall_seconds();
    device_peak_.sample(now);  // this rank's clock; a no-op without CUDA
    bool interval_elapsed = false, deadline_near = false;
    if (ctx_.rank() == 0) {
      progress.update(now, last_checkpoint_step_ >= 0 ? std::optional<double>(last_checkpoint_at_)
                                                      : std::nullopt);
      step_time = step_time == 0 ? now - previous : 0.9 * step_time + 0.1 * (now - previous);
      previous = now;
      interval_elapsed = now - last_checkpoint_at_ >= interval_seconds();
      if (local_ != nullptr)
        if (auto done = flusher_.poll()) flushed(*done);
      // A stop writes the node-local checkpoint and waits for its copy to the durable level.
      const double cost =
          (last_cost_ > 0 ? last_cost_ : 0.05 + static_cast<double>(state_.bytes()) / 200e6) +
          (local_ != nullptr ? std::max(last_flush_cost_, last_cost_) : 0.0);
      deadline_near = now + 2.0 * cost + 3.0 * step_time + 1.0 >= deadline_at;
    }
    const auto agreed = StopAgreement::reach(ctx_.comm(), interval_elapsed, deadline_near);
    watchdog_.beat(step);  // every rank got past the step's collective
    const char* stop_reason = nullptr;
    std::string stop_detail;
    if (agreed.signal != 0) {
      stop_reason = "signal";
      stop_detail = signal_name(agreed.signal);
    } else if (agreed.deadline_near && !last) {
      stop_reason = "wall-time limit";
      stop_detail = format_duration(deadline_at - start) + " after the start";
    }
    const bool due = (policy_.every > 0 && step % policy_.every == 0) || agreed.interval_elapsed ||
                     (last && policy_.at_end) || stop_reason != nullptr;
    if (due && step != last_checkpoint_step_) {
      // A write may take long (and wait for the copy of the previous one): 10 x their costs.
      watchdog_.beat(step, 10.0 * (write_estimate() + flush_estimate()));
      write_checkpoint(stop_reason ? stop_reason : last ? "end of run" : "periodic");
      watchdog_.beat(step);
    }
    if (stop_reason != nullptr && !last) {
      // The stop's checkpoint is durable before exit 75 (end_run waits for its copy).
      end_run(agreed.signal != 0 ? "stopped: signal" : "stopped: walltime", stop_detail, start);
      throw StopRequested(fmt::format(
          "{} ({}) at step {}: checkpoint {} written; run the same deck again to resume",
          stop_reason, stop_detail, step, store_.path_for(step)));
    }
  }
  end_run("finished", "", start);
}

void Driver::end_run(std::string status, std::string detail, double start) {
  watchdog_.beat(solver_.current_step(), 10.0 * flush_estimate());
  finish_flush();
  ctx_.log().end_progress();
  outputs_.close();
  report_run(ctx_, config_, solver_, record(std::move(status), std::move(detail), start));
}

RunRecord Driver::record(std::string status, std::string detail, double start) const {
  RunRecord r;
  r.status = std::move(status);
  r.stop_detail = std::move(detail);
  r.first_step = first_step_;
  r.last_step = solver_.current_step();
  r.final_step = final_step_;
  r.first_time = first_time_;
  r.last_time = solver_.current_time();
  const double now = wall_seconds();
  r.wall = now - start;
  r.setup = start - process_start_seconds();
  r.checkpoints = checkpoints_written_;
  r.checkpoint_seconds = checkpoint_seconds_;
  r.flushes = flushes_;
  r.flush_seconds = flush_seconds_;
  r.flush_wait_seconds = flush_wait_seconds_;
  DevicePeak device = device_peak_;
  device.sample(now, true);
  r.device_peak = device.peak();
  return r;
}

}  // namespace

std::vector<int> checkpoint_signals(const io::Deck& deck) {
  std::vector<int> out;
  for (const auto& name : deck.string_list("checkpoint.signals"))
    out.push_back(signal_number(name));
  return out;
}

void run_solver(Context& ctx, const io::Deck& deck, Solver& solver, const RunOptions& options) {
  // The deck is read into a RunConfig here and read by the resumer; the time loop keeps neither.
  const RunConfig config = RunConfig::from(deck, options);
  const io::CheckpointStore store(config.checkpoint.dir, config.output.name);
  std::optional<io::CheckpointStore> local;
  if (!config.checkpoint.local.empty()) {
    const int hosts = count_nodes(ctx.comm());
    if (hosts > 1)
      throw deck.error_at(
          "checkpoint.local",
          fmt::format("this run spans {} hosts; the node-local level holds whole checkpoints and "
                      "works for runs on one host (per-host parts are not written yet): leave "
                      "checkpoint.local empty",
                      hosts));
    local.emplace(config.checkpoint.local, config.output.name);
  }
  if (ctx.rank() == 0) {
    std::error_code ec;
    fs::create_directories(config.checkpoint.dir, ec);
    if (local) fs::create_directories(local->dir(), ec);
  }
  const Levels levels{store, local ? &*local : nullptr};
  StateDescriptor state;
  solver.declare_state(state);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  // Watched from the time loop on: reading a large checkpoint may take longer than any limit.
  const std::int64_t resumed_at =
      resume(ctx, deck, solver, state, options, levels, config.output.name);
  ProgressWatchdog watchdog(config.hang_timeout, 10.0,
                            fmt::format("rank {} on host {}", ctx.rank(), host));
  Driver(ctx, config, solver, state, levels, watchdog).run(resumed_at);
}

}  // namespace stratus
