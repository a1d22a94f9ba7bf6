// Setup, time step and diagnostics of the spectral Navier-Stokes solver.
#include "stratus/core/device.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/kokkos_compat.hpp"
#include "stratus/kernels/spectral/initial.hpp"
#include "stratus/solvers/spectral.hpp"

#include <fmt/format.h>

#include <cmath>

namespace stratus {

namespace ks = kernels::spectral;

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

/// Low-storage (2N) Runge-Kutta coefficients: q = a q + dt f; u = u + b q; stage times c.
void rk_coefficients(SpectralConfig::TimeScheme scheme, std::vector<double>& a,
                     std::vector<double>& b, std::vector<double>& c) {
  if (scheme == SpectralConfig::TimeScheme::rk3) {
    // J. H. Williamson, J. Comput. Phys. 35, 48 (1980): 3 stages, third order.
    a = {0.0, -5.0 / 9.0, -153.0 / 128.0};
    b = {1.0 / 3.0, 15.0 / 16.0, 8.0 / 15.0};
    c = {0.0, 1.0 / 3.0, 3.0 / 4.0};
    return;
  }
  // M. H. Carpenter and C. A. Kennedy, NASA TM-109112 (1994): 5 stages, fourth order.
  a = {0.0, -567301805773.0 / 1357537059087.0, -2404267990393.0 / 2016746695238.0,
       -3550918686646.0 / 2091501179385.0, -1275806237668.0 / 842570457699.0};
  b = {1432997174477.0 / 9575080441755.0, 5161836677717.0 / 13612068292357.0,
       1720146321549.0 / 2090206949498.0, 3134564353537.0 / 4481467310338.0,
       2277821191437.0 / 14882151754819.0};
  c = {0.0, 1432997174477.0 / 9575080441755.0, 2526269341429.0 / 6820363183900.0,
       2006345519317.0 / 3224310063776.0, 2802321613138.0 / 2924317926251.0};
}

ks::SpectralVec make_spectral(const fft::DistributedFft& f, const std::string& name) {
  return {f.make_spectral(name + "_x"), f.make_spectral(name + "_y"), f.make_spectral(name + "_z")};
}
ks::RealVec make_real(const fft::DistributedFft& f, const std::string& name) {
  return {f.make_real(name + "_x"), f.make_real(name + "_y"), f.make_real(name + "_z")};
}

double allreduce(MPI_Comm comm, double v, MPI_Op op) {
  double g = 0;
  MPI_Allreduce(&v, &g, 1, MPI_DOUBLE, op, comm);
  return g;
}

/// [spectral.forcing]: the stage kernels' forcing parameters.
void read_forcing(const io::Deck& deck, SpectralConfig& c) {
  ks::StageParams& f = c.forcing;
  const auto& forcing = deck.string("spectral.forcing.type");
  f.forcing = deck.choice<ks::ForcingKind>("spectral.forcing.type",
                                           {{"none", ks::ForcingKind::none},
                                            {"kolmogorov", ks::ForcingKind::kolmogorov},
                                            {"linear", ks::ForcingKind::linear},
                                            {"band", ks::ForcingKind::linear}});
  if (f.forcing == ks::ForcingKind::kolmogorov) {
    f.kolmogorov_amplitude = deck.real("spectral.forcing.amplitude");
    f.kolmogorov_mode = deck.integer("spectral.forcing.mode");
    if (3 * f.kolmogorov_mode >= c.n[1])
      throw deck.error_at("spectral.forcing.mode",
                          fmt::format("mode {} is dropped by dealiasing with {} points along y "
                                      "(need 3 mode < {})",
                                      f.kolmogorov_mode, c.n[1], c.n[1]));
  } else if (f.forcing == ks::ForcingKind::linear) {
    c.injection = deck.real("spectral.forcing.injection");
    if (forcing == "band") {
      const auto& band = deck.real_list("spectral.forcing.band");
      if (!(band[0] < band[1]))
        throw deck.error_at("spectral.forcing.band",
                            fmt::format("expected k_lo < k_hi, found [{}, {}]", band[0], band[1]));
      f.band_lo2 = band[0] * band[0];
      f.band_hi2 = band[1] * band[1];
    } else {
      f.band_lo2 = 0;
      f.band_hi2 = 1e300;
    }
  } else {
    f.band_lo2 = 1;  // an empty band: no band energy is summed
    f.band_hi2 = 0;
  }
  f.vorticity = c.rotational;
}

/// [spectral.initial]: the initial condition's type and what it reads.
void read_initial(const io::Deck& deck, SpectralConfig& c) {
  using Initial = SpectralConfig::Initial;
  auto& init = c.initial;
  init.type =
      deck.choice<Initial>("spectral.initial.type", {{"taylor_green", Initial::taylor_green},
                                                     {"abc", Initial::abc},
                                                     {"random", Initial::random},
                                                     {"file", Initial::file}});
  const auto& modes = deck.integer_list("spectral.initial.modes");
  for (std::size_t a = 0; a < 3 && a < modes.size(); ++a) init.modes[a] = modes[a];
  init.amplitude = deck.real("spectral.initial.amplitude");
  init.energy = deck.real("spectral.initial.energy");
  init.peak = deck.real("spectral.initial.peak");
  init.seed = static_cast<std::uint64_t>(deck.integer("spectral.initial.seed"));
  init.file = deck.string("spectral.initial.file");
  if (init.type == Initial::file && init.file.empty())
    throw deck.error_at("spectral.initial.file", "initial.type = \"file\" needs a file name");
  if (init.type == Initial::abc) {
    if (c.dims != 3)
      throw deck.error_at("spectral.initial.type",
                          "the ABC flow is three-dimensional; give "
                          "three `points`");
    const auto& abc = deck.real_list("spectral.initial.abc");
    for (int a = 0; a < 3; ++a) init.abc[a] = abc[a];
  }
}

}  // namespace

