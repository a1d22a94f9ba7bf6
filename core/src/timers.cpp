#include "stratus/core/timers.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>

namespace stratus {

double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

namespace {
const double g_process_start = wall_seconds();
}  // namespace

double process_start_seconds() { return g_process_start; }

Timers::Scope::Scope(Timers& owner, std::string name)
    : owner_(owner), name_(std::move(name)), start_(wall_seconds()) {
  Kokkos::Profiling::pushRegion(name_);
}

Timers::Scope::~Scope() {
  Kokkos::fence();
  owner_.add(name_, wall_seconds() - start_);
  Kokkos::Profiling::popRegion();
}

void Timers::add(const std::string& name, double seconds) {
  auto& e = entries_[name];
  e.seconds += seconds;
  e.calls += 1;
}

double Timers::seconds(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? 0.0 : it->second.seconds;
}

std::vector<Timers::Summary> Timers::summarize(MPI_Comm comm) const {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // Names are taken from rank 0 so that every rank reduces the same list in the same order.
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string names;
  for (const auto& [name, e] : entries_) names += name + '\n';
  int length = static_cast<int>(names.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  names.resize(static_cast<std::size_t>(length));
  MPI_Bcast(names.data(), length, MPI_CHAR, 0, comm);

  std::vector<Summary> out;
  std::size_t pos = 0;
  while (pos < names.size()) {
    auto end = names.find('\n', pos);
    Summary s;
    s.name = names.substr(pos, end - pos);
    pos = end + 1;
    double t = seconds(s.name);
    MPI_Allreduce(&t, &s.min, 1, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(&t, &s.max, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&t, &s.mean, 1, MPI_DOUBLE, MPI_SUM, comm);
    s.mean /= size;
    auto it = entries_.find(s.name);
    s.calls = it == entries_.end() ? 0 : it->second.calls;
    out.push_back(s);
  }
  return out;
}

}  // namespace stratus
