// The time loop every solver shares: resume, steps, checkpoints, signals and wall-time limits.
// docs/checkpointing.md describes the guarantees; this file is where they are kept.
#include "checkpoint_levels.hpp"
#include "run_config.hpp"
#include "run_report.hpp"
#include "stratus/core/agree.hpp"
#include "stratus/core/device.hpp"
#include "stratus/core/duration.hpp"
#include "stratus/core/exit_file.hpp"
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
#include <functional>
#include <limits>
#include <optional>
#include <random>

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
               "`keep` applies to each level. On several hosts each host writes and copies its "
               "own part (NAME.stepS.partKofH.h5). \"\": one level (`dir`).")
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
               "spot capacity with an interruption rate of p per hour, M = 1/p hours). With "
               "`local`, the interruptions that lose a host and its disk: M of the durable level.")
      .set_default(std::string("6h"));
  c.add_string("mtbi_local",
               "With `local` and interval = \"auto\": mean time between the interruptions that a "
               "host's disk survives (a crashed or killed job, a requeue onto the same "
               "instances), the M of the node-local level. \"\": the same as `mtbi`.")
      .set_default(std::string());
  c.add_real("flush_rate",
             "With `local`: the most MB/s each host's background copy to `dir` may use (0: no "
             "limit), to leave a shared file system's bandwidth to the run's own I/O.")
      .at_least(0.0)
      .set_default(0.0);
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
  p.mtbi_local = p.mtbi;
  if (!deck.string("checkpoint.mtbi_local").empty()) {
    p.mtbi_local = duration_or_error(deck, "checkpoint.mtbi_local");
    if (p.mtbi_local <= 0) throw deck.error_at("checkpoint.mtbi_local", "must be a duration > 0");
  }
  p.flush_rate = deck.real("checkpoint.flush_rate") * 1e6;
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
  return seconds_between(last_cost, state_bytes, mtbi);
}