MemoryNeed SpectralConfig::memory() const {
  // Six 3-component spectral fields of at least n/2 complex values per axis line, two of reals,
  // and the transforms' scratch: about five spectral scalars (on one rank, the fused nonlinear
  // term's six arrays of the kept kz planes and the truncated transforms' copy; on several, the
  // three arrays between transposes).
  return memory_of({n[0], n[1], n[2]}, 6 * 3 * 8 + 2 * 3 * 8 + 5 * 8, "spectral.points",
                   "grid points", "6 spectral and 2 grid velocity-sized fields, transform scratch");
}

SpectralConfig SpectralConfig::from(const io::Deck& deck) {
  SpectralConfig c;
  const auto& points = deck.integer_list("spectral.points");
  if (points.size() != 2 && points.size() != 3)
    throw deck.error_at("spectral.points",
                        fmt::format("expected 2 (2D) or 3 (3D) entries, found {}", points.size()));
  c.dims = static_cast<int>(points.size());
  c.n = {points[0], points[1], c.dims == 3 ? points[2] : 1};
  for (int a = 0; a < c.dims; ++a)
    if (c.n[a] < 2)
      throw deck.error_at(
          "spectral.points",
          fmt::format("need at least 2 points per axis, found {} along {}", c.n[a], "xyz"[a]));
  const auto& box = deck.real_list("spectral.box");
  const auto& origin = deck.real_list("spectral.origin");
  for (const auto& [key, list] : {std::pair{"spectral.box", &box}, {"spectral.origin", &origin}})
    if (!list->empty() && static_cast<int>(list->size()) != c.dims)
      throw deck.error_at(key, fmt::format("expected {} entries (one per axis of `points`) or [], "
                                           "found {}",
                                           c.dims, list->size()));
  for (int a = 0; a < 3; ++a) {
    c.box[a] = (a < c.dims && !box.empty()) ? box[a] : kTwoPi;
    c.origin[a] = (a < c.dims && !origin.empty()) ? origin[a] : 0.0;
  }
  c.viscosity = deck.real("spectral.viscosity");
  c.rotational = deck.choice<bool>("spectral.nonlinear", {{"rotational", true}, {"skew", false}});
  c.dealias_q = deck.choice<int>("spectral.dealias", {{"two_thirds", 3}, {"none", 2}});

  c.fft.decomposition = deck.choice<fft::Decomposition>("spectral.fft.decomposition",
                                                        {{"auto", fft::Decomposition::automatic},
                                                         {"slab", fft::Decomposition::slab},
                                                         {"pencil", fft::Decomposition::pencil}});
  const auto& grid = deck.integer_list("spectral.fft.process_grid");
  c.fft.process_grid = {static_cast<int>(grid[0]), static_cast<int>(grid[1])};
  c.fft.backend = deck.string("spectral.fft.backend");
  c.fft.measure =
      deck.choice<bool>("spectral.fft.planner", {{"estimate", false}, {"measure", true}});
  c.fft.whole_plans = deck.choice<bool>("spectral.fft.plans", {{"auto", true}, {"lines", false}});

  c.scheme_name = deck.string("spectral.time.scheme");
  c.scheme = deck.choice<TimeScheme>("spectral.time.scheme",
                                     {{"rk3", TimeScheme::rk3}, {"rk4", TimeScheme::rk4}});
  c.dt = deck.real("spectral.time.dt");
  c.cfl = deck.real("spectral.time.cfl");
  c.dt_max = deck.real("spectral.time.dt_max");
  read_forcing(deck, c);
  read_initial(deck, c);

  c.diag_every = deck.integer("spectral.output.diag_every");
  c.spectrum_every = deck.integer("spectral.output.spectrum_every");
  c.snapshot_every = deck.integer("spectral.output.snapshot_every");
  c.pressure = deck.boolean("spectral.output.pressure");
  c.fft_timing = deck.boolean("spectral.output.fft_timing");
  c.output = io::OutputPaths::from(deck);
  c.deck_toml = deck.to_toml();
  return c;
}

