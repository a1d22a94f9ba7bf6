// Fourier modes of a rank's spectral block: wave vectors, the dealiasing mask and Hermitian
// weights. Spectral arrays are [kz][ky][kx] (kx fastest), as Stratus::fft stores them.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

#include <algorithm>
#include <cstdint>

namespace stratus::kernels::spectral {

using Complex = Kokkos::complex<double>;
/// One component of a spectral field on this rank: [kz][ky][kx].
using SpectralView = Kokkos::View<Complex***, Kokkos::LayoutRight, DevMemSpace>;
/// One component of a real field on this rank: (x, y, z), z fastest.
using RealView = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>;
/// A real number per mode of this rank (same layout as SpectralView).
using ModeTable = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>;

/// The three components of a vector field (views are cheap handles; capture by value).
template <class View>
struct Vec3 {
  View x, y, z;
  KOKKOS_INLINE_FUNCTION const View& operator[](int c) const {
    return c == 0 ? x : (c == 1 ? y : z);
  }
};
using SpectralVec = Vec3<SpectralView>;
using RealVec = Vec3<RealView>;

/// This rank's block of modes: global sizes, the block and the fundamental wavenumbers.
struct Modes {
  Kokkos::Array<std::int64_t, 3> n{};       ///< global grid points (x, y, z); Nz = 1 in 2D
  Kokkos::Array<std::int64_t, 3> begin{};   ///< (kx, ky, kz) index of local (0, 0, 0)
  Kokkos::Array<std::int64_t, 3> extent{};  ///< local modes along kx, ky, kz
  Kokkos::Array<double, 3> k0{};            ///< 2 pi / L per axis
  /// Modes with q |m_a| >= N_a on some axis are dropped: q = 3 is the 2/3 rule, q = 2 drops
  /// only the Nyquist modes.
  int dealias_q = 3;

  /// Signed mode number of global index g along axis a (kz indices are already >= 0).
  KOKKOS_INLINE_FUNCTION std::int64_t mode(int a, std::int64_t g) const {
    return (a == 2 || 2 * g <= n[a]) ? g : g - n[a];
  }
  /// Signed mode numbers of local (iz, iy, ix).
  KOKKOS_INLINE_FUNCTION void modes(std::int64_t iz, std::int64_t iy, std::int64_t ix,
                                    std::int64_t m[3]) const {
    m[0] = mode(0, begin[0] + ix);
    m[1] = mode(1, begin[1] + iy);
    m[2] = begin[2] + iz;
  }
  KOKKOS_INLINE_FUNCTION static std::int64_t iabs(std::int64_t v) { return v < 0 ? -v : v; }
  /// Kept by the dealiasing rule (and never a Nyquist mode).
  KOKKOS_INLINE_FUNCTION bool kept(const std::int64_t m[3]) const {
    for (int a = 0; a < 3; ++a)
      if (dealias_q * iabs(m[a]) >= n[a] && m[a] != 0) return false;
    return true;
  }
  /// Wave vector of the mode numbers m.
  KOKKOS_INLINE_FUNCTION void wavevector(const std::int64_t m[3], double k[3]) const {
    for (int a = 0; a < 3; ++a) k[a] = k0[a] * static_cast<double>(m[a]);
  }
  /// modes() and wavevector() of one stored entry: the prologue of most mode-space kernels.
  KOKKOS_INLINE_FUNCTION void mode_and_wavevector(std::int64_t iz, std::int64_t iy, std::int64_t ix,
                                                  std::int64_t m[3], double k[3]) const {
    modes(iz, iy, ix, m);
    wavevector(m, k);
  }
  /// 1 for kz = 0 and the kz Nyquist plane (stored once), 2 for the other kz (their
  /// conjugates -k are not stored): sums over stored modes times this weight are sums over all.
  KOKKOS_INLINE_FUNCTION double weight(std::int64_t mz) const {
    return (mz == 0 || 2 * mz == n[2]) ? 1.0 : 2.0;
  }
  [[nodiscard]] std::int64_t local_modes() const { return extent[0] * extent[1] * extent[2]; }
};

/// A 3D range whose tiles are whole lines of the contiguous axis on host backends (long
/// unit-stride loops; the default tiles are tiny there) and the backend's default tiles on GPUs.
inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> line_range(std::int64_t n0,
                                                                       std::int64_t n1,
                                                                       std::int64_t n2) {
  using Policy = Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible)
    return Policy({0, 0, 0}, {n0, n1, n2}, {1, 1, n2 > 0 ? n2 : 1});
  return Policy({0, 0, 0}, {n0, n1, n2});
}

