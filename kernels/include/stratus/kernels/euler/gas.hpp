// Ideal-gas thermodynamics and the layout of the Euler state, shared by every Euler kernel.
// Pure Kokkos: no MPI, no I/O.
//
// Conserved variables per cell: U = (rho, rho u, rho v, rho w, E), E = p / (gamma - 1) +
// rho |u|^2 / 2. Primitive variables: W = (rho, u, v, w, p). Both are Kokkos::Array<Real, 5>.
#pragma once

#include "stratus/core/kokkos_compat.hpp"
#include "stratus/core/types.hpp"

#include <cstdint>
#include <type_traits>

namespace stratus::kernels::euler {

inline constexpr int kVars = 5;  ///< rho, three momenta, total energy
using Vars = Kokkos::Array<Real, kVars>;

/// The conserved state of a block: U(var, i, j, k), LayoutRight so that U(var, ...) is one
/// contiguous 3D field (a Field3D for the halo exchange and the HDF5 writer).
using State = Kokkos::View<Real****, Kokkos::LayoutRight, DevMemSpace>;

/// Viscosity law of the Navier-Stokes terms.
enum class Viscosity : int { none = 0, constant = 1, sutherland = 2 };

/// The gas: ideal-gas EOS and, for Navier-Stokes, viscosity and heat conduction.
/// T = p / (rho R); mu(T) = mu_ref (constant) or mu_ref (T/T_ref)^(3/2) (T_ref + S) / (T + S)
/// (Sutherland); heat conductivity k = mu c_p / Pr with c_p = gamma R / (gamma - 1).
struct Gas {
  Real gamma = 1.4;
  Viscosity viscosity = Viscosity::none;
  Real mu_ref = 0;
  Real t_ref = 1;
  Real sutherland = 0.4042;
  Real prandtl = 0.72;
  Real gas_constant = 1;
};

KOKKOS_FORCEINLINE_FUNCTION Vars to_conserved(const Gas& gas, const Vars& w) {
  Vars u;
  u[0] = w[0];
  u[1] = w[0] * w[1];
  u[2] = w[0] * w[2];
  u[3] = w[0] * w[3];
  // A product with the reciprocal (a loop invariant, taken once) rather than a division per call.
  u[4] =
      w[4] * (1 / (gas.gamma - 1)) + Real(0.5) * w[0] * (w[1] * w[1] + w[2] * w[2] + w[3] * w[3]);
  return u;
}

KOKKOS_FORCEINLINE_FUNCTION Vars to_primitive(const Gas& gas, const Vars& u) {
  Vars w;
  const Real rho = u[0];
  const Real inv = 1 / rho;
  w[0] = rho;
  w[1] = u[1] * inv;
  w[2] = u[2] * inv;
  w[3] = u[3] * inv;
  w[4] = (gas.gamma - 1) * (u[4] - Real(0.5) * (u[1] * w[1] + u[2] * w[2] + u[3] * w[3]));
  return w;
}

/// Speed of sound of a primitive state (rho, p > 0).
KOKKOS_INLINE_FUNCTION Real sound_speed(const Gas& gas, Real rho, Real p) {
  return kmath::sqrt(gas.gamma * p / rho);
}

/// Dynamic viscosity at temperature T.
KOKKOS_INLINE_FUNCTION Real viscosity(const Gas& gas, Real temperature) {
  if (gas.viscosity == Viscosity::sutherland) {
    const Real r = temperature / gas.t_ref;
    return gas.mu_ref * r * kmath::sqrt(r) * (gas.t_ref + gas.sutherland) /
           (temperature + gas.sutherland);
  }
  return gas.viscosity == Viscosity::constant ? gas.mu_ref : Real(0);
}

/// Loads the conserved state of cell (i, j, k).
KOKKOS_INLINE_FUNCTION Vars load(const State& s, int i, int j, int k) {
  Vars u;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v) u[v] = s(v, i, j, k);
  return u;
}

/// Flat addressing of a State, for the kernels that vectorise along k: element (v, i, j, k) is
/// (*this)(v, index(i, j, k)). Signed 64-bit index arithmetic, so that along a row the address
/// is affine in k (a View's own indexing, with its unsigned conversions, hides that from the
/// compiler). Every State of a block has the same cell shape, so one cell index serves all.
struct Flat {
  Real* data = nullptr;
  std::int64_t var = 0;                ///< distance between two variables of a cell
  Kokkos::Array<std::int64_t, 3> s{};  ///< distance between neighbours along each axis
  [[nodiscard]] KOKKOS_FORCEINLINE_FUNCTION std::int64_t index(int i, int j, int k) const {
    return i * s[0] + j * s[1] + k;
  }
  KOKKOS_FORCEINLINE_FUNCTION Real& operator()(int v, std::int64_t cell) const {
    return data[v * var + cell];
  }
};
/// Loads the conserved state of flat cell c.
KOKKOS_FORCEINLINE_FUNCTION Vars load(const Flat& f, std::int64_t c) {
  Vars u;
  STRATUS_UNROLL
  for (int v = 0; v < kVars; ++v) u[v] = f(v, c);
  return u;
}