SpectralSolver::SpectralSolver(Context& ctx, const io::Deck& deck)
    : ctx_(ctx), config_(SpectralConfig::from(deck)) {
  const SpectralConfig& c = config_;
  dims_ = c.dims;
  cells_ = c.n;
  box_ = c.box;
  origin_ = c.origin;
  nu_ = c.viscosity;
  rotational_ = c.rotational;

  fft::Options options = c.fft;
  options.transport = device::choice(ctx).transport;
  // The box of modes the dealiasing rule keeps (q |m| < N, see Modes::kept): the step's
  // transforms skip the lines outside it.
  for (int a = 0; a < 3; ++a) options.truncation[a] = (cells_[a] - 1) / c.dealias_q;
  try {
    fft_ = std::make_unique<fft::DistributedFft>(ctx.comm(), cells_, options);
  } catch (const InputError& e) {
    const bool grid_set = !deck.origin("spectral.fft.process_grid").is_default;
    throw deck.error_at(grid_set ? "spectral.fft.process_grid"
                        : options.decomposition != fft::Decomposition::automatic
                            ? "spectral.fft.decomposition"
                            : "spectral.points",
                        e.what());
  }

  const auto& sb = fft_->spectral_block();
  for (int a = 0; a < 3; ++a) {
    modes_.n[a] = cells_[a];
    modes_.begin[a] = sb.begin[a];
    modes_.extent[a] = sb.extent[a];
    modes_.k0[a] = kTwoPi / box_[a];
  }
  modes_.dealias_q = c.dealias_q;
  dk_ = std::min(modes_.k0[0], modes_.k0[1]);
  if (dims_ == 3) dk_ = std::min(dk_, modes_.k0[2]);

  rk_coefficients(c.scheme, rk_a_, rk_b_, rk_c_);
  dt_ = c.dt;
  adaptive_ = dt_ == 0.0;
  cfl_ = c.cfl;
  dt_max_ = c.dt_max;
  forcing_ = c.forcing;
  injection_ = c.injection;
  forcing_.vorticity = rotational_;

  v_ = make_spectral(*fft_, "spectral::v");
  q_ = make_spectral(*fft_, "spectral::q");
  us_ = make_spectral(*fft_, "spectral::us");
  om_ = make_spectral(*fft_, "spectral::om");
  nl_ = make_spectral(*fft_, "spectral::nl");
  tmp_ = make_spectral(*fft_, "spectral::tmp");
  u_ = make_real(*fft_, "spectral::u");
  w_ = make_real(*fft_, "spectral::w");
  if (!rotational_) acc_ = make_real(*fft_, "spectral::acc");
  for (std::size_t s = 0; s <= rk_a_.size(); ++s)
    decay_.emplace_back("spectral::decay", modes_.extent[2], modes_.extent[1], modes_.extent[0]);

  set_initial_condition(deck);
  if (!adaptive_) rebuild_tables();
  ctx.log().info(
      "spectral: {}D, {} x {} x {} points, box {:.6g} x {:.6g} x {:.6g}, nu = {:.6g}, "
      "{} form, {}, {} on {} ranks",
      dims_, cells_[0], cells_[1], cells_[2], box_[0], box_[1], box_[2], nu_,
      rotational_ ? "rotational" : "skew-symmetric", c.scheme_name, fft_->describe(), ctx.size());
}

