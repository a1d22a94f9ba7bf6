// `stratus post rdf` and `stratus post msd`: analyses of H5MD trajectories of the md solver.
#include "post.hpp"
#include "stratus/core/error.hpp"
#include "stratus/io/analysis_input.hpp"
#include "stratus/solvers/md_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace stratus::app {

namespace {

/// "# source: ..." and "# frames: ..." comment lines shared by both analyses.
std::string trajectory_comments(const io::TrajectoryInfo& info,
                                const std::vector<std::int64_t>& frames, const std::string& slice) {
  const auto& b = info.box;
  const std::string lu = info.length_unit.empty() ? "(no unit stored)" : info.length_unit;
  const std::string tu = info.time_unit.empty() ? "(no unit stored)" : info.time_unit;
  return fmt::format(
      "# source: {} ({} atoms, box {:.10g} x {:.10g} x {:.10g} {})\n"
      "# frames: {} of {} (--frames {}): steps {} .. {}, times {:.10g} .. {:.10g} {}\n",
      info.path, info.natoms, b[0], b[1], b[2], lu, frames.size(), info.frames,
      slice.empty() ? "all" : slice, info.step[frames.front()], info.step[frames.back()],
      info.time[frames.front()], info.time[frames.back()], tu);
}

std::string unit_or(const std::string& unit, const char* fallback) {
  return unit.empty() ? fallback : unit;
}

/// --types I,J as 0-based types (-1, -1 for every atom).
std::pair<int, int> parse_types(const std::string& text) {
  if (text.empty()) return {-1, -1};
  const auto comma = text.find(',');
  int t[2] = {0, 0};
  bool ok = comma != std::string::npos;
  for (int k = 0; k < 2 && ok; ++k) {
    const std::string s = k == 0 ? text.substr(0, comma) : text.substr(comma + 1);
    std::size_t used = 0;
    try {
      t[k] = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    ok = used == s.size() && !s.empty() && t[k] >= 1;
  }
  if (!ok)
    throw InputError(fmt::format(
        "--types {}: expected two atom types I,J (1-based, as in the deck), e.g. 1,2", text));
  return {t[0] - 1, t[1] - 1};
}

}  // namespace

PostResult post_rdf(const PostOptions& o) {
  const auto info = io::read_trajectory_info(o.inputs.at(0));
  const auto frames = parse_frame_slice(o.frames, info.frames, "--frames");
  if (o.bins < 1) throw InputError(fmt::format("--bins {}: expected an integer >= 1", o.bins));
  const auto [ta, tb] = parse_types(o.types);
  const double half = 0.5 * std::min({info.box[0], info.box[1], info.box[2]});
  if (!(std::isfinite(o.rmax) && o.rmax >= 0))
    throw InputError(fmt::format("--rmax {}: expected a distance > 0", o.rmax));
  const double rmax = o.rmax > 0 ? o.rmax : half;
  if (rmax > half * (1 + 1e-12))
    throw InputError(fmt::format(
        "--rmax {}: expected at most half the shortest box edge, {:.10g} (box of {}), so that "
        "minimum-image distances count every pair once",
        o.rmax, half, info.path));

  const auto n = static_cast<std::size_t>(info.natoms);
  const auto bins = static_cast<std::size_t>(o.bins);
  const double dr = rmax / static_cast<double>(bins);
  std::vector<double> g(bins, 0.0), coordination(bins, 0.0);
  for (const auto f : frames) {
    const auto frame = io::read_trajectory_frame(info, f);
    if (rmax > 0.5 * std::min({frame.box[0], frame.box[1], frame.box[2]}) * (1 + 1e-12))
      throw InputError(fmt::format("{}: frame {}: the box shrank below 2 rmax = {:.10g}", info.path,
                                   f, 2 * rmax));
    std::int64_t na = 0, nb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      na += (ta < 0 || frame.species[i] == ta) ? 1 : 0;
      nb += (tb < 0 || frame.species[i] == tb) ? 1 : 0;
    }
    const double partners = static_cast<double>(nb) - (ta == tb ? 1.0 : 0.0);
    if (na == 0 || partners <= 0)
      throw InputError(fmt::format(
          "--types {}: frame {} of {} has {} atoms of type {} and {} of type {}; expected pairs",
          o.types, f, info.path, na, ta + 1, nb, tb + 1));
    const analysis::PairHistogramRequest request{
        {frame.box[0], frame.box[1], frame.box[2]}, rmax, o.bins, ta, tb};
    const auto counts = analysis::pair_histogram(frame.position, frame.species, request);
    const double volume = frame.box[0] * frame.box[1] * frame.box[2];
    const double density = partners / volume;
    double cumulative = 0;
    for (std::size_t b = 0; b < bins; ++b) {
      const double lo = dr * static_cast<double>(b), hi = lo + dr;
      const double shell = 4.0 / 3.0 * std::numbers::pi * (hi * hi * hi - lo * lo * lo);
      const auto c = static_cast<double>(counts[b]);
      g[b] += c / (static_cast<double>(na) * density * shell);
      cumulative += c;
      coordination[b] += cumulative / static_cast<double>(na);
    }
  }
  const auto nf = static_cast<double>(frames.size());
  const std::string lu = unit_or(info.length_unit, "length units of the run");
  std::string csv = fmt::format(
      "# stratus post rdf: radial distribution function g(r) and running coordination number "
      "n(r)\n{}"
      "# pairs: {}\n"
      "# g(r) = <H(r)> / (N_i rho_j 4/3 pi (r_hi^3 - r_lo^3)), H = ordered pairs (i, j) at "
      "minimum-image distance in [r_lo, r_hi), rho_j = (N_j - delta_ij) / V: 1 for an ideal gas\n"
      "# n(r) = mean number of j atoms within r_hi of an i atom\n"
      "# units: r in {} ({} bins of {:.10g} up to rmax {:.10g})\n"
      "r,r_hi,g,n\n",
      trajectory_comments(info, frames, o.frames),
      ta < 0 ? "every atom around every atom"
             : fmt::format("atoms of type {} (j) around atoms of type {} (i)", tb + 1, ta + 1),
      lu, bins, dr, rmax);
  std::size_t peak = 0;
  for (std::size_t b = 0; b < bins; ++b) {
    g[b] /= nf;
    coordination[b] /= nf;
    if (g[b] > g[peak]) peak = b;
    csv += fmt::format("{:.10g},{:.10g},{:.17g},{:.17g}\n", dr * (static_cast<double>(b) + 0.5),
                       dr * static_cast<double>(b + 1), g[b], coordination[b]);
  }
  const std::string summary =
      fmt::format("rdf: {} frames; highest peak g = {:.4f} at r = {:.4f} {}\n", frames.size(),
                  g[peak], dr * (static_cast<double>(peak) + 0.5), lu);
  return {csv, summary};
}

