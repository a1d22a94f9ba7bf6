// The Euler solver's outputs (totals CSV, field files with an XDMF index for ParaView) and its
// checkpoint state.
#include "stratus/core/field_io.hpp"
#include "stratus/io/h5file.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/euler.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

namespace stratus {

namespace ke = kernels::euler;
namespace fs = std::filesystem;

namespace {
const char* const kPrimitiveNames[ke::kVars] = {"density", "velocity_x", "velocity_y", "velocity_z",
                                                "pressure"};
const char* const kConservedNames[ke::kVars] = {"density", "momentum_x", "momentum_y", "momentum_z",
                                                "energy"};

std::string frame_name(const io::OutputPaths& output, std::int64_t step) {
  return output.name + fmt::format(".fields.{:012d}.h5", step);
}
}  // namespace

void EulerSolver::write_fields(const std::string& path) const {
  auto t = ctx_.timers().scope("euler: output", Phase::output);
  // Stored (nz, ny, nx), x fastest: XDMF readers map the fastest axis to x.
  const std::array<std::int64_t, 3> cells{cells_[2], cells_[1], cells_[0]};
  GridBlock block;
  for (int a = 0; a < 3; ++a) {
    block.begin[a] = block_.begin[2 - a];
    block.extent[a] = block_.extent[2 - a];
  }
  Field3D tmp("euler::output", block.extent[0], block.extent[1], block.extent[2]);
  io::H5Writer out(ctx_.comm(), path, "field", config_.deck_toml);
  out.create_group("/fields");
  for (int v = 0; v < ke::kVars; ++v) {
    ke::extract(u_, tmp, grid_, gas_, v, true, true);
    Kokkos::fence();
    out.write_field(std::string("/fields/") + kPrimitiveNames[v], stratus::grid_array(tmp), 0,
                    block, cells);
  }
  out.write_attribute("/fields", "step", step_);
  out.write_attribute("/fields", "time", time_);
  out.write_attribute("/fields", "cells", std::vector<std::int64_t>(cells_.begin(), cells_.end()));
  out.write_attribute("/fields", "box_lo",
                      std::vector<double>{grid_.lo[0], grid_.lo[1], grid_.lo[2]});
  out.write_attribute(
      "/fields", "box_hi",
      std::vector<double>{grid_.lo[0] + grid_.length[0], grid_.lo[1] + grid_.length[1],
                          grid_.lo[2] + grid_.length[2]});
  out.write_attribute("/fields", "gamma", gas_.gamma);
  out.write_attribute("/fields", "centering", std::string("cell"));
  out.write_attribute("/fields", "axis_order", std::string("z,y,x (x fastest)"));
  out.close();
}

void EulerSolver::write_xdmf() const {
  if (ctx_.rank() != 0) return;
  const std::string path = config_.output.path(".xdmf");
  std::string text =
      "<?xml version=\"1.0\" ?>\n<!-- Stratus euler fields: open in ParaView (Xdmf3 reader). -->\n"
      "<Xdmf Version=\"3.0\">\n <Domain>\n"
      "  <Grid Name=\"fields\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  const std::string dims = fmt::format("{} {} {}", cells_[2], cells_[1], cells_[0]);
  for (std::size_t f = 0; f < frame_steps_.size(); ++f) {
    const std::string file = frame_name(config_.output, frame_steps_[f]);
    text += fmt::format(
        "   <Grid Name=\"step {}\" GridType=\"Uniform\">\n    <Time Value=\"{:.17g}\"/>\n"
        "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"{} {} {}\"/>\n"
        "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
        "     <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"XML\">{:.17g} {:.17g} {:.17g}</DataItem>\n"
        "     <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" "
        "Format=\"XML\">{:.17g} {:.17g} {:.17g}</DataItem>\n    </Geometry>\n",
        frame_steps_[f], frame_times_[f], cells_[2] + 1, cells_[1] + 1, cells_[0] + 1, grid_.lo[2],
        grid_.lo[1], grid_.lo[0], grid_.dx[2], grid_.dx[1], grid_.dx[0]);
    for (const char* name : kPrimitiveNames)
      text += fmt::format(
          "    <Attribute Name=\"{0}\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
          "     <DataItem Dimensions=\"{1}\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"HDF\">{2}:/fields/{0}</DataItem>\n    </Attribute>\n",
          name, dims, file);
    text += "   </Grid>\n";
  }
  text += "  </Grid>\n </Domain>\n</Xdmf>\n";
  // Replace atomically: a reader never sees half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) throw RuntimeError(fmt::format("cannot write {}", tmp));
  }
  fs::rename(tmp, path);
}