SpectralSolver::~SpectralSolver() = default;

void SpectralSolver::set_initial_condition(const io::Deck& deck) {
  using Initial = SpectralConfig::Initial;
  const auto& init = config_.initial;
  const double inv_n = 1.0 / static_cast<double>(cells_[0] * cells_[1] * cells_[2]);
  const auto& rb = fft_->real_block();
  ks::PointGrid g;
  for (int a = 0; a < 3; ++a) {
    g.begin[a] = rb.begin[a];
    g.origin[a] = origin_[a];
    g.dx[a] = box_[a] / static_cast<double>(cells_[a]);
  }
  const auto& modes = init.modes;
  if (init.type == Initial::random) {
    ks::random_field(modes_, v_, init.seed, init.peak, dims_);
    ks::project_field(modes_, v_, 1.0, true);
    const double e = allreduce(ctx_.comm(), ks::spectral_sum(modes_, v_, 0), MPI_SUM);
    if (!(e > 0))
      throw deck.error_at("spectral.initial.peak",
                          "the random field has no energy on the resolved modes (peak too high "
                          "for the grid?)");
    ks::scale(modes_, v_, std::sqrt(init.energy / e));
    return;
  }
  if (init.type == Initial::file) {
    read_initial_file(deck, init.file);
  } else if (init.type == Initial::abc) {
    ks::abc_flow(u_, g, init.abc[0], init.abc[1], init.abc[2],
                 static_cast<double>(modes[0]) * modes_.k0[0]);
  } else {
    ks::taylor_green(u_, g, init.amplitude, static_cast<double>(modes[0]) * modes_.k0[0],
                     static_cast<double>(modes[1]) * modes_.k0[1],
                     static_cast<double>(modes[2]) * modes_.k0[2], dims_);
  }
  for (int c = 0; c < 3; ++c) fft_->forward(u_[c], v_[c]);
  ks::project_field(modes_, v_, inv_n, false);
}

void SpectralSolver::rebuild_tables() {
  const std::size_t stages = rk_a_.size();
  for (std::size_t s = 0; s < stages; ++s) ks::decay_table(modes_, nu_, rk_c_[s] * dt_, decay_[s]);
  ks::decay_table(modes_, nu_, dt_, decay_[stages]);
  tables_dt_ = dt_;
}

