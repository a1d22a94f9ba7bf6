// Where a run writes its files: OUTPUT_DIR/NAME + suffix, from [output] dir and [run] name.
#pragma once

#include "stratus/io/deck.hpp"

#include <mpi.h>

#include <string>
#include <string_view>

namespace stratus::io {

/// Where a run's files go, resolved once from [output] dir and [run] name: solvers and the
/// driver keep this, not the deck.
struct OutputPaths {
  std::string dir;   ///< output.dir
  std::string name;  ///< run_name(deck)

  static OutputPaths from(const Deck& deck);
  /// dir / name + suffix, e.g. "output/heat_decay.h5".
  [[nodiscard]] std::string path(std::string_view suffix) const;
};

/// The run's name: run.name, or the deck file's name without its extension when empty.
std::string run_name(const Deck& deck);

/// output.dir / run_name(deck) + suffix, e.g. "output/heat_decay.h5".
std::string output_path(const Deck& deck, const std::string& suffix);

/// Creates output.dir (and parents) on rank 0. Collective: every rank throws the same
/// RuntimeError (naming the directory and the reason) if it cannot be created or written.
void prepare_output_dir(MPI_Comm comm, const Deck& deck);

}  // namespace stratus::io
