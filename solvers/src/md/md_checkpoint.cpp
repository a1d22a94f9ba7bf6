// The MD solver's checkpoint: atoms in global-id order plus the integrator's and the
// neighbour list's state, so that a resume at the same rank count continues bit for bit.
//
// Bitwise continuation needs more than positions and velocities: the forces of the last step,
// each atom's position at the last neighbour-list build (the rebuild trigger and the list's
// pair order depend on it), the step of that build, and each atom's rank and slot at the time
// (the order of owned atoms fixes the order of force sums on the CPU path). With the same rank
// count and process grid, restore() puts every atom back in its slot and rebuilds ghosts and
// list from the build-time positions, which reproduces the lists of the uninterrupted run. On
// any other layout the atoms go to the ranks that own their positions and the list is rebuilt
// from the current positions: the trajectory continues exactly in exact arithmetic, and
// differs by round-off from the uninterrupted run.
#include "stratus/solvers/md/md_solver.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace stratus::md {

void MdSolver::declare_state(StateDescriptor& state) {
  using Restore = StateDescriptor::Restore;
  state.identity({"md", config_.units.name, &dt_, StateDescriptor::grid_layout(*decomposition_)});
  state.clock(&step_);  // the time is step x dt
  if (barostat_) {
    // The box is state under a barostat (an NVT checkpoint holds the same datasets, so an NPT
    // run may start from one; its box never moved, so the build box and V_0 are the deck's).
    state.values("box_lo", &box_lo_state_, Restore::same_size);
    state.values("box_hi", &box_hi_state_, Restore::same_size);
    state.values("box_lo_at_build", &build_lo_state_, Restore::optional);
    state.values("box_hi_at_build", &build_hi_state_, Restore::optional);
    state.values("barostat_omega_dot", &barostat_->omega_dot, Restore::optional);
    state.values("barostat_chain_xi", &barostat_->chain.xi, Restore::optional);
    state.values("barostat_chain_v", &barostat_->chain.v, Restore::optional);
    state.value("barostat_volume0", &barostat_->volume0, Restore::optional);
  } else {
    state.invariant("box_lo", std::vector<double>{box_.lo[0], box_.lo[1], box_.lo[2]},
                    "box lower corner");
    state.invariant("box_hi", std::vector<double>{box_.hi[0], box_.hi[1], box_.hi[2]},
                    "box upper corner");
  }
  // The deck fixes the chain length.
  state.values("chain_xi", &thermostat_.xi, Restore::same_size);
  state.values("chain_v", &thermostat_.v, Restore::same_size);
  state.value("rebuilds", &rebuilds_);
  state.value("last_rebuild_step", &last_rebuild_step_);
  state.value("trajectory_part", &trajectory_part_);
  // The layout the atoms were saved in: a restore on the same one continues bit for bit.
  state.record("process_grid", [this] {
    const auto& d = decomposition_->dims();
    return std::vector<std::int64_t>{d[0], d[1], d[2]};
  });
  // Named half_list since the first format: 0 full, 1 half, 2 cluster, 3 cluster mixed.
  state.record("half_list",
               [this] { return std::vector<std::int64_t>{static_cast<std::int64_t>(list_mode_)}; });
  // Every checkpointed per-atom column (an added one too) plus the build-time positions and
  // each atom's rank and slot (the layout). The ids are the rows' ids.
  StateDescriptor::Particles atoms;
  atoms.n_global = &natoms_;
  for (const ParticleColumn* c : checkpoint_columns())
    (c->kind() == ColumnKind::real ? atoms.reals : atoms.ints)
        .push_back({c->name(), c->components()});
  atoms.reals.push_back({"position_at_build", 3});
  atoms.ints.push_back({"rank", 1});
  atoms.ints.push_back({"slot", 1});
  atoms.ids = [this] { return atoms_.columns.at("id").host_integers(atoms_.nlocal); };
  atoms.real_values = [this](const std::string& name) { return checkpoint_reals(name); };
  atoms.int_values = [this](const std::string& name) { return checkpoint_integers(name); };
  atoms.place = [this](const io::CheckpointReader& in, io::ParticleColumns&& rows) {
    place_restored(in, std::move(rows));
  };
  state.particles(std::move(atoms));
}

std::vector<ParticleColumn*> MdSolver::checkpoint_columns() const {
  std::vector<ParticleColumn*> out;
  for (std::size_t k = 0; k < atoms_.columns.size(); ++k) {
    ParticleColumn& c = atoms_.columns[k];
    if (c.flags().checkpoint && c.name() != "id") out.push_back(&c);  // ids are the rows' ids
  }
  return out;
}

std::vector<double> MdSolver::checkpoint_reals(const std::string& name) const {
  const int n = atoms_.nlocal;
  if (name != "position_at_build") return atoms_.columns.at(name).host_reals(n);
  const auto xb = Kokkos::create_mirror_view_and_copy(
      HostMemSpace(), Kokkos::subview(x_at_build_, std::make_pair(0, n), Kokkos::ALL()));
  std::vector<double> out(3 * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) out[3 * static_cast<std::size_t>(i) + d] = xb(i, d);
  return out;
}

std::vector<std::int64_t> MdSolver::checkpoint_integers(const std::string& name) const {
  const int n = atoms_.nlocal;
  if (name == "rank") return std::vector<std::int64_t>(static_cast<std::size_t>(n), ctx_.rank());
  if (name != "slot") return atoms_.columns.at(name).host_integers(n);
  std::vector<std::int64_t> slot(static_cast<std::size_t>(n));
  std::iota(slot.begin(), slot.end(), std::int64_t{0});
  return slot;
}

