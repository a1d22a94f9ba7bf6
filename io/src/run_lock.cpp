#include "stratus/io/run_lock.hpp"

#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stratus::io {

namespace fs = std::filesystem;

namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

/// Field 22 of /proc/PID/stat (start time in clock ticks since boot) and the state letter; 0
/// when the process does not exist. The command name (field 2) may hold spaces: parse after
/// its closing parenthesis.
long long start_ticks_of(long long pid, char* state = nullptr) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  long long ticks = 0;
  for (int k = 3; k <= 22 && rest >> field; ++k) {
    if (k == 3 && state != nullptr) *state = field.empty() ? '?' : field[0];
    if (k == 22) ticks = std::atoll(field.c_str());
  }
  return ticks;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// Seconds since the lock file was last renewed (its modification time); < 0 when unknown.
double age_seconds(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  const double mtime = static_cast<double>(st.st_mtim.tv_sec) + 1e-9 * st.st_mtim.tv_nsec;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return now - mtime;
}

std::string lock_text(const LockHolder& h) {
  return fmt::format("host = {}\npid = {}\nstart_ticks = {}\njob = {}\nattempt = {}\nsince = {}\n",
                     h.host, h.pid, h.start_ticks, h.job, h.attempt, h.since);
}

/// Why the holder of the lock at `path` is gone ("" while it may still run).
std::string why_stale(const std::string& path, const LockHolder& h, bool readable,
                      const LockHolder& me) {
  const double age = age_seconds(path);
  // Slurm runs one attempt of a job at a time: a requeued job (same id, higher restart count)
  // takes over at once what its earlier attempt left, on whatever nodes that ran.
  if (readable && !h.job.empty() && h.job == me.job && h.attempt >= 0 && me.attempt > h.attempt)
    return fmt::format("it belongs to attempt {} of this Slurm job {} (this is attempt {})",
                       h.attempt, h.job, me.attempt);
  if (!readable || h.host != me.host) {
    if (age > kLockLeaseSeconds)
      return fmt::format(
          "its lease was last renewed {:.0f} s ago (a live run renews it every "
          "{:.0f} s): its host is gone or cut off",
          age, kLockRenewSeconds);
    return {};
  }
  char state = '?';
  const long long ticks = start_ticks_of(h.pid, &state);
  if (ticks == 0) return fmt::format("process {} no longer exists on {}", h.pid, h.host);
  if (ticks != h.start_ticks)
    return fmt::format("process {} on {} is another program now (the pid was reused)", h.pid,
                       h.host);
  if (state == 'Z') return fmt::format("process {} on {} has ended", h.pid, h.host);
  return {};
}

/// Creates `path` holding `text` atomically (written aside, then hard-linked: never seen half
/// written); false when it exists.
bool create_exclusive(const std::string& path, const std::string& text, const LockHolder& me) {
  const std::string aside = fmt::format("{}.{}.{}", path, me.host, me.pid);
  {
    std::ofstream f(aside, std::ios::trunc);
    f << text;
    f.flush();
    if (!f)
      throw RuntimeError(
          fmt::format("{}: cannot write the run lock: {}", aside, std::strerror(errno)));
  }
  const int rc = ::link(aside.c_str(), path.c_str());
  const int err = errno;
  ::unlink(aside.c_str());
  if (rc == 0) return true;
  if (err == EEXIST) return false;
  throw RuntimeError(fmt::format("{}: cannot take the run lock: {}", path, std::strerror(err)));
}

}  // namespace

std::string LockHolder::describe() const {
  return fmt::format("host {}, pid {}{}, since {}", host, pid,
                     job.empty() ? std::string() : fmt::format(", Slurm job {}", job), since);
}

LockHolder this_process() {
  LockHolder h;
  h.host = host_name();
  h.pid = static_cast<long long>(::getpid());
  h.start_ticks = start_ticks_of(h.pid);
  if (const char* job = std::getenv("SLURM_JOB_ID")) {
    h.job = job;
    const char* count = std::getenv("SLURM_RESTART_COUNT");
    h.attempt = count != nullptr ? std::atoll(count) : 0;
  }
  h.since = utc_now();
  return h;
}