void SpectralSolver::nonlinear(const ks::SpectralVec& us, bool first_stage) {
  auto t = ctx_.timers().scope("spectral: nonlinear term", Phase::compute);
  const int d = dims_;
  const double inv_n = 1.0 / static_cast<double>(cells_[0] * cells_[1] * cells_[2]);
  const double inv_dx = static_cast<double>(cells_[0]) / box_[0];
  const double inv_dy = static_cast<double>(cells_[1]) / box_[1];
  const double inv_dz = static_cast<double>(cells_[2]) / box_[2];
  double rate = 0;
  // One rank, 3D, rotational form: the velocity goes to the grid inside fused_pointwise.
  const bool fused = rotational_ && d == 3 && fft_->fuses();
  if (!fused)
    for (int c = 0; c < d; ++c) fft_->backward_truncated(us[c], u_[c]);
  if (fused) {
    // The z transforms, u x omega and the y transforms run plane by plane in cache.
    const fft::SpectralField in[6] = {om_.x, om_.y, om_.z, us.x, us.y, us.z};
    const fft::SpectralField out[3] = {nl_.x, nl_.y, nl_.z};
    const std::int64_t points = cells_[1] * cells_[2];
    rate = fft_->fused_pointwise(in, 6, out, 3, [=](double* const* f, std::int64_t) {
      double* __restrict wx = f[0];
      double* __restrict wy = f[1];
      double* __restrict wz = f[2];
      const double* __restrict ux = f[3];
      const double* __restrict uy = f[4];
      const double* __restrict uz = f[5];
      double r = 0;
      for (std::int64_t i = 0; i < points; ++i) {
        const double u[3] = {ux[i], uy[i], uz[i]};
        double w[3] = {wx[i], wy[i], wz[i]};
        const double c = ks::cross_point(u, w, inv_dx, inv_dy, inv_dz);
        wx[i] = w[0];
        wy[i] = w[1];
        wz[i] = w[2];
        r = c > r ? c : r;
      }
      return r;
    });
    forcing_.factor = inv_n;
  } else if (rotational_) {
    if (d == 2) {
      fft_->backward_truncated(om_.z, w_.z);
    } else {
      for (int c = 0; c < 3; ++c) fft_->backward_truncated(om_[c], w_[c]);
    }
    rate = ks::cross_product(u_, w_, d, inv_dx, inv_dy, inv_dz);
    for (int c = 0; c < d; ++c) fft_->forward_truncated(w_[c], nl_[c]);
    forcing_.factor = inv_n;
  } else {
    for (int j = 0; j < d; ++j) {
      ks::derivative(modes_, us, j, tmp_);
      for (int c = 0; c < d; ++c) fft_->backward_truncated(tmp_[c], w_[c]);
      ks::accumulate_advection(u_, j, w_, acc_, j == 0);
    }
    for (int c = 0; c < d; ++c) fft_->forward_truncated(acc_[c], nl_[c]);
    for (int j = 0; j < d; ++j) {
      ks::products(u_, j, w_);
      for (int c = 0; c < d; ++c) fft_->forward_truncated(w_[c], tmp_[c]);
      ks::accumulate_divergence(modes_, tmp_, j, nl_);
    }
    if (first_stage) rate = ks::cross_product_rate(u_, d, inv_dx, inv_dy, inv_dz);
    forcing_.factor = -0.5 * inv_n;
  }
  if (first_stage) cfl_rate_ = allreduce(ctx_.comm(), rate, MPI_MAX);
}

void SpectralSolver::step() {
  Kokkos::Timer timer;
  const auto fft_before = fft_->stats();
  const std::size_t stages = rk_a_.size();
  const bool linear = forcing_.forcing == ks::ForcingKind::linear;
  double band = 0;
  {
    auto t = ctx_.timers().scope("spectral: stage update", Phase::compute);
    band = ks::prepare_stage(modes_, v_, om_, rotational_, forcing_.band_lo2, forcing_.band_hi2);
  }
  if (linear) band = allreduce(ctx_.comm(), band, MPI_SUM);
  ks::SpectralVec us = v_;
  for (std::size_t s = 0; s < stages; ++s) {
    nonlinear(us, s == 0);
    if (s == 0 && adaptive_) {
      double dt = cfl_rate_ > 0 ? cfl_ / cfl_rate_ : (dt_max_ > 0 ? dt_max_ : 0.0);
      if (dt_max_ > 0 && dt > dt_max_) dt = dt_max_;
      if (!(dt > 0))
        throw RuntimeError(
            "spectral: the velocity is zero and time.dt_max = 0: no time step "
            "(set spectral.time.dt or spectral.time.dt_max)");
      dt_ = dt;
    }
    if (dt_ != tables_dt_) rebuild_tables();
    auto t = ctx_.timers().scope("spectral: stage update", Phase::compute);
    ks::StageParams p = forcing_;
    p.a = rk_a_[s];
    p.b = rk_b_[s];
    p.dt = dt_;
    p.last = s + 1 == stages;
    p.linear_coefficient = linear && band > 0 ? injection_ / (2.0 * band) : 0.0;
    band = ks::stage_update(modes_, p, nl_, v_, q_, us, us_, om_, decay_[s], decay_[s + 1]);
    if (linear && !p.last) band = allreduce(ctx_.comm(), band, MPI_SUM);
    us = us_;
  }
  time_ += dt_;
  ++step_;
  Kokkos::fence();
  step_seconds_ += timer.seconds();
  const double ffts = fft_->stats().fft_seconds - fft_before.fft_seconds;
  const double transposes = fft_->stats().transpose_seconds - fft_before.transpose_seconds;
  fft_seconds_in_steps_ += ffts + transposes;
  // Every transform of a step runs inside the nonlinear term: the run summary shows them apart.
  ctx_.timers().carve("spectral: nonlinear term", "spectral: FFTs", ffts, Phase::neighbor);
  ctx_.timers().carve("spectral: nonlinear term", "spectral: transposes", transposes,
                      Phase::communication);
  ++steps_timed_;
}

