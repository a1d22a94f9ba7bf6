// Outputs (diagnostics, spectra, snapshots with an XDMF series), initial fields from files and
// checkpoints of the spectral solver.
#include "stratus/core/agree.hpp"
#include "stratus/core/error.hpp"
#include "stratus/core/field_io.hpp"
#include "stratus/io/field_series.hpp"
#include "stratus/io/h5file.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/spectral.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

namespace stratus {

namespace ks = kernels::spectral;
namespace fs = std::filesystem;

namespace {

/// Grid fields of a snapshot: /fields/NAME, stored (z, y, x) with x fastest, the order XDMF
/// and ParaView read (so that ParaView's X axis is x).
const std::array<const char*, 6> kSnapshotFields = {"u", "v", "w", "omega_x", "omega_y", "omega_z"};

std::string snapshot_name(const std::string& run, std::int64_t step) {
  return fmt::format("{}.fields.{:012d}.h5", run, step);
}

/// (x, y, z) field -> (z, y, x) array of the same block.
Field3D to_zyx(const fft::RealField& f) {
  Field3D out(Kokkos::ViewAllocateWithoutInitializing("spectral::zyx"), f.extent(2), f.extent(1),
              f.extent(0));
  Kokkos::parallel_for(
      "spectral::to_zyx", ks::point_range(f),
      KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j, const std::int64_t k) {
        out(k, j, i) = f(i, j, k);
      });
  return out;
}

}  // namespace

void SpectralSolver::read_initial_file(const io::Deck& deck, const std::string& path) {
  const auto& rb = fft_->real_block();
  const std::array<std::int64_t, 3> dims{cells_[2], cells_[1], cells_[0]};
  const std::array<std::int64_t, 3> begin{0, rb.begin[1], rb.begin[0]};
  const std::array<std::int64_t, 3> extent{rb.extent[2], rb.extent[1], rb.extent[0]};
  for (int c = 0; c < 3; ++c) {
    std::vector<double> block;
    try {
      block = io::read_block_3d(path, std::string("/fields/") + kSnapshotFields[c], dims, begin,
                                extent);
    } catch (const InputError& e) {
      throw deck.error_at("spectral.initial.file", e.what());
    }
    auto h = Kokkos::create_mirror_view(u_[c]);
    for (std::int64_t i = 0; i < rb.extent[0]; ++i)
      for (std::int64_t j = 0; j < rb.extent[1]; ++j)
        for (std::int64_t k = 0; k < rb.extent[2]; ++k)
          h(i, j, k) = block[static_cast<std::size_t>((k * extent[1] + j) * extent[2] + i)];
    Kokkos::deep_copy(u_[c], h);
  }
}

