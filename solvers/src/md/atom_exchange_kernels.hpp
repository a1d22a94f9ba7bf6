// Kernels of AtomExchange (private to atom_exchange.cpp): selection of the atoms that leave or
// become ghosts, compaction lists, and the position and force paths. What travels with an atom
// is packed column by column by ParticleColumns (core/device). Free functions in a named namespace
// because CUDA rejects extended lambdas in private member functions; each lambda captures views and
// scalars only.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/solvers/md/atom_exchange.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace stratus::md::detail {

static_assert(std::is_same_v<Real, double>, "AtomExchange sends Reals as MPI_DOUBLE");

using Policy = Kokkos::RangePolicy<DevExecSpace>;
inline constexpr std::int64_t kLowMask = 0xffffffff;  // scans count low-side atoms in 32 bits
inline constexpr std::int64_t kHighOne = std::int64_t{1} << 32;  // and high-side ones above
inline constexpr std::int64_t kNoFailure = std::numeric_limits<std::int64_t>::max();

/// Geometry of one axis, captured by value in kernels.
struct AxisGeometry {
  Real lo, hi, length;  // global box
  Real sub_lo, sub_hi;  // this rank's block
  Real below_lo;        // lower edge of the low neighbour's block (coord > 0)
  Real above_hi;        // upper edge of the high neighbour's block (coord < dims - 1)
  Real first_hi;        // upper edge of block 0
  Real last_lo;         // lower edge of block dims - 1
  int dims, coord, periodic;
};

// Edge c of `parts` uniform blocks of [lo, hi): the arithmetic of CartDecomposition::local_box,
// so that the neighbours' edges computed here agree bitwise with their own local_box.
inline Real block_edge(Real lo, Real hi, int parts, int c) {
  if (c <= 0) return lo;
  if (c >= parts) return hi;
  return lo + (hi - lo) * static_cast<Real>(c) / static_cast<Real>(parts);
}

inline Kokkos::Array<AxisGeometry, 3> make_geometry(const CartDecomposition& dec,
                                                    const Box& global) {
  Kokkos::Array<AxisGeometry, 3> geo;
  const Box local = dec.local_box(global);
  for (int a = 0; a < 3; ++a) {
    const Real lo = global.lo[a], hi = global.hi[a];
    const int d = dec.dims()[a], c = dec.coords()[a];
    geo[a] = AxisGeometry{lo,
                          hi,
                          hi - lo,
                          local.lo[a],
                          local.hi[a],
                          block_edge(lo, hi, d, c - 1),
                          block_edge(lo, hi, d, c + 2),
                          block_edge(lo, hi, d, 1),
                          block_edge(lo, hi, d, d - 1),
                          d,
                          c,
                          dec.periodic()[a] ? 1 : 0};
  }
  return geo;
}

/// Block of a coordinate already in the box, relative to this rank: 0 (this block), -1 (the
/// low neighbour's), +1 (the high neighbour's, also across a periodic boundary), 2 (farther).
KOKKOS_INLINE_FUNCTION int block_step(Real xa, const AxisGeometry& g) {
  if (xa >= g.sub_lo && xa < g.sub_hi) return 0;
  if (g.periodic != 0 && g.dims > 1) {
    if (g.coord == 0 && xa >= g.last_lo) return -1;
    if (g.coord == g.dims - 1 && xa < g.first_hi) return 1;
  }
  if (xa < g.sub_lo) return g.coord > 0 && xa >= g.below_lo ? -1 : 2;
  return g.coord < g.dims - 1 && xa < g.above_hi ? 1 : 2;
}

