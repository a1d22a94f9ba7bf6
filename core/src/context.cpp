#include "stratus/core/context.hpp"

#include "stratus/core/error.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace stratus {

namespace {
int mpi_rank(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int mpi_size(MPI_Comm c) {
  int s = 1;
  MPI_Comm_size(c, &s);
  return s;
}
bool mpi_initialized() {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag != 0;
}
}  // namespace

Context::Context(int& argc, char**& argv, ContextOptions options)
    : options_(options),
      owns_mpi_(!mpi_initialized()),
      logger_(0, 1, options.log_all_ranks, options.log_level) {
  if (owns_mpi_) {
    // Open MPI's OMPIO guards every file it opens with a POSIX named semaphore in /dev/shm
    // (sharedfp/sm), named after the file's base name. A process killed during a checkpoint
    // write leaves it locked, and the next open of a file of that name on the node waits
    // forever. Stratus never uses shared file pointers: leave that component out unless the
    // user chose otherwise (other MPIs ignore the variable).
    ::setenv("OMPI_MCA_sharedfp", "^sm", /*overwrite=*/0);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_dup(MPI_COMM_WORLD, &failure_comm_);
  rank_ = mpi_rank(comm_);
  size_ = mpi_size(comm_);
  logger_ = Logger(rank_, size_, options.log_all_ranks, options.log_level);
  if (options_.start_device) {
    device_ = options_.start_device(*this, argc, argv);
    session_ = device_.get();
  }
}

Context::Context(const Context& parent, MPI_Comm comm)
    : options_(parent.options_), owns_mpi_(false), logger_(0, 1, false, parent.options_.log_level) {
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_dup(comm, &failure_comm_);
  rank_ = mpi_rank(comm_);
  size_ = mpi_size(comm_);
  logger_ = Logger(rank_, size_, options_.log_all_ranks, options_.log_level);
  timers_.set_hooks(parent.timers_.hooks());
  session_ = parent.session_;
}

Context::~Context() {
  device_.reset();
  MPI_Comm_free(&failure_comm_);
  MPI_Comm_free(&comm_);
  if (owns_mpi_) MPI_Finalize();
}

void Context::configure_logging(bool all_ranks, LogLevel level) {
  options_.log_all_ranks = all_ranks;
  options_.log_level = level;
  logger_.configure(all_ranks, level);
}

int Context::run_guarded(const std::function<int()>& body) {
  ExitCode code = ExitCode::runtime_failure;
  std::string message;
  std::string origin;
  try {
    return body();
  } catch (const Error& e) {
    code = e.exit_code();
    message = e.what();
    origin = fmt::format("{}:{} ({})", e.where().file_name(), e.where().line(),
                         e.where().function_name());
  } catch (const std::exception& e) {
    message = fmt::format("internal error: {}", e.what());
  } catch (...) {
    message = "internal error: unknown exception";
  }

  const char* tag = code == ExitCode::stopped_resumable ? "stopped" : "error";
  auto print = [&](bool with_rank) {
    std::string text = with_rank && size_ > 1 ? fmt::format("[rank {}] ", rank_) : std::string();
    text += fmt::format("{}: {}\n", tag, message);
    if (logger_.level() >= LogLevel::debug && !origin.empty())
      text += fmt::format("  (raised at {})\n", origin);
    logger_.end_progress();
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    logger_.write_file(text);  // rank 0's log file, when the run opened one
  };

  int result = static_cast<int>(code);
  if (size_ == 1) {
    print(false);
    return result;
  }

  // Agreement: if every rank reaches this point, the failure is collective and the job can end
  // cleanly with one message. Otherwise the ranks that failed abort the job, so that ranks
  // still waiting in a collective call are not left hanging.
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(failure_comm_, &request);
  const double start = wall_seconds();
  int done = 0;
  while (true) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done || wall_seconds() - start > options_.failure_grace_seconds) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (done) {
    MPI_Allreduce(MPI_IN_PLACE, &result, 1, MPI_INT, MPI_MAX, failure_comm_);
    if (rank_ == 0) print(false);
    return result;
  }
  print(true);
  std::fprintf(stderr,
               "[rank %d] the other ranks did not fail with it: aborting the job (exit code %d)\n",
               rank_, result);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, result);
  return result;
}

}  // namespace stratus
