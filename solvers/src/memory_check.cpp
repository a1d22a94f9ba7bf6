// The memory a run needs at the least, against what its hosts have: a deck whose arrays cannot
// fit is refused before anything is allocated, naming the key and the figures (instead of
// minutes of paging and std::bad_alloc, or the kernel's OOM killer).
#include "stratus/core/error.hpp"
#include "stratus/solvers/solver.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstring>
#include <utility>

namespace stratus {
namespace {

/// Physical memory of this host in bytes (0 when the system does not say).
double host_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<double>(pages) * static_cast<double>(size) : 0.0;
}

}  // namespace

MemoryNeed memory_of(const std::vector<std::int64_t>& counts, double bytes_each, std::string key,
                     const std::string& noun, const std::string& content) {
  double count = 1;
  for (const std::int64_t c : counts) count *= static_cast<double>(c);
  return {count * bytes_each, std::move(key),
          fmt::format("{:.4g} {} x {:g} bytes: {}", count, noun, bytes_each, content)};
}

std::string bytes_text(double bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (u + 1 < kUnits.size() && std::abs(bytes) >= 1024.0) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, kUnits[u]);
}

void check_memory(const Context& ctx, const io::Deck& deck, const MemoryNeed& need, bool this_run) {
  if (need.bytes <= 0) return;  // known only at set-up
  const int ranks = ctx.size();
  if (!(need.bytes < 0x1p63)) {
    throw deck.error_at(need.key,
                        fmt::format("the run needs at least {} ({}): no machine has that much "
                                    "memory",
                                    bytes_text(need.bytes), need.what));
  }
  // The ranks of each host, and that host's memory.
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Comm_split_type(ctx.comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int on_host = 1;
  MPI_Comm_size(host, &on_host);
  MPI_Comm_free(&host);
  const double have = host_memory();
  const double share = need.bytes * on_host / ranks;
  // The host that lacks the most, relative to its memory; its figures for the message.
  struct {
    double ratio;
    int rank;
  } mine{have > 0 ? share / have : 0.0, ctx.rank()}, worst{};
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, ctx.comm());
  std::array<double, 3> figures{share, have, static_cast<double>(on_host)};
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  MPI_Bcast(figures.data(), 3, MPI_DOUBLE, worst.rank, ctx.comm());
  MPI_Bcast(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, worst.rank, ctx.comm());
  if (this_run)  // `check` prints the resolved deck alone on stdout
    ctx.log().info(
        "memory: at least {} in total ({}), {} on host {} for its {} of {} rank(s), "
        "which has {}",
        bytes_text(need.bytes), need.what, bytes_text(figures[0]), name,
        static_cast<int>(figures[2]), ranks, bytes_text(figures[1]));
  if (worst.ratio <= 1.0) return;
  const std::string lack = fmt::format(
      "the run needs at least {} ({}); on host {} its {} of {} rank(s) need {}, more than the "
      "host's {} of memory",
      bytes_text(need.bytes), need.what, name, static_cast<int>(figures[2]), ranks,
      bytes_text(figures[0]), bytes_text(figures[1]));
  if (!this_run) {
    ctx.log().warn("{}: {} if it runs on these hosts", need.key, lack);
    return;
  }
  throw deck.error_at(need.key, lack + ": run on more hosts, or make the problem smaller");
}

}  // namespace stratus
