#include "stratus/core/agree.hpp"
#include "stratus/core/device.hpp"
#include "stratus/core/field_io.hpp"
#include "stratus/solvers/heat.hpp"

#include "stratus/io/field_series.hpp"
#include "stratus/io/h5file.hpp"
#include "stratus/io/output.hpp"
#include "stratus/io/series.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

namespace stratus {

using kernels::HeatBoundary;

void HeatConfig::declare(Schema& schema) {
  auto& h =
      schema.section("heat", "Heat equation u_t = D lap(u) on a box, explicit in time.", "heat");
  h.add_int_list("cells", "Grid cells along x, y and z.").list_length(3).at_least(1);
  h.add_real_list("box", "Box lengths along x, y and z (the box starts at the origin).")
      .list_length(3)
      .positive()
      .unit("length")
      .set_default(std::vector<double>{1.0, 1.0, 1.0});
  h.add_string("boundary",
               "Boundary condition on every axis: periodic, dirichlet (u = 0 on the walls) or "
               "neumann (no flux through the walls).")
      .one_of({"periodic", "dirichlet", "neumann"})
      .set_default(std::string("periodic"));
  h.add_real("diffusivity", "Diffusion coefficient D.").positive().unit("length^2/time");
  h.add_real("dt_fraction",
             "Time step as a fraction of the explicit stability limit 1 / (2 D sum(1/dx^2)).")
      .greater_than(0.0)
      .at_most(1.0)
      .set_default(0.5);
  h.add_int_list("ranks", "MPI ranks along x, y and z; 0 lets MPI_Dims_create choose that axis.")
      .list_length(3)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{0, 0, 0});
  h.add_int("log_every", "Log diagnostics every this many steps (0: first and last step only).")
      .at_least(0)
      .set_default(std::int64_t{10})
      .may_change_on_restart();
  h.add_bool("write_field",
             "Write the final field to OUTPUT_DIR/NAME.h5 and its XDMF index NAME.xdmf (ParaView).")
      .set_default(true)
      .may_change_on_restart();

  auto& init = schema.section(
      "heat.initial",
      "Initial condition: u = offset + amplitude * prod_a phi_a, with phi_a the mode k_a of the "
      "Laplacian on axis a (cos(2 pi k x/L) periodic, sin(pi k x/L) dirichlet, cos(pi k x/L) "
      "neumann). It decays as exp(-D |kappa|^2 t), which gives the exact solution.",
      "heat");
  init.add_int_list("modes", "Mode numbers k along x, y and z.")
      .list_length(3)
      .at_least(0)
      .set_default(std::vector<std::int64_t>{1, 1, 1});
  init.add_real("amplitude", "Amplitude of the mode.").set_default(1.0);
  init.add_real("offset", "Constant added to the mode (must be 0 with dirichlet walls).")
      .set_default(0.0);
}

MemoryNeed HeatConfig::memory() const {
  return memory_of({cells[0], cells[1], cells[2]}, 16, "heat.cells", "cells",
                   "the field and its update, 8-byte reals");
}

HeatConfig HeatConfig::from(const io::Deck& deck) {
  HeatConfig c;
  const auto& cells = deck.integer_list("heat.cells");
  const auto& box = deck.real_list("heat.box");
  const auto& modes = deck.integer_list("heat.initial.modes");
  const auto& ranks = deck.integer_list("heat.ranks");
  for (int a = 0; a < 3; ++a) {
    c.cells[a] = cells[a];
    c.box[a] = box[a];
    c.modes[a] = static_cast<int>(modes[a]);
    c.ranks[a] = static_cast<int>(ranks[a]);
  }
  c.boundary = deck.choice<HeatBoundary>("heat.boundary", {{"periodic", HeatBoundary::periodic},
                                                           {"dirichlet", HeatBoundary::dirichlet},
                                                           {"neumann", HeatBoundary::neumann}});
  c.diffusivity = deck.real("heat.diffusivity");
  c.dt_fraction = deck.real("heat.dt_fraction");
  c.amplitude = deck.real("heat.initial.amplitude");
  c.offset = deck.real("heat.initial.offset");
  c.log_every = deck.integer("heat.log_every");
  c.write_field = deck.boolean("heat.write_field");
  c.output = io::OutputPaths::from(deck);
  c.deck_toml = deck.to_toml();

  if (c.boundary == HeatBoundary::dirichlet && c.offset != 0.0)
    throw deck.error_at(
        "heat.initial.offset",
        fmt::format("must be 0 with dirichlet walls (u = 0 there), found {}", c.offset));
  for (int a = 0; a < 3; ++a) {
    if (c.boundary == HeatBoundary::dirichlet && c.modes[a] < 1)
      throw deck.error_at("heat.initial.modes",
                          "with dirichlet walls every mode number must be >= 1 (sin(0) = 0)");
    if (2 * static_cast<std::int64_t>(c.modes[a]) > c.cells[a])
      throw deck.error_at("heat.initial.modes",
                          fmt::format("mode {} along axis {} is not resolved by {} cells (need at "
                                      "least 2 cells per mode number)",
                                      c.modes[a], "xyz"[a], c.cells[a]));
  }
  return c;
}

