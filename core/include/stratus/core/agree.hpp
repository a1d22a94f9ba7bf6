// Agreeing on a failure over the ranks (the rare path of every collective check), and
// gathering every rank's text at rank 0.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace stratus {

/// The message of the lowest rank whose `local` is not empty, on every rank ("" when no rank
/// has one). Collective: call it on every rank, then throw on all of them alike.
std::string agree_on_message(MPI_Comm comm, const std::string& local);

/// Every rank's `text`, in rank order, on rank 0 (an empty list on the other ranks).
/// Collective.
std::vector<std::string> gather_text(MPI_Comm comm, const std::string& text);

}  // namespace stratus