/// The modes of a rank's block that the dealiasing keeps (|m| <= (N - 1) / q on every axis, see
/// Modes::kept), as a dense index range (jz, jy, jx): along each axis one or two runs of stored
/// indices (the modes 0, 1, ... from stored index 0 and, along x and y, the negative ones
/// stored at the end).
struct KeptModes {
  Kokkos::Array<std::int64_t, 3> extent{};  ///< kept entries along x, y, z
  Kokkos::Array<std::int64_t, 3> run{};     ///< length of the first run (it starts at 0)
  Kokkos::Array<std::int64_t, 3> second{};  ///< stored index of the second run
  /// Stored index along axis a of kept entry j.
  KOKKOS_INLINE_FUNCTION std::int64_t stored(int a, std::int64_t j) const {
    return j < run[a] ? j : second[a] + (j - run[a]);
  }
};

inline KeptModes kept_modes(const Modes& m) {
  KeptModes k;
  for (int a = 0; a < 3; ++a) {
    const std::int64_t kmax = (m.n[a] - 1) / m.dealias_q;
    const std::int64_t b = m.begin[a], e = m.begin[a] + m.extent[a];
    const std::int64_t first_end = std::max(b, std::min(e, kmax + 1));
    // kz >= 0 is stored as itself: no negative run.
    std::int64_t second = a == 2 ? e : std::max(b, std::max(m.n[a] - kmax, kmax + 1));
    if (second > e) second = e;
    k.run[a] = first_end - b;
    k.second[a] = second - b;
    k.extent[a] = k.run[a] + (e - second);
  }
  return k;
}

/// Every mode of this rank's block in the form of KeptModes (one run per axis).
inline KeptModes every_mode(const Modes& m) {
  KeptModes k;
  for (int a = 0; a < 3; ++a) k.extent[a] = k.run[a] = k.second[a] = m.extent[a];
  return k;
}

/// Range over the kept modes of this rank as (jz, jy, jx) of KeptModes.
inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> kept_range(const KeptModes& k) {
  return line_range(k.extent[2], k.extent[1], k.extent[0]);
}

/// Range over this rank's modes as (iz, iy, ix).
inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> mode_range(const Modes& m) {
  return line_range(m.extent[2], m.extent[1], m.extent[0]);
}

/// Range over a rank's real-space points (i, j, k).
inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> point_range(const RealView& u) {
  return line_range(static_cast<std::int64_t>(u.extent(0)), static_cast<std::int64_t>(u.extent(1)),
                    static_cast<std::int64_t>(u.extent(2)));
}

/// |a|^2.
KOKKOS_INLINE_FUNCTION double norm2(const Complex& a) {
  return a.real() * a.real() + a.imag() * a.imag();
}

/// i k x a (the curl of a in Fourier space).
KOKKOS_INLINE_FUNCTION void curl(const double k[3], const Complex a[3], Complex out[3]) {
  const Complex i(0.0, 1.0);
  out[0] = i * (k[1] * a[2] - k[2] * a[1]);
  out[1] = i * (k[2] * a[0] - k[0] * a[2]);
  out[2] = i * (k[0] * a[1] - k[1] * a[0]);
}

/// Removes the component of a along k (the Leray projection; k = 0 is left alone).
KOKKOS_INLINE_FUNCTION void project(const double k[3], Complex a[3]) {
  const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
  if (k2 == 0.0) return;
  const Complex kdota = k[0] * a[0] + k[1] * a[1] + k[2] * a[2];
  for (int c = 0; c < 3; ++c) a[c] -= (k[c] / k2) * kdota;
}

}  // namespace stratus::kernels::spectral