HeatSolver::HeatSolver(Context& ctx, const io::Deck& deck)
    : ctx_(ctx), config_(HeatConfig::from(deck)) {
  const HeatConfig& c = config_;
  const HeatBoundary b = c.boundary;
  diffusivity_ = c.diffusivity;
  amplitude_ = c.amplitude;
  offset_ = c.offset;

  const bool periodic = b == HeatBoundary::periodic;
  try {
    decomposition_ = std::make_unique<CartDecomposition>(
        ctx.comm(), std::array<bool, 3>{periodic, periodic, periodic}, c.ranks);
    cells_ = c.cells;
    block_ = decomposition_->local_block(cells_);
  } catch (const InputError& e) {
    // Blame the process grid if the deck set it, else the grid that cannot be split.
    throw deck.error_at(deck.origin("heat.ranks").is_default ? "heat.cells" : "heat.ranks",
                        e.what());
  }

  const int g = 1;
  geometry_.g = g;
  double inv_dx2 = 0;
  for (int a = 0; a < 3; ++a) {
    boundary_[a] = b;
    modes_[a] = c.modes[a];
    geometry_.n[a] = block_.extent[a];
    geometry_.begin[a] = block_.begin[a];
    geometry_.lo[a] = 0.0;
    geometry_.length[a] = c.box[a];
    geometry_.dx[a] = c.box[a] / static_cast<double>(c.cells[a]);
    inv_dx2 += 1.0 / (geometry_.dx[a] * geometry_.dx[a]);
    const double kappa = kernels::heat_wavenumber(b, modes_[a], c.box[a]);
    decay_rate_ += diffusivity_ * kappa * kappa;
  }
  dt_ = c.dt_fraction / (2.0 * diffusivity_ * inv_dx2);
  if (!(dt_ >= std::numeric_limits<double>::min()) || !std::isfinite(decay_rate_))
    throw deck.error_at(
        "heat.diffusivity",
        fmt::format("{} on cells of {:.6g} x {:.6g} x {:.6g} gives the explicit time step {} and "
                    "the decay rate {}: not representable in double precision (nothing could be "
                    "simulated); give a diffusivity in the units of the box",
                    diffusivity_, geometry_.dx[0], geometry_.dx[1], geometry_.dx[2], dt_,
                    decay_rate_));
  for (int a = 0; a < 3; ++a)
    coefficients_[a] = diffusivity_ * dt_ / (geometry_.dx[a] * geometry_.dx[a]);

  const auto shape = [&](int a) { return static_cast<std::size_t>(block_.extent[a] + 2 * g); };
  u_ = Field3D("heat::u", shape(0), shape(1), shape(2));
  next_ = Field3D("heat::next", shape(0), shape(1), shape(2));
  halo_ = std::make_unique<GridHalo>(*decomposition_, block_.extent, g, 1,
                                     device::choice(ctx).transport);
  kernels::heat_set_mode(u_, geometry_, boundary_, modes_, amplitude_, offset_);

  ctx.log().info(
      "heat: {} x {} x {} cells on {} ranks ({} x {} x {}), dt = {:.6g}, decay rate {:.6g}",
      cells_[0], cells_[1], cells_[2], ctx.size(), decomposition_->dims()[0],
      decomposition_->dims()[1], decomposition_->dims()[2], dt_, decay_rate_);
}

