#include "run_report.hpp"

#include "stratus/core/agree.hpp"
#include "stratus/core/device.hpp"
#include "stratus/core/duration.hpp"
#include "stratus/core/memory.hpp"
#include "stratus/core/text.hpp"
#include "stratus/core/version.hpp"
#include "stratus/io/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>

namespace stratus {

namespace fs = std::filesystem;

double progress_interval(const io::Deck& deck) {
  const auto& text = deck.string("output.progress_every");
  if (text == "off") return std::numeric_limits<double>::infinity();
  const auto d = parse_duration(text);
  if (!d || *d <= 0)
    throw deck.error_at(
        "output.progress_every",
        fmt::format("expected \"off\" or {} (> 0), found \"{}\"", kDurationHelp, text));
  return *d;
}

std::string clock_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

std::string json_string(std::string_view text) { return quoted_string(text); }

std::string resolved_deck_text(const io::Deck& deck) {
  std::string text = deck.to_toml();
  if (!deck.string("run.name").empty()) return text;
  // to_toml writes `name = ""` padded to the section's key width, then "# default".
  const auto section = text.find("\n[run]\n");
  if (section == std::string::npos) return text;
  const auto end = text.find("\n[", section + 1);
  for (auto at = text.find("\nname ", section); at != std::string::npos && at < end;
       at = text.find("\nname ", at + 1)) {
    const auto eol = text.find('\n', at + 1);
    const std::string line = text.substr(at + 1, eol - at - 1);
    const auto eq = line.find("= \"\"");
    if (eq == std::string::npos) continue;
    const std::string value = json_string(io::run_name(deck));  // a TOML basic string too
    text.replace(at + 1, eol - at - 1,
                 fmt::format("{:<40} # the deck file's name", line.substr(0, eq + 2) + value));
    break;
  }
  return text;
}

void open_run_log(const Context& ctx, const io::Deck& deck) {
  if (ctx.rank() != 0) return;
  const auto& log = ctx.log();
  const std::string path = io::output_path(deck, ".log");
  const std::time_t now = std::time(nullptr);
  char when[64] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  const std::string header =
      fmt::format("\n==== stratus run {} | stratus {} ({}) | {} rank(s) | deck {} ====\n", when,
                  stratus_version(), git_revision(), ctx.size(), deck.path());
  try {
    log.open_file(path, header);
  } catch (const Error& e) {
    log.warn("{}: the run goes on without a log file", e.what());
  }
  const std::string deck_path = io::output_path(deck, ".deck.toml");
  std::ofstream f(deck_path, std::ios::trunc);
  f << resolved_deck_text(deck);
  if (!f) log.warn("cannot write the resolved deck to {}", deck_path);
}

namespace {

/// A JSON number, or null when not finite.
std::string json_number(double x) { return std::isfinite(x) ? fmt::format("{}", x) : "null"; }

/// The phase's key in summary.json: "compute", "neighbor_fft", "communication", ...
std::string phase_key(Phase p) {
  return p == Phase::neighbor ? std::string("neighbor_fft") : std::string(phase_name(p));
}

/// "tau", or "t" for dimensionless simulated time.
std::string time_symbol(const Solver::TimeUnits& u) { return u.unit.empty() ? "t" : u.unit; }

/// 1.23e+06 style for large rates, plain for small ones.
std::string rate(double x) { return fmt::format("{:.3g}", x); }

}  // namespace

Progress::Progress(const Logger& log, const Solver& solver, std::int64_t final_step, double start,
                   double plain_interval)
    : log_(log),
      solver_(solver),
      units_(solver.time_units()),
      work_per_step_(solver.work_per_step()),
      work_unit_(solver.work_unit()),
      first_step_(solver.current_step()),
      final_step_(final_step),
      start_(start),
      first_time_(solver.current_time()),
      interval_(!std::isfinite(plain_interval) ? plain_interval
                : log.terminal()               ? 0.25
                                               : plain_interval),
      next_(start + interval_) {
  if (log.rank() != 0 || !log.enabled(LogLevel::info))
    next_ = std::numeric_limits<double>::infinity();
}

std::string Progress::line(double now, std::optional<double> last_checkpoint_at) const {
  const std::int64_t step = solver_.current_step();
  const double elapsed = now - start_;
  const double done = static_cast<double>(step - first_step_);
  const double steps_per_s = elapsed > 0 ? done / elapsed : 0.0;
  // Done: of run.steps, or of the simulated end time when the solver has one and is nearer it.
  double percent = 100.0 * static_cast<double>(step) /
                   static_cast<double>(std::max<std::int64_t>(final_step_, 1));
  double fraction =
      done / static_cast<double>(std::max<std::int64_t>(final_step_ - first_step_, 1));
  const double end = solver_.end_time();
  if (end > first_time_) {
    const double by_time = (solver_.current_time() - first_time_) / (end - first_time_);
    if (by_time > fraction) {
      fraction = by_time;
      percent = 100.0 * solver_.current_time() / end;
    }
  }
  const std::string eta =
      fraction > 0 ? clock_duration(elapsed * (1.0 - std::min(fraction, 1.0)) / fraction) : "?";
  const double simulated = elapsed > 0 ? (solver_.current_time() - first_time_) / elapsed : 0.0;
  const std::string checkpoint =
      last_checkpoint_at ? "checkpoint " + clock_duration(now - *last_checkpoint_at) + " ago"
                         : "no checkpoint yet";
  return fmt::format(
      "step {}/{} {:5.1f}% | {} elapsed, ETA {} | {} {}/s, {} {}/{} | {}", step, final_step_,
      percent, clock_duration(elapsed), eta, rate(steps_per_s * work_per_step_), work_unit_,
      rate(simulated * units_.rate_span), time_symbol(units_), units_.rate_span_name, checkpoint);
}

void Progress::show(double now, std::optional<double> last_checkpoint_at) {
  next_ = now + interval_;
  const std::string text = line(now, last_checkpoint_at);
  log_.progress(log_.terminal() ? text : "progress: " + text);
}

namespace {

struct Reduced {
  double min = 0, mean = 0, max = 0;
};

/// min, mean and max over ranks of each value (three collectives for the whole array).
std::vector<Reduced> reduce_over_ranks(MPI_Comm comm, const std::vector<double>& mine) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<double> lo(mine.size()), hi(mine.size()), sum(mine.size());
  MPI_Allreduce(mine.data(), lo.data(), n, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine.data(), hi.data(), n, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(mine.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, comm);
  std::vector<Reduced> out(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) out[i] = {lo[i], sum[i] / size, hi[i]};
  return out;
}

}  // namespace

int count_nodes(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);
  int leader = node_rank == 0 ? 1 : 0, nodes = 0;
  MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, comm);
  return nodes;
}