void SpectralSolver::write_snapshot(const std::string& path) {
  auto t = ctx_.timers().scope("spectral: snapshots", Phase::output);
  const auto& rb = fft_->real_block();
  const GridBlock block{{0, rb.begin[1], rb.begin[0]}, {rb.extent[2], rb.extent[1], rb.extent[0]}};
  const std::array<std::int64_t, 3> global{cells_[2], cells_[1], cells_[0]};
  io::H5Writer out(ctx_.comm(), path, "field", config_.deck_toml);
  out.create_group("/fields");
  fft::RealField f = fft_->make_real("spectral::snapshot");
  for (int c = 0; c < 3; ++c) {
    fft_->backward(v_[c], f);
    out.write_field(std::string("/fields/") + kSnapshotFields[c], stratus::grid_array(to_zyx(f)), 0,
                    block, global);
  }
  ks::prepare_stage(modes_, v_, tmp_, true, 1, 0, false);  // tmp = i k x v: the vorticity
  for (int c = 0; c < 3; ++c) {
    fft_->backward(tmp_[c], f);
    out.write_field(std::string("/fields/") + kSnapshotFields[3 + c],
                    stratus::grid_array(to_zyx(f)), 0, block, global);
  }
  if (config_.pressure) {
    // Total pressure P = p + |u|^2/2 solves lap P = div(u x omega): P_k = -i k . F[u x omega]
    // / |k|^2 (mean 0); then p = P - |u|^2/2 on the grid.
    for (int c = 0; c < 3; ++c) {
      fft_->backward(v_[c], u_[c]);
      fft_->backward(tmp_[c], w_[c]);
    }
    ks::cross_product(u_, w_, 3, 0, 0, 0);
    for (int c = 0; c < 3; ++c) fft_->forward(w_[c], nl_[c]);
    ks::pressure_from_nonlinear(
        modes_, nl_, 1.0 / static_cast<double>(cells_[0] * cells_[1] * cells_[2]), tmp_.x);
    fft_->backward(tmp_.x, f);
    ks::subtract_kinetic(u_, f);
    out.write_field("/fields/p", stratus::grid_array(to_zyx(f)), 0, block, global);
  }
  out.write_attribute("/fields", "step", step_);
  out.write_attribute("/fields", "time", time_);
  out.write_attribute("/fields", "points",
                      std::vector<std::int64_t>{cells_[0], cells_[1], cells_[2]});
  out.write_attribute("/fields", "box_lo", std::vector<double>{origin_[0], origin_[1], origin_[2]});
  out.write_attribute(
      "/fields", "box_hi",
      std::vector<double>{origin_[0] + box_[0], origin_[1] + box_[1], origin_[2] + box_[2]});
  out.write_attribute("/fields", "centering", std::string("node"));
  out.write_attribute("/fields", "axis_order", std::string("z,y,x (x fastest)"));
  out.close();
}

void SpectralSolver::write_series_file() const {
  if (ctx_.rank() != 0) return;
  io::XdmfGrid grid;
  grid.dims = {cells_[2], cells_[1], cells_[0]};
  grid.origin = {origin_[2], origin_[1], origin_[0]};
  grid.spacing = {box_[2] / static_cast<double>(cells_[2]),
                  box_[1] / static_cast<double>(cells_[1]),
                  box_[0] / static_cast<double>(cells_[0])};
  for (const char* f : kSnapshotFields) grid.scalars.emplace_back(f);
  if (config_.pressure) grid.scalars.emplace_back("p");
  std::vector<io::XdmfSnapshot> snaps;
  const std::string run = config_.output.name;
  for (std::size_t i = 0; i < snapshot_steps_.size(); ++i)
    snaps.push_back({snapshot_name(run, snapshot_steps_[i]), snapshot_times_[i]});
  io::write_xdmf_series(config_.output.path(".xmf"), grid, snaps);
}

void SpectralSolver::write_spectrum() {
  auto t = ctx_.timers().scope("spectral: spectra", Phase::output);
  const auto e = spectrum();
  if (ctx_.rank() != 0) return;
  std::string rows;
  for (std::size_t b = 0; b < e.size(); ++b)
    rows += fmt::format("{}{},{:.17g},{:.17g},{:.17g}", b == 0 ? "" : "\n", step_, time_,
                        static_cast<double>(b) * dk_, e[b]);
  spectrum_csv_->row(rows);
  profiles_->append(step_, time_, e);
}

void SpectralSolver::blow_up(const std::string& what) {
  // Rare path: this rank's first grid point with a non-finite velocity; the lowest rank with
  // one says. velocity() is collective: every rank transforms all three components.
  const auto& rb = fft_->real_block();
  std::string point;
  for (int c = 0; c < 3; ++c) {
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), velocity(c));
    for (std::int64_t i = 0; i < rb.extent[0] && point.empty(); ++i)
      for (std::int64_t j = 0; j < rb.extent[1] && point.empty(); ++j)
        for (std::int64_t k = 0; k < rb.extent[2] && point.empty(); ++k)
          if (!std::isfinite(h(i, j, k)))
            point = fmt::format("velocity {} = {} at grid point ({}, {}, {})", "uvw"[c], h(i, j, k),
                                rb.begin[0] + i, rb.begin[1] + j, rb.begin[2] + k);
  }
  const std::string where = agree_on_message(ctx_.comm(), point);
  throw RuntimeError(fmt::format(
      "spectral: the run blew up at step {} (t = {:.6g}, dt = {:.6g}): {}{}. The run stops; its "
      "last checkpoint is kept. Take a smaller spectral.time.dt, or dt = 0 (adaptive, from "
      "spectral.time.cfl).",
      step_, time_, dt_, what, where.empty() ? "" : "; " + where));
}