void HeatSolver::fill_ghosts(const Field3D& u) {
  {
    auto t = ctx_.timers().scope("heat: halo exchange", Phase::communication);
    halo_->exchange({u});
  }
  auto t = ctx_.timers().scope("heat: boundaries", Phase::compute);
  if (boundary_[0] == HeatBoundary::periodic) return;
  const Real sign = boundary_[0] == HeatBoundary::dirichlet ? -1.0 : 1.0;
  for (int a = 0; a < 3; ++a)
    for (int side : {-1, 1})
      if (decomposition_->at_wall(a, side)) kernels::heat_fill_wall(u, geometry_, a, side, sign);
}

void HeatSolver::step() {
  fill_ghosts(u_);
  {
    auto t = ctx_.timers().scope("heat: update", Phase::compute);
    kernels::heat_ftcs_step(u_, next_, geometry_, coefficients_);
  }
  std::swap(u_, next_);
  ++step_;
}

HeatSolver::Diagnostics HeatSolver::diagnostics() const {
  auto t = ctx_.timers().scope("heat: diagnostics", Phase::output);
  Diagnostics d;
  d.step = step_;
  d.time = static_cast<double>(step_) * dt_;
  const double decay = std::exp(-decay_rate_ * d.time);
  double local[2] = {
      kernels::heat_sum(u_, geometry_),
      kernels::heat_error_squared(u_, geometry_, boundary_, modes_, amplitude_, offset_, decay)};
  double global[2] = {0, 0};
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  double max_local = kernels::heat_max_abs(u_, geometry_);
  MPI_Allreduce(&max_local, &d.max_abs, 1, MPI_DOUBLE, MPI_MAX, ctx_.comm());
  const double ncells = static_cast<double>(cells_[0] * cells_[1] * cells_[2]);
  const double cell_volume = geometry_.dx[0] * geometry_.dx[1] * geometry_.dx[2];
  d.total_heat = global[0] * cell_volume;
  d.l2_error = std::sqrt(global[1] / ncells);
  // RMS of a product of modes is amplitude * prod_a rms(phi_a); rms is 1 for k = 0 on a
  // periodic or neumann axis and 1/sqrt(2) otherwise (exact on the cell-centred grid).
  double rms = std::abs(amplitude_) * decay;
  for (int a = 0; a < 3; ++a)
    if (modes_[a] != 0) rms /= std::sqrt(2.0);
  d.l2_exact = rms;
  return d;
}

void HeatSolver::write_field_file(const std::string& path) const {
  auto t = ctx_.timers().scope("heat: output", Phase::output);
  // Stored (nz, ny, nx), x fastest: XDMF readers (ParaView) map the fastest axis to x.
  const GridBlock block{{block_.begin[2], block_.begin[1], block_.begin[0]},
                        {block_.extent[2], block_.extent[1], block_.extent[0]}};
  Field3D zyx(Kokkos::ViewAllocateWithoutInitializing("heat::output"), block.extent[0],
              block.extent[1], block.extent[2]);
  kernels::heat_interior_zyx(u_, geometry_, zyx);
  Kokkos::fence();
  io::H5Writer out(ctx_.comm(), path, "field", config_.deck_toml);
  out.create_group("/fields");
  out.write_field("/fields/u", stratus::grid_array(zyx), 0, block,
                  {cells_[2], cells_[1], cells_[0]});
  out.write_attribute("/fields", "step", step_);
  out.write_attribute("/fields", "time", static_cast<double>(step_) * dt_);
  out.write_attribute("/fields", "cells", std::vector<std::int64_t>(cells_.begin(), cells_.end()));
  out.write_attribute("/fields", "box_lo", std::vector<double>{0.0, 0.0, 0.0});
  out.write_attribute(
      "/fields", "box_hi",
      std::vector<double>{geometry_.length[0], geometry_.length[1], geometry_.length[2]});
  out.write_attribute("/fields", "centering", std::string("cell"));
  out.write_attribute("/fields", "axis_order", std::string("z,y,x (x fastest)"));
  out.close();
  write_xdmf(path);
}