namespace {

/// Percent of the background copies' time during which the loop ran on (100: never waited).
double flush_overlap(const RunRecord& r) {
  return r.flush_seconds > 0
             ? 100.0 * std::max(0.0, r.flush_seconds - r.flush_wait_seconds) / r.flush_seconds
             : 0.0;
}

/// Every rank's first warnings, on rank 0: distinct texts in order, each with its count.
std::vector<std::pair<std::string, int>> gather_warnings(MPI_Comm comm, const Logger& log) {
  std::string mine;
  for (const auto& w : log.first_warnings()) mine += w + '\x1e';
  std::string all;
  for (const auto& text : gather_text(comm, mine)) all += text;
  std::vector<std::pair<std::string, int>> out;
  std::size_t pos = 0;
  while (pos < all.size()) {
    const auto end = all.find('\x1e', pos);
    const std::string text = all.substr(pos, end - pos);
    pos = end + 1;
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == text; });
    if (it != out.end())
      ++it->second;
    else if (out.size() < Logger::kKeptWarnings)
      out.emplace_back(text, 1);
  }
  return out;
}

std::string megabytes(double bytes) { return fmt::format("{:.1f} MB", bytes / 1e6); }

/// Writes `text` to `path` through a temporary file, so a reader never sees half of it.
void write_atomically(const std::string& path, const std::string& text, const Logger& log) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    if (!f) {
      log.warn("summary: cannot write {}", tmp);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) log.warn("summary: cannot rename {} to {}: {}", tmp, path, ec.message());
}

