// A message buffer of an exchange: where kernels pack and unpack (device memory) and where MPI
// reads and writes, for the transport chosen at the start of the run (stratus::MpiTransport).
#pragma once

#include "stratus/core/mpi_transport.hpp"
#include "stratus/core/types.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace stratus {

/// Host memory that staged messages pass through: pinned on CUDA (the copies run at full
/// PCIe/NVLink-C2C speed and MPI may register it once), plain host memory elsewhere.
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

/// One buffer of `T` (Reals, or trivially copyable records sent as bytes).
///
/// - direct: MPI works on the device buffer itself (host memory, or a CUDA-aware MPI);
///   to_mpi/from_mpi only order the device work before MPI sees the buffer.
/// - staged: a separate host buffer of the same size; to_mpi copies a range of the device
///   buffer into it before a send, from_mpi copies a received range back. The copy is made on
///   host back-ends too, so this path runs, and is tested, on CPUs.
template <class T>
class MpiBuffer {
 public:
  using DeviceView = Kokkos::View<T*, DevMemSpace>;

  MpiBuffer() = default;
  MpiBuffer(std::string label, MpiTransport transport)
      : label_(std::move(label)), transport_(transport) {}

  /// Exactly `n` items (contents dropped).
  void allocate(std::size_t n) {
    device_ = DeviceView(Kokkos::ViewAllocateWithoutInitializing(label_), n);
    if (transport_ == MpiTransport::staged)
      host_ = HostView(Kokkos::ViewAllocateWithoutInitializing(label_ + ".staged"), n);
  }
  /// At least `n` items, growing by a quarter and a few more when it must (contents dropped).
  void reserve(std::size_t n) {
    if (device_.data() != nullptr && device_.extent(0) >= n) return;
    allocate(n + n / 4 + 16);
  }

  [[nodiscard]] const DeviceView& device() const noexcept { return device_; }
  [[nodiscard]] std::size_t size() const noexcept { return device_.extent(0); }
  [[nodiscard]] MpiTransport transport() const noexcept { return transport_; }

  /// Where MPI reads or writes item `i`.
  [[nodiscard]] T* mpi(std::size_t i = 0) const noexcept {
    return (transport_ == MpiTransport::staged ? host_.data() : device_.data()) + i;
  }

  /// Makes items [begin, begin + count) of the device buffer, written by kernels on the
  /// default execution space, readable by MPI. Fences.
  void to_mpi(std::size_t begin, std::size_t count) const {
    if (transport_ == MpiTransport::staged && count > 0) {
      const auto r = std::make_pair(begin, begin + count);
      Kokkos::deep_copy(Kokkos::subview(host_, r), Kokkos::subview(device_, r));
    }
    DevExecSpace().fence();
  }
  /// Makes items [begin, begin + count) that MPI received visible to device kernels.
  void from_mpi(std::size_t begin, std::size_t count) const {
    if (transport_ == MpiTransport::staged && count > 0) {
      const auto r = std::make_pair(begin, begin + count);
      Kokkos::deep_copy(Kokkos::subview(device_, r), Kokkos::subview(host_, r));
    }
  }

 private:
  using HostView = Kokkos::View<T*, StagingSpace>;
  std::string label_;
  MpiTransport transport_ = MpiTransport::direct;
  DeviceView device_;
  HostView host_;  // staged only
};

}  // namespace stratus
