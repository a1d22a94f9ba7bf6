// Drives Context::run_guarded through the failures it must survive, for the `cli.failure.*`
// tests (run under mpiexec by check_rank_failure.cmake):
//
//   rank_failure partial   rank 1 throws RuntimeError; the others wait in MPI_Barrier(comm)
//                          forever: the job must still end (MPI_Abort after the grace period).
//   rank_failure finished  rank 1 throws RuntimeError; the others return 0 and finalize: the
//                          job must end and must not report success (grace period 1 s).
//   rank_failure stop      rank 1 throws StopRequested (exit code 75); the others wait in
//                          MPI_Barrier: the job ends with the code rank 1 gave MPI_Abort
//                          (grace period 1 s).
//   rank_failure all       every rank throws InputError: exit 2, the message printed once.
//   rank_failure staggered every rank throws InputError, rank 0 one second after the others
//                          (within the grace period): still collective, exit 2, printed once.
//
// Exit code: whatever run_guarded returns; 3 for a bad mode (not a code run_guarded uses).
#include "stratus/core/context.hpp"
#include "stratus/core/error.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "partial" && mode != "finished" && mode != "stop" && mode != "all" &&
      mode != "staggered") {
    std::fprintf(stderr, "usage: rank_failure partial|finished|stop|all|staggered\n");
    return 3;
  }
  // `partial` keeps the default grace period (what `stratus` uses); `finished` and `stop`
  // only need the abort to happen, so they wait 1 s instead of 5.
  stratus::ContextOptions options;
  if (mode == "finished" || mode == "stop") options.failure_grace_seconds = 1.0;
  stratus::Context ctx(argc, argv, options);
  return ctx.run_guarded([&]() -> int {
    if (mode == "partial" || mode == "finished" || mode == "stop") {
      if (ctx.rank() == 1) {
        if (mode == "stop") throw stratus::StopRequested("rank 1 was asked to stop");
        throw stratus::RuntimeError("rank 1 lost its input file");
      }
      if (mode != "finished") {
        MPI_Barrier(ctx.comm());  // never completes: rank 1 does not come
        std::fprintf(stderr, "rank %d: MPI_Barrier returned although rank 1 failed\n", ctx.rank());
      }
      return 0;
    }
    if (mode == "staggered" && ctx.rank() == 0)
      std::this_thread::sleep_for(std::chrono::seconds(1));
    throw stratus::InputError("every rank rejects this input");
  });
}
