// The device runtime (Stratus::device): Kokkos's lifetime, which GPU each rank uses, how MPI
// messages reach device memory, and what the build's Kokkos is. This header has no Kokkos in
// it: host code (the stratus command, the tests' main) starts the runtime through it, while
// its implementation is part of the device floor (compiled with the device compiler).
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/core/mpi_transport.hpp"

#include <string>
#include <vector>

namespace stratus {

/// Kokkos version, e.g. "3.4.1".
std::string kokkos_version();
/// Kokkos backends compiled into this build, from Kokkos's own configuration macros,
/// device backends first (e.g. {"OpenMP", "Serial"}).
std::vector<std::string> kokkos_backends();
/// Name of the default Kokkos execution space (where kernels run), e.g. "OpenMP".
std::string kokkos_default_space();
/// Threads of the host execution space of each rank (Kokkos must be initialized).
int kokkos_host_threads();

namespace device {

using stratus::MpiTransport;
const char* transport_name(MpiTransport transport);

/// What the runtime chose for this rank, for the log and the run summary.
struct DeviceChoice {
  int local_rank = 0;       ///< node-local rank (launcher's variable or a shared-memory split)
  std::string local_from;   ///< where local_rank came from, e.g. "OMPI_COMM_WORLD_LOCAL_RANK"
  int device = -1;          ///< GPU index on the node; -1 on host back-ends
  int device_count = 0;     ///< GPUs visible to the process
  std::string device_name;  ///< e.g. "NVIDIA H200"; empty on host back-ends
  MpiTransport transport = MpiTransport::direct;
  std::string transport_why;  ///< e.g. "MPIX_Query_cuda_support() = 1"
};

/// The GPU of node-local rank `local_rank` among `count` devices (round robin), or the
/// explicit `requested` one (>= 0). Throws InputError when `requested` does not exist.
int choose_device(int local_rank, int count, int requested);

/// The transport for `setting` ("auto", "direct" or "staged", from STRATUS_MPI_TRANSPORT;
/// empty means "auto"): auto is direct on host back-ends and where the MPI library reports
/// CUDA support (`mpi_cuda_aware`), staged otherwise. Throws InputError for another value.
MpiTransport choose_transport(const std::string& setting, bool device_is_host, int mpi_cuda_aware,
                              std::string* why = nullptr);

/// The DeviceStarter of ContextOptions: picks this rank's GPU from its node-local rank (an
/// explicit KOKKOS_DEVICE_ID or --kokkos-device-id wins), initializes Kokkos unless it already
/// is, chooses the MPI transport, installs the timers' profiling and fence hooks and logs the
/// choice (rank 0, with every rank's device). Collective over the context's communicator.
DeviceStarter starter();

/// What the runtime of `ctx` chose (the defaults when `ctx` has no device session).
const DeviceChoice& choice(const Context& ctx);

}  // namespace device
}  // namespace stratus
