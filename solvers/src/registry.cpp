#include "run_config.hpp"
#include "run_report.hpp"
#include "stratus/core/signals.hpp"
#include "stratus/core/text.hpp"
#include "stratus/io/output.hpp"
#include "stratus/io/run_lock.hpp"
#include "stratus/solvers/solver.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace stratus {

void SolverRegistry::add(SolverEntry entry) {
  if (find(entry.name)) throw std::logic_error("solver registered twice: " + entry.name);
  entries_.push_back(std::move(entry));
}

const SolverEntry* SolverRegistry::find(std::string_view name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> SolverRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

Schema common_schema(const SolverRegistry& registry) {
  Schema schema;
  auto& run = schema.section("run", "What to run and for how long.", "run");
  run.add_string("solver", "The solver that runs this deck.").one_of(registry.names());
  run.add_int("steps", "Number of time steps to run.").at_least(0).may_change_on_restart();
  run.add_string("name",
                 "Name of the run, used for output file names; \"\" takes the deck file's name "
                 "without its extension.")
      .plain_file_name()
      .set_default(std::string())
      .may_change_on_restart();
  run.add_real("price_per_node_hour",
               "Price of one node for one hour, in any currency: the run summary then estimates "
               "the run's cost (nodes x wall hours x price) and its cost per unit of simulated "
               "time (0: no estimate).")
      .at_least(0.0)
      .set_default(0.0)
      .may_change_on_restart();
  run.add_string(
         "hang_timeout",
         "End the run (exit 1) when it makes no progress for this long (a duration such as "
         "\"5min\", or \"off\"): no step or checkpoint completed, as when a host of the run is "
         "cut off and its peers wait in MPI calls that TCP gives up on only after many minutes. "
         "The limit grows to 10 x the longest step or checkpoint seen. The same command then "
         "resumes from the newest checkpoint.")
      .set_default(std::string("5min"))
      .may_change_on_restart();
  auto& out = schema.section("output", "Where and how results are written.", "run");
  out.may_change_on_restart();
  out.add_string("dir",
                 "Directory for every file the run writes (created if missing); "
                 "`stratus run --output-dir` sets it.")
      .set_default(std::string("output"));
  out.add_string("progress_every",
                 "When stdout is not a terminal (batch logs): log a progress line every this much "
                 "wall time (a duration such as \"60s\" or \"5min\"), or \"off\" (no progress "
                 "line at all, on a terminal neither). On a terminal the line is redrawn in place "
                 "4 times a second. `stratus run --progress-every` sets it.")
      .set_default(std::string("60s"));
  declare_checkpoint_section(schema);
  return schema;
}

io::Deck load_run_deck(const Context& ctx, const SolverRegistry& registry, const std::string& path,
                       const std::vector<io::Override>& overrides) {
  const std::string text = io::read_deck_file(ctx.comm(), path);
  return io::load_deck(path, text, overrides, common_schema(registry),
                       [&](const std::string& solver, Schema& schema) {
                         registry.find(solver)->declare_sections(schema);
                       });
}

void run_deck(Context& ctx, const SolverRegistry& registry, const io::Deck& deck,
              const RunOptions& options) {
  const auto& log = ctx.log();
  (void)RunConfig::from(deck, options);  // bad durations are refused before the set-up
  io::prepare_output_dir(ctx.comm(), deck);
  std::string taken_over;  // a stale lock's takeover, logged once the run log is open
  const io::RunLock lock(ctx.comm(), deck.string("output.dir"),
                         [&taken_over](const std::string& m) { taken_over = m; });
  open_run_log(ctx, deck);
  if (!taken_over.empty()) log.warn("{}", taken_over);
  log.info("{}", deck.to_toml());
  const SignalWatch signals(checkpoint_signals(deck));
  const SolverEntry* entry = registry.find(deck.string("run.solver"));
  check_memory(ctx, deck, entry->configure(deck), true);  // before anything is allocated
  auto solver = entry->create(ctx, deck);
  run_solver(ctx, deck, *solver, options);
}

namespace {

std::string markdown_escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

void section_markdown(std::string& out, const SectionSpec& s) {
  out += fmt::format("### `[{}{}{}]`\n\n{}\n\n", s.repeated ? "[" : "", s.path,
                     s.repeated ? "]" : "", s.doc);
  if (s.optional) out += "Optional section: give it whole or leave it out.\n\n";
  if (s.restart_free)
    out +=
        "Every key here may change on restart (a run resumed from a checkpoint may set it "
        "differently).\n\n";
  if (s.params.empty()) return;
  out += "| key | type and allowed values | default | unit | description |\n";
  out += "|---|---|---|---|---|\n";
  for (const auto& p : s.params) {
    out += fmt::format(
        "| `{}` | {} | {} | {} | {} |\n", p.name, markdown_escape(p.expectation()),
        p.default_value ? fmt::format("`{}`", markdown_escape(to_toml(*p.default_value)))
                        : std::string("**required**"),
        p.unit_name.empty() ? "" : p.unit_name,
        markdown_escape(p.doc) + (p.restart_free ? " *May change on restart.*" : ""));
  }
  out += "\n";
}

}  // namespace

std::string input_reference_markdown(const SolverRegistry& registry) {
  std::string out =
      "# Input reference\n\n"
      "<!-- Generated by `stratus schema` from the parameter schema. Do not\n"
      "     edit: change the schema and run tools/gen-docs.sh. A test fails when this file is\n"
      "     out of date. -->\n\n"
      "A deck is a TOML file. `[run]` picks the solver; each solver owns its own sections.\n"
      "Unknown keys, wrong types, out-of-range values and missing required keys are errors\n"
      "(exit code 2) reported with `file:line:column` before any work starts. Any key can be\n"
      "overridden on the command line with `--set section.key=value`, with the same checks.\n\n"
      "## Sections of every deck\n\n";
  const Schema common = common_schema(registry);
  for (const auto& s : common.sections()) section_markdown(out, s);
  for (const auto& e : registry.entries()) {
    out += fmt::format("## Solver `{}`\n\n{}.\n\n", e.name, e.summary);
    Schema schema;
    e.declare_sections(schema);
    for (const auto& s : schema.sections()) section_markdown(out, s);
  }
  return out;
}

}  // namespace stratus
