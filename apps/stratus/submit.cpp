// `stratus submit`: validates the options, renders jobscripts/stratus.sbatch, prints it and
// submits it with sbatch.
#include "submit.hpp"

#include "stratus/core/duration.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/output.hpp"

#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

extern char** environ;  // NOLINT: POSIX

namespace stratus::app {

extern const char* const kJobscriptTemplate;  // jobscripts/stratus.sbatch (generated source)

namespace fs = std::filesystem;

namespace {

constexpr const char* kWatcherName = "stratus-preempt-watch";

/// Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Seconds, or nothing.
std::optional<long> slurm_time_seconds(const std::string& t) {
  std::smatch m;
  static const std::regex days(R"((\d+)-(\d+)(?::(\d+))?(?::(\d+))?)");
  static const std::regex clock(R"((\d+)(?::(\d+))?(?::(\d+))?)");
  auto num = [&](int i) { return m[i].matched ? std::stol(m[i].str()) : 0L; };
  if (t.size() > 16) return std::nullopt;
  if (std::regex_match(t, m, days)) return ((num(1) * 24 + num(2)) * 60 + num(3)) * 60 + num(4);
  if (std::regex_match(t, m, clock)) {
    if (m[3].matched) return (num(1) * 60 + num(2)) * 60 + num(3);  // H:M:S
    return num(1) * 60 + num(2);                                    // M or M:S
  }
  return std::nullopt;
}

/// --time in Slurm's form: Slurm's own formats as given, Stratus durations (2h, 90min) as
/// H:MM:SS. Sets `seconds`.
std::string slurm_time(const std::string& t, long& seconds) {
  if (auto s = slurm_time_seconds(t)) {
    seconds = *s;
  } else if (auto d = parse_duration(t)) {
    seconds = static_cast<long>(std::ceil(*d));
  } else {
    throw InputError(fmt::format(
        "--time: expected a Slurm time (MINUTES, H:MM:SS, D-HH:MM:SS) or {}, found \"{}\"",
        kDurationHelp, t));
  }
  if (seconds <= 0) throw InputError(fmt::format("--time: expected > 0, found \"{}\"", t));
  if (slurm_time_seconds(t)) return t;
  return fmt::format("{}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

/// Names that go into #SBATCH lines unquoted: letters, digits and a few safe characters.
void check_name(const std::string& option, const std::string& value, const char* extra = "") {
  const std::string allowed = std::string("_.-") + extra;
  for (const char c : value)
    if (!std::isalnum(static_cast<unsigned char>(c)) && allowed.find(c) == std::string::npos)
      throw InputError(fmt::format("{}: expected letters, digits and '{}', found \"{}\"", option,
                                   allowed, value));
  if (value.empty()) throw InputError(fmt::format("{}: expected a name, found nothing", option));
}

std::string job_name_from(const std::string& run_name) {
  std::string name;
  for (const char c : run_name)
    name +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ? c : '_';
  return name.empty() ? std::string("stratus") : name;
}

/// Replaces the lines between "# >>> MARK..." and "# <<< MARK" in `text` with `body`.
void replace_block(std::string& text, const std::string& mark, const std::string& body) {
  const std::string open = "# >>> " + mark, close = "# <<< " + mark;
  const auto a = text.find(open);
  const auto b = text.find(close);
  if (a == std::string::npos || b == std::string::npos || b < a)
    throw RuntimeError(fmt::format("the jobscript template has no '{}' block", mark));
  const auto first = text.find('\n', a) + 1;
  text.replace(first, b - first, body);
}

/// The path of this executable (Linux), or "stratus" when it cannot be told.
std::string own_executable() {
  std::error_code ec;
  const auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("stratus") : p.string();
}

/// The watcher beside `stratus_bin`, or its bare name (found on PATH) for a bare name.
std::string watcher_beside(const std::string& stratus_bin) {
  const fs::path bin(stratus_bin);
  if (!bin.has_parent_path()) return kWatcherName;
  return (bin.parent_path() / kWatcherName).string();
}

/// Runs `argv` (found on PATH, no shell) with the environment `env`; returns its standard
/// output and error together. Sets `status` to its exit status (127: not found).
std::string run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        int& status) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  args.push_back(nullptr);
  envp.push_back(nullptr);
  int fds[2];
  if (::pipe(fds) != 0) throw RuntimeError("cannot create a pipe for sbatch");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int err = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, std::size_t(n));
  ::close(fds[0]);
  if (err != 0) {
    status = 127;
    return fmt::format("{}: {}", argv[0], err == ENOENT ? "not found on PATH" : std::strerror(err));
  }
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return out;
}

void validate(const SubmitOptions& o) {
  auto positive = [](const char* option, int v, int min) {
    if (v < min) throw InputError(fmt::format("{}: expected >= {}, found {}", option, min, v));
  };
  positive("--nodes", o.nodes, 1);
  if (o.ntasks_per_node != 0) positive("--ntasks-per-node", o.ntasks_per_node, 1);
  if (o.cpus_per_task != 0) positive("--cpus-per-task", o.cpus_per_task, 1);
  positive("--gpus-per-node", o.gpus_per_node, 0);
  positive("--max-restarts", o.max_restarts, 0);
  positive("--chain", o.chain, 1);
  if (o.gpus_per_node > 0 && o.ntasks_per_node != 0 && o.ntasks_per_node != o.gpus_per_node)
    throw InputError(fmt::format(
        "--ntasks-per-node {} with --gpus-per-node {}: Stratus runs one rank per GPU (leave "
        "--ntasks-per-node out, or give it the number of GPUs)",
        o.ntasks_per_node, o.gpus_per_node));
  if (!o.partition.empty()) check_name("--partition", o.partition, ",");
  if (!o.fallback_partition.empty()) check_name("--fallback-partition", o.fallback_partition);
  if (!o.account.empty()) check_name("--account", o.account);
  if (!o.job_name.empty()) check_name("--job-name", o.job_name);
  check_name("--mpi", o.srun_mpi);
  if (!o.spot) {
    for (const auto& [given, option] :
         {std::pair{!o.fallback_partition.empty(), "--fallback-partition"},
          std::pair{!o.watch.empty(), "--watch"}, std::pair{!o.watch_url.empty(), "--watch-url"}})
      if (given) throw InputError(fmt::format("{} needs --spot", option));
  }
  if (!o.watch_url.empty() && !o.watch_url.starts_with("http://") &&
      !o.watch_url.starts_with("https://"))
    throw InputError(
        fmt::format("--watch-url: expected an http:// or https:// URL, found \"{}\"", o.watch_url));
  if (!o.watch_url.empty() && o.watch.empty())
    throw InputError("--watch-url needs --watch aws|gcp|azure");
  if (!(o.watch_interval > 0) || o.watch_interval > 3600)
    throw InputError(
        fmt::format("--watch-interval: expected seconds in (0, 3600], found {}", o.watch_interval));
  if (o.chain > 1 && o.spot && !o.fallback_partition.empty())
    throw InputError(
        "--chain with --fallback-partition: the fallback job already continues the "
        "run; use one or the other");
}

}  // namespace

