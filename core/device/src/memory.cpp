#include "stratus/core/memory.hpp"

#include <sys/resource.h>
#include <Kokkos_Core.hpp>  // defines KOKKOS_ENABLE_CUDA on CUDA builds

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <algorithm>

namespace stratus {

std::uint64_t peak_host_bytes() {
  rusage usage{};
  if (::getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024u;  // Linux: kilobytes
}

std::optional<std::uint64_t> device_bytes_in_use() {
#ifdef KOKKOS_ENABLE_CUDA
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return std::nullopt;
  return static_cast<std::uint64_t>(total - free);
#else
  return std::nullopt;
#endif
}

void DevicePeak::sample(double now, bool force) {
#ifdef KOKKOS_ENABLE_CUDA
  if (!force && now - last_ < interval_) return;
  last_ = now;
  if (const auto used = device_bytes_in_use()) peak_ = peak_ ? std::max(*peak_, *used) : *used;
#else
  (void)now;
  (void)force;
  (void)interval_;
  (void)last_;
#endif
}

}  // namespace stratus
