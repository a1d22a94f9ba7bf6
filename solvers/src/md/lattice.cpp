#include "stratus/solvers/md/lattice.hpp"

#include <cmath>
#include <stdexcept>

namespace stratus::md {

namespace {

/// Fractional coordinates of the basis atoms of each style.
const std::vector<std::array<double, 3>>& basis(LatticeStyle style) {
  static const std::vector<std::array<double, 3>> fcc{
      {0.0, 0.0, 0.0}, {0.5, 0.5, 0.0}, {0.5, 0.0, 0.5}, {0.0, 0.5, 0.5}};
  static const std::vector<std::array<double, 3>> bcc{{0.0, 0.0, 0.0}, {0.5, 0.5, 0.5}};
  static const std::vector<std::array<double, 3>> sc{{0.0, 0.0, 0.0}};
  switch (style) {
    case LatticeStyle::fcc:
      return fcc;
    case LatticeStyle::bcc:
      return bcc;
    case LatticeStyle::sc:
      return sc;
  }
  throw std::logic_error("unknown lattice style");
}

}  // namespace

int lattice_basis_size(LatticeStyle style) { return static_cast<int>(basis(style).size()); }

double lattice_constant(LatticeStyle style, double density) {
  return std::cbrt(static_cast<double>(lattice_basis_size(style)) / density);
}

LatticeSites lattice_sites(LatticeStyle style, double density,
                           const std::vector<std::int64_t>& cells, const Box& local) {
  const auto& b = basis(style);
  const double a = lattice_constant(style, density);
  const auto nb = static_cast<std::int64_t>(b.size());
  // Only the cells that can hold a site of the local box.
  std::array<std::int64_t, 3> first{}, last{};
  for (int d = 0; d < 3; ++d) {
    first[d] =
        std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(local.lo[d] / a)) - 1);
    last[d] =
        std::min<std::int64_t>(cells[d] - 1, static_cast<std::int64_t>(std::ceil(local.hi[d] / a)));
  }
  LatticeSites out;
  for (std::int64_t cx = first[0]; cx <= last[0]; ++cx)
    for (std::int64_t cy = first[1]; cy <= last[1]; ++cy)
      for (std::int64_t cz = first[2]; cz <= last[2]; ++cz)
        for (std::int64_t k = 0; k < nb; ++k) {
          const std::array<double, 3> c{static_cast<double>(cx), static_cast<double>(cy),
                                        static_cast<double>(cz)};
          std::array<double, 3> x{};
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            x[d] = (c[d] + b[static_cast<std::size_t>(k)][d]) * a;
            inside = inside && x[d] >= local.lo[d] && x[d] < local.hi[d];
          }
          if (!inside) continue;
          out.positions.insert(out.positions.end(), x.begin(), x.end());
          out.ids.push_back(((cx * cells[1] + cy) * cells[2] + cz) * nb + k);
        }
  return out;
}

}  // namespace stratus::md
