#include "stratus/core/device.hpp"

#include "stratus/core/error.hpp"
#include "stratus/core/types.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <Kokkos_Core.hpp>

#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>

namespace stratus {

std::string kokkos_version() {
  return fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, (KOKKOS_VERSION / 100) % 100,
                     KOKKOS_VERSION % 100);
}

std::vector<std::string> kokkos_backends() {
  std::vector<std::string> b;
#ifdef KOKKOS_ENABLE_CUDA
  b.emplace_back("Cuda");
#endif
#ifdef KOKKOS_ENABLE_HIP
  b.emplace_back("HIP");
#endif
#ifdef KOKKOS_ENABLE_SYCL
  b.emplace_back("SYCL");
#endif
#ifdef KOKKOS_ENABLE_OPENMPTARGET
  b.emplace_back("OpenMPTarget");
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  b.emplace_back("OpenMP");
#endif
#ifdef KOKKOS_ENABLE_THREADS
  b.emplace_back("Threads");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  b.emplace_back("Serial");
#endif
  return b;
}

std::string kokkos_default_space() { return Kokkos::DefaultExecutionSpace::name(); }

int kokkos_host_threads() { return static_cast<int>(HostExecSpace().concurrency()); }

namespace device {

const char* transport_name(MpiTransport transport) {
  return transport == MpiTransport::staged ? "staged" : "direct";
}

int choose_device(int local_rank, int count, int requested) {
  if (count <= 0) return -1;
  if (requested >= 0) {
    if (requested >= count)
      throw InputError(
          fmt::format("device id {} requested (KOKKOS_DEVICE_ID or "
                      "--kokkos-device-id), but this node has {} GPU(s): 0..{}",
                      requested, count, count - 1));
    return requested;
  }
  return local_rank % count;
}

MpiTransport choose_transport(const std::string& setting, bool device_is_host, int mpi_cuda_aware,
                              std::string* why) {
  auto say = [&](std::string text) {
    if (why != nullptr) *why = std::move(text);
  };
  if (setting == "direct") {
    say("STRATUS_MPI_TRANSPORT=direct");
    return MpiTransport::direct;
  }
  if (setting == "staged") {
    say("STRATUS_MPI_TRANSPORT=staged");
    return MpiTransport::staged;
  }
  if (!setting.empty() && setting != "auto")
    throw InputError(fmt::format(
        "STRATUS_MPI_TRANSPORT: expected \"auto\", \"direct\" or \"staged\", found \"{}\"",
        setting));
  if (device_is_host) {
    say("kernels run in host memory");
    return MpiTransport::direct;
  }
  if (mpi_cuda_aware > 0) {
    say("MPIX_Query_cuda_support() = 1");
    return MpiTransport::direct;
  }
  say(mpi_cuda_aware == 0 ? "MPIX_Query_cuda_support() = 0"
                          : "the MPI library does not say whether it is CUDA-aware");
  return MpiTransport::staged;
}

namespace {

/// 1 / 0 when the MPI library says whether it reads device memory, -1 when it cannot say.
int mpi_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() != 0 ? 1 : 0;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  return 0;  // Open MPI built without CUDA
#else
  return -1;
#endif
}

std::optional<int> parse_index(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > 1 << 20) return std::nullopt;
  return static_cast<int>(v);
}

/// The node-local rank: from the launcher's environment, else from a shared-memory split.
int local_rank(MPI_Comm comm, std::string& from) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"}) {
    if (const auto v = parse_index(std::getenv(name))) {
      from = name;
      return *v;
    }
  }
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  from = "MPI_COMM_TYPE_SHARED";
  return r;
}

/// --kokkos-device-id=N or --kokkos-device-id N on the command line, else KOKKOS_DEVICE_ID.
int requested_device(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    constexpr std::string_view flag = "--kokkos-device-id";
    if (a.substr(0, flag.size()) != flag) continue;
    std::optional<int> v;
    if (a.size() > flag.size() && a[flag.size()] == '=')
      v = parse_index(argv[i] + flag.size() + 1);
    else if (a.size() == flag.size() && i + 1 < argc)
      v = parse_index(argv[i + 1]);
    if (!v) throw InputError(fmt::format("{}: expected a device number >= 0", argv[i]));
    return *v;
  }
  if (const char* env = std::getenv("KOKKOS_DEVICE_ID"); env != nullptr && *env != '\0') {
    const auto v = parse_index(env);
    if (!v)
      throw InputError(
          fmt::format("KOKKOS_DEVICE_ID: expected a device number >= 0, "
                      "found \"{}\"",
                      env));
    return *v;
  }
  return -1;
}

