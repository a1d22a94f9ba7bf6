#include "stratus/core/decomposition.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stratus {

namespace {

constexpr std::array<const char*, 3> kAxisName{"x", "y", "z"};

std::string hint_text(const std::array<int, 3>& hint) {
  return fmt::format("[{}, {}, {}]", hint[0], hint[1], hint[2]);
}

// Lower edge of block `c` of `parts` uniform blocks of [lo, hi). The outer edges are exactly
// lo and hi so that no rounding leaves a sliver of the box to nobody.
Real box_edge(Real lo, Real hi, int parts, int c) {
  if (c <= 0) return lo;
  if (c >= parts) return hi;
  return lo + (hi - lo) * static_cast<Real>(c) / static_cast<Real>(parts);
}

// Index of the block of block_range(n, parts, .) that holds item c (0 <= c < n, n >= parts).
int block_of(std::int64_t n, int parts, std::int64_t c) {
  const std::int64_t base = n / parts;
  const std::int64_t rem = n % parts;
  const std::int64_t cutoff = rem * (base + 1);  // items held by the larger blocks
  if (c < cutoff) return static_cast<int>(c / (base + 1));
  return static_cast<int>(rem + (c - cutoff) / base);
}

}  // namespace

CartDecomposition::CartDecomposition(MPI_Comm comm, std::array<bool, 3> periodic,
                                     std::array<int, 3> dims_hint)
    : periodic_(periodic) {
  MPI_Comm_size(comm, &size_);

  // Check the hint here: MPI_Dims_create would abort (not throw) on a hint it cannot meet.
  long long fixed = 1;
  bool fully_given = true;
  for (int a = 0; a < 3; ++a) {
    if (dims_hint[a] < 0) {
      throw InputError(fmt::format(
          "decomposition hint {} for {} ranks has a negative entry on axis {}; use 0 to let "
          "Stratus choose",
          hint_text(dims_hint), size_, kAxisName[a]));
    }
    if (dims_hint[a] > 0) {
      fixed *= dims_hint[a];
    } else {
      fully_given = false;
    }
  }
  if (size_ % fixed != 0) {
    throw InputError(fmt::format(
        "decomposition hint {} fixes {} ranks, which does not divide the {} ranks of the run",
        hint_text(dims_hint), fixed, size_));
  }
  if (fully_given && fixed != size_) {
    throw InputError(
        fmt::format("decomposition hint {} asks for {} ranks, but the run has {} ranks",
                    hint_text(dims_hint), fixed, size_));
  }

  std::array<int, 3> dims = dims_hint;
  MPI_Dims_create(size_, 3, dims.data());
  dims_ = dims;

  std::array<int, 3> periods{periodic[0] ? 1 : 0, periodic[1] ? 1 : 0, periodic[2] ? 1 : 0};
  // reorder = 0: rank r of the Cartesian communicator is rank r of `comm`.
  MPI_Cart_create(comm, 3, dims_.data(), periods.data(), 0, &cart_);
  MPI_Comm_rank(cart_, &rank_);
  MPI_Cart_coords(cart_, rank_, 3, coords_.data());
}

CartDecomposition::~CartDecomposition() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (cart_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&cart_);
}

int CartDecomposition::rank_at(std::array<int, 3> coords) const {
  for (int a = 0; a < 3; ++a) {
    if (periodic_[a]) {
      coords[a] = ((coords[a] % dims_[a]) + dims_[a]) % dims_[a];
    } else if (coords[a] < 0 || coords[a] >= dims_[a]) {
      return MPI_PROC_NULL;
    }
  }
  int r = MPI_PROC_NULL;
  MPI_Cart_rank(cart_, coords.data(), &r);
  return r;
}

int CartDecomposition::neighbor(std::array<int, 3> offset) const {
  for (int a = 0; a < 3; ++a) {
    require(offset[a] >= -1 && offset[a] <= 1,
            fmt::format("neighbor offset {} must have entries in {{-1, 0, 1}}", hint_text(offset)));
  }
  return rank_at({coords_[0] + offset[0], coords_[1] + offset[1], coords_[2] + offset[2]});
}