std::vector<std::string> environment_snapshot() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

void add_submit_options(CLI::App* cmd, SubmitOptions& o) {
  cmd->add_option("DECK", o.deck, "Input deck (TOML), checked before anything is submitted")
      ->required();
  cmd->add_option("--set", o.overrides, "Override a deck value for the run: section.key=value")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--output-dir", o.output_dir, "Directory for every output file of the run");
  cmd->add_option("--nodes,-N", o.nodes, "Nodes")->default_str("1");
  cmd->add_option("--ntasks-per-node", o.ntasks_per_node,
                  "MPI ranks per node (default 1, or one per GPU)");
  cmd->add_option("--cpus-per-task", o.cpus_per_task, "CPU cores (OpenMP threads) per rank");
  cmd->add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node: one rank per GPU");
  cmd->add_option("--partition,-p", o.partition, "Slurm partition (spot,ondemand: either)");
  cmd->add_option("--account,-A", o.account, "Slurm account");
  cmd->add_option("--time,-t", o.time, "Time limit: a Slurm time (H:MM:SS, D-HH:MM) or 2h, 90min")
      ->type_name("TIME");
  cmd->add_option("--job-name,-J", o.job_name, "Job name (default: the run's name)");
  cmd->add_flag("--spot", o.spot,
                "Spot-ready: --requeue, requeue on exit 75 (stopped, resumable), append the log");
  cmd->add_option("--max-restarts", o.max_restarts, "Spot: requeues before giving up")
      ->default_str("10");
  cmd->add_option("--signal-lead", o.signal_lead,
                  "Slurm sends SIGUSR1 this long before the time limit (--signal=B:USR1@LEAD)")
      ->type_name("DURATION")
      ->default_str("120s");
  cmd->add_option("--fallback-partition", o.fallback_partition,
                  "Spot: after --max-restarts, continue the run as a new job on this partition");
  cmd->add_option("--watch", o.watch,
                  "Spot: run stratus-preempt-watch on every node for this cloud's notices")
      ->check(CLI::IsMember({"aws", "gcp", "azure"}));
  cmd->add_option("--watch-url", o.watch_url, "Metadata endpoint for the watcher (tests)");
  cmd->add_option("--watch-interval", o.watch_interval, "Seconds between metadata polls")
      ->default_str("5");
  cmd->add_option("--launcher", o.launcher,
                  "srun, or mpirun inside the allocation where srun cannot wire up MPI")
      ->check(CLI::IsMember({"srun", "mpirun"}))
      ->default_str("srun");
  cmd->add_option("--mpi", o.srun_mpi, "srun --mpi plugin (`srun --mpi=list`)")
      ->default_str("pmix");
  cmd->add_option("--chain", o.chain,
                  "Submit N jobs, each starting after the previous ends (--dependency=afterany)")
      ->default_str("1");
  cmd->add_option("--stratus-bin", o.stratus_bin,
                  "The stratus executable the job runs (default: this one)");
  cmd->add_option("--script", o.script, "Also write the jobscript to this file");
  cmd->add_flag("--dry-run", o.dry_run, "Print the jobscript, submit nothing");
  cmd->footer(
      "Exit codes: 0 printed (and submitted), 1 sbatch failed, 2 bad option or deck (nothing "
      "submitted).");
}