int visible_devices() {
#ifdef KOKKOS_ENABLE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
#else
  return 0;
#endif
}

std::string device_name(int device) {
#ifdef KOKKOS_ENABLE_CUDA
  cudaDeviceProp prop{};
  if (device >= 0 && cudaGetDeviceProperties(&prop, device) == cudaSuccess) return prop.name;
#else
  (void)device;
#endif
  return {};
}

class Session final : public DeviceSession {
 public:
  Session(DeviceChoice choice, bool owns) : choice_(std::move(choice)), owns_(owns) {}
  ~Session() override {
    if (owns_) Kokkos::finalize();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  [[nodiscard]] const DeviceChoice& choice() const noexcept { return choice_; }

 private:
  DeviceChoice choice_;
  bool owns_;
};

void push_region(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
void pop_region() { Kokkos::Profiling::popRegion(); }
void fence() { Kokkos::fence(); }

constexpr bool kDeviceIsHost =
    std::is_same_v<DevMemSpace::execution_space::memory_space, Kokkos::HostSpace>;

std::unique_ptr<DeviceSession> start(Context& ctx, int& argc, char**& argv) {
  DeviceChoice c;
  c.local_rank = local_rank(ctx.comm(), c.local_from);
  c.device_count = visible_devices();
  const int requested = requested_device(argc, argv);
  c.device = choose_device(c.local_rank, c.device_count, requested);
  if (c.device >= 0 && requested < 0) {
    // Kokkos 3.4 to 5.x take the device from KOKKOS_DEVICE_ID when the command line names none.
    const std::string id = std::to_string(c.device);
    ::setenv("KOKKOS_DEVICE_ID", id.c_str(), /*overwrite=*/1);
  }
  bool owns = false;
  if (!Kokkos::is_initialized()) {
    Kokkos::initialize(argc, argv);
    owns = true;
  }
#ifdef KOKKOS_ENABLE_CUDA
  if (c.device >= 0) cudaGetDevice(&c.device);  // what Kokkos really took
#endif
  c.device_name = device_name(c.device);
  const char* setting = std::getenv("STRATUS_MPI_TRANSPORT");
  c.transport = choose_transport(setting != nullptr ? setting : "", kDeviceIsHost, mpi_cuda_aware(),
                                 &c.transport_why);
  ctx.timers().set_hooks(TimerHooks{push_region, pop_region, fence});

  // One line on rank 0: every rank's GPU (or the host threads), and the transport.
  std::vector<int> devices(static_cast<std::size_t>(ctx.size()), -1);
  MPI_Gather(&c.device, 1, MPI_INT, devices.data(), 1, MPI_INT, 0, ctx.comm());
  if (c.device >= 0) {
    std::string map;
    for (std::size_t r = 0; r < devices.size() && r < 64; ++r)
      map += fmt::format("{}{}:{}", r == 0 ? "" : " ", r, devices[r]);
    if (devices.size() > 64) map += " ...";
    ctx.log().info(
        "device: Kokkos {} {}, {} ({} GPU(s) per node); rank:GPU {} (node-local rank "
        "from {}); MPI transport {} ({})",
        kokkos_version(), kokkos_default_space(), c.device_name, c.device_count, map, c.local_from,
        transport_name(c.transport), c.transport_why);
  } else {
    ctx.log().debug("device: Kokkos {} {}, {} host thread(s) per rank; MPI transport {} ({})",
                    kokkos_version(), kokkos_default_space(), HostExecSpace().concurrency(),
                    transport_name(c.transport), c.transport_why);
  }
  return std::make_unique<Session>(std::move(c), owns);
}

}  // namespace

DeviceStarter starter() { return start; }

const DeviceChoice& choice(const Context& ctx) {
  static const DeviceChoice none;
  const auto* session = dynamic_cast<const Session*>(ctx.device_session());
  return session != nullptr ? session->choice() : none;
}

}  // namespace device
}  // namespace stratus
