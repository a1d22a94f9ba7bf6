// Device kernels of the heat solver: u_t = D (u_xx + u_yy + u_zz) on cell-centred blocks with
// ghost layers. Pure Kokkos: no MPI, no I/O. Fields are indexed (i, j, k) with the interior at
// [g, g + n) along each axis.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

#include <array>
#include <cstdint>

namespace stratus::kernels {

/// Boundary condition of one axis; also selects the eigenmodes of the Laplacian on it.
enum class HeatBoundary : int { periodic = 0, dirichlet = 1, neumann = 2 };

/// Value at fractional position s = (x - lo) / L in [0, 1] of mode k of the Laplacian:
/// cos(2 pi k s) (periodic), sin(pi k s) (u = 0 on the walls), cos(pi k s) (zero flux).
KOKKOS_INLINE_FUNCTION Real heat_mode(HeatBoundary b, int k, Real s) {
  const Real pi = kmath::pi<Real>();
  if (b == HeatBoundary::periodic) return kmath::cos(2 * pi * k * s);
  if (b == HeatBoundary::dirichlet) return kmath::sin(pi * k * s);
  return kmath::cos(pi * k * s);
}

/// Wavenumber of that mode on an axis of length L: 2 pi k / L (periodic) or pi k / L.
KOKKOS_INLINE_FUNCTION Real heat_wavenumber(HeatBoundary b, int k, Real length) {
  const Real pi = kmath::pi<Real>();
  return (b == HeatBoundary::periodic ? 2 * pi : pi) * k / length;
}

/// Geometry of one rank's block, passed by value to kernels.
/// (Kokkos::Array, not std::array: its operator[] is callable on every device.)
struct HeatBlock {
  int g = 1;                               ///< ghost width
  Kokkos::Array<std::int64_t, 3> n{};      ///< interior cells
  Kokkos::Array<std::int64_t, 3> begin{};  ///< global index of the first interior cell
  Kokkos::Array<Real, 3> lo{}, length{};   ///< global box
  Kokkos::Array<Real, 3> dx{};             ///< cell size
};

using HeatModes = Kokkos::Array<int, 3>;
using HeatBoundaries = Kokkos::Array<HeatBoundary, 3>;

/// The interior cells [g, g + n) of a block, as a 3D range.
inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> heat_interior(const HeatBlock& blk) {
  const int g = blk.g;
  return Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>(
      {g, g, g}, {blk.n[0] + g, blk.n[1] + g, blk.n[2] + g});
}

/// prod_a heat_mode(b_a, k_a, s_a) at the centre of cell (i, j, l) of the block (ghosted indices).
KOKKOS_INLINE_FUNCTION Real heat_mode_product(const HeatBlock& blk, const HeatBoundaries& b,
                                              const HeatModes& k, int i, int j, int l) {
  const int idx[3] = {i, j, l};
  Real v = 1;
  for (int a = 0; a < 3; ++a) {
    const Real s =
        (static_cast<Real>(blk.begin[a] + idx[a] - blk.g) + Real(0.5)) * blk.dx[a] / blk.length[a];
    v *= heat_mode(b[a], k[a], s);
  }
  return v;
}

/// The separable mode u = offset + amplitude * decay * prod_a heat_mode(b_a, k_a, s_a) at the
/// cell centres of the block's interior.
inline void heat_set_mode(const Field3D& u, const HeatBlock& blk, const HeatBoundaries b,
                          const HeatModes k, Real amplitude, Real offset) {
  Kokkos::parallel_for(
      "heat_set_mode", heat_interior(blk), KOKKOS_LAMBDA(const int i, const int j, const int l) {
        u(i, j, l) = offset + amplitude * heat_mode_product(blk, b, k, i, j, l);
      });
}

/// One forward-Euler step of the 7-point Laplacian: next = u + sum_a c_a (u[-1] - 2 u + u[+1])
/// along each axis a, with c_a = D dt / dx_a^2. Reads the face ghosts of u. Each cell's result
/// depends only on its neighbours' values, never on the decomposition: bitwise identical at
/// any rank count.
inline void heat_ftcs_step(const Field3D& u, const Field3D& next, const HeatBlock& blk,
                           std::array<Real, 3> c) {
  const Real cx = c[0], cy = c[1], cz = c[2];
  Kokkos::parallel_for(
      "heat_ftcs_step", heat_interior(blk), KOKKOS_LAMBDA(const int i, const int j, const int l) {
        const Real uc = u(i, j, l);
        next(i, j, l) = uc + cx * (u(i - 1, j, l) - 2 * uc + u(i + 1, j, l)) +
                        cy * (u(i, j - 1, l) - 2 * uc + u(i, j + 1, l)) +
                        cz * (u(i, j, l - 1) - 2 * uc + u(i, j, l + 1));
      });
}

/// Fills the ghost face on side `side` (-1 low, +1 high) of `axis` for a wall: the ghost is
/// the mirror of the interior times `sign` (-1: u = 0 on the wall face, +1: zero flux).
inline void heat_fill_wall(const Field3D& u, const HeatBlock& blk, int axis, int side, Real sign) {
  const int g = blk.g;
  const std::int64_t n0 = blk.n[0], n1 = blk.n[1], n2 = blk.n[2];
  const std::int64_t na = blk.n[axis];
  // Iterate over the face (interior extent of the other two axes) and the ghost depth.
  std::array<std::int64_t, 3> hi{n0 + g, n1 + g, n2 + g};
  std::array<std::int64_t, 3> lo{g, g, g};
  lo[axis] = 0;
  hi[axis] = g;
  Kokkos::parallel_for(
      "heat_fill_wall",
      Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>({lo[0], lo[1], lo[2]},
                                                           {hi[0], hi[1], hi[2]}),
      KOKKOS_LAMBDA(const int i, const int j, const int l) {
        int dst[3] = {i, j, l};
        int src[3] = {i, j, l};
        const int d = dst[axis];  // depth into the ghost layer, 0 .. g-1 from the outside
        if (side < 0) {
          dst[axis] = d;
          src[axis] = 2 * g - 1 - d;
        } else {
          dst[axis] = static_cast<int>(na) + 2 * g - 1 - d;
          src[axis] = static_cast<int>(na) + d;
        }
        u(dst[0], dst[1], dst[2]) = sign * u(src[0], src[1], src[2]);
      });
}

/// Copies the interior of `u` (x, y, z, with ghosts) into `out` of extent (nz, ny, nx) without
/// ghosts: the order of the field files, x fastest, which XDMF readers map to their X axis.
inline void heat_interior_zyx(const Field3D& u, const HeatBlock& blk, const Field3D& out) {
  const int g = blk.g;
  Kokkos::parallel_for(
      "heat_interior_zyx", heat_interior(blk),
      KOKKOS_LAMBDA(const int i, const int j, const int l) {
        out(l - g, j - g, i - g) = u(i, j, l);
      });
}

/// Sum of u over the interior.
inline Real heat_sum(const Field3D& u, const HeatBlock& blk) {
  Real sum = 0;
  Kokkos::parallel_reduce(
      "heat_sum", heat_interior(blk),
      KOKKOS_LAMBDA(const int i, const int j, const int l, Real& acc) { acc += u(i, j, l); }, sum);
  return sum;
}

/// Largest |u| over the interior.
inline Real heat_max_abs(const Field3D& u, const HeatBlock& blk) {
  Real m = 0;
  Kokkos::parallel_reduce(
      "heat_max_abs", heat_interior(blk),
      KOKKOS_LAMBDA(const int i, const int j, const int l, Real& acc) {
        const Real v = kmath::fabs(u(i, j, l));
        if (v > acc) acc = v;
      },
      Kokkos::Max<Real>(m));
  return m;
}

/// Sum over the interior of (u - exact)^2 where exact is the mode of heat_set_mode decayed by
/// the factor `decay`.
inline Real heat_error_squared(const Field3D& u, const HeatBlock& blk, const HeatBoundaries b,
                               const HeatModes k, Real amplitude, Real offset, Real decay) {
  Real sum = 0;
  Kokkos::parallel_reduce(
      "heat_error_squared", heat_interior(blk),
      KOKKOS_LAMBDA(const int i, const int j, const int l, Real& acc) {
        const Real e =
            u(i, j, l) - (offset + amplitude * decay * heat_mode_product(blk, b, k, i, j, l));
        acc += e * e;
      },
      sum);
  return sum;
}

}  // namespace stratus::kernels