/// The flat view of a State (contiguous: a State is always allocated whole, never a subview).
inline Flat flat(const State& s) {
  Flat f;
  f.data = s.data();
  f.var = static_cast<std::int64_t>(s.extent(1) * s.extent(2) * s.extent(3));
  f.s = {static_cast<std::int64_t>(s.extent(2) * s.extent(3)),
         static_cast<std::int64_t>(s.extent(3)), 1};
  return f;
}

/// Geometry of one rank's block (passed by value to kernels). Axes with n_global = 1 are
/// inactive: ghost width 0, no fluxes (1D and 2D runs).
struct Grid {
  Kokkos::Array<int, 3> g{};               ///< ghost width per axis (0 on an inactive axis)
  Kokkos::Array<std::int64_t, 3> n{};      ///< interior cells of the block
  Kokkos::Array<std::int64_t, 3> begin{};  ///< global index of the first interior cell
  Kokkos::Array<Real, 3> lo{};             ///< global box origin
  Kokkos::Array<Real, 3> length{};         ///< global box lengths
  Kokkos::Array<Real, 3> dx{};             ///< cell sizes

  [[nodiscard]] KOKKOS_INLINE_FUNCTION bool active(int a) const { return g[a] > 0; }
  /// Coordinate of the centre of ghosted cell index `idx` along axis a.
  [[nodiscard]] KOKKOS_INLINE_FUNCTION Real centre(int a, int idx) const {
    return lo[a] + (static_cast<Real>(begin[a] + idx - g[a]) + Real(0.5)) * dx[a];
  }
};

/// Index box [lo, hi) in ghosted cell or face indices.
struct IndexBox {
  Kokkos::Array<std::int64_t, 3> lo{}, hi{};
  [[nodiscard]] bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
};

inline Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>> policy(const IndexBox& b) {
  return Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<3>>({b.lo[0], b.lo[1], b.lo[2]},
                                                              {b.hi[0], b.hi[1], b.hi[2]});
}

/// True when the kernels run on a host back-end: loops go by (i, j) rows, vectorised along k.
inline constexpr bool kHostRows = std::is_same_v<DevExecSpace, HostExecSpace>;

#if defined(STRATUS_HOST_AVX2)
/// One row compiled for AVX2 (STRATUS_AVX2_TARGET: the same bits as the default build). The
/// functor is inlined here, so the loop is vectorised 4 doubles wide (the face kernels are
/// bound by their divisions and square roots, which then run on twice the lanes).
template <class F>
STRATUS_AVX2_TARGET void row_avx2(const F& f, const int i, const int j, const int k0,
                                  const int k1) {
  const F g = f;
  STRATUS_IVDEP
  for (int k = k0; k < k1; ++k) g(i, j, k);
}
#endif

/// One (i, j) row of a cell loop on a host back-end: k runs innermost, in one loop the compiler
/// vectorises (STRATUS_IVDEP), in AVX2 registers where the CPU has them (row_avx2). The functor
/// is copied first so that its members are loop invariants the compiler can keep in registers.
template <class F>
struct RowLoop {
  F f;
  int k0 = 0, k1 = 0;
  bool wide = false;
  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int j) const {
#if defined(STRATUS_HOST_AVX2)
    if (wide) {
      row_avx2(f, i, j, k0, k1);
      return;
    }
#endif
    const F g = f;
    STRATUS_IVDEP
    for (int k = k0; k < k1; ++k) g(i, j, k);
  }
};

/// Calls f(i, j, k) (a functor, const operator()) for every cell or face of `box`. On host
/// back-ends the threads share out (i, j) rows and each row is one vectorised loop over k, so f
/// must not write anything that f at another k of the row reads; on GPUs one thread per point.
template <class F>
inline void for_each_cell(const char* name, const IndexBox& b, const F& f) {
  if (b.empty()) return;
  if constexpr (kHostRows) {
    Kokkos::parallel_for(name,
                         Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<2>>({b.lo[0], b.lo[1]},
                                                                              {b.hi[0], b.hi[1]}),
                         RowLoop<F>{f, static_cast<int>(b.lo[2]), static_cast<int>(b.hi[2]),
                                    host_vector_bytes() >= 32});
  } else {
    Kokkos::parallel_for(name, policy(b), f);
  }
}

/// The interior cells of a block.
inline IndexBox interior(const Grid& grid) {
  IndexBox b;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = grid.g[a];
    b.hi[a] = grid.g[a] + grid.n[a];
  }
  return b;
}

}  // namespace stratus::kernels::euler
