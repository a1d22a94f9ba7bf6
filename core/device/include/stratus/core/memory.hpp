// Memory figures for the run summary: the process's peak resident host memory and, on CUDA
// builds, the device memory in use.
#pragma once

#include <cstdint>
#include <optional>

namespace stratus {

/// Peak resident set size of this process so far, bytes (getrusage ru_maxrss).
std::uint64_t peak_host_bytes();

/// Device memory in use now on this process's GPU (total - free, cudaMemGetInfo), bytes;
/// nothing on builds without a CUDA backend.
std::optional<std::uint64_t> device_bytes_in_use();

/// Keeps the peak of device_bytes_in_use() over samples taken at most every `interval`
/// seconds of this rank's clock (no communication; free on builds without CUDA).
class DevicePeak {
 public:
  explicit DevicePeak(double interval = 0.25) : interval_(interval) {}
  /// Samples when `now` (wall_seconds()) is `interval` past the last sample, or `force`.
  void sample(double now, bool force = false);
  /// The peak seen; nothing on builds without CUDA.
  [[nodiscard]] std::optional<std::uint64_t> peak() const { return peak_; }

 private:
  double interval_;
  double last_ = -1e300;
  std::optional<std::uint64_t> peak_;
};

}  // namespace stratus