void SpectralSolver::report() {
  auto t = ctx_.timers().scope("spectral: report", Phase::output);  // diagnostics nest inside
  const Diagnostics d = diagnostics();
  if (!std::isfinite(d.energy) || !std::isfinite(d.enstrophy) || !std::isfinite(d.max_div) ||
      !std::isfinite(d.cfl) || !std::isfinite(d.dt))
    blow_up(fmt::format("energy {}, enstrophy {}, max |div u| {}, CFL {}", d.energy, d.enstrophy,
                        d.max_div, d.cfl));
  ctx_.log().info("{:>8} {:>13.6e} {:>11.4e} {:>16.9e} {:>14.6e} {:>14.6e} {:>10.2e} {:>7.3f}",
                  d.step, d.time, d.dt, d.energy, d.enstrophy, d.dissipation, d.max_div, d.cfl);
  diag_->row(fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}",
                         d.step, d.time, d.dt, d.energy, d.enstrophy, d.dissipation, d.max_div,
                         d.cfl, d.re_lambda));
}

void SpectralSolver::declare_outputs(OutputDescriptor& outputs) {
  // CFL of the initial field (what the first step will see).
  const auto first_dt = [this](std::int64_t resumed_at) {
    if (resumed_at >= 0) return;
    nonlinear(v_, true);
    if (adaptive_) {
      dt_ = cfl_rate_ > 0 ? cfl_ / cfl_rate_ : dt_max_;
      if (dt_max_ > 0 && dt_ > dt_max_) dt_ = dt_max_;
    }
  };
  outputs.add(series_output(
      ctx_, diag_, "diagnostics", config_.diag_every, config_.output.path(".diag.csv"),
      "step,time,dt,energy,enstrophy,dissipation,max_div,cfl,re_lambda\n",
      fmt::format("{:>8} {:>13} {:>11} {:>16} {:>14} {:>14} {:>10} {:>7}", "step", "time", "dt",
                  "energy", "enstrophy", "dissipation", "max|div u|", "CFL"),
      [this] { report(); }, first_dt));

  if (config_.spectrum_every > 0) {
    // E(k) also goes to NAME.spectra.h5 (rank 0), whose k axis is written when it is opened.
    const auto open_profiles = [this](std::int64_t resumed_at) {
      const auto bins = spectrum().size();  // collective
      std::vector<double> k(bins);
      for (std::size_t b = 0; b < bins; ++b) k[b] = static_cast<double>(b) * dk_;
      if (ctx_.rank() == 0)
        profiles_ = std::make_unique<io::ProfileFile>(config_.output.path(".spectra.h5"),
                                                      "energy spectrum E(k)", k, config_.deck_toml,
                                                      resumed_at);
    };
    Output spectrum = series_output(
        ctx_, spectrum_csv_, "spectrum", config_.spectrum_every,
        config_.output.path(".spectrum.csv"), "step,time,k,energy\n", "",
        [this] { write_spectrum(); }, open_profiles);
    spectrum.at_end = false;
    outputs.add(std::move(spectrum));
  }

  if (config_.snapshot_every > 0) {
    Output snapshots;
    snapshots.name = "snapshots";
    snapshots.every = config_.snapshot_every;
    snapshots.at_end = false;
    snapshots.open = [this](std::int64_t resumed_at) { open_snapshots(resumed_at); };
    snapshots.write = [this] {
      const std::string run = config_.output.name;
      write_snapshot(config_.output.path(snapshot_name(run, step_).substr(run.size())));
      snapshot_steps_.push_back(step_);
      snapshot_times_.push_back(time_);
      write_series_file();
    };
    outputs.add(std::move(snapshots));
  }
  // Steps, wall time and throughput: the run summary (run_report.cpp).
  if (config_.fft_timing) outputs.at_close([this] { log_fft_timing(); });
}

