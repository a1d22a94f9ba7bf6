// The host side of the Lennard-Jones pair style (lj_tables.hpp).
#include "stratus/solvers/md/lj_tables.hpp"

#include "stratus/solvers/md/md_config.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace stratus::md {

namespace kmd = kernels::md;

kmd::LJCut make_lj_cut(int ntypes, const std::vector<Real>& epsilon, const std::vector<Real>& sigma,
                       const std::vector<Real>& cutoff, bool shift) {
  const std::size_t nn = static_cast<std::size_t>(ntypes) * ntypes;
  if (ntypes < 1 || epsilon.size() != nn || sigma.size() != nn || cutoff.size() != nn)
    throw std::invalid_argument("LJ tables must hold ntypes^2 = " + std::to_string(nn) +
                                " entries");
  kmd::LJCut lj;
  lj.ntypes = ntypes;
  lj.lj1 = kmd::TypeTable("md::lj1", ntypes, ntypes);
  lj.lj2 = kmd::TypeTable("md::lj2", ntypes, ntypes);
  lj.lj3 = kmd::TypeTable("md::lj3", ntypes, ntypes);
  lj.lj4 = kmd::TypeTable("md::lj4", ntypes, ntypes);
  lj.cutsq = kmd::TypeTable("md::lj_cutsq", ntypes, ntypes);
  lj.offset = kmd::TypeTable("md::lj_offset", ntypes, ntypes);
  auto h1 = Kokkos::create_mirror_view(lj.lj1), h2 = Kokkos::create_mirror_view(lj.lj2);
  auto h3 = Kokkos::create_mirror_view(lj.lj3), h4 = Kokkos::create_mirror_view(lj.lj4);
  auto hc = Kokkos::create_mirror_view(lj.cutsq), ho = Kokkos::create_mirror_view(lj.offset);
  for (int a = 0; a < ntypes; ++a) {
    for (int b = 0; b < ntypes; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * ntypes + b;
      const std::size_t ba = static_cast<std::size_t>(b) * ntypes + a;
      const Real eps = epsilon[ab], sig = sigma[ab], rc = cutoff[ab];
      if (eps != epsilon[ba] || sig != sigma[ba] || rc != cutoff[ba])
        throw std::invalid_argument("LJ tables: coefficients must be symmetric");
      if (!(sig > 0) || !(rc > 0))
        throw std::invalid_argument("LJ tables: sigma and cutoff must be positive");
      const Real s6 = std::pow(sig, 6), sr6 = std::pow(sig / rc, 6);
      h1(a, b) = 48 * eps * s6 * s6;
      h2(a, b) = 24 * eps * s6;
      h3(a, b) = 4 * eps * s6 * s6;
      h4(a, b) = 4 * eps * s6;
      hc(a, b) = rc * rc;
      ho(a, b) = shift ? 4 * eps * (sr6 * sr6 - sr6) : Real(0);
      if (rc > lj.max_cutoff) lj.max_cutoff = rc;
    }
  }
  Kokkos::deep_copy(lj.lj1, h1);
  Kokkos::deep_copy(lj.lj2, h2);
  Kokkos::deep_copy(lj.lj3, h3);
  Kokkos::deep_copy(lj.lj4, h4);
  Kokkos::deep_copy(lj.cutsq, hc);
  Kokkos::deep_copy(lj.offset, ho);
  return lj;
}

LJTail lj_tail_correction(int ntypes, const std::vector<Real>& epsilon,
                          const std::vector<Real>& sigma, const std::vector<Real>& cutoff,
                          const std::vector<GlobalId>& count, Real volume) {
  const std::size_t nn = static_cast<std::size_t>(ntypes) * ntypes;
  if (ntypes < 1 || epsilon.size() != nn || sigma.size() != nn || cutoff.size() != nn ||
      count.size() != static_cast<std::size_t>(ntypes) || !(volume > 0))
    throw std::invalid_argument("lj_tail_correction: bad table sizes or volume");
  const Real pi = 3.14159265358979323846;
  LJTail tail;
  for (int a = 0; a < ntypes; ++a) {
    for (int b = 0; b < ntypes; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * ntypes + b;
      const Real eps = epsilon[ab], sig = sigma[ab];
      const Real s3 = std::pow(sig / cutoff[ab], 3), s9 = s3 * s3 * s3;
      const Real pairs = static_cast<Real>(count[a]) * static_cast<Real>(count[b]) / volume;
      const Real scale = pi * pairs * eps * sig * sig * sig;
      tail.energy += 8 * scale * (s9 / 9 - s3 / 3);
      tail.virial += 16 * scale * (Real(2) / 3 * s9 - s3);
    }
  }
  return tail;
}

PairTables make_pair_tables(const MdConfig& config) {
  const auto& p = config.pair;
  switch (p.style) {
    case PairStyle::lj_cut:
      return make_lj_cut(config.ntypes(), p.epsilon, p.sigma, p.cutoff, p.shift);
    case PairStyle::lj_cut_coul_cut:
      return kernels::md::LJCutCoulCut{
          {},
          make_lj_cut(config.ntypes(), p.epsilon, p.sigma, p.cutoff, p.shift),
          config.units.qqr2e,
          p.coulomb_cutoff * p.coulomb_cutoff};
    // g_ewald is set by the solver once PPPM has chosen it. coul/long is the same kernel with
    // epsilon 0 (MdConfig::Pair::tabulate): its LJ terms are exactly zero.
    case PairStyle::lj_cut_coul_long:
    case PairStyle::coul_long:
      return kernels::md::LJCutCoulLong{
          {},
          make_lj_cut(config.ntypes(), p.epsilon, p.sigma, p.cutoff, p.shift),
          config.units.qqr2e,
          p.coulomb_cutoff * p.coulomb_cutoff,
          0.0};
  }
  throw std::logic_error("make_pair_tables: a pair style without tables");
}

}  // namespace stratus::md
