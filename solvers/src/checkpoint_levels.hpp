// The checkpoint levels of a run, which checkpoint a restart can use from them, and the
// resumer that restores a solver from it.
//
// The durable level (checkpoint.dir) is one directory every host sees. The node-local level
// (checkpoint.local) is the same path on every host, each host's own disk. A run on one host
// writes whole checkpoints there; a run on several hosts writes one part per host
// (NAME.stepS.partKofH.h5, io/checkpoint.hpp), each copied to the durable level by its host.
// A checkpoint can be resumed from when every one of its parts is on the durable level or on
// the node-local disk of a host of this run: a part that only a host's disk holds is copied
// to the durable level by that host before the ranks read it.
#pragma once

#include "run_config.hpp"
#include "stratus/core/context.hpp"
#include "stratus/io/checkpoint.hpp"

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace stratus {

class Solver;
class StateDescriptor;
namespace io {
class Deck;
}

/// The hosts of a run: ranks that share a node (MPI_COMM_TYPE_SHARED) form a host; hosts are
/// numbered by their lowest rank. Collective to build.
class HostLayout {
 public:
  explicit HostLayout(MPI_Comm world);
  ~HostLayout();
  HostLayout(const HostLayout&) = delete;
  HostLayout& operator=(const HostLayout&) = delete;

  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }  ///< this host's ranks
  [[nodiscard]] int host() const noexcept { return host_; }
  [[nodiscard]] int hosts() const noexcept { return static_cast<int>(leaders_.size()); }
  [[nodiscard]] bool leader() const noexcept { return host_rank_ == 0; }
  /// The world rank of host `h`'s first rank (the one that lists and copies its files).
  [[nodiscard]] int leader_of(int h) const { return leaders_.at(static_cast<std::size_t>(h)); }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int host_ = 0, host_rank_ = 0;
  std::vector<int> leaders_;
  std::string name_;
};

/// The checkpoint levels of a run: the durable directory, and the node-local one when set.
struct Levels {
  const io::CheckpointStore& durable;
  const io::CheckpointStore* local = nullptr;
  const HostLayout& layout;

  /// Whether checkpoints are written as one part per host (node-local level, several hosts).
  [[nodiscard]] bool parts() const { return local != nullptr && layout.hosts() > 1; }
  [[nodiscard]] std::string dirs() const;
};

/// One checkpoint a restart may use: the files to read (one whole file, or every part), the
/// copies to make first (a part only a host's node-local disk holds, copied by that host to
/// the durable level), and every file that belongs to it (to set aside if it is damaged).
struct RestartCandidate {
  struct File {
    int holder = 0;  ///< the world rank that can see `path` (0 for the durable level)
    std::string path;
  };
  struct Copy {
    int holder = 0;
    std::string from, to;
  };
  std::int64_t step = -1;
  std::vector<std::string> read;  ///< the files the ranks read (all visible to every rank)
  std::vector<Copy> copies;
  std::vector<File> files;
  std::string level;  ///< "durable level", "node-local level", or which parts came from where
};

/// The checkpoints to try, newest first (--restart auto), or the one --restart names (with its
/// sibling parts); empty for a fresh start (--restart none removes the run's checkpoints from
/// every level and host). Leftover partial files are removed. Collective.
std::vector<RestartCandidate> restart_candidates(const Context& ctx, const RunOptions& options,
                                                 const Levels& levels, const std::string& run_name);

/// Makes `c.copies` (each by its holder, verified at the destination). Returns "" or why one
/// failed, the same on every rank. Collective.
std::string fetch_parts(const Context& ctx, const RestartCandidate& c);

/// Restores `solver` from the newest usable checkpoint: verified, then checked against the
/// deck (another solver, or a physics key changed without --allow-deck-change, is refused).
/// Returns the step resumed at, -1 for a fresh start. Collective.
std::int64_t resume(Context& ctx, const io::Deck& deck, Solver& solver,
                    const StateDescriptor& state, const RunOptions& options, const Levels& levels,
                    const std::string& run_name);

/// Renames every file of `c` to NAME + suffix, each by the rank that can see it. Collective.
void set_aside(const Context& ctx, const RestartCandidate& c, const char* suffix,
               const std::string& why);

}  // namespace stratus