void SpectralSolver::open_snapshots(std::int64_t resumed_at) {
  // On resume keep the snapshots up to the checkpoint, delete later ones (rank 0).
  snapshot_steps_.clear();
  snapshot_times_.clear();
  if (ctx_.rank() != 0 || resumed_at < 0) return;
  const std::string run = config_.output.name;
  const std::regex pattern(std::regex_replace(run, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                           R"(\.fields\.(\d{12})\.h5)");
  std::vector<std::pair<std::int64_t, std::string>> found;
  const fs::path dir = fs::path(config_.output.path("")).parent_path();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoll(m[1]), entry.path());
  }
  std::sort(found.begin(), found.end());
  for (const auto& [s, p] : found) {
    if (s > resumed_at) {
      fs::remove(p, ec);
      continue;
    }
    snapshot_steps_.push_back(s);
    snapshot_times_.push_back(io::read_double_attribute(p, "/fields", "time"));
  }
}

void SpectralSolver::log_fft_timing() {
  if (steps_timed_ == 0) return;
  // Rank 0's figures (ranks wait for each other in the transposes).
  const double step_s = step_seconds_ / static_cast<double>(steps_timed_);
  const double inside_s = fft_seconds_in_steps_ / static_cast<double>(steps_timed_);
  const int repeats = std::max(2, static_cast<int>(std::min<std::int64_t>(steps_timed_, 10)));
  double floor_s = -1;
  const double fft_s = time_fft_of_one_step(repeats, &floor_s);
  ctx_.log().info(
      "spectral: fft timing: step {:.4f} ms, standalone FFTs of one step {:.4f} ms, outside "
      "FFTs and transposes {:.1f}%; inside the steps: FFTs and transposes {:.4f} ms, outside "
      "{:.1f}% ({}){}",
      1e3 * step_s, 1e3 * fft_s, 100.0 * (step_s - fft_s) / step_s, 1e3 * inside_s,
      100.0 * (step_s - inside_s) / step_s, fft_->describe(),
      floor_s > 0 ? fmt::format("; FFTW's own 3D plans, the same transforms: {:.4f} ms, step / "
                                "those {:.3f}",
                                1e3 * floor_s, step_s / floor_s)
                  : std::string());
}

namespace {

/// The spectral block of a component as a real array (Nzc, Ny, 2 Nx): complex = (re, im).
Field3D as_real(const ks::SpectralView& v) {
  return Field3D(reinterpret_cast<double*>(v.data()), v.extent(0), v.extent(1), 2 * v.extent(2));
}

}  // namespace

void SpectralSolver::declare_state(StateDescriptor& state) {
  state.identity({"spectral", "", &dt_, [this] {
                    return fmt::format("{}-{}x{}", fft::to_string(fft_->decomposition()),
                                       fft_->process_grid()[0], fft_->process_grid()[1]);
                  }});
  state.clock(&step_, &time_, &dt_);
  state.invariant("points", std::vector<std::int64_t>{cells_[0], cells_[1], cells_[2]}, "grid");
  state.record("rk_stages",
               [this] { return std::vector<std::int64_t>{std::int64_t(rk_a_.size())}; });
  // The velocity's Fourier modes, as doubles: this rank's (kz, ky, 2 kx) block of the global
  // half-spectrum.
  const GridBlock block{{modes_.begin[2], modes_.begin[1], 0},
                        {modes_.extent[2], modes_.extent[1], 2 * modes_.extent[0]}};
  const std::array<std::int64_t, 3> global{cells_[2] / 2 + 1, cells_[1], 2 * cells_[0]};
  for (int c = 0; c < 3; ++c) {
    StateDescriptor::Field f;
    f.name = std::string("uhat_") + "xyz"[c];
    f.array = [this, c] { return stratus::grid_array(as_real(v_[c])); };
    f.block = block;
    f.global = global;
    state.field(std::move(f));
  }
  state.on_restored([this](const io::CheckpointReader&) {
    ks::mask_dropped(modes_, v_);  // the step relies on zeros there (a no-op for our checkpoints)
    if (!adaptive_) rebuild_tables();
  });
}

}  // namespace stratus