void EulerSolver::write_frame() {
  if (!frame_steps_.empty() && frame_steps_.back() == step_) return;
  write_fields((fs::path(config_.output.dir) / frame_name(config_.output, step_)).string());
  frame_steps_.push_back(step_);
  frame_times_.push_back(time_);
  write_xdmf();
  const double interval = config_.field_interval;
  if (interval > 0)
    while (next_frame_time_ <= time_) next_frame_time_ += interval;
}

void EulerSolver::report() {
  auto t = ctx_.timers().scope("euler: output", Phase::output);  // diagnostics nest inside
  const Totals d = totals();
  ctx_.log().info("{:>8} {:>13.6e} {:>11.4e} {:>17.10e} {:>17.10e} {:>11.4e} {:>11.4e}", d.step,
                  d.time, dt_, d.mass, d.energy, d.min_density, d.min_pressure);
  series_->row(fmt::format(
      "{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}", d.step,
      d.time, dt_, d.mass, d.momentum[0], d.momentum[1], d.momentum[2], d.energy, d.kinetic_energy,
      d.min_density, d.min_pressure));
}

void EulerSolver::declare_outputs(OutputDescriptor& outputs) {
  // Steps, wall time and throughput: the run summary (run_report.cpp).
  const char* columns =
      "step,time,dt,mass,momentum_x,momentum_y,momentum_z,energy,kinetic_energy,min_density,"
      "min_pressure\n";
  outputs.add(series_output(ctx_, series_, "series", config_.log_every,
                            config_.output.path(".series.csv"), columns,
                            fmt::format("{:>8} {:>13} {:>11} {:>17} {:>17} {:>11} {:>11}", "step",
                                        "time", "dt", "mass", "energy", "min rho", "min p"),
                            [this] { report(); }));
  if (!config_.write_fields) return;

  Output frames;
  frames.name = "field frames";
  frames.also_when = [this] { return config_.field_interval > 0 && time_ >= next_frame_time_; };
  frames.open = [this](std::int64_t resumed_at) {
    if (resumed_at < 0 || ctx_.rank() != 0) return;
    // Frames after the checkpoint belong to the history this run replaces.
    const fs::path dir = config_.output.dir;
    const std::string prefix = config_.output.name + ".fields.";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with(prefix) || !name.ends_with(".h5")) continue;
      const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 3);
      if (digits.size() == 12 && digits.find_first_not_of("0123456789") == std::string::npos &&
          std::stoll(digits) > resumed_at)
        fs::remove(e.path(), ec);
    }
    write_xdmf();
  };
  frames.write = [this] { write_frame(); };
  frames.close = [this] {
    if (!frame_steps_.empty())
      ctx_.log().info("euler: {} field file(s), index {}", frame_steps_.size(),
                      config_.output.path(".xdmf"));
  };
  outputs.add(std::move(frames));
}

void EulerSolver::declare_state(StateDescriptor& state) {
  state.identity({"euler", "", &dt_, StateDescriptor::grid_layout(*decomposition_)});
  state.clock(&step_, &time_);  // dt follows from the state (on_restored)
  state.invariant("cells", std::vector<std::int64_t>(cells_.begin(), cells_.end()), "grid");
  state.value("next_frame_time", &next_frame_time_);
  // Older checkpoints lack the frame lists: then no frame is recorded.
  state.values("frame_steps", &frame_steps_, StateDescriptor::Restore::optional);
  state.values("frame_times", &frame_times_, StateDescriptor::Restore::optional);
  // The conserved variables are packed in one array: each goes through a block-sized copy,
  // allocated at the first checkpoint and kept.
  auto copy = std::make_shared<Field3D>();
  const auto array = [this, copy] {
    if (copy->extent(0) == 0)
      *copy = Field3D("euler::checkpoint", block_.extent[0], block_.extent[1], block_.extent[2]);
    return stratus::grid_array(*copy);
  };
  for (int v = 0; v < ke::kVars; ++v) {
    StateDescriptor::Field f;
    f.name = kConservedNames[v];
    f.array = array;
    f.block = block_;
    f.global = cells_;
    f.before_save = [this, copy, v] {
      ke::extract(u_, *copy, grid_, gas_, v, false, false);
      Kokkos::fence();
    };
    f.after_restore = [this, copy, v] {
      ke::insert(*copy, u_, grid_, v);
      Kokkos::fence();
    };
    state.field(std::move(f));
  }
  state.on_restored([this](const io::CheckpointReader&) {
    // Frames written after this checkpoint are dropped (open_outputs removes their files).
    while (!frame_steps_.empty() && frame_steps_.back() > step_) {
      frame_steps_.pop_back();
      frame_times_.pop_back();
    }
    dt_ = next_dt();
  });
}

}  // namespace stratus