PostResult post_msd(const PostOptions& o) {
  const auto info = io::read_trajectory_info(o.inputs.at(0));
  const auto frames = parse_frame_slice(o.frames, info.frames, "--frames");
  if (frames.size() < 3)
    throw InputError(fmt::format("--frames {}: selects {} frame(s) of {}; the MSD needs at least 3",
                                 o.frames.empty() ? "(all)" : o.frames, frames.size(), info.path));
  if (!(o.fit_from >= 0 && o.fit_from < o.fit_to && o.fit_to <= 1))
    throw InputError(fmt::format(
        "--fit-from {} --fit-to {}: expected fractions of the longest lag, 0 <= from < to <= 1",
        o.fit_from, o.fit_to));
  const auto nf = static_cast<std::int64_t>(frames.size());
  const double dt = info.time[frames[1]] - info.time[frames[0]];
  for (std::int64_t k = 1; k < nf; ++k) {
    const double d = info.time[frames[k]] - info.time[frames[k - 1]];
    if (!(dt > 0) || std::abs(d - dt) > 1e-9 * std::abs(dt))
      throw InputError(fmt::format(
          "{}: the selected frames are not evenly spaced in time (frame {} after {:.10g}, frame "
          "{} after {:.10g}); the MSD over time origins needs even spacing (use --frames)",
          info.path, frames[1], dt, frames[k], d));
  }
  const auto n = static_cast<std::size_t>(info.natoms);
  std::vector<double> x(frames.size() * n * 3);
  for (std::int64_t k = 0; k < nf; ++k) {
    const auto frame = io::read_trajectory_frame(info, frames[k]);
    const std::size_t at = static_cast<std::size_t>(k) * n * 3;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t a = 0; a < 3; ++a)
        x[at + 3 * i + a] = frame.position[3 * i + a] +
                            (frame.image.empty() ? 0.0 : frame.image[3 * i + a] * frame.box[a]);
  }
  const auto sums = analysis::displacement_sums(std::move(x), frames.size(), n, !info.has_image,
                                                {info.box[0], info.box[1], info.box[2]});
  std::string unwrapping =
      "image data of the file (unwrapped position = position + image * box edge)";
  if (!info.has_image) {
    unwrapping =
        "the file has no image data: unwrapped from consecutive selected frames with the "
        "minimum image (valid while no atom moves more than half a box edge between them)";
  }
  std::vector<double> msd(frames.size(), 0.0);
  for (std::int64_t lag = 1; lag < nf; ++lag)
    msd[lag] = sums[static_cast<std::size_t>(lag)] /
               (static_cast<double>(nf - lag) * static_cast<double>(n));

  // Least-squares line through the lags of the fit window.
  const auto max_lag = static_cast<double>(nf - 1);
  double s1 = 0, st = 0, sm = 0, stt = 0, stm = 0;
  std::int64_t first = -1, last = -1;
  for (std::int64_t lag = 1; lag < nf; ++lag) {
    const auto l = static_cast<double>(lag);
    if (l < o.fit_from * max_lag || l > o.fit_to * max_lag) continue;
    if (first < 0) first = lag;
    last = lag;
    const double t = l * dt;
    s1 += 1;
    st += t;
    sm += msd[lag];
    stt += t * t;
    stm += t * msd[lag];
  }
  if (s1 < 2)
    throw InputError(fmt::format(
        "--fit-from {} --fit-to {}: the fit window holds {} lag(s) of {}; widen it or select "
        "more frames",
        o.fit_from, o.fit_to, static_cast<int>(s1), nf - 1));
  const double slope = (s1 * stm - st * sm) / (s1 * stt - st * st);
  const double intercept = (sm - slope * st) / s1;
  const double d_coef = slope / 6.0;
  const std::string lu = unit_or(info.length_unit, "length");
  const std::string tu = unit_or(info.time_unit, "time");
  const std::string fit = fmt::format(
      "D = {:.8g} {}^2 {}^-1 (least-squares fit of MSD = 6 D t + c over lags {:.10g} .. {:.10g} "
      "{}, {} points; c = {:.6g} {}^2)",
      d_coef, lu, tu, static_cast<double>(first) * dt, static_cast<double>(last) * dt, tu,
      static_cast<int>(s1), intercept, lu);
  std::string csv = fmt::format(
      "# stratus post msd: mean-square displacement <|r(t0 + t) - r(t0)|^2> over atoms and every "
      "time origin t0 of the selected frames\n{}"
      "# unwrapping: {}\n"
      "# {}\n"
      "# units: lag_time in {}, msd in {}^2; origins = time origins averaged at that lag\n"
      "lag_time,msd,origins\n",
      trajectory_comments(info, frames, o.frames), unwrapping, fit, tu, lu);
  for (std::int64_t lag = 0; lag < nf; ++lag)
    csv += fmt::format("{:.17g},{:.17g},{}\n", static_cast<double>(lag) * dt, msd[lag], nf - lag);
  std::string summary = fmt::format("msd: {} frames, {} atoms; {}\n", nf, n, fit);
  if (!info.has_image) summary += "msd: " + unwrapping + "\n";
  return {csv, summary};
}

}  // namespace stratus::app
