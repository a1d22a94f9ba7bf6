// Order-independent sums for the MD solver: each term is rounded to a multiple of 2^-32 (half
// away from zero, like llround) and added as a 64-bit integer, which is exact and associative;
// the total is then summed over the ranks the same way. Used wherever a global sum feeds back
// into the atoms, so that results are the same at any rank count.
#pragma once

#include "stratus/core/kokkos_compat.hpp"

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace stratus::md {

inline constexpr double kFixedScale = 4294967296.0;  // 2^32
KOKKOS_INLINE_FUNCTION std::int64_t to_fixed(double v) {
  return v >= 0 ? static_cast<std::int64_t>(v * kFixedScale + 0.5)
                : -static_cast<std::int64_t>(-v * kFixedScale + 0.5);
}
inline double from_fixed(std::int64_t v) { return static_cast<double>(v) / kFixedScale; }
/// The largest magnitude such a sum holds (2^31, with room for the rounding).
inline constexpr double kFixedRange = 2147483648.0;

/// A host-side order-independent sum.
class ExactSum {
 public:
  void add(double v) { acc_ += to_fixed(v); }
  /// The totals over the ranks of `comm`, in the order given.
  [[nodiscard]] static std::vector<double> over_ranks(MPI_Comm comm,
                                                      const std::vector<ExactSum>& sums) {
    std::vector<std::int64_t> local, global(sums.size());
    for (const auto& s : sums) local.push_back(s.acc_);
    MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_INT64_T, MPI_SUM,
                  comm);
    std::vector<double> out;
    for (auto g : global) out.push_back(from_fixed(g));
    return out;
  }
  /// The raw fixed-point total (a device reduction's result adds here).
  void add_fixed(std::int64_t v) { acc_ += v; }

 private:
  std::int64_t acc_ = 0;
};

}  // namespace stratus::md