int CartDecomposition::neighbor(int axis, int dir) const {
  require(axis >= 0 && axis < 3 && (dir == -1 || dir == 1),
          fmt::format("neighbor(axis={}, dir={}): axis must be 0..2 and dir -1 or +1", axis, dir));
  std::array<int, 3> offset{0, 0, 0};
  offset[axis] = dir;
  return neighbor(offset);
}

bool CartDecomposition::at_wall(int axis, int dir) const {
  require(axis >= 0 && axis < 3 && (dir == -1 || dir == 1),
          fmt::format("at_wall(axis={}, dir={}): axis must be 0..2 and dir -1 or +1", axis, dir));
  if (periodic_[axis]) return false;
  return dir < 0 ? coords_[axis] == 0 : coords_[axis] == dims_[axis] - 1;
}

std::array<std::int64_t, 2> CartDecomposition::block_range(std::int64_t n, int parts, int index) {
  require(n >= 0 && parts > 0 && index >= 0 && index < parts,
          fmt::format("block_range(n={}, parts={}, index={}): need n >= 0, parts > 0 and "
                      "0 <= index < parts",
                      n, parts, index));
  const std::int64_t base = n / parts;
  const std::int64_t rem = n % parts;
  const std::int64_t begin = index * base + std::min<std::int64_t>(index, rem);
  const std::int64_t size = base + (index < rem ? 1 : 0);
  return {begin, begin + size};
}

GridBlock CartDecomposition::local_block(std::array<std::int64_t, 3> cells) const {
  GridBlock block;
  for (int a = 0; a < 3; ++a) {
    if (cells[a] < dims_[a]) {
      throw InputError(fmt::format(
          "the grid has {} cells along {} but the decomposition puts {} ranks along that axis; "
          "every rank needs at least one cell: use a finer grid or fewer ranks along {}",
          cells[a], kAxisName[a], dims_[a], kAxisName[a]));
    }
    const auto range = block_range(cells[a], dims_[a], coords_[a]);
    block.begin[a] = range[0];
    block.extent[a] = range[1] - range[0];
  }
  return block;
}

int CartDecomposition::owner_of_cell(std::array<std::int64_t, 3> cells,
                                     std::array<std::int64_t, 3> cell) const {
  std::array<int, 3> c{0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    if (cells[a] < dims_[a]) {
      throw InputError(fmt::format(
          "the grid has {} cells along {} but the decomposition puts {} ranks along that axis",
          cells[a], kAxisName[a], dims_[a]));
    }
    require(cell[a] >= 0 && cell[a] < cells[a],
            fmt::format("owner_of_cell: cell {} along {} is outside the grid of {} cells", cell[a],
                        kAxisName[a], cells[a]));
    c[a] = block_of(cells[a], dims_[a], cell[a]);
  }
  return rank_at(c);
}

Box CartDecomposition::local_box(const Box& global) const {
  Box box;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = box_edge(global.lo[a], global.hi[a], dims_[a], coords_[a]);
    box.hi[a] = box_edge(global.lo[a], global.hi[a], dims_[a], coords_[a] + 1);
  }
  return box;
}

int CartDecomposition::owner_of_point(const Box& global, std::array<Real, 3> x) const {
  std::array<int, 3> c{0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    const Real lo = global.lo[a];
    const Real hi = global.hi[a];
    const Real length = hi - lo;
    Real xa = x[a];
    require(std::isfinite(xa),
            fmt::format("owner_of_point: coordinate {} along {} is not finite", xa, kAxisName[a]));
    // Wrap only points outside the box: the arithmetic could move a point inside it by an ulp.
    if (periodic_[a] && length > 0 && (xa < lo || xa >= hi)) {
      xa = lo + (xa - lo - std::floor((xa - lo) / length) * length);
      if (xa >= hi || xa < lo) xa = lo;  // rounding put it on the upper edge: that is lo again
    }
    const int d = dims_[a];
    int p = length > 0 ? static_cast<int>(std::clamp<Real>(
                             std::floor((xa - lo) / length * static_cast<Real>(d)), 0, d - 1))
                       : 0;
    // The floor may disagree with local_box's edges by one ulp near a block edge: settle it
    // with the same edges local_box uses, so that both always agree.
    if (p > 0 && xa < box_edge(lo, hi, d, p)) --p;
    if (p < d - 1 && xa >= box_edge(lo, hi, d, p + 1)) ++p;
    c[a] = p;
  }
  return rank_at(c);
}

}  // namespace stratus
