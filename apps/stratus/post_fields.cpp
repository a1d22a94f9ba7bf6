// `stratus post spectrum` and `stratus post dissipation`: Fourier analyses of velocity
// snapshots of the spectral and euler solvers (serial FFTW through Stratus::fft: a post tool reads
// whole fields).
#include "post.hpp"
#include "stratus/core/error.hpp"
#include "stratus/fft/local_fft.hpp"
#include "stratus/io/analysis_input.hpp"
#include "stratus/io/deck.hpp"
#include "stratus/io/field_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

namespace stratus::app {

namespace {

/// Fourier sums of one snapshot.
struct Modal {
  double dk = 0;               ///< shell width: the smallest wavenumber 2 pi / L of the box
  std::vector<double> shells;  ///< E in shell b: modes with b - 1/2 <= |k| / dk < b + 1/2
  double energy_real = 0;      ///< 0.5 <|u|^2>, the mean over grid points
  double energy_modes = 0;     ///< sum over modes of 0.5 |u_k|^2 (= energy_real: Parseval)
  double k2_energy = 0;        ///< sum over modes of k^2 0.5 |u_k|^2 (half the enstrophy)
};

/// Index -> signed mode number in FFT order (the Nyquist mode n/2 counts as positive).
std::int64_t mode_number(std::int64_t i, std::int64_t n) { return 2 * i <= n ? i : i - n; }

Modal modal_sums(const io::VelocitySnapshot& s) {
  const auto [nx, ny, nz] = s.points;
  const std::int64_t nhx = nx / 2 + 1;
  const auto points = static_cast<double>(nx * ny * nz);
  std::array<double, 3> k0{};
  Modal m;
  m.dk = 0;
  double kmax2 = 0;
  for (int a = 0; a < 3; ++a) {
    k0[a] = 2 * std::numbers::pi / s.length[a];
    if (s.points[a] > 1) {
      m.dk = m.dk == 0 ? k0[a] : std::min(m.dk, k0[a]);
      kmax2 += std::pow(k0[a] * static_cast<double>(s.points[a] / 2), 2);
    }
  }
  if (m.dk == 0)
    throw InputError(fmt::format("{}: the field has a single point; expected a grid", s.path));
  m.shells.assign(static_cast<std::size_t>(std::sqrt(kmax2) / m.dk) + 2, 0.0);
  std::vector<double> in(static_cast<std::size_t>(nx * ny * nz));
  std::vector<std::complex<double>> out(static_cast<std::size_t>(nz * ny * nhx));
  const auto plan =
      fft::make_fftw_r2c_3d(s.points, in.data(), reinterpret_cast<double*>(out.data()));
  for (int c = 0; c < 3; ++c) {
    const auto& u = s.velocity[c];
    for (const double v : u) m.energy_real += 0.5 * v * v / points;
    std::copy(u.begin(), u.end(), in.begin());
    plan->execute(in.data(), reinterpret_cast<double*>(out.data()));
    for (std::int64_t iz = 0; iz < nz; ++iz)
      for (std::int64_t iy = 0; iy < ny; ++iy)
        for (std::int64_t ix = 0; ix < nhx; ++ix) {
          const double kx = k0[0] * static_cast<double>(ix);
          const double ky = k0[1] * static_cast<double>(mode_number(iy, ny));
          const double kz = k0[2] * static_cast<double>(mode_number(iz, nz));
          const double k2 = kx * kx + ky * ky + kz * kz;
          // Modes kx > 0 below the Nyquist mode stand for their conjugates -k too.
          const double weight = (ix == 0 || 2 * ix == nx) ? 1.0 : 2.0;
          const double e = 0.5 * weight *
                           std::norm(out[static_cast<std::size_t>((iz * ny + iy) * nhx + ix)]) /
                           (points * points);
          const auto bin = static_cast<std::size_t>(std::floor(std::sqrt(k2) / m.dk + 0.5));
          m.shells[std::min(bin, m.shells.size() - 1)] += e;
          m.energy_modes += e;
          m.k2_energy += k2 * e;
        }
  }
  return m;
}

std::string snapshot_comment(const io::VelocitySnapshot& s) {
  return fmt::format(
      "# source: {} ({} solver, step {}, time {:.10g}, {} x {} x {} points, box {:.10g} x "
      "{:.10g} x {:.10g})\n",
      s.path, s.solver, s.step, s.time, s.points[0], s.points[1], s.points[2], s.length[0],
      s.length[1], s.length[2]);
}

/// The files in step order (each file's /fields@step; the files are checked when read).
std::vector<std::string> by_step(const std::vector<std::string>& files) {
  if (files.size() < 2) return files;
  std::vector<std::pair<double, std::string>> keyed;
  for (const auto& f : files) keyed.emplace_back(io::read_velocity_snapshot_step(f), f);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [step, f] : keyed) out.push_back(f);
  return out;
}

/// Kinematic viscosity of the run that wrote `s`, from its stored deck: spectral.viscosity, or
/// euler.viscosity.mu / mean density for a constant viscosity.
double viscosity_from_deck(const SolverRegistry& registry, const io::VelocitySnapshot& s) {
  const io::Deck deck =
      io::load_deck(s.path + ":/stratus/deck", s.deck, std::vector<io::Override>{},
                    common_schema(registry), [&](const std::string& solver, Schema& schema) {
                      registry.find(solver)->declare_sections(schema);
                    });
  if (s.solver == "spectral") return deck.real("spectral.viscosity");
  const std::string& model = deck.string("euler.viscosity.model");
  if (model != "constant")
    throw InputError(fmt::format(
        "{}: euler.viscosity.model is \"{}\" in the stored deck; expected \"constant\" to derive "
        "nu = mu / mean density (give --nu for other models)",
        s.path, model));
  double mean = 0;
  for (const double r : s.density) mean += r;
  mean /= static_cast<double>(s.density.size());
  return deck.real("euler.viscosity.mu") / mean;
}

}  // namespace

