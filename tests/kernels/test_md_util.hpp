// Host helpers of the MD kernel tests: move per-atom arrays between std::vector and device
// views, build configurations (random, fcc) and their periodic ghost images.
#pragma once

#include "stratus/kernels/md/types.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace stratus::md_test {

using kernels::md::GhostSides;
using kernels::md::Ids;
using kernels::md::kGhostLower;
using kernels::md::kGhostUpper;
using kernels::md::TypeMasses;
using kernels::md::Types;
using kernels::md::Vectors;
using Vec3 = std::array<Real, 3>;

/// Atoms on the host: [0, nlocal) local, then ghosts.
struct HostAtoms {
  std::vector<Vec3> x;
  std::vector<int> type;
  std::vector<GlobalId> id;
  /// The ghosts' sides (kernels::md::GhostSides) as add_periodic_ghosts sets them; rows past
  /// the end count as 0.
  std::vector<std::uint8_t> side;
  int nlocal = 0;
  [[nodiscard]] int nall() const { return static_cast<int>(x.size()); }
};

/// Device copy of host vectors (at least one row, so views are never empty-sized by accident).
inline Vectors to_device(const std::vector<Vec3>& h) {
  Vectors v("x", h.size());
  auto m = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.size(); ++i)
    for (int d = 0; d < 3; ++d) m(i, d) = h[i][d];
  Kokkos::deep_copy(v, m);
  return v;
}

/// Device copy of a host vector of ints or ids.
template <class View, class T>
View to_device_1d(const std::vector<T>& h) {
  View v("a", h.size());
  auto m = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.size(); ++i) m(i) = h[i];
  Kokkos::deep_copy(v, m);
  return v;
}
inline Types to_device(const std::vector<int>& h) { return to_device_1d<Types>(h); }
inline Ids to_device(const std::vector<GlobalId>& h) { return to_device_1d<Ids>(h); }
inline TypeMasses to_device(const std::vector<Real>& h) { return to_device_1d<TypeMasses>(h); }
/// Device copy of the ghosts' sides of a, one per atom.
inline GhostSides sides_on_device(const HostAtoms& a) {
  std::vector<std::uint8_t> s = a.side;
  s.resize(a.x.size(), 0);
  return to_device_1d<GhostSides>(s);
}

/// Host copy of rows [0, n) of a device Vectors.
inline std::vector<Vec3> to_host(const Vectors& v, int n) {
  auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<Vec3> h(n);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) h[i][d] = m(i, d);
  return h;
}

/// Appends, for every local atom, its periodic images (same id and type) shifted by the box
/// length L along any of the 26 directions that fall within `range` of the box [0, L)^3, with
/// their sides.
inline void add_periodic_ghosts(HostAtoms& a, Real box, Real range) {
  const int n = a.nlocal;
  for (int s0 = -1; s0 <= 1; ++s0)
    for (int s1 = -1; s1 <= 1; ++s1)
      for (int s2 = -1; s2 <= 1; ++s2) {
        if (s0 == 0 && s1 == 0 && s2 == 0) continue;
        for (int i = 0; i < n; ++i) {
          const Vec3 y{a.x[i][0] + s0 * box, a.x[i][1] + s1 * box, a.x[i][2] + s2 * box};
          bool inside = true;
          for (int d = 0; d < 3; ++d) inside = inside && y[d] >= -range && y[d] < box + range;
          if (!inside) continue;
          a.side.resize(a.x.size(), 0);
          a.x.push_back(y);
          a.type.push_back(a.type[i]);
          a.id.push_back(a.id[i]);
          // Upper: the first nonzero offset along x, y, z positive (as the ghost plan decides).
          const int first = s0 != 0 ? s0 : (s1 != 0 ? s1 : s2);
          a.side.push_back(first > 0 ? kGhostUpper : kGhostLower);
        }
      }
}

/// fcc lattice of n^3 unit cells of side `a` (4 atoms each), ids 1.., type 0, all local.
inline HostAtoms fcc_block(int n, Real a) {
  HostAtoms h;
  const Real basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        for (const auto& b : basis) {
          h.x.push_back({(i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a});
          h.type.push_back(0);
          h.id.push_back(static_cast<GlobalId>(h.x.size()));
        }
  h.nlocal = static_cast<int>(h.x.size());
  return h;
}

/// n local atoms uniform in [0, box)^3 with types in [0, ntypes) and shuffled distinct ids.
inline HostAtoms random_atoms(int n, Real box, int ntypes, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<Real> u(0, box);
  HostAtoms h;
  for (int i = 0; i < n; ++i) {
    h.x.push_back({u(gen), u(gen), u(gen)});
    h.type.push_back(static_cast<int>(gen() % ntypes));
    h.id.push_back(3 * static_cast<GlobalId>(i) + 11);
  }
  std::shuffle(h.id.begin(), h.id.end(), gen);
  h.nlocal = n;
  return h;
}

}  // namespace stratus::md_test
