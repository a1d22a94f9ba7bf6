// The driver's configuration as typed values: [run], [output] and [checkpoint] read once from
// the checked deck (with the command line's --walltime), so that the time loop and the run
// summary never look a key up by name. Host code.
#pragma once

#include "stratus/io/deck.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/solver.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace stratus {

/// When and where checkpoints are written ([checkpoint], docs/checkpointing.md).
struct CheckpointPolicy {
  std::string dir;    ///< checkpoint.dir, or OUTPUT_DIR/checkpoints: the durable level
  std::string local;  ///< checkpoint.local: the node-local level ("": one level)
  std::int64_t every = 0;
  enum class Interval { off, fixed, automatic } interval = Interval::automatic;
  double interval_seconds = 0;
  double mtbi = 0;        ///< seconds; with a node-local level, between losses of a host
  double mtbi_local = 0;  ///< seconds between interruptions a host's disk survives
  double flush_rate = 0;  ///< bytes/s of each host's copy to the durable level (0: no limit)
  int keep = 2;
  bool at_end = true;
  std::vector<int> signals;
  double walltime = 0;  ///< from the deck or the command line, seconds; 0 = none

  /// Seconds between checkpoints by wall time (infinity: off). `last_cost` is the seconds the
  /// last checkpoint took (<= 0: none yet, estimated from `state_bytes` at 200 MB/s).
  [[nodiscard]] double seconds_between(double last_cost, std::uint64_t state_bytes) const;
  /// The same with the mean time between interruptions `m` (seconds).
  [[nodiscard]] double seconds_between(double last_cost, std::uint64_t state_bytes, double m) const;
};

struct RunConfig {
  std::string solver;  ///< run.solver
  std::int64_t steps = 0;
  double price_per_node_hour = 0;
  double progress_every = 0;  ///< seconds between plain progress lines (infinity: off)
  double hang_timeout = 0;    ///< run.hang_timeout in seconds (infinity: off)
  io::OutputPaths output;
  std::string deck_path;  ///< as given on the command line
  std::string deck_toml;  ///< the resolved deck, stored in every checkpoint
  CheckpointPolicy checkpoint;

  /// Throws DeckError naming the key for a duration that does not parse.
  static RunConfig from(const io::Deck& deck, const RunOptions& options);
};

}  // namespace stratus
