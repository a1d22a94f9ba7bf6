// Solvers and the registry that maps deck names ("heat", later "md", ...) to them.
//
// Each solver module registers itself explicitly from register_builtin_solvers() (no static
// self-registration: linkers drop it from static libraries). A registration declares the deck
// sections the solver owns and creates the solver from a checked deck.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/core/schema.hpp"
#include "stratus/io/deck.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace stratus {

/// A solver: owns its fields or particles, launches kernels, runs the time loop and writes
/// its output. Host-side interface (virtual is fine here; kernels never see it).
class Solver {
 public:
  virtual ~Solver() = default;
  /// Runs the time loop to the end of the run.
  virtual void run() = 0;
};

struct SolverEntry {
  std::string name;     ///< value of run.solver
  std::string summary;  ///< one line for --help and the input reference
  std::function<void(Schema&)> declare_sections;
  std::function<std::unique_ptr<Solver>(Context&, const io::Deck&)> create;
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

/// Creates the deck's solver and runs it. Collective.
void run_deck(Context& ctx, const SolverRegistry& registry, const io::Deck& deck);

/// The input reference (Markdown) of every section of every registered solver; written to
/// docs/input-reference.md by `stratus schema`.
std::string input_reference_markdown(const SolverRegistry& registry);

}  // namespace stratus
