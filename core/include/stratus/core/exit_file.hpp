// The file through which rank 0 tells tools/stratus-mpiexec how the ranks are doing
// (docs/cloud.md): mpiexec's own exit code does not say it, and mpiexec may wait without end
// for a lost host's daemon, in its launch or in its teardown.
#pragma once

#include <string>

namespace stratus {

/// Replaces the content of $STRATUS_EXIT_FILE with `line` (when that variable is set; the
/// wrapper sets it). Rank 0 writes "started" once every rank is in, then the run's exit code
/// before MPI_Finalize, or 1 when its watchdog ends it. The wrapper gives mpiexec
/// STRATUS_TEARDOWN_TIMEOUT seconds to end after a code is written. Safe to call from any thread
/// of a process whose other threads are blocked (it touches no MPI, only that file).
void record_in_exit_file(const std::string& line);

}  // namespace stratus
