// The MD solver's outputs, declared for the shared time loop: thermo CSV, H5MD trajectory parts
// and the end-of-run summary.
#include "stratus/core/timers.hpp"
#include "stratus/io/output.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/md/trajectory_frame.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace stratus::md {

std::string MdSolver::trajectory_part_path(std::int64_t part) const {
  return config_.output.path(part == 0 ? ".h5md" : fmt::format(".part{:04}.h5md", part));
}

void MdSolver::report() {
  auto t = ctx_.timers().scope("md: output", Phase::output);
  const Thermo th = thermo();
  if (!std::isfinite(th.temperature) || !std::isfinite(th.potential) ||
      !std::isfinite(th.pressure) || !std::isfinite(th.conserved))
    blow_up(fmt::format("temperature {}, potential energy {}, pressure {}", th.temperature,
                        th.potential, th.pressure));
  ctx_.log().info("{:>10} {:>12.6g} {:>12.7g} {:>14.8g} {:>14.8g} {:>14.8g} {:>14.8g} {:>14.8g}",
                  th.step, th.time, th.temperature, th.kinetic, th.potential, th.total, th.pressure,
                  th.conserved);
  std::string terms;
  if (molecular_columns())
    terms = fmt::format(",{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}", th.pair,
                        th.coul, th.kspace, th.bond, th.angle, th.dihedral, th.improper);
  // The pressure tensor's diagonal, the volume and the density last: columns are only ever
  // added at the end.
  thermo_->row(
      fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}{},{:.17g},"
                  "{:.17g},{:.17g},{:.17g},{:.17g}",
                  th.step, th.time, th.temperature, th.kinetic, th.potential, th.total, th.pressure,
                  th.conserved, terms, th.pxx, th.pyy, th.pzz, th.volume, th.density));
}

void MdSolver::write_frame() {
  auto t = ctx_.timers().scope("md: output", Phase::output);
  if (!trajectory_) {
    trajectory_ = std::make_unique<io::H5mdWriter>(
        ctx_.comm(), trajectory_part_path(trajectory_part_), config_.deck_toml, natoms_,
        std::array<double, 3>{box_.length(0), box_.length(1), box_.length(2)},
        config_.units.h5md_length, config_.units.h5md_time,
        std::vector<std::string>{"periodic", "periodic", "periodic"}, "Stratus user",
        trajectory_extras(atoms_));
    // Every part is a whole H5MD file: each gets the topology (fixed during the run).
    if (topology_ && topology_->active()) {
      auto kinds = topology_->connectivity(atoms_);
      if (constraints_) constraints_->add_rigid_terms(atoms_, kinds);
      trajectory_->write_connectivity(kinds);
    }
  }
  trajectory_->set_edges({box_.length(0), box_.length(1), box_.length(2)});  // NPT: it changes
  append_frame(*trajectory_, step_, static_cast<double>(step_) * dt_, atoms_);
  ++trajectory_frames_;
}

void MdSolver::advance(bool prepare_output) {
  energy_wanted_ = prepare_output;
  step();
}

void MdSolver::declare_outputs(OutputDescriptor& outputs) {
  // conserved/N: the Nose-Hoover chain's conserved energy for nvt, total/N for nve and langevin;
  // pxx, pyy, pzz: the pressure tensor's diagonal, then volume and density (CSV only, after
  // every other column).
  const auto resumed = [this](std::int64_t resumed_at) {
    if (resumed_at >= 0 && thermo_->dropped() > 0)
      ctx_.log().info("md: dropped {} thermo row(s) written after step {}", thermo_->dropped(),
                      resumed_at);
    rebuilds_at_open_ = rebuilds_;
  };
  const Units& u = config_.units;
  Output thermo = series_output(
      ctx_, thermo_, "thermo", config_.thermo_every, config_.output.path(".thermo.csv"),
      fmt::format("# units {}: energies per atom in {}, temperature in {}, time in {}, pressure "
                  "in {}, volume in {}^3, density in {}\n"
                  "step,time,temperature,kinetic,potential,total,pressure,conserved{},pxx,pyy,pzz,"
                  "volume,density\n",
                  u.name, u.energy, u.temperature, u.time, u.pressure, u.length, u.density,
                  molecular_columns() ? ",pair,coul,kspace,bond,angle,dihedral,improper" : ""),
      fmt::format("{:>10} {:>12} {:>12} {:>14} {:>14} {:>14} {:>14} {:>14}", "step", "time", "temp",
                  "kinetic/N", "potential/N", "total/N", "pressure", "conserved/N"),
      [this] { report(); }, resumed);
  thermo.prepared_by_step = true;

  Output trajectory;
  trajectory.name = "trajectory";
  trajectory.every = config_.trajectory_every;  // 0: no frames, but old parts still go
  trajectory.at_start = config_.trajectory_every > 0;
  trajectory.at_end = false;
  trajectory.open = [this](std::int64_t resumed_at) {
    if (resumed_at < 0) trajectory_part_ = 0;
    // Parts from trajectory_part_ on hold frames after the checkpoint (or belong to an older
    // run of the same name): they are rewritten.
    if (ctx_.rank() == 0) {
      for (std::int64_t part = std::max<std::int64_t>(trajectory_part_, 1);; ++part) {
        std::error_code ec;
        if (!std::filesystem::remove(trajectory_part_path(part), ec)) break;
      }
    }
  };
  trajectory.write = [this] { write_frame(); };
  trajectory.sync = [this] {
    if (!trajectory_) return;
    // The part written so far is closed (complete on disk) before the checkpoint that covers
    // it; later frames go to the next part.
    trajectory_->close();
    trajectory_.reset();
    ++trajectory_part_;
  };
  trajectory.close = [this] {
    // The last part that holds frames: the open one, else the one closed by the last
    // checkpoint (sync has already moved trajectory_part_ on to a part not created yet).
    const std::int64_t last =
        trajectory_ ? trajectory_part_ : std::max<std::int64_t>(trajectory_part_ - 1, 0);
    if (trajectory_) {
      trajectory_->close();
      trajectory_.reset();
    }
    if (config_.trajectory_every > 0)
      ctx_.log().info("md: wrote {} trajectory frames to {}{}", trajectory_frames_,
                      trajectory_part_path(0),
                      last > 0 ? fmt::format(" .. {}", trajectory_part_path(last)) : std::string());
  };

  outputs.add(std::move(thermo));
  outputs.add(std::move(trajectory));
  // Steps, wall time and throughput are the run summary's (run_report.cpp).
  outputs.at_close([this] {
    ctx_.log().info("md: {} neighbour list builds ({} during the run)", rebuilds_,
                    rebuilds_ - rebuilds_at_open_);
  });
}

}  // namespace stratus::md
