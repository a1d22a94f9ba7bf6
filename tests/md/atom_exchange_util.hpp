// Host-side helpers of the AtomExchange tests: atoms as plain structs, upload/download,
// gathering every rank's atoms, and the configurations (random and lattice) the tests use.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/solvers/md/atoms.hpp"
#include "test_context.hpp"

#include <mpi.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace stratus::md::test {

inline MPI_Comm comm() { return stratus::testing::context().comm(); }
inline int nranks() { return stratus::testing::context().size(); }
inline int my_rank() { return stratus::testing::context().rank(); }

using Vec = std::array<Real, 3>;

/// The ghost cutoff of the tests, below half of every box length.
inline constexpr Real kCutoff = 2.5;
/// Whole lengths (for the lattice), lo not at 0; 4 ranks along y make blocks exactly kCutoff
/// wide.
inline const Box kBox{{-3.0, 1.5, 0.0}, {9.0, 11.5, 9.0}};

struct HostAtom {
  Vec x{};
  Vec v{};
  std::array<int, 3> image{};
  GlobalId id = 0;
  int type = 0;
  std::uint8_t side = 0;  ///< GhostSides
};

/// What travels with atom `id` (checked after migration).
inline Vec velocity_of(GlobalId id) {
  const auto d = static_cast<Real>(id);
  return {0.001 * d, -d, 0.5 + d};
}
inline int type_of(GlobalId id) { return static_cast<int>(id % 3); }

/// Atoms [begin, end) of `atoms` on the host.
inline std::vector<HostAtom> download(const AtomData& atoms, int begin, int end) {
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.x);
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.v);
  const auto image = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.image);
  const auto id = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.id);
  const auto type = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.type);
  const auto side = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.ghost_side);
  std::vector<HostAtom> out;
  for (int i = begin; i < end; ++i) {
    HostAtom a;
    for (int d = 0; d < 3; ++d) {
      a.x[d] = x(i, d);
      a.v[d] = v(i, d);
      a.image[d] = image(i, d);
    }
    a.id = id(i);
    a.type = type(i);
    a.side = side(i);
    out.push_back(a);
  }
  return out;
}

/// Replaces the atoms: `list` becomes the owned atoms, no ghosts.
inline void upload(AtomData& atoms, const std::vector<HostAtom>& list) {
  const int n = static_cast<int>(list.size());
  atoms.nlocal = 0;
  atoms.nghost = 0;
  atoms.reserve(n);
  auto x = Kokkos::create_mirror_view(atoms.x);
  auto v = Kokkos::create_mirror_view(atoms.v);
  auto image = Kokkos::create_mirror_view(atoms.image);
  auto id = Kokkos::create_mirror_view(atoms.id);
  auto type = Kokkos::create_mirror_view(atoms.type);
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      x(i, d) = list[i].x[d];
      v(i, d) = list[i].v[d];
      image(i, d) = list[i].image[d];
    }
    id(i) = list[i].id;
    type(i) = list[i].type;
  }
  Kokkos::deep_copy(atoms.x, x);
  Kokkos::deep_copy(atoms.v, v);
  Kokkos::deep_copy(atoms.image, image);
  Kokkos::deep_copy(atoms.id, id);
  Kokkos::deep_copy(atoms.type, type);
  atoms.nlocal = n;
}

/// Overwrites the positions of the owned atoms with those of `list`; ghosts are untouched.
inline void set_owned_positions(AtomData& atoms, const std::vector<HostAtom>& list) {
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.x);
  for (std::size_t i = 0; i < list.size(); ++i) {
    for (int d = 0; d < 3; ++d) x(i, d) = list[i].x[d];
  }
  Kokkos::deep_copy(atoms.x, x);
}

/// Every rank's `mine` (trivially copyable records), concatenated in rank order, on every rank.
template <class T>
std::vector<T> allgather(const std::vector<T>& mine) {
  const int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(nranks()), displs(nranks(), 0);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm());
  for (int r = 1; r < nranks(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<T> all((displs.back() + counts.back()) / sizeof(T));
  MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                 comm());
  return all;
}

/// `n` positions uniform in the box (the same on every rank).
inline std::vector<Vec> random_positions(const Box& box, int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<Vec> out(n);
  for (auto& p : out) {
    for (int d = 0; d < 3; ++d) {
      p[d] = std::uniform_real_distribution<Real>(box.lo[d], box.hi[d])(rng);
      if (p[d] >= box.hi[d]) p[d] = box.lo[d];
    }
  }
  return out;
}

/// A simple cubic lattice of spacing 1 from the box's lower corner: atoms sit exactly on block
/// edges and exactly on lo (box lengths must be whole numbers).
inline std::vector<Vec> lattice_positions(const Box& box) {
  std::vector<Vec> out;
  for (Real x = box.lo[0]; x < box.hi[0]; x += 1)
    for (Real y = box.lo[1]; y < box.hi[1]; y += 1)
      for (Real z = box.lo[2]; z < box.hi[2]; z += 1) out.push_back({x, y, z});
  return out;
}

/// The atoms this rank holds before migration: atom i (position w = pos[i], true image
/// images[i]) is held by a random neighbour of its owner (offset -1, 0 or +1 per axis), stored
/// on periodic axes as w + k L with image images[i] - k, k in {-1, 0, 1}. Draws the same random
/// numbers on every rank.
inline std::vector<HostAtom> scatter_near_owners(const CartDecomposition& dec, const Box& box,
                                                 const std::vector<Vec>& pos,
                                                 std::vector<std::array<int, 3>>& images,
                                                 unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> step(-1, 1), image(-2, 2);
  std::vector<HostAtom> mine;
  images.assign(pos.size(), {0, 0, 0});
  for (std::size_t i = 0; i < pos.size(); ++i) {
    std::array<int, 3> c{};
    MPI_Cart_coords(dec.comm(), dec.owner_of_point(box, pos[i]), 3, c.data());
    HostAtom a;
    a.id = static_cast<GlobalId>(i);
    a.v = velocity_of(a.id);
    a.type = type_of(a.id);
    for (int d = 0; d < 3; ++d) {
      const int off = step(rng), k = step(rng), m = image(rng);
      const bool periodic = dec.periodic()[d];
      if (periodic || (c[d] + off >= 0 && c[d] + off < dec.dims()[d])) c[d] += off;
      images[i][d] = periodic ? m : 0;
      a.x[d] = pos[i][d] + (periodic ? k * box.length(d) : 0);
      a.image[d] = images[i][d] - (periodic ? k : 0);
    }
    if (dec.rank_at(c) == my_rank()) mine.push_back(a);
  }
  return mine;
}

}  // namespace stratus::md::test