/// Wraps owned positions into the box on periodic axes (counting images) and checks them.
/// Returns 16 * i + code for the first bad atom i, code = 3 * kind + axis with kind 0 (not
/// finite, or absurdly far), 1 (outside a non-periodic wall), 2 (beyond the neighbour's block);
/// kNoFailure when all are fine.
inline std::int64_t wrap_and_check(const AtomData& atoms,
                                   const Kokkos::Array<AxisGeometry, 3>& geo) {
  const auto x = atoms.x;
  const auto image = atoms.image;
  std::int64_t first = kNoFailure;
  Kokkos::parallel_reduce(
      "stratus::md::AtomExchange::wrap", Policy(0, atoms.nlocal),
      KOKKOS_LAMBDA(const int i, std::int64_t& bad) {
        int code = -1;
        for (int a = 0; a < 3 && code < 0; ++a) {
          const AxisGeometry& g = geo[a];
          Real xa = x(i, a);
          const Real q = (xa - g.lo) / g.length;
          if (!(q > -1e9 && q < 1e9)) {  // also false for NaN
            code = a;
          } else if (xa < g.lo || xa >= g.hi) {
            if (g.periodic == 0) {
              code = 3 + a;
            } else {
              long long n = static_cast<long long>(q);
              if (static_cast<Real>(n) > q) --n;  // floor
              xa = g.lo + ((xa - g.lo) - static_cast<Real>(n) * g.length);
              if (xa >= g.hi) {  // rounding left it on the upper edge: that is lo, one more box
                xa = g.lo;
                ++n;
              }
              if (xa < g.lo) xa = g.lo;
              x(i, a) = xa;
              image(i, a) += static_cast<int>(n);
            }
          }
          if (code < 0 && block_step(xa, g) == 2) code = 6 + a;
        }
        if (code >= 0) {
          const std::int64_t key = 16 * static_cast<std::int64_t>(i) + code;
          if (key < bad) bad = key;
        }
      },
      Kokkos::Min<std::int64_t>(first));
  return first;
}

/// Lists the owned atoms of [0, n) that leave along `axis`, in order: to the low neighbour in
/// `low`, to the high one in `high`, as far as the lists hold them; returns the counts packed in
/// one integer (low | high << 32).
inline std::int64_t select_migrants(const Vectors& x, int n, int axis, AxisGeometry g, RowList low,
                                    RowList high) {
  const std::int64_t cap_low = low.extent(0), cap_high = high.extent(0);
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "stratus::md::AtomExchange::select_migrants", Policy(0, n),
      KOKKOS_LAMBDA(const int i, std::int64_t& offset, const bool final) {
        const int step = block_step(x(i, axis), g);
        if (step != -1 && step != 1) return;
        if (final) {
          if (step < 0 && (offset & kLowMask) < cap_low) low(offset & kLowMask) = i;
          if (step > 0 && (offset >> 32) < cap_high) high(offset >> 32) = i;
        }
        offset += step < 0 ? 1 : kHighOne;
      },
      total);
  return total;
}

/// The moves that compact the owned atoms [0, nlocal) into [0, n_stay) once the atoms leaving
/// along `axis` are gone: holes(k) is the k-th leaving atom of [0, n_stay), fillers(k) the k-th
/// staying atom of [n_stay, nlocal). Returns the number of moves (at most the atoms leaving,
/// which the lists hold).
inline int find_compaction(const Vectors& x, int nlocal, int n_stay, int axis, AxisGeometry g,
                           RowList holes, RowList fillers) {
  int moves = 0;
  Kokkos::parallel_scan(
      "stratus::md::AtomExchange::find_holes", Policy(0, n_stay),
      KOKKOS_LAMBDA(const int i, int& offset, const bool final) {
        if (block_step(x(i, axis), g) == 0) return;
        if (final) holes(offset) = i;
        ++offset;
      },
      moves);
  Kokkos::parallel_scan(
      "stratus::md::AtomExchange::find_fillers", Policy(n_stay, nlocal),
      KOKKOS_LAMBDA(const int i, int& offset, const bool final) {
        if (block_step(x(i, axis), g) != 0) return;
        if (final) fillers(offset) = i;
        ++offset;
      });
  return moves;
}

/// Lists the atoms of [0, n) near the low face (x < low_edge; only if `to_low`) and the high
/// face (x >= high_edge; only if `to_high`) as far as the lists hold them; returns the counts
/// packed in one integer (low | high << 32).
inline std::int64_t select_ghosts(const Vectors& x, int n, int axis, bool to_low, Real low_edge,
                                  bool to_high, Real high_edge, RowList low, RowList high) {
  const std::int64_t cap_low = low.extent(0), cap_high = high.extent(0);
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "stratus::md::AtomExchange::select_ghosts", Policy(0, n),
      KOKKOS_LAMBDA(const int i, std::int64_t& offset, const bool final) {
        const Real xa = x(i, axis);
        const bool l = to_low && xa < low_edge;
        const bool h = to_high && xa >= high_edge;
        if (final) {
          if (l && (offset & kLowMask) < cap_low) low(offset & kLowMask) = i;
          if (h && (offset >> 32) < cap_high) high(offset >> 32) = i;
        }
        offset += (l ? 1 : 0) + (h ? kHighOne : 0);
      },
      total);
  return total;
}