bool read_lock(const std::string& path, LockHolder& out) {
  std::ifstream f(path);
  if (!f) return false;
  std::string line;
  int seen = 0;
  while (std::getline(f, line)) {
    const auto eq = line.find(" = ");
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 3);
    ++seen;
    if (key == "host")
      out.host = value;
    else if (key == "pid")
      out.pid = std::atoll(value.c_str());
    else if (key == "start_ticks")
      out.start_ticks = std::atoll(value.c_str());
    else if (key == "job")
      out.job = value;
    else if (key == "since")
      out.since = value;
    else if (key == "attempt")
      out.attempt = std::atoll(value.c_str());  // optional: locks written before it lack it
    else
      --seen;
  }
  return seen >= 5 && !out.host.empty() && out.pid > 0;
}

RunLock::RunLock(MPI_Comm comm, const std::string& dir,
                 const std::function<void(const std::string&)>& warn)
    : path_((fs::path(dir) / "stratus.lock").string()) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string failure;
  if (rank == 0) {
    me_ = this_process();
    failure = acquire(warn);
    held_ = failure.empty();
  }
  failure = agree_on_message(comm, failure);
  if (!failure.empty()) {
    if (held_) ::unlink(path_.c_str());
    held_ = false;
    throw InputError(failure);
  }
  if (held_) renewer_ = std::thread([this] { renew_until_stopped(); });
}

std::string RunLock::acquire(const std::function<void(const std::string&)>& warn) {
  const std::string text = lock_text(me_);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (create_exclusive(path_, text, me_)) return {};
    LockHolder holder;
    const bool readable = read_lock(path_, holder);
    const std::string stale = why_stale(path_, holder, readable, me_);
    if (stale.empty()) {
      if (!readable) continue;  // being written or replaced right now: look again
      return fmt::format(
          "output directory {} is in use by another run ({}; lock {}, renewed {:.0f} s ago). Two "
          "runs in one directory would resume from each other's checkpoints and overwrite each "
          "other's files: wait for that run to end, or give this one another --output-dir. If "
          "that run is certainly gone, remove the lock.",
          fs::path(path_).parent_path().string(), holder.describe(), path_,
          std::max(0.0, age_seconds(path_)));
    }
    // Set the stale lock aside under a name of our own, then check that what we moved is the
    // lock we judged (another run may have taken it over in between: put that one back).
    const std::string aside = fmt::format("{}.stale.{}.{}", path_, me_.host, me_.pid);
    if (::rename(path_.c_str(), aside.c_str()) != 0) continue;
    LockHolder moved;
    const bool moved_readable = read_lock(aside, moved);
    if (moved_readable != readable || lock_text(moved) != lock_text(holder)) {
      (void)::link(aside.c_str(), path_.c_str());  // fails only if a third run holds it now
      ::unlink(aside.c_str());
      continue;
    }
    ::unlink(aside.c_str());
    warn(fmt::format("run lock: taking over the stale lock {} ({}): {}", path_,
                     readable ? holder.describe() : std::string("unreadable"), stale));
  }
  if (create_exclusive(path_, text, me_)) return {};
  return fmt::format("{}: could not take the run lock: other runs keep taking it", path_);
}

void RunLock::renew_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::duration<double>(kLockRenewSeconds),
                         [this] { return stop_; })) {
    ::utimensat(AT_FDCWD, path_.c_str(), nullptr, 0);  // now
  }
}

RunLock::~RunLock() {
  if (!held_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (renewer_.joinable()) renewer_.join();
  LockHolder holder;
  if (read_lock(path_, holder) && holder.host == me_.host && holder.pid == me_.pid &&
      holder.start_ticks == me_.start_ticks)
    ::unlink(path_.c_str());
}

}  // namespace stratus::io