/// Everything the run summary shows: reduced over the ranks once (a handful of collectives),
/// then the figures derived from it on rank 0.
struct Summary {
  const RunConfig& config;
  const Solver& solver;
  const RunRecord& r;
  int ranks = 1;
  std::vector<Timers::Summary> timers;
  std::vector<Reduced> reduced;    ///< per phase, then wall time, then host peak bytes
  std::array<double, 2> device{};  ///< device peak bytes: max and sum over ranks
  bool has_device = false;
  long warnings_total = 0;
  std::vector<std::pair<std::string, int>> first_warnings;
  int nodes = 1;
  // Figures (rank 0)
  double wall = 0, wall_mean = 0;
  std::int64_t steps = 0;
  double steps_per_s = 0, work_per_s = 0;
  Solver::TimeUnits units;
  double simulated = 0, simulated_rate = 0, process = 0;
  double host_max = 0, host_sum = 0;
  double price = 0, node_hours = 0, cost = 0, cost_per_span = 0;
  std::string symbol, span_name, summary_path, backend;
  int threads = 1;

  Summary(Context& ctx, const RunConfig& c, const Solver& s, const RunRecord& record)
      : config(c), solver(s), r(record), ranks(ctx.size()) {}
  /// The collectives; false on every rank but 0.
  bool reduce(Context& ctx);
  void derive();
  [[nodiscard]] std::string text() const;
  [[nodiscard]] std::string json() const;
};

bool Summary::reduce(Context& ctx) {
  const MPI_Comm comm = ctx.comm();
  const auto& log = ctx.log();
  timers = ctx.timers().summarize(comm);
  const auto phase_local = ctx.timers().phase_seconds();
  std::vector<double> mine(kPhaseCount + 2);
  double timed = 0;
  for (int p = 0; p < kPhaseCount; ++p) {
    mine[static_cast<std::size_t>(p)] = phase_local[static_cast<std::size_t>(p)];
    if (static_cast<Phase>(p) != Phase::other) timed += phase_local[static_cast<std::size_t>(p)];
  }
  // "other": timers of no phase and whatever no timer covers.
  mine[static_cast<std::size_t>(Phase::other)] = std::max(0.0, r.wall - timed);
  mine[kPhaseCount] = r.wall;
  mine[kPhaseCount + 1] = static_cast<double>(peak_host_bytes());
  reduced = reduce_over_ranks(comm, mine);
  double device_mine = r.device_peak ? static_cast<double>(*r.device_peak) : -1.0;
  MPI_Allreduce(&device_mine, &device[0], 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&device_mine, &device[1], 1, MPI_DOUBLE, MPI_SUM, comm);
  has_device = device[0] >= 0;
  long warnings = log.warnings();
  MPI_Allreduce(&warnings, &warnings_total, 1, MPI_LONG, MPI_SUM, comm);
  first_warnings = gather_warnings(comm, log);
  nodes = count_nodes(comm);
  return ctx.rank() == 0;
}

void Summary::derive() {
  wall = r.wall;  // rank 0's clock, as the progress line's
  wall_mean = reduced[kPhaseCount].mean;
  steps = r.last_step - r.first_step;
  steps_per_s = wall > 0 ? static_cast<double>(steps) / wall : 0.0;
  work_per_s = steps_per_s * solver.work_per_step();
  units = solver.time_units();
  simulated = r.last_time - r.first_time;
  simulated_rate = wall > 0 ? simulated / wall * units.rate_span : 0.0;
  process = wall_seconds() - process_start_seconds();
  host_max = reduced[kPhaseCount + 1].max;
  host_sum = reduced[kPhaseCount + 1].mean * ranks;
  price = config.price_per_node_hour;
  node_hours = nodes * process / 3600.0;
  cost = price * node_hours;
  // The rate of the time loop, without the set-up: what more simulated time would cost.
  cost_per_span = simulated > 0 ? price * nodes * wall / 3600.0 / simulated * units.cost_span : 0.0;
  symbol = time_symbol(units);
  span_name = units.cost_span == 1 ? symbol : fmt::format("{:g} {}", units.cost_span, symbol);
  summary_path = config.output.path(".summary.json");
  backend = kokkos_default_space();
  threads = kokkos_host_threads();
}