void HeatSolver::write_xdmf(const std::string& field_path) const {
  if (ctx_.rank() != 0) return;
  io::XdmfGrid grid;
  grid.dims = {cells_[2], cells_[1], cells_[0]};
  grid.origin = {0.0, 0.0, 0.0};
  grid.spacing = {geometry_.dx[2], geometry_.dx[1], geometry_.dx[0]};
  grid.scalars = {"u"};
  grid.cell_centred = true;
  const std::string file = std::filesystem::path(field_path).filename().string();
  io::write_xdmf_series(config_.output.path(".xdmf"), grid,
                        {{file, static_cast<double>(step_) * dt_}});
}

void HeatSolver::blow_up(const std::string& what) const {
  // Rare path: this rank's first non-finite cell on the host; the lowest rank with one says.
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u_);
  const int g = geometry_.g;
  std::string cell;
  for (int i = g; i < g + geometry_.n[0] && cell.empty(); ++i)
    for (int j = g; j < g + geometry_.n[1] && cell.empty(); ++j)
      for (int k = g; k < g + geometry_.n[2] && cell.empty(); ++k)
        if (!std::isfinite(h(i, j, k)))
          cell = fmt::format("u = {} at cell ({}, {}, {})", h(i, j, k), block_.begin[0] + i - g,
                             block_.begin[1] + j - g, block_.begin[2] + k - g);
  const std::string where = agree_on_message(ctx_.comm(), cell);
  throw RuntimeError(fmt::format(
      "heat: the run blew up at step {} (t = {:.6g}): {}{}. The run stops; its last checkpoint "
      "is kept.",
      step_, static_cast<double>(step_) * dt_, what, where.empty() ? "" : "; " + where));
}

void HeatSolver::report() {
  auto t = ctx_.timers().scope("heat: output", Phase::output);  // diagnostics nest inside
  const Diagnostics d = diagnostics();
  if (!std::isfinite(d.total_heat) || !std::isfinite(d.max_abs) || !std::isfinite(d.l2_error))
    blow_up(
        fmt::format("total heat {}, max |u| {}, l2 error {}", d.total_heat, d.max_abs, d.l2_error));
  ctx_.log().info("{:>8} {:>14.6e} {:>16.9e} {:>14.6e} {:>12.4e}", d.step, d.time, d.total_heat,
                  d.max_abs, d.l2_error);
  diag_->row(fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}", d.step, d.time, d.total_heat,
                         d.max_abs, d.l2_error, d.l2_exact));
}

void HeatSolver::declare_outputs(OutputDescriptor& outputs) {
  outputs.add(series_output(ctx_, diag_, "diagnostics", config_.log_every,
                            config_.output.path(".diag.csv"),
                            "step,time,total_heat,max_abs,l2_error,l2_exact\n",
                            fmt::format("{:>8} {:>14} {:>16} {:>14} {:>12}", "step", "time",
                                        "total_heat", "max|u|", "l2_error"),
                            [this] { report(); }));
  // The field file: when the run ends or stops. Steps, wall time and throughput are the run
  // summary's (run_report.cpp).
  if (config_.write_field)
    outputs.at_close([this] {
      const std::string path = config_.output.path(".h5");
      write_field_file(path);
      ctx_.log().info("heat: wrote {} and its XDMF index {} (ParaView)", path,
                      config_.output.path(".xdmf"));
    });
}

void HeatSolver::declare_state(StateDescriptor& state) {
  state.identity({"heat", "", &dt_, StateDescriptor::grid_layout(*decomposition_)});
  state.clock(&step_);  // the time is step x dt
  state.invariant("cells", std::vector<std::int64_t>(cells_.begin(), cells_.end()), "grid");
  StateDescriptor::Field u;
  u.name = "u";
  u.array = [this] { return stratus::grid_array(u_); };
  u.ghost = geometry_.g;
  u.block = block_;
  u.global = cells_;
  state.field(std::move(u));
}

}  // namespace stratus