SpectralSolver::Diagnostics SpectralSolver::diagnostics() {
  auto t = ctx_.timers().scope("spectral: diagnostics", Phase::output);
  Diagnostics d;
  d.step = step_;
  d.time = time_;
  d.dt = dt_;
  double local[2] = {ks::spectral_sum(modes_, v_, 0), ks::spectral_sum(modes_, v_, 1)};
  double global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  d.energy = global[0];
  d.enstrophy = global[1];
  d.dissipation = 2.0 * nu_ * d.enstrophy;
  ks::divergence(modes_, v_, tmp_.x);
  fft_->backward(tmp_.x, w_.x);
  d.max_div = allreduce(ctx_.comm(), ks::max_abs(w_.x), MPI_MAX);
  d.cfl = dt_ * cfl_rate_;
  if (dims_ == 3 && d.dissipation > 0) {
    const double u2 = 2.0 * d.energy / 3.0;  // u'^2
    const double lambda = std::sqrt(15.0 * nu_ * u2 / d.dissipation);
    d.re_lambda = std::sqrt(u2) * lambda / nu_;
  }
  return d;
}

std::vector<double> SpectralSolver::spectrum() const {
  double kmax2 = 0;
  for (int a = 0; a < dims_; ++a)
    kmax2 += std::pow(modes_.k0[a] * static_cast<double>(cells_[a]) / 2, 2);
  const auto bins = static_cast<std::size_t>(std::sqrt(kmax2) / dk_) + 2;
  std::vector<double> local(bins, 0.0), global(bins, 0.0);
  std::array<HostMirrorOf<Kokkos::View<ks::Complex***, Kokkos::LayoutRight, DevMemSpace>>, 3> h;
  for (int c = 0; c < 3; ++c)
    h[c] = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v_[c]);
  for (std::int64_t iz = 0; iz < modes_.extent[2]; ++iz)
    for (std::int64_t iy = 0; iy < modes_.extent[1]; ++iy)
      for (std::int64_t ix = 0; ix < modes_.extent[0]; ++ix) {
        std::int64_t m[3];
        double k[3];
        modes_.mode_and_wavevector(iz, iy, ix, m, k);
        const double kk = std::sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
        const auto bin = static_cast<std::size_t>(std::floor(kk / dk_ + 0.5));
        double a2 = 0;
        for (int c = 0; c < 3; ++c) a2 += ks::norm2(h[c](iz, iy, ix));
        if (bin < bins) local[bin] += 0.5 * modes_.weight(m[2]) * a2;
      }
  MPI_Allreduce(local.data(), global.data(), static_cast<int>(bins), MPI_DOUBLE, MPI_SUM,
                ctx_.comm());
  return global;
}

fft::RealField SpectralSolver::velocity(int c) {
  fft::RealField out = fft_->make_real("spectral::velocity");
  fft_->backward(v_[c], out);
  return out;
}

double SpectralSolver::time_fft_of_one_step(int repeats, double* library_3d) {
  const int d = dims_;
  int backward = 0, forward = 0;
  if (rotational_) {
    backward = d + (d == 2 ? 1 : 3);
    forward = d;
  } else {
    backward = d + d * d;
    forward = d + d * d;
  }
  const auto stages = static_cast<int>(rk_a_.size());
  if (library_3d)
    *library_3d = fft_->time_library_3d(forward, backward, stages * repeats) / repeats;
  Kokkos::fence();
  MPI_Barrier(ctx_.comm());
  Kokkos::Timer timer;
  for (int r = 0; r < repeats; ++r)
    for (int s = 0; s < stages; ++s) {
      for (int i = 0; i < backward; ++i) fft_->backward_truncated(v_[i % 3], w_[i % 3]);
      for (int i = 0; i < forward; ++i) fft_->forward_truncated(w_[i % 3], nl_[i % 3]);
    }
  Kokkos::fence();
  return allreduce(ctx_.comm(), timer.seconds(), MPI_MAX) / repeats;
}

}  // namespace stratus
