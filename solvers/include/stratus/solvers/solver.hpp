// Solvers and the registry that maps deck names ("heat", later "md", ...) to them.
//
// Each solver module registers itself explicitly from register_builtin_solvers() (no static
// self-registration: linkers drop it from static libraries). A registration declares the deck
// sections the solver owns and creates the solver from a checked deck.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/core/schema.hpp"
#include "stratus/io/checkpoint.hpp"
#include "stratus/io/deck.hpp"
#include "stratus/solvers/outputs.hpp"
#include "stratus/solvers/state.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stratus {

/// A solver: owns its fields or particles, launches kernels and writes its output. The time
/// loop, checkpoints, signals, restarts and the output schedule are the shared driver's
/// (run_solver); a solver supplies one step and declares its outputs and its state. Host-side
/// interface (kernels never see it).
class Solver {
 public:
  virtual ~Solver() = default;

  [[nodiscard]] virtual std::int64_t current_step() const = 0;
  [[nodiscard]] virtual double current_time() const = 0;
  /// True when the run is complete before run.steps (e.g. a solver that stops at a simulated
  /// end time); the loop then ends as if run.steps were reached. run.steps stays the upper bound.
  [[nodiscard]] virtual bool reached_end() const { return false; }
  /// The simulated time at which reached_end() turns true (0: none); progress lines count
  /// towards it as well as towards run.steps.
  [[nodiscard]] virtual double end_time() const { return 0; }

  /// Advances one step. `prepare_output`: an output that needs the step's help (MD's energies)
  /// is due after it. Collective.
  virtual void advance(bool prepare_output) = 0;
  /// Declares the outputs and when each is written; the driver opens them, writes them on their
  /// schedule, makes them durable before each checkpoint and closes them. Called once after
  /// setup; the declared functions may refer to the solver.
  virtual void declare_outputs(OutputDescriptor& outputs) = 0;
  /// Declares the whole state, enough to continue bit for bit (fields, particle columns,
  /// integrator and thermostat values, the deck-fixed sizes a checkpoint must match). The
  /// driver calls it once after setup and saves, restores and sizes checkpoints from it; a
  /// restore works at any rank count, and the same rank count and layout continue bit for bit.
  virtual void declare_state(StateDescriptor& state) = 0;
  /// The work of one step, summed over ranks: atoms (MD) or grid cells. Throughput figures
  /// are work_per_step() x steps per second, in work_unit().
  [[nodiscard]] virtual double work_per_step() const = 0;
  /// What work_per_step() x steps counts: "atom-steps", "cell-updates".
  [[nodiscard]] virtual std::string work_unit() const = 0;
  /// How simulated time (current_time()) is shown in progress lines and the run summary.
  struct TimeUnits {
    std::string unit;                     ///< unit of current_time(): "tau", "" (dimensionless)
    double rate_span = 3600;              ///< simulated time is shown per this much wall time (s)
    std::string rate_span_name = "hour";  ///< ... named so
    double cost_span = 1;                 ///< the cost estimate is per this much simulated time
  };
  [[nodiscard]] virtual TimeUnits time_units() const { return {}; }
  /// The run's last step is done (run.steps reached, or a stop): frees what only a next step
  /// would use (neighbour lists, bins), so that the end-of-run checkpoint's buffers do not add
  /// to the process's peak memory. The state stays whole; a solver asked for a step or forces
  /// afterwards makes what it freed again, as it was.
  virtual void release_step_scratch() {}
};

/// How `stratus run` was asked to start and stop (command-line options).
struct RunOptions {
  /// "auto": resume from the newest valid checkpoint of the run, or start fresh when there is
  /// none; "none": start fresh (deleting the run's old checkpoints); else a checkpoint path.
  std::string restart = "auto";
  /// --walltime in seconds (<= 0: none); the deck's checkpoint.walltime and Slurm's time limit
  /// also count, the earliest wins.
  double walltime = 0;
  /// Resume even when physics keys of the deck differ from the checkpoint's.
  bool allow_deck_change = false;
};