PostResult post_spectrum(const PostOptions& o) {
  const auto files = by_step(o.inputs);
  const auto count = static_cast<std::int64_t>(files.size());
  const std::int64_t k = o.snapshot < 0 ? count + o.snapshot : o.snapshot;
  if (k < 0 || k >= count)
    throw InputError(fmt::format("--snapshot {}: expected 0 .. {} or -1 .. -{} ({} file(s) given)",
                                 o.snapshot, count - 1, count, count));
  const auto s = io::read_velocity_snapshot(files[static_cast<std::size_t>(k)]);
  const Modal m = modal_sums(s);
  double sum = 0;
  for (const double e : m.shells) sum += e;
  const double parseval = std::abs(sum - m.energy_real) / std::max(m.energy_real, 1e-300);
  std::string csv = fmt::format(
      "# stratus post spectrum: shell-averaged kinetic energy spectrum E(k) (per unit mass)\n{}"
      "# E(k_b) = sum over modes with |k| / dk in [b - 1/2, b + 1/2) of |u_k|^2 / 2, u_k the "
      "Fourier coefficients of the velocity normalised by the number of points; dk = {:.10g} "
      "(2 pi / longest box edge)\n"
      "# Parseval: sum E = {:.15g}, 0.5 <|u|^2> over the grid = {:.15g}, relative difference "
      "{:.3g}\n"
      "# units: k in 1 / length of the box, energy in velocity^2 (the deck's units)\n"
      "k,energy\n",
      snapshot_comment(s), m.dk, sum, m.energy_real, parseval);
  for (std::size_t b = 0; b < m.shells.size(); ++b)
    csv += fmt::format("{:.10g},{:.17g}\n", m.dk * static_cast<double>(b), m.shells[b]);
  const std::string summary = fmt::format(
      "spectrum: {} (step {}, time {:.6g}): energy {:.10g}; Parseval relative difference {:.3g}\n",
      s.path, s.step, s.time, sum, parseval);
  return {csv, summary};
}

PostResult post_dissipation(const SolverRegistry& registry, const PostOptions& o) {
  if (!(std::isfinite(o.nu) && o.nu >= 0))
    throw InputError(fmt::format("--nu {}: expected a kinematic viscosity > 0", o.nu));
  const auto files = by_step(o.inputs);
  std::string rows, sources, summary;
  double nu_used = o.nu;
  for (const auto& f : files) {
    const auto s = io::read_velocity_snapshot(f);
    const double nu = o.nu > 0 ? o.nu : viscosity_from_deck(registry, s);
    nu_used = nu;
    const Modal m = modal_sums(s);
    const double eps = 2.0 * nu * m.k2_energy;
    sources += snapshot_comment(s);
    rows += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g}\n", s.step, s.time, m.energy_modes, eps,
                        nu);
    summary += fmt::format("dissipation: step {} time {:.6g}: energy {:.8g}, dissipation {:.8g}\n",
                           s.step, s.time, m.energy_modes, eps);
  }
  const std::string csv = fmt::format(
      "# stratus post dissipation: kinetic energy and its viscous dissipation rate per unit mass\n"
      "{}"
      "# energy = sum_k E(k) = 0.5 <|u|^2>; dissipation = 2 nu sum over modes of k^2 |u_k|^2 / 2 "
      "= nu <|grad u|^2> (= nu <|omega|^2> for incompressible periodic flow)\n"
      "# nu: {} (last value {:.10g})\n"
      "# units: the deck's (time, velocity^2, velocity^2 / time, length^2 / time)\n"
      "step,time,energy,dissipation,nu\n{}",
      sources,
      o.nu > 0 ? "--nu"
               : "from the stored deck (spectral.viscosity, or euler.viscosity.mu / mean density)",
      nu_used, rows);
  return {csv, summary};
}

}  // namespace stratus::app