std::string Summary::text() const {
  std::string text =
      fmt::format("\nRun summary: {} ({}), {}{}\n", config.output.name, config.solver, r.status,
                  r.stop_detail.empty() ? std::string() : " (" + r.stop_detail + ")");
  text += fmt::format(
      "  steps        {} -> {} ({} steps of run.steps = {}), simulated time {:.6g} -> {:.6g}{}\n",
      r.first_step, r.last_step, steps, r.final_step, r.first_time, r.last_time,
      units.unit.empty() ? "" : " " + units.unit);
  text += fmt::format(
      "  wall time    {} in the time loop, {} set-up; {} rank(s) on {} node(s), {} thread(s) per "
      "rank ({})\n",
      format_duration(wall), format_duration(r.setup), ranks, nodes, threads, backend);
  text += fmt::format("  throughput   {} steps/s, {} {}/s, {} {}/{}\n", rate(steps_per_s),
                      rate(work_per_s), solver.work_unit(), rate(simulated_rate), symbol,
                      units.rate_span_name);
  text += fmt::format("  {:<14} {:>10} {:>7} {:>10} {:>10}   (seconds; min and max over ranks)\n",
                      "phase", "seconds", "% wall", "min", "max");
  for (int p = 0; p < kPhaseCount; ++p) {
    const auto& x = reduced[static_cast<std::size_t>(p)];
    text += fmt::format("  {:<14} {:>10.4f} {:>6.1f}% {:>10.4f} {:>10.4f}\n",
                        phase_name(static_cast<Phase>(p)), x.mean,
                        wall_mean > 0 ? 100.0 * x.mean / wall_mean : 0.0, x.min, x.max);
  }
  if (!timers.empty()) {
    text += fmt::format("  {:<30} {:<14} {:>10} {:>10} {:>10} {:>8}\n", "timer", "phase", "min",
                        "mean", "max", "calls");
    for (const auto& t : timers)
      text += fmt::format("    {:<28} {:<14} {:>10.4f} {:>10.4f} {:>10.4f} {:>8}\n", t.name,
                          phase_name(t.phase), t.min, t.mean, t.max, t.calls);
  }
  text += fmt::format("  memory       host peak {} per rank (max), {} in all", megabytes(host_max),
                      megabytes(host_sum));
  if (has_device)
    text += fmt::format("; device peak {} per rank (max), {} in all", megabytes(device[0]),
                        megabytes(device[1]));
  text += "\n";
  text +=
      fmt::format("  checkpoints  {} written, {:.3f} s ({:.2f}% of the time loop)\n", r.checkpoints,
                  r.checkpoint_seconds, wall > 0 ? 100.0 * r.checkpoint_seconds / wall : 0.0);
  if (r.flushes > 0)
    text += fmt::format(
        "  flushes      {} copied to the durable directory in {:.3f} s, {:.1f}% of it "
        "overlapped with the run (waited {:.3f} s)\n",
        r.flushes, r.flush_seconds, flush_overlap(r), r.flush_wait_seconds);
  if (price > 0)
    text += fmt::format(
        "  cost         {:.4g} ({} node(s) x {:.4g} h at {:g} per node-hour, set-up included); "
        "{:.4g} per {} simulated\n",
        cost, nodes, process / 3600.0, price, cost_per_span, span_name);
  text += fmt::format("  warnings     {}{}\n", warnings_total,
                      warnings_total > 0 ? " (repeated below; every rank's, distinct texts)" : "");
  for (const auto& [w, n] : first_warnings) {
    std::string shown = w;
    for (std::size_t at = shown.find('\n'); at != std::string::npos; at = shown.find('\n', at + 7))
      shown.replace(at, 1, "\n      ");
    text += fmt::format("    {}{}\n", n > 1 ? fmt::format("[x{}] ", n) : "", shown);
  }
  text += fmt::format("  summary      {}", summary_path);
  return text;
}