/// A lower bound of the memory a run needs, summed over its ranks: the arrays its solver
/// allocates whatever the options, with no halos, message buffers, FFT plans or libraries. A
/// run whose share on a host exceeds that host's memory cannot work, whatever else happens.
struct MemoryNeed {
  double bytes = 0;  ///< 0: known only at set-up (atoms read from a file)
  std::string key;   ///< the deck key that sets the size, e.g. "euler.cells"
  std::string what;  ///< how it is counted, e.g. "2.1e9 cells x 200 bytes (state, copy, fluxes)"
};

/// The need of `count` items (the product of `counts`, in floating point: it may exceed any
/// integer) of `bytes_each` bytes: "COUNT NOUN x BYTES bytes (CONTENT)".
MemoryNeed memory_of(const std::vector<std::int64_t>& counts, double bytes_each, std::string key,
                     const std::string& noun, const std::string& content);

/// Bytes in binary units for messages: "512 B", "23.4 GiB", "1.6e+06 TiB".
std::string bytes_text(double bytes);

/// Refuses a run whose memory cannot exist (collective): DeckError naming need.key when the
/// need is not a finite number below 2^63 bytes, or, for the run itself (`this_run`), when the
/// ranks of some host would need more than that host's physical memory (their share of
/// need.bytes, the grid or the atoms being split about evenly over the ranks). `stratus check`
/// (this_run false) may run elsewhere than the run will: it warns instead. A run logs the
/// estimate.
void check_memory(const Context& ctx, const io::Deck& deck, const MemoryNeed& need, bool this_run);

struct SolverEntry {
  std::string name;     ///< value of run.solver
  std::string summary;  ///< one line for --help and the input reference
  std::function<void(Schema&)> declare_sections;
  std::function<std::unique_ptr<Solver>(Context&, const io::Deck&)> create;
  /// Reads a checked deck into the solver's typed configuration and throws its DeckError for
  /// what the schema cannot see (values that must fit together); allocates nothing, opens no
  /// file. Returns the memory the run needs at the least (check_memory). `stratus check` and
  /// `stratus run` run it, so a deck check passes gets past the configuration at run time.
  std::function<MemoryNeed(const io::Deck&)> configure;
};

class SolverRegistry {
 public:
  /// Adds a solver; throws std::logic_error on a duplicate name.
  void add(SolverEntry entry);
  [[nodiscard]] const SolverEntry* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const std::vector<SolverEntry>& entries() const noexcept { return entries_; }

 private:
  std::vector<SolverEntry> entries_;
};

/// Registers every solver built into Stratus.
void register_builtin_solvers(SolverRegistry& registry);

/// The sections every deck has, whatever its solver: [run] (solver, steps, name) and [output].
Schema common_schema(const SolverRegistry& registry);

/// Reads the deck at `path` (rank 0 reads, every rank receives the text), applies the
/// `overrides`, and checks it against the common sections plus those of its solver.
/// Collective over ctx.comm(). Throws InputError/DeckError.
io::Deck load_run_deck(const Context& ctx, const SolverRegistry& registry, const std::string& path,
                       const std::vector<io::Override>& overrides);

/// The signal numbers of the deck's `checkpoint.signals`.
std::vector<int> checkpoint_signals(const io::Deck& deck);

/// Creates the deck's solver and runs it through run_solver. Collective. The deck's checkpoint
/// signals are watched from before the solver's setup: a signal during setup or resume stops
/// the run with a checkpoint after its first step (exit 75) instead of killing the process.
void run_deck(Context& ctx, const SolverRegistry& registry, const io::Deck& deck,
              const RunOptions& options = {});

/// The time loop every solver shares: resume (options.restart), run to run.steps, write
/// checkpoints (every N steps, every T seconds or "auto", at the end), and on a signal or
/// before the wall-time limit write one and throw StopRequested (exit code 75). Collective.
void run_solver(Context& ctx, const io::Deck& deck, Solver& solver, const RunOptions& options);

/// Declares [checkpoint] (shared by every solver) in `schema`.
void declare_checkpoint_section(Schema& schema);

/// The input reference (Markdown) of every section of every registered solver; written to
/// docs/input-reference.md by `stratus schema`.
std::string input_reference_markdown(const SolverRegistry& registry);

}  // namespace stratus
