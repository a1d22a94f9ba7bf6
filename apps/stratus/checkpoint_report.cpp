#include "checkpoint_report.hpp"

#include "stratus/io/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace stratus::app {

std::string checkpoint_report(const Context& ctx, const SolverRegistry& registry,
                              const std::string& path, bool verify, const std::string& deck_path) {
  // A part brings its sibling parts: the report is of the whole checkpoint.
  io::CheckpointReader reader(ctx.comm(), io::checkpoint_files(path));
  std::string out;
  if (reader.paths().size() > 1)
    out += fmt::format("\nParts:          {} files, one a host: {}\n", reader.paths().size(),
                       fmt::join(reader.paths(), ", "));
  const auto& info = reader.info();
  out += fmt::format("\nCheckpoint:     solver {}, step {}, time {:.17g}, dt {:.17g}\n",
                     info.solver, info.step, info.time, info.dt);
  out += fmt::format("Written as:     decomposition {} on {}, units {}\n", info.decomposition,
                     info.backend, info.units.empty() ? "-" : info.units);
  if (verify) {
    reader.verify();
    out += fmt::format(
        "Verified:       completion marker, manifest and every dataset checksum "
        "({:.1f} MB)\n",
        static_cast<double>(reader.bytes()) / 1e6);
  }
  if (!deck_path.empty()) {
    const io::Deck deck = load_run_deck(ctx, registry, deck_path, {});
    const io::Deck stored =
        io::load_deck(path + ":/stratus/deck", reader.deck_text(), std::vector<io::Override>{},
                      deck.schema(), [](const std::string&, Schema&) {});
    const auto diffs = stored.differences(deck);
    out += fmt::format("Deck changes:   {} key(s) differ between the checkpoint and {}\n",
                       diffs.size(), deck_path);
    for (const auto& d : diffs)
      out += fmt::format("  {}: {} in the checkpoint, {} in {}\n", d.key, d.before, d.after,
                         deck_path);
  }
  return out;
}

}  // namespace stratus::app