void MdSolver::place_restored(const io::CheckpointReader& in, io::ParticleColumns&& cols) {
  // Each column as wide as this run declares it (an older format, such as the constraint virial
  // before it held the tensor's diagonal, is refused rather than misread).
  for (const ParticleColumn* c : checkpoint_columns()) {
    const int ncomp =
        c->kind() == ColumnKind::real ? cols.real(c->name()).ncomp : cols.integer(c->name()).ncomp;
    if (ncomp != c->components())
      throw InputError(fmt::format(
          "{}: /particles/{} holds {} value(s) per atom, this version of Stratus {}: the "
          "checkpoint was written by another version; start the run again from its input",
          in.path(), c->name(), ncomp, c->components()));
  }
  if (barostat_) {
    // The saved box (and the one of the last build) before any atom is placed.
    const auto box_of = [](const std::vector<double>& lo, const std::vector<double>& hi) {
      Box b;
      for (int d = 0; d < 3; ++d) {
        b.lo[d] = lo.at(d);
        b.hi[d] = hi.at(d);
      }
      return b;
    };
    const Box built = box_of(build_lo_state_, build_hi_state_);
    set_box(box_of(box_lo_state_, box_hi_state_));
    box_at_build_ = built;
    sync_box_state();
  }
  const auto grid = in.ints("process_grid");
  const auto& dims = decomposition_->dims();
  const bool same_layout = grid == std::vector<std::int64_t>{dims[0], dims[1], dims[2]} &&
                           in.integer("half_list") == static_cast<std::int64_t>(list_mode_);
  // Every atom to its rank: the one that held it (same layout) or the owner of its position.
  const auto& pos = cols.real("position").values;
  const auto& saved_rank = cols.integer("rank").values;
  std::vector<int> dest(cols.rows());
  for (std::size_t i = 0; i < cols.rows(); ++i) {
    if (same_layout) {
      dest[i] = static_cast<int>(saved_rank[i]);
      continue;
    }
    std::array<Real, 3> x{};
    for (int d = 0; d < 3; ++d) {
      const Real len = box_.length(d);
      x[d] = pos[3 * i + d] - std::floor((pos[3 * i + d] - box_.lo[d]) / len) * len;
      if (x[d] >= box_.hi[d]) x[d] = box_.lo[d];
    }
    dest[i] = decomposition_->owner_of_point(box_, x);
  }
  const io::ParticleColumns mine = io::route_particles(ctx_.comm(), cols, dest);

  // Same layout: back into the saved slots; otherwise in global-id order.
  const auto& slot = mine.integer("slot").values;
  std::vector<std::size_t> order(mine.rows());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return same_layout ? slot[a] < slot[b] : mine.ids[a] < mine.ids[b];
  });
  const auto& p = mine.real("position").values;
  const auto& vel = mine.real("velocity").values;
  const auto& xb = mine.real("position_at_build").values;
  const auto& type = mine.integer("type").values;
  const auto& image = mine.integer("image").values;
  InitialAtoms a;
  for (const std::size_t k : order) {
    a.id.push_back(static_cast<GlobalId>(mine.ids[k]));
    a.type.push_back(static_cast<int>(type[k]));
    a.x.push_back({p[3 * k], p[3 * k + 1], p[3 * k + 2]});
    a.v.push_back({vel[3 * k], vel[3 * k + 1], vel[3 * k + 2]});
    a.image.push_back({static_cast<int>(image[3 * k]), static_cast<int>(image[3 * k + 1]),
                       static_cast<int>(image[3 * k + 2])});
  }
  install_atoms(a);
  const int n = atoms_.nlocal;
  // Every other checkpointed column (forces, added properties) in the same order.
  for (ParticleColumn* column : checkpoint_columns()) {
    ParticleColumn& col = *column;
    const auto w = static_cast<std::size_t>(col.components());
    const auto reorder = [&](const auto& values) {
      std::remove_cvref_t<decltype(values)> out;
      out.reserve(values.size());
      for (const std::size_t r : order)
        out.insert(out.end(), values.begin() + static_cast<std::ptrdiff_t>(r * w),
                   values.begin() + static_cast<std::ptrdiff_t>((r + 1) * w));
      return out;
    };
    if (col.kind() == ColumnKind::real)
      col.assign_reals(reorder(mine.real(col.name()).values));
    else
      col.assign_integers(reorder(mine.integer(col.name()).values));
  }

  energy_step_ = -1;
  if (same_layout) {
    // Ghosts and list exactly as the last build made them: from the build-time positions.
    if (static_cast<int>(x_at_build_.extent(0)) < n) Kokkos::resize(x_at_build_, n);
    auto xbh = Kokkos::create_mirror_view(x_at_build_);
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d) xbh(i, d) = xb[3 * order[i] + d];
    Kokkos::deep_copy(x_at_build_, xbh);
    rebuild_list_as_built();
  } else {
    rebuild();  // migrates (wraps positions), builds ghosts and list, snapshots positions
  }
  ctx_.log().info("md: restored {} atoms at step {} ({})", natoms_, step_,
                  same_layout ? "same layout: continues bit for bit"
                              : "new layout: atoms redistributed by position");
}

}  // namespace stratus::md
