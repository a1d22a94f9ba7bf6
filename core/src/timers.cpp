#include "stratus/core/timers.hpp"

#include <fmt/format.h>

#include <algorithm>
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

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::compute:
      return "compute";
    case Phase::neighbor:
      return "neighbor/FFT";
    case Phase::communication:
      return "communication";
    case Phase::output:
      return "output";
    case Phase::checkpoint:
      return "checkpoint";
    case Phase::other:
      break;
  }
  return "other";
}

Timers::Scope::Scope(Timers& owner, std::string name, Phase phase)
    : owner_(owner), name_(std::move(name)), phase_(phase), start_(0), outer_(owner.open_) {
  if (owner_.hooks_.push_region != nullptr) owner_.hooks_.push_region(name_);
  owner_.open_ = this;
  start_ = wall_seconds();
}

Timers::Scope::~Scope() {
  if (owner_.hooks_.fence != nullptr) owner_.hooks_.fence();
  const double elapsed = wall_seconds() - start_;
  auto& e = owner_.entries_[name_];
  if (e.calls == 0) e.phase = phase_;
  e.seconds += elapsed;
  e.exclusive += elapsed - inner_;
  e.calls += 1;
  owner_.open_ = outer_;
  if (outer_ != nullptr) outer_->inner_ += elapsed;
  if (owner_.hooks_.pop_region != nullptr) owner_.hooks_.pop_region();
}

void Timers::add(const std::string& name, double seconds, Phase phase) {
  auto& e = entries_[name];
  if (e.calls == 0) e.phase = phase;
  e.seconds += seconds;
  e.exclusive += seconds;
  e.calls += 1;
  if (open_ != nullptr) open_->inner_ += seconds;
}

void Timers::carve(const std::string& from, const std::string& to, double seconds, Phase phase) {
  auto& source = entries_[from];
  const double moved = std::min(seconds, source.exclusive);
  if (moved <= 0) return;
  source.exclusive -= moved;
  auto& e = entries_[to];
  if (e.calls == 0) e.phase = phase;
  e.seconds += moved;
  e.exclusive += moved;
  e.calls += 1;
}

double Timers::seconds(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? 0.0 : it->second.seconds;
}

std::array<double, kPhaseCount> Timers::phase_seconds() const {
  std::array<double, kPhaseCount> out{};
  for (const auto& [name, e] : entries_) out[static_cast<std::size_t>(e.phase)] += e.exclusive;
  return out;
}

std::vector<Timers::Summary> Timers::summarize(MPI_Comm comm) const {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // The union of every rank's timer names ("phase name\n" each), in the same order everywhere.
  std::string mine;
  for (const auto& [name, e] : entries_)
    mine += fmt::format("{} {}\n", static_cast<int>(e.phase), name);
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                 MPI_CHAR, comm);
  std::map<std::string, Phase> names;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const auto end = all.find('\n', pos);
    const auto space = all.find(' ', pos);
    names.emplace(all.substr(space + 1, end - space - 1),
                  static_cast<Phase>(std::stoi(all.substr(pos, space - pos))));
    pos = end + 1;
  }

  std::vector<Summary> out;
  std::vector<double> mine_t, mins, maxs, sums;
  for (const auto& [name, phase] : names) {
    auto it = entries_.find(name);
    mine_t.push_back(it == entries_.end() ? 0.0 : it->second.seconds);
    mine_t.push_back(it == entries_.end() ? 0.0 : it->second.exclusive);
  }
  mins.resize(mine_t.size());
  maxs.resize(mine_t.size());
  sums.resize(mine_t.size());
  const int n = static_cast<int>(mine_t.size());
  MPI_Allreduce(mine_t.data(), mins.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine_t.data(), maxs.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine_t.data(), sums.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  std::size_t k = 0;
  for (const auto& [name, phase] : names) {
    Summary s;
    s.name = name;
    s.phase = phase;
    s.min = mins[2 * k];
    s.max = maxs[2 * k];
    s.mean = sums[2 * k] / size;
    s.exclusive_mean = sums[2 * k + 1] / size;
    auto it = entries_.find(name);
    s.calls = it == entries_.end() ? 0 : it->second.calls;
    out.push_back(s);
    ++k;
  }
  return out;
}

}  // namespace stratus
