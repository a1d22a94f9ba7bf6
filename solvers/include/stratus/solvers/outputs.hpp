// The outputs a solver declares (diagnostics series, trajectory frames, field files) and the
// schedule the shared driver writes them on. A solver says what each output is and when it is
// due; the driver opens them, writes them after the steps they are due at, makes them durable
// before each checkpoint and closes them. Host-side (kernels never see it).
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/io/series.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stratus {

class Solver;

/// One output and its schedule. Only `write` is required.
struct Output {
  std::string name;  ///< for messages: "thermo", "trajectory", "field frames"
  /// Written after every step that is a multiple of `every` (0: on no count).
  std::int64_t every = 0;
  /// A further condition, checked after each step (e.g. "the simulated time reached the next
  /// frame time"); empty: none.
  std::function<bool()> also_when;
  bool at_start = true;  ///< written at step 0 of a fresh run (right after `open`)
  bool at_end = true;    ///< written after the run's last step (run.steps or the end reached)
  /// The step before a write must prepare it (MD computes energies only on such steps): the
  /// driver tells the solver so when this output is due after the coming step.
  bool prepared_by_step = false;
  /// Opens the output. `resumed_at` < 0: a fresh run (write headers). Otherwise the state came
  /// from the checkpoint of step `resumed_at`: keep what the output holds up to that step and
  /// drop what was written after it. Collective. Empty: nothing to open.
  std::function<void(std::int64_t resumed_at)> open;
  std::function<void()> write;  ///< writes the current state's record. Collective.
  /// Makes what was written durable (flushed, synced, a trajectory part closed), so that a
  /// checkpoint committed next never runs ahead of it. Collective. Empty: nothing to do.
  std::function<void()> sync;
  std::function<void()> close;  ///< at the end of the run (or a stop). Collective.
};

/// A CSV series (diagnostics, thermo rows) as an output named `name`, a row every `every`
/// steps and at the start and the end: the file `path` with `header` (column names last) is
/// opened into `file` (io::SeriesFile keeps the rows up to a resumed step and drops later ones),
/// then `after_open` runs (a resume's notes, state the first row needs; may be empty) and the
/// log gets `log_header` (its column names; "": none). `row` adds the current state's row.
/// Synced before each checkpoint, closed at the end.
Output series_output(const Context& ctx, std::unique_ptr<io::SeriesFile>& file, std::string name,
                     std::int64_t every, std::string path, std::string header,
                     std::string log_header, std::function<void()> row,
                     std::function<void(std::int64_t resumed_at)> after_open = {});

/// What a solver declares: its outputs, in the order they are opened and written, and the
/// lines it logs when the run ends (a solver's own summary, after the outputs are closed).
class OutputDescriptor {
 public:
  void add(Output output);
  /// Called after the outputs are closed (a solver's summary lines).
  void at_close(std::function<void()> summary);

  // The driver's side.
  /// Opens every output in order; a fresh run (`resumed_at` < 0) then writes those `at_start`.
  void open(std::int64_t resumed_at) const;
  /// Advances `solver` (whose outputs these are) one step, telling it whether an output it
  /// prepares is due after it, and writes the outputs due after it. Returns true when the run
  /// ends with this step (`final_step` reached or the solver's end). Collective.
  bool advance(Solver& solver, std::int64_t final_step) const;
  void sync() const;
  void close() const;
  [[nodiscard]] const std::vector<Output>& outputs() const noexcept { return outputs_; }

 private:
  /// Due by its count or as the last step's (what the step count foresees; `also_when` aside).
  [[nodiscard]] static bool scheduled(const Output& o, std::int64_t step, bool last);
  std::vector<Output> outputs_;
  std::vector<std::function<void()>> summaries_;
};

}  // namespace stratus