std::string Summary::json() const {
  std::string j = "{\n";
  auto field = [&](const std::string& name, const std::string& value, bool last = false) {
    j += fmt::format("  {}: {}{}\n", json_string(name), value, last ? "" : ",");
  };
  field("stratus_version", json_string(stratus_version()));
  field("git_revision", json_string(git_revision()));
  field("solver", json_string(config.solver));
  field("run_name", json_string(config.output.name));
  field("deck", json_string(config.deck_path));
  field("output_dir", json_string(config.output.dir));
  field("status", json_string(r.status));
  field("stop_detail", json_string(r.stop_detail));
  field("steps", fmt::format("{{\"run\": {}, \"first\": {}, \"last\": {}, \"target\": {}}}", steps,
                             r.first_step, r.last_step, r.final_step));
  field("simulated_time",
        fmt::format("{{\"start\": {}, \"end\": {}, \"unit\": {}}}", json_number(r.first_time),
                    json_number(r.last_time), json_string(units.unit)));
  field("wall_seconds", json_number(wall));
  field("setup_seconds", json_number(r.setup));
  field("process_seconds", json_number(process));
  field("throughput",
        fmt::format("{{\"steps_per_second\": {}, \"work_per_step\": {}, \"work_per_second\": {}, "
                    "\"work_unit\": {}, \"simulated_per_span\": {}, \"span\": {}, "
                    "\"span_seconds\": {}}}",
                    json_number(steps_per_s), json_number(solver.work_per_step()),
                    json_number(work_per_s), json_string(solver.work_unit()),
                    json_number(simulated_rate), json_string(units.rate_span_name),
                    json_number(units.rate_span)));
  std::string phases = "{";
  for (int p = 0; p < kPhaseCount; ++p) {
    const auto& x = reduced[static_cast<std::size_t>(p)];
    phases += fmt::format(
        "{}\n    {}: {{\"seconds\": {}, \"min\": {}, \"max\": {}, \"percent_of_wall\": {}}}",
        p == 0 ? "" : ",", json_string(phase_key(static_cast<Phase>(p))), json_number(x.mean),
        json_number(x.min), json_number(x.max),
        json_number(wall_mean > 0 ? 100.0 * x.mean / wall_mean : 0.0));
  }
  field("phases", phases + "\n  }");
  std::string timer_list = "[";
  for (std::size_t i = 0; i < timers.size(); ++i) {
    const auto& t = timers[i];
    timer_list += fmt::format(
        "{}\n    {{\"name\": {}, \"phase\": {}, \"min\": {}, \"mean\": {}, \"max\": {}, "
        "\"exclusive_mean\": {}, \"calls\": {}}}",
        i == 0 ? "" : ",", json_string(t.name), json_string(phase_key(t.phase)), json_number(t.min),
        json_number(t.mean), json_number(t.max), json_number(t.exclusive_mean), t.calls);
  }
  field("timers", timer_list + (timers.empty() ? "]" : "\n  ]"));
  field("memory", fmt::format("{{\"host_peak_bytes_max\": {}, \"host_peak_bytes_sum\": {}, "
                              "\"device_peak_bytes_max\": {}, \"device_peak_bytes_sum\": {}}}",
                              json_number(host_max), json_number(host_sum),
                              has_device ? json_number(device[0]) : "null",
                              has_device ? json_number(device[1]) : "null"));
  field("checkpoints",
        fmt::format("{{\"written\": {}, \"seconds\": {}, \"percent_of_wall\": {}, "
                    "\"flushed\": {}, \"flush_seconds\": {}, \"flush_wait_seconds\": {}, "
                    "\"flush_overlap_percent\": {}}}",
                    r.checkpoints, json_number(r.checkpoint_seconds),
                    json_number(wall > 0 ? 100.0 * r.checkpoint_seconds / wall : 0.0), r.flushes,
                    json_number(r.flush_seconds), json_number(r.flush_wait_seconds),
                    json_number(flush_overlap(r))));
  std::string first = "[";
  for (std::size_t i = 0; i < first_warnings.size(); ++i)
    first += fmt::format("{}{{\"text\": {}, \"count\": {}}}", i == 0 ? "" : ", ",
                         json_string(first_warnings[i].first), first_warnings[i].second);
  field("warnings", fmt::format("{{\"count\": {}, \"first\": {}]}}", warnings_total, first));
  field("cost",
        price > 0 ? fmt::format("{{\"price_per_node_hour\": {}, \"nodes\": {}, \"node_hours\": {}, "
                                "\"total\": {}, \"per_simulated\": {}, \"simulated_span\": {}, "
                                "\"simulated_unit\": {}}}",
                                json_number(price), nodes, json_number(node_hours),
                                json_number(cost), json_number(cost_per_span),
                                json_number(units.cost_span), json_string(units.unit))
                  : "null");
  field("ranks", fmt::format("{}", ranks));
  field("nodes", fmt::format("{}", nodes));
  field("threads_per_rank", fmt::format("{}", threads));
  field("backend", json_string(backend), true);
  j += "}\n";
  return j;
}

}  // namespace

void report_run(Context& ctx, const RunConfig& config, const Solver& solver, const RunRecord& r) {
  const auto& log = ctx.log();
  log.end_progress();
  Summary summary(ctx, config, solver, r);
  if (!summary.reduce(ctx)) return;
  summary.derive();
  log.info("{}", summary.text());
  write_atomically(summary.summary_path, summary.json(), log);
}

}  // namespace stratus