/// Component d of the position of entry k of two lists taken one after the other (the first
/// n_first entries of `first`, then `second`), shifted along `axis` by its list's shift.
KOKKOS_INLINE_FUNCTION Real listed_position(const Vectors& x, const int axis, const int d,
                                            const int k, const RowList& first, const int n_first,
                                            const Real shift_first, const RowList& second,
                                            const Real shift_second) {
  const bool in_first = k < n_first;
  const int i = in_first ? first(k) : second(k - n_first);
  return x(i, d) + (d == axis ? (in_first ? shift_first : shift_second) : Real(0));
}

/// Packs the positions of the listed atoms (3 Reals each), shifted along `axis`, low side then
/// high side.
inline void pack_positions(const Vectors& x, int axis, RowList low, int n_low, Real shift_low,
                           RowList high, int n_high, Real shift_high,
                           Kokkos::View<Real*, DevMemSpace> buf) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::pack_positions", Policy(0, n_low + n_high),
      KOKKOS_LAMBDA(const int k) {
        for (int d = 0; d < 3; ++d)
          buf(3 * k + d) = listed_position(x, axis, d, k, low, n_low, shift_low, high, shift_high);
      });
}

/// Writes `count` positions into the ghosts [begin, begin + count): the first `n_first` from
/// buf entries [first, ...), the rest from [second, ...) (atom units).
inline void unpack_positions(const Vectors& x, int begin, int count, int n_first, int first,
                             int second, Kokkos::View<Real*, DevMemSpace> buf) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::unpack_positions", Policy(0, count), KOKKOS_LAMBDA(const int k) {
        const int src = k < n_first ? first + k : second + (k - n_first);
        for (int d = 0; d < 3; ++d) x(begin + k, d) = buf(3 * src + d);
      });
}

/// One rank on both sides: the ghosts [begin, begin + n_high) are the `high` rows shifted by
/// shift_high, the next n_low the `low` rows shifted by shift_low (what the neighbours above and
/// below would have sent), copied without a buffer: every source row is below `begin`.
inline void copy_ghost_positions(const Vectors& x, int axis, RowList low, int n_low, Real shift_low,
                                 RowList high, int n_high, Real shift_high, int begin) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::copy_ghost_positions", Policy(0, n_low + n_high),
      KOKKOS_LAMBDA(const int k) {
        for (int d = 0; d < 3; ++d)
          x(begin + k, d) =
              listed_position(x, axis, d, k, high, n_high, shift_high, low, shift_low);
      });
}

/// The sides of the ghosts just received at rows [begin, begin + n_low + n_high) (from the low
/// neighbour first): a copy of an owned atom (side 0) lies on the side it came from; a forwarded
/// ghost keeps the side of its first hop (kernels::md::GhostSides).
inline void mark_ghost_sides(const GhostSides& side, int begin, int n_low, int n_high) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::mark_ghost_sides", Policy(begin, begin + n_low + n_high),
      KOKKOS_LAMBDA(const int i) {
        if (side(i) == 0)
          side(i) = i < begin + n_low ? kernels::md::kGhostLower : kernels::md::kGhostUpper;
      });
}

/// Adds the rows [first, first + count) of v to the rows list(0 .. count) (distinct rows, all
/// below `first`): the forces of one rank's own ghosts, without a buffer.
inline void add_ghost_rows(const Vectors& v, RowList list, int count, int first) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::add_ghost_rows", Policy(0, count), KOKKOS_LAMBDA(const int k) {
        const int i = list(k);
        for (int d = 0; d < 3; ++d) v(i, d) += v(first + k, d);
      });
}

/// Copies rows [begin, begin + count) of v into buf (3 Reals each).
inline void pack_rows(const Vectors& v, int begin, int count,
                      Kokkos::View<Real*, DevMemSpace> buf) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::pack_rows", Policy(0, count), KOKKOS_LAMBDA(const int k) {
        for (int d = 0; d < 3; ++d) buf(3 * k + d) = v(begin + k, d);
      });
}

/// Adds buf entries [first, first + 3 count) to the rows list(0 .. count) of v (distinct rows).
inline void add_rows(const Vectors& v, RowList list, int count,
                     Kokkos::View<Real*, DevMemSpace> buf, int first) {
  Kokkos::parallel_for(
      "stratus::md::AtomExchange::add_rows", Policy(0, count), KOKKOS_LAMBDA(const int k) {
        const int i = list(k);
        for (int d = 0; d < 3; ++d) v(i, d) += buf(first + 3 * k + d);
      });
}

}  // namespace stratus::md::detail