double CheckpointPolicy::seconds_between(double last_cost, std::uint64_t state_bytes,
                                         double m) const {
  switch (interval) {
    case Interval::off:
      return std::numeric_limits<double>::infinity();
    case Interval::fixed:
      return interval_seconds;
    case Interval::automatic: {
      // Young (1974) / Daly (2006): tau = sqrt(2 C M). Before the first checkpoint, C is
      // estimated from the state's size at 200 MB/s.
      const double c = last_cost > 0 ? last_cost : 0.05 + static_cast<double>(state_bytes) / 200e6;
      return std::sqrt(2.0 * c * m);
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

// --- The stop agreement: what every rank decides after a step ---------------------------

/// One cheap collective a step: a signal seen by any rank, rank 0's clock decisions, and how
/// far the copies to the durable level have come on every host.
struct StopAgreement {
  int signal = 0;                 ///< the first pending signal (0: none)
  bool interval_elapsed = false;  ///< the checkpoint interval has passed (rank 0's clock)
  bool deadline_near = false;     ///< the wall-time limit leaves just time for a checkpoint
  bool flush_due = false;         ///< the next checkpoint is copied to the durable level
  std::int64_t durable = -1;      ///< the oldest of the hosts' newest copied steps (-1: none)

  /// The booleans are rank 0's; `copied` is this rank's newest copied step (host leaders;
  /// others pass kNotLeader). Every rank returns the same.
  static constexpr std::int64_t kNotLeader = std::numeric_limits<std::int64_t>::max();
  static StopAgreement reach(MPI_Comm comm, bool interval_elapsed, bool deadline_near,
                             bool flush_due, std::int64_t copied) {
    long long v[5] = {SignalWatch::pending(), interval_elapsed ? 1 : 0, deadline_near ? 1 : 0,
                      flush_due ? 1 : 0, -static_cast<long long>(copied)};
    MPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, comm);
    return {static_cast<int>(v[0]), v[1] != 0, v[2] != 0, v[3] != 0,
            -static_cast<std::int64_t>(v[4])};
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
        levels_(levels),
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
  /// Writes (and verifies) a checkpoint; with two levels, starts its copy to the durable level
  /// when `flush` (each host its own part).
  void write_checkpoint(const char* reason, bool flush);
  /// Deletes the files of `store` older than its newest checkpoint.keep complete checkpoints
  /// (all parts present) and older than `step`. Rank 0 for the durable level, each host's
  /// first rank for its node-local disk.
  void prune(const io::CheckpointStore& store, std::int64_t step) const;
  /// Host leaders: records a finished copy of this host's file to the durable level.
  void flushed(const io::CheckpointFlusher::Done& done);
  /// Rank 0: every host has copied `step` (the agreement says so): logs it, prunes the level.
  void now_durable(std::int64_t step);
  /// Waits for every host's copy to the durable level (collective): throws RuntimeError on
  /// every rank when one failed. Nothing to do with one level.
  void finish_flush();
  /// The end of the time loop, finished or stopped (`status` and `detail` of the run record):
  /// waits for the copy to the durable level, closes the outputs and reports the run.
  void end_run(std::string status, std::string detail, double start);
  /// Young/Daly for the node-local level: C is the node-local write, M is mtbi_local (mtbi
  /// with one level).
  [[nodiscard]] double local_interval() const {
    return policy_.seconds_between(last_cost_, state_.bytes(),
                                   local_ != nullptr ? policy_.mtbi_local : policy_.mtbi);
  }
  /// Young/Daly for the durable level: C is a copy's duration, M is mtbi; never sooner than
  /// a copy takes (one runs at a time). With interval = "auto" only; otherwise every
  /// checkpoint is copied.
  [[nodiscard]] double durable_interval() const {
    if (local_ == nullptr || policy_.interval != CheckpointPolicy::Interval::automatic) return 0.0;
    const double c = flush_estimate();
    return std::max(c, std::sqrt(2.0 * c * policy_.mtbi));
  }
  /// Seconds between checkpoints by wall time: the node-local level's interval, and at least
  /// as often as the durable level needs a copy.
  [[nodiscard]] double interval_seconds() const {
    const double tau = local_interval();
    return local_ != nullptr && policy_.interval == CheckpointPolicy::Interval::automatic
               ? std::min(tau, durable_interval())
               : tau;
  }
  /// Seconds a checkpoint write may take: the last one's, or the state at 20 MB/s.
  [[nodiscard]] double write_estimate() const {
    return last_cost_ > 0 ? last_cost_ : static_cast<double>(state_.bytes()) / 20e6;
  }
  /// Seconds a copy to the durable level may take (0 with one level): the last one's, or the
  /// state at 20 MB/s (or at flush_rate when that is lower).
  [[nodiscard]] double flush_estimate() const {
    if (local_ == nullptr) return 0.0;
    if (last_flush_cost_ > 0) return last_flush_cost_;
    const double rate = policy_.flush_rate > 0 ? std::min(policy_.flush_rate, 20e6) : 20e6;
    return static_cast<double>(state_.bytes()) / rate;
  }
  /// The durable name of step `step` (its first part and how many there are, with parts).
  [[nodiscard]] std::string durable_name(std::int64_t step) const {
    if (!levels_.parts()) return store_.path_for(step);
    const int hosts = levels_.layout.hosts();
    return fmt::format("{} (and {} more parts)", store_.path_for(step, 0, hosts), hosts - 1);
  }
  /// The summary's record of the time loop so far.
  [[nodiscard]] RunRecord record(std::string status, std::string detail, double start) const;

  Context& ctx_;
  const RunConfig& config_;
  const CheckpointPolicy& policy_;
  Solver& solver_;
  const StateDescriptor& state_;  // what a checkpoint of the solver holds
  OutputDescriptor outputs_;      // the solver's outputs and their schedule
  const Levels& levels_;
  const io::CheckpointStore& store_;  // the durable level
  const io::CheckpointStore* local_;  // the node-local level (null: one level)
  io::CheckpointFlusher flusher_;     // host leaders: node-local -> durable copies
  int flushes_ = 0;
  double flush_seconds_ = 0, flush_wait_seconds_ = 0, last_flush_cost_ = 0;
  std::int64_t copied_step_ = -1;   // host leaders: newest step this host copied
  std::int64_t durable_step_ = -1;  // newest step every host has copied (agreed)
  double last_flush_at_ = 0;        // rank 0: when the last copy started
  ProgressWatchdog& watchdog_;      // told of every step and checkpoint
  double last_cost_ = -1;           // seconds of the last checkpoint (write + verify)
  double last_checkpoint_at_ = 0;   // wall_seconds() of the last checkpoint (or the start)
  std::int64_t last_checkpoint_step_ = -1;
  int checkpoints_written_ = 0;
  double checkpoint_seconds_ = 0;
  std::int64_t first_step_ = 0, final_step_ = 0;
  double first_time_ = 0;
  DevicePeak device_peak_;
};

void Driver::prune(const io::CheckpointStore& store, std::int64_t step) const {
  const bool durable = &store == &store_;
  if (durable ? ctx_.rank() != 0 : !levels_.layout.leader()) return;
  const auto entries = store.list();  // newest step first
  // The steps whose every part is here, newest first; the keep-th one is the oldest kept.
  std::vector<std::int64_t> complete;
  for (std::size_t i = 0; i < entries.size();) {
    std::size_t j = i;
    std::vector<char> have(static_cast<std::size_t>(entries[i].parts), 0);
    for (; j < entries.size() && entries[j].step == entries[i].step; ++j)
      if (entries[j].parts == entries[i].parts) have[static_cast<std::size_t>(entries[j].part)] = 1;
    // On a host's own disk only its part is ever present: that counts as complete there.
    if (!durable || std::find(have.begin(), have.end(), 0) == have.end())
      complete.push_back(entries[i].step);
    i = j;
  }
  if (complete.size() <= static_cast<std::size_t>(policy_.keep)) return;
  const std::int64_t oldest_kept = complete[static_cast<std::size_t>(policy_.keep) - 1];
  for (const auto& e : entries) {
    if (e.step >= oldest_kept || e.step >= step) continue;
    std::error_code ec;
    fs::remove(e.path, ec);
  }
}

void Driver::flushed(const io::CheckpointFlusher::Done& done) {
  const auto& log = ctx_.log();
  if (!done.error.empty()) {
    const std::string text = fmt::format(
        "checkpoint: step {} not copied to the durable directory: {}. The durable "
        "level keeps its newest complete checkpoint{}",
        done.step, done.error, durable_step_ >= 0 ? fmt::format(" (step {})", durable_step_) : "");
    if (ctx_.rank() == 0)
      log.warn("{}", text);
    else  // only rank 0 writes the log: another host's failure goes to its stderr
      fmt::print(stderr, "[rank {} on {}] warning: {}\n", ctx_.rank(), levels_.layout.name(), text);
    return;
  }
  ++flushes_;
  flush_seconds_ += done.seconds;
  last_flush_cost_ = done.seconds;
  copied_step_ = std::max(copied_step_, done.step);
  if (!levels_.parts())
    log.info(
        "checkpoint: step {} copied to {} in {:.3f} s ({:.0f} MB/s) and read back equal: durable",
        done.step, done.to, done.seconds,
        done.seconds > 0 ? static_cast<double>(done.bytes) / 1e6 / done.seconds : 0.0);
  else
    log.info(
        "checkpoint: step {}: this host's part copied to {} in {:.3f} s ({:.0f} MB/s) and "
        "read back equal",
        done.step, done.to, done.seconds,
        done.seconds > 0 ? static_cast<double>(done.bytes) / 1e6 / done.seconds : 0.0);
}

void Driver::now_durable(std::int64_t step) {
  if (step <= durable_step_) return;
  durable_step_ = step;
  if (ctx_.rank() != 0) return;
  ctx_.log().info("checkpoint: step {} is durable{}", step,
                  levels_.parts()
                      ? fmt::format(" (all {} parts in {})", levels_.layout.hosts(), store_.dir())
                      : std::string());
  prune(store_, step);
}

void Driver::finish_flush() {
  if (local_ == nullptr) return;
  std::string error;
  if (levels_.layout.leader()) {
    const double start = wall_seconds();
    const auto done = flusher_.wait();
    flush_wait_seconds_ += wall_seconds() - start;
    if (done) {
      flushed(*done);
      error = done->error;
    }
  }
  error = agree_on_message(ctx_.comm(), error);
  std::int64_t copied = levels_.layout.leader() ? copied_step_ : StopAgreement::kNotLeader;
  MPI_Allreduce(MPI_IN_PLACE, &copied, 1, MPI_INT64_T, MPI_MIN, ctx_.comm());
  now_durable(copied);
  if (!error.empty())
    throw RuntimeError(fmt::format(
        "the newest checkpoint is on the node-local level only ({}): copying it to {} failed: {}. "
        "A run on the same host(s) resumes from it; elsewhere the durable level's newest one is "
        "used",
        local_->dir(), store_.dir(), error));
}

void Driver::write_checkpoint(const char* reason, bool flush) {
  const auto& log = ctx_.log();
  const std::int64_t step = solver_.current_step();
  const io::CheckpointStore& target = local_ != nullptr ? *local_ : store_;
  const bool parts = levels_.parts();
  const HostLayout& layout = levels_.layout;
  const std::string path =
      parts ? target.path_for(step, layout.host(), layout.hosts()) : target.path_for(step);
  const double start = wall_seconds();
  std::uint64_t bytes = 0;
  double written = 0;
  try {
    auto t = ctx_.timers().scope("checkpoint", Phase::checkpoint);
    outputs_.sync();
    const auto info = state_.info(step, solver_.current_time(), kokkos_default_space());
    std::unique_ptr<io::CheckpointWriter> writer;
    if (parts) {
      // The parts of one checkpoint share an id: a part of another write is never mixed in.
      std::uint64_t id = 0;
      if (ctx_.rank() == 0) id = (std::random_device{}() * 0x9e3779b97f4a7c15ull) ^ step;
      MPI_Bcast(&id, 1, MPI_UINT64_T, 0, ctx_.comm());
      writer = std::make_unique<io::CheckpointWriter>(
          ctx_.comm(), layout.comm(), io::CheckpointPart{layout.host(), layout.hosts(), id}, path,
          config_.deck_toml, info);
    } else {
      writer = std::make_unique<io::CheckpointWriter>(ctx_.comm(), path, config_.deck_toml, info);
    }
    state_.save(*writer);
    bytes = writer->commit();
    written = wall_seconds() - start;
    // Verify what is now on disk before anything older is deleted: each host its own part.
    std::string failure;
    try {
      io::CheckpointReader check(parts ? layout.comm() : ctx_.comm(), {path}, parts);
      check.verify();
    } catch (const Error& e) {
      failure = e.what();
    }
    failure = agree_on_message(ctx_.comm(), failure);
    if (!failure.empty()) throw RuntimeError(failure);
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
      "checkpoint: step {} ({}): {}{} {:.1f} MB written in {:.3f} s ({:.0f} MB/s), verified in "
      "{:.3f} s",
      step, reason, path,
      parts ? fmt::format(" (one of {} parts, one a host)", layout.hosts()) : "",
      static_cast<double>(bytes) / 1e6, written,
      written > 0 ? static_cast<double>(bytes) / 1e6 / written : 0.0, cost - written);
  if (local_ != nullptr && flush) {
    if (layout.leader()) {
      // One copy at a time: a copy still running is waited for (it is older).
      const double wait_start = wall_seconds();
      const bool waited = flusher_.busy();
      const std::string to =
          parts ? store_.path_for(step, layout.host(), layout.hosts()) : store_.path_for(step);
      if (auto previous = flusher_.start(step, path, to, policy_.flush_rate)) flushed(*previous);
      if (waited) flush_wait_seconds_ += wall_seconds() - wait_start;
    }
    if (ctx_.rank() == 0) last_flush_at_ = wall_seconds();
    log.info("checkpoint: step {}: copying to {} in the background{}", step, store_.dir(),
             parts ? ", each host its part" : "");
  } else if (local_ != nullptr) {
    log.info(
        "checkpoint: step {}: on the node-local level only (the durable level's interval, "
        "{}, has not passed since the last copy)",
        step, format_duration(durable_interval()));
  }
  if (policy_.interval == CheckpointPolicy::Interval::automatic) {
    const double tau = local_interval();
    log.info(
        "checkpoint: interval auto: every {} (C = {:.3g} s, M = {}): expected overhead {:.2f}% "
        "writing, {:.2f}% recomputed after an interruption{}",
        format_duration(interval_seconds()), cost,
        format_duration(local_ != nullptr ? policy_.mtbi_local : policy_.mtbi), 100.0 * cost / tau,
        100.0 * 0.5 * tau / (local_ != nullptr ? policy_.mtbi_local : policy_.mtbi),
        local_ == nullptr
            ? std::string()
            : fmt::format("; two levels: node-local sqrt(2 C M) = {}; durable copies every {} "
                          "(sqrt(2 C_copy M) with C_copy {} and M = {}, never sooner than a "
                          "copy takes)",
                          format_duration(tau), format_duration(durable_interval()),
                          last_flush_cost_ > 0
                              ? fmt::format("= {:.3g} s", last_flush_cost_)
                              : fmt::format("~ {:.3g} s (estimated)", flush_estimate()),
                          format_duration(policy_.mtbi)));
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
        levels_.dirs());
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
  if (resumed_at >= 0 && local_ != nullptr && !levels_.parts() && ctx_.rank() == 0) {
    // Resumed on one host from a node-local checkpoint the durable level lacks (the copy never
    // ran): copy it now, so that losing this instance costs no more than one interval. (On
    // several hosts the resumer has copied every part the durable level lacked.)
    std::error_code ec;
    const std::string here = local_->path_for(resumed_at), durable = store_.path_for(resumed_at);
    if (fs::exists(here, ec) && !fs::exists(durable, ec)) {
      flusher_.start(resumed_at, here, durable, policy_.flush_rate);
      log.info(
          "checkpoint: step {} is on the node-local level only: copying it to {} in the "
          "background",
          resumed_at, store_.dir());
    }
  }
  last_checkpoint_at_ = start;
  last_flush_at_ = start;

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
    bool interval_elapsed = false, deadline_near = false, flush_due = false;
    if (local_ != nullptr && levels_.layout.leader())
      if (auto done = flusher_.poll()) flushed(*done);
    if (ctx_.rank() == 0) {
      progress.update(now, last_checkpoint_step_ >= 0 ? std::optional<double>(last_checkpoint_at_)
                                                      : std::nullopt);
      step_time = step_time == 0 ? now - previous : 0.9 * step_time + 0.1 * (now - previous);
      previous = now;
      interval_elapsed = now - last_checkpoint_at_ >= interval_seconds();
      flush_due = now - last_flush_at_ >= durable_interval();
      // A stop writes the node-local checkpoint and waits for its copy to the durable level.
      const double cost =
          (last_cost_ > 0 ? last_cost_ : 0.05 + static_cast<double>(state_.bytes()) / 200e6) +
          (local_ != nullptr ? std::max(flush_estimate(), last_cost_) : 0.0);
      deadline_near = now + 2.0 * cost + 3.0 * step_time + 1.0 >= deadline_at;
    }
    const auto agreed = StopAgreement::reach(
        ctx_.comm(), interval_elapsed, deadline_near, flush_due,
        local_ != nullptr && levels_.layout.leader() ? copied_step_ : StopAgreement::kNotLeader);
    if (local_ != nullptr) now_durable(agreed.durable);
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
    const bool by_steps = policy_.every > 0 && step % policy_.every == 0;
    const bool due =
        by_steps || agreed.interval_elapsed || (last && policy_.at_end) || stop_reason != nullptr;
    // No step follows: lists and bins go before the last checkpoint's buffers come.
    if (last || stop_reason != nullptr) solver_.release_step_scratch();
    if (due && step != last_checkpoint_step_) {
      // A write may take long (and wait for the copy of the previous one): 10 x their costs.
      watchdog_.beat(step, 10.0 * (write_estimate() + flush_estimate()));
      // Copied to the durable level: a stop's, the last, a by-steps one, and a timed one when
      // the durable level's own interval has passed.
      const bool flush = agreed.flush_due || by_steps || last || stop_reason != nullptr;
      write_checkpoint(stop_reason ? stop_reason : last ? "end of run" : "periodic", flush);
      watchdog_.beat(step);
    }
    if (stop_reason != nullptr && !last) {
      // The stop's checkpoint is durable before exit 75 (end_run waits for its copy).
      end_run(agreed.signal != 0 ? "stopped: signal" : "stopped: walltime", stop_detail, start);
      throw StopRequested(fmt::format(
          "{} ({}) at step {}: checkpoint {} written; run the same deck again to resume",
          stop_reason, stop_detail, step, durable_name(step)));
    }
  }
  end_run("finished", "", start);
}

void Driver::end_run(std::string status, std::string detail, double start) {
  watchdog_.beat(solver_.current_step(), 10.0 * flush_estimate());
  finish_flush();
  ctx_.log().end_progress();
  outputs_.close();
  // Each host copied its own part: the summary shows the slowest host's copies.
  double copies[2] = {flush_seconds_, flush_wait_seconds_};
  if (levels_.parts()) MPI_Allreduce(MPI_IN_PLACE, copies, 2, MPI_DOUBLE, MPI_MAX, ctx_.comm());
  flush_seconds_ = copies[0];
  flush_wait_seconds_ = copies[1];
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
  if (!config.checkpoint.local.empty()) local.emplace(config.checkpoint.local, config.output.name);
  const HostLayout layout(ctx.comm());
  {
    // Rank 0 makes the durable directory, each host's first rank its node-local one.
    std::string failure;
    std::error_code ec;
    if (ctx.rank() == 0) fs::create_directories(config.checkpoint.dir, ec);
    if (local && layout.leader() && !fs::create_directories(local->dir(), ec) && ec)
      failure = fmt::format("checkpoint.local: cannot create {} on host {}: {}", local->dir(),
                            layout.name(), ec.message());
    failure = agree_on_message(ctx.comm(), failure);
    if (!failure.empty()) throw RuntimeError(failure);
  }
  const Levels levels{store, local ? &*local : nullptr, layout};
  StateDescriptor state;
  solver.declare_state(state);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(host, &length);
  // Watched from the time loop on: reading a large checkpoint may take longer than any limit.
  const std::int64_t resumed_at =
      resume(ctx, deck, solver, state, options, levels, config.output.name);
  // Rank 0 records the watchdog's exit for tools/stratus-mpiexec, which then bounds mpiexec's
  // teardown: mpiexec may have sent the lost host an abort it will never acknowledge.
  std::function<void()> last_words;
  if (ctx.rank() == 0) last_words = [] { record_in_exit_file("1"); };
  ProgressWatchdog watchdog(config.hang_timeout, 10.0,
                            fmt::format("rank {} on host {}", ctx.rank(), host),
                            std::move(last_words));
  Driver(ctx, config, solver, state, levels, watchdog).run(resumed_at);
}

}  // namespace stratus
