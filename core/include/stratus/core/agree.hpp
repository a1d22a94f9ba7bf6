// Agreeing on a failure over the ranks: the rare path of every collective check.
#pragma once

#include <mpi.h>

#include <string>

namespace stratus {

/// The message of the lowest rank whose `local` is not empty, on every rank ("" when no rank
/// has one). Collective: call it on every rank, then throw on all of them alike.
std::string agree_on_message(MPI_Comm comm, const std::string& local);

}  // namespace stratus