std::string render_jobscript(const SubmitOptions& o, const std::string& run_name,
                             const std::string& tmpl) {
  validate(o);
  const auto lead = parse_duration(o.signal_lead);
  if (!lead || *lead < 1 || *lead > 65535)
    throw InputError(fmt::format("--signal-lead: expected {} from 1 s to 65535 s, found \"{}\"",
                                 kDurationHelp, o.signal_lead));
  const long lead_s = static_cast<long>(std::ceil(*lead));
  long limit_s = 0;
  const std::string time = o.time.empty() ? std::string() : slurm_time(o.time, limit_s);
  if (limit_s > 0 && lead_s >= limit_s)
    throw InputError(
        fmt::format("--signal-lead {} is not shorter than --time {}", o.signal_lead, o.time));
  const int ranks_per_node =
      o.gpus_per_node > 0 ? o.gpus_per_node : (o.ntasks_per_node > 0 ? o.ntasks_per_node : 1);
  const std::string job_name = o.job_name.empty() ? job_name_from(run_name) : o.job_name;

  std::string sbatch;
  auto line = [&sbatch](const std::string& option) { sbatch += "#SBATCH " + option + "\n"; };
  line("--job-name=" + job_name);
  line(fmt::format("--nodes={}", o.nodes));
  line(fmt::format("--ntasks-per-node={}", ranks_per_node));
  if (o.cpus_per_task > 0) line(fmt::format("--cpus-per-task={}", o.cpus_per_task));
  if (o.gpus_per_node > 0) line(fmt::format("--gpus-per-node={}", o.gpus_per_node));
  if (!o.partition.empty()) line("--partition=" + o.partition);
  if (!o.account.empty()) line("--account=" + o.account);
  if (!time.empty()) line("--time=" + time);
  line("--output=%x.%j.out");
  line("--open-mode=append");
  line(o.spot ? "--requeue" : "--no-requeue");
  line(fmt::format("--signal=B:USR1@{}", lead_s));

  const std::string bin = o.stratus_bin.empty() ? own_executable() : o.stratus_bin;
  std::vector<std::string> args;
  if (!o.output_dir.empty()) args.insert(args.end(), {"--output-dir", o.output_dir});
  for (const auto& s : o.overrides) args.insert(args.end(), {"--set", s});
  std::string run_args = "run_args=(";
  for (std::size_t i = 0; i < args.size(); ++i) run_args += (i ? " " : "") + shell_quote(args[i]);
  run_args += ")";

  std::string values;
  auto value = [&values](const char* name, const std::string& v) {
    values += fmt::format("{}={}\n", name, shell_quote(v));
  };
  value("stratus_bin", bin);
  value("deck", o.deck);
  values += run_args + "\n";
  value("launcher", o.launcher);
  value("srun_mpi", o.srun_mpi);
  value("gpus_per_node", std::to_string(o.gpus_per_node));
  value("spot", o.spot ? "1" : "0");
  value("max_restarts", std::to_string(o.max_restarts));
  value("fallback_partition", o.fallback_partition);
  value("watch", o.watch);
  value("watch_url", o.watch_url);
  value("watch_interval", fmt::format("{:g}", o.watch_interval));
  value("watch_bin", watcher_beside(bin));

  std::string text = tmpl;
  replace_block(text, "sbatch options", sbatch);
  replace_block(text, "values", values);
  return text;
}

int submit(const Context& ctx, const SolverRegistry& registry, const SubmitOptions& o) {
  std::vector<io::Override> overrides;
  for (const auto& text : o.overrides) overrides.push_back(io::Override::from_set(text));
  if (!o.output_dir.empty())
    overrides.push_back(
        io::Override::literal_string("output.dir", o.output_dir, "--output-dir " + o.output_dir));
  const auto deck = load_run_deck(ctx, registry, o.deck, overrides);
  const std::string script = render_jobscript(o, io::run_name(deck), kJobscriptTemplate);
  if (!o.watch.empty() && !o.dry_run) {
    const std::string watcher =
        watcher_beside(o.stratus_bin.empty() ? own_executable() : o.stratus_bin);
    if (fs::path(watcher).has_parent_path() && ::access(watcher.c_str(), X_OK) != 0)
      throw InputError(
          fmt::format("--watch: the watcher {} is not there (it is installed beside "
                      "stratus)",
                      watcher));
  }
  if (ctx.rank() != 0) return 0;
  std::fputs(script.c_str(), stdout);
  std::fflush(stdout);

  std::string path = o.script;
  if (path.empty() && !o.dry_run) {
    char tmp[] = "/tmp/stratus-jobscript.XXXXXX";
    const int fd = ::mkstemp(tmp);
    if (fd < 0) throw RuntimeError("cannot create a temporary file for the jobscript");
    ::close(fd);
    path = tmp;
  }
  if (!path.empty()) {
    std::ofstream f(path, std::ios::binary);
    f << script;
    if (!f.flush()) throw RuntimeError(fmt::format("cannot write the jobscript to {}", path));
    fs::permissions(path, fs::perms::owner_exec, fs::perm_options::add);
  }
  if (o.dry_run) {
    std::fprintf(stderr, "stratus submit: --dry-run: %s not submitted%s\n",
                 o.chain > 1 ? fmt::format("{} chained jobs", o.chain).c_str() : "the job",
                 o.script.empty() ? "" : fmt::format(" (written to {})", o.script).c_str());
    return 0;
  }
  std::string previous;
  for (int i = 0; i < o.chain; ++i) {
    std::vector<std::string> argv{"sbatch", "--parsable"};
    if (!previous.empty()) argv.push_back("--dependency=afterany:" + previous);
    argv.push_back(path);
    int status = 0;
    std::string out =
        run_program(argv, o.environment.empty() ? environment_snapshot() : o.environment, status);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    // The last line is "ID" or "ID;cluster"; warnings may come before it.
    const std::string last = out.substr(out.find_last_of('\n') + 1);
    const std::string id = last.substr(0, last.find(';'));
    const bool numeric = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
    if (status != 0 || !numeric) {
      if (o.script.empty()) fs::remove(path);
      throw RuntimeError(fmt::format("sbatch failed (status {}): {}", status, out));
    }
    std::fprintf(stderr, "stratus submit: submitted job %s%s\n", id.c_str(),
                 previous.empty() ? "" : fmt::format(" (after job {} ends)", previous).c_str());
    previous = id;
  }
  if (o.script.empty()) fs::remove(path);
  return 0;
}

}  // namespace stratus::app
