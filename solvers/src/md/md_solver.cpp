#include "stratus/solvers/md/md_solver.hpp"

#include "stratus/io/output.hpp"
#include "stratus/kernels/md/integrate.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/lattice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stratus::md {

namespace kmd = kernels::md;

namespace {

double allreduce_sum(MPI_Comm comm, double v) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  return out;
}

}  // namespace

MdSolver::MdSolver(Context& ctx, const io::Deck& deck) : ctx_(ctx), deck_(deck) {
  dt_ = deck.real("md.timestep");
  const auto& masses = deck.real_list("md.masses");
  ntypes_ = static_cast<int>(masses.size());
  masses_ = kmd::TypeMasses("md::masses", masses.size());
  {
    auto h = Kokkos::create_mirror_view(masses_);
    for (std::size_t t = 0; t < masses.size(); ++t) h(t) = masses[t];
    Kokkos::deep_copy(masses_, h);
  }

  // Pair coefficients: every pair of types needs exactly one [[md.pair.coeff]].
  const double global_cutoff = deck.real("md.pair.cutoff");
  std::vector<double> eps(ntypes_ * ntypes_, -1), sig(ntypes_ * ntypes_, 0),
      rc(ntypes_ * ntypes_, 0);
  for (std::size_t c = 0; c < deck.count("md.pair.coeff"); ++c) {
    const std::string at = fmt::format("md.pair.coeff[{}].", c);
    const auto& t = deck.integer_list(at + "types");
    for (auto ti : t)
      if (ti > ntypes_)
        throw deck.error_at(
            at + "types",
            fmt::format("type {} does not exist: md.masses defines {} type(s)", ti, ntypes_));
    const int i = static_cast<int>(t[0] - 1), j = static_cast<int>(t[1] - 1);
    if (eps[i * ntypes_ + j] >= 0)
      throw deck.error_at(at + "types",
                          fmt::format("coefficients of types {} {} given twice", t[0], t[1]));
    const double cut = deck.real(at + "cutoff") > 0 ? deck.real(at + "cutoff") : global_cutoff;
    for (auto [a, b] : {std::pair{i, j}, std::pair{j, i}}) {
      eps[a * ntypes_ + b] = deck.real(at + "epsilon");
      sig[a * ntypes_ + b] = deck.real(at + "sigma");
      rc[a * ntypes_ + b] = cut;
    }
  }
  for (int i = 0; i < ntypes_; ++i)
    for (int j = i; j < ntypes_; ++j)
      if (eps[i * ntypes_ + j] < 0)
        throw deck.error_at(
            "md.masses", fmt::format("{} types, but no [[md.pair.coeff]] for types {} {}", ntypes_,
                                     i + 1, j + 1));
  cutoff_max_ = *std::max_element(rc.begin(), rc.end());
  pair_ = kmd::LJCut::create(ntypes_, eps, sig, rc, deck.boolean("md.pair.shift"));
  skin_ = deck.real("md.neighbor.skin");
  rebuild_every_ = deck.integer("md.neighbor.every");
  integrator_ = deck.string("md.integrator.style");
  target_temperature_ = deck.real("md.integrator.temperature");
  gamma_ = 1.0 / deck.real("md.integrator.damping");
  langevin_seed_ = deck.integer("md.integrator.seed");
  if (integrator_ == "nvt")
    throw deck.error_at("md.integrator.style",
                        "the Nose-Hoover chain (nvt) is not available yet; use langevin");

  // Box and decomposition from the lattice.
  const auto& cells = deck.integer_list("md.lattice.cells");
  const double a =
      lattice_constant(deck.string("md.lattice.style"), deck.real("md.lattice.density"));
  for (int d = 0; d < 3; ++d) {
    box_.lo[d] = 0.0;
    box_.hi[d] = a * static_cast<double>(cells[d]);
  }
  const auto& ranks = deck.integer_list("md.ranks");
  try {
    decomposition_ = std::make_unique<CartDecomposition>(
        ctx.comm(), std::array<bool, 3>{true, true, true},
        std::array<int, 3>{static_cast<int>(ranks[0]), static_cast<int>(ranks[1]),
                           static_cast<int>(ranks[2])});
    exchange_ = std::make_unique<AtomExchange>(*decomposition_, box_, cutoff_max_ + skin_);
  } catch (const InputError& e) {
    throw deck.error_at(deck.origin("md.ranks").is_default ? "md.lattice.cells" : "md.ranks",
                        e.what());
  }

  create_lattice();
  create_velocities();
  if (deck.boolean("md.pair.tail")) {
    // Type counts over all ranks, for the homogeneous-mixture tail correction.
    std::vector<GlobalId> counts(ntypes_, 0);
    auto h = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.type);
    for (int i = 0; i < atoms_.nlocal; ++i) counts[h(i)] += 1;
    static_assert(sizeof(GlobalId) == sizeof(long long));
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), ntypes_, MPI_LONG_LONG, MPI_SUM, ctx.comm());
    const double volume = box_.length(0) * box_.length(1) * box_.length(2);
    const auto tail = kmd::lj_tail_correction(ntypes_, eps, sig, rc, counts, volume);
    tail_energy_ = tail.energy;
    tail_virial_ = tail.virial;
  }
  const std::string list = deck.string("md.neighbor.list");
  half_list_ =
      list == "half" ||
      (list == "auto" && Kokkos::SpaceAccessibility<DevExecSpace, HostMemSpace>::accessible);
  rebuild();
  compute_forces(true);
  ctx.log().info("md: {} neighbour lists",
                 half_list_ ? "half (Newton's third law, CPU)" : "full (global-id order)");
  ctx.log().info(
      "md: {} atoms, box {:.6g} x {:.6g} x {:.6g}, {} ranks ({} x {} x {}), cutoff {:.4g} + skin "
      "{:.4g}",
      natoms_, box_.length(0), box_.length(1), box_.length(2), ctx.size(),
      decomposition_->dims()[0], decomposition_->dims()[1], decomposition_->dims()[2], cutoff_max_,
      skin_);
}

MdSolver::~MdSolver() = default;

void MdSolver::create_lattice() {
  const auto sites =
      lattice_sites(deck_.string("md.lattice.style"), deck_.real("md.lattice.density"),
                    deck_.integer_list("md.lattice.cells"), decomposition_->local_box(box_));
  const int n = static_cast<int>(sites.ids.size());
  atoms_.reserve(n);
  auto x = Kokkos::create_mirror_view(atoms_.x);
  auto id = Kokkos::create_mirror_view(atoms_.id);
  auto type = Kokkos::create_mirror_view(atoms_.type);
  auto image = Kokkos::create_mirror_view(atoms_.image);
  const int t = static_cast<int>(deck_.integer("md.lattice.type") - 1);
  if (t >= ntypes_)
    throw deck_.error_at(
        "md.lattice.type",
        fmt::format("type {} does not exist: md.masses defines {} type(s)", t + 1, ntypes_));
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) {
      x(i, d) = sites.positions[3 * i + d];
      image(i, d) = 0;
    }
    id(i) = sites.ids[i];
    type(i) = t;
  }
  Kokkos::deep_copy(atoms_.x, x);
  Kokkos::deep_copy(atoms_.id, id);
  Kokkos::deep_copy(atoms_.type, type);
  Kokkos::deep_copy(atoms_.image, image);
  atoms_.nlocal = n;
  atoms_.nghost = 0;
  long long local = n, total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, ctx_.comm());
  natoms_ = total;
}

double MdSolver::kinetic_energy() const {
  return allreduce_sum(ctx_.comm(),
                       kmd::kinetic_energy(atoms_.v, atoms_.type, masses_, atoms_.nlocal));
}

namespace {

/// Sums that do not depend on the order of the terms: each term is rounded to a multiple of
/// 2^-32 and added as a 64-bit integer (exact and associative), then over the ranks. Used where
/// a global sum feeds back into the atoms, so that results are the same at any rank count.
class ExactSum {
 public:
  void add(double v) { acc_ += static_cast<std::int64_t>(std::llround(std::ldexp(v, 32))); }
  [[nodiscard]] static std::vector<double> over_ranks(MPI_Comm comm,
                                                      const std::vector<ExactSum>& sums) {
    std::vector<std::int64_t> local, global(sums.size());
    for (const auto& s : sums) local.push_back(s.acc_);
    MPI_Allreduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_INT64_T, MPI_SUM,
                  comm);
    std::vector<double> out;
    for (auto g : global) out.push_back(std::ldexp(static_cast<double>(g), -32));
    return out;
  }

 private:
  std::int64_t acc_ = 0;
};

}  // namespace

void MdSolver::create_velocities() {
  const double temperature = deck_.real("md.velocity.temperature");
  const auto seed = static_cast<std::uint64_t>(deck_.integer("md.velocity.seed"));
  kmd::init_velocities(atoms_.v, atoms_.type, masses_, atoms_.id, temperature, seed, atoms_.nlocal);
  // Zero total momentum, then scale to the temperature exactly with 3N - 3 degrees of freedom.
  // Both sums are order-independent (ExactSum): the velocities are bitwise the same at any rank
  // count.
  auto v = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.v);
  auto type = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.type);
  auto m = Kokkos::create_mirror_view_and_copy(HostMemSpace(), masses_);
  std::vector<ExactSum> p(4);
  for (int i = 0; i < atoms_.nlocal; ++i) {
    for (int d = 0; d < 3; ++d) p[d].add(m(type(i)) * v(i, d));
    p[3].add(m(type(i)));
  }
  const auto total = ExactSum::over_ranks(ctx_.comm(), p);
  std::vector<ExactSum> ke(1);
  for (int i = 0; i < atoms_.nlocal; ++i)
    for (int d = 0; d < 3; ++d) {
      v(i, d) -= total[d] / total[3];
      ke[0].add(0.5 * m(type(i)) * v(i, d) * v(i, d));
    }
  const double kinetic = ExactSum::over_ranks(ctx_.comm(), ke)[0];
  const double dof = 3.0 * static_cast<double>(natoms_) - 3.0;
  const double scale = kinetic > 0 && dof > 0 ? std::sqrt(0.5 * dof * temperature / kinetic) : 0.0;
  for (int i = 0; i < atoms_.nlocal; ++i)
    for (int d = 0; d < 3; ++d) v(i, d) *= scale;
  Kokkos::deep_copy(atoms_.v, v);
}

void MdSolver::rebuild() {
  {
    auto t = ctx_.timers().scope("md: communication");
    try {
      exchange_->migrate(atoms_);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("step {}: {}", step_, e.what()));
    }
    exchange_->build_ghosts(atoms_);
  }
  auto t = ctx_.timers().scope("md: neighbor");
  if (half_list_)
    neighbor_builder_.build_half(atoms_.x, atoms_.id, atoms_.nlocal, atoms_.nall(),
                                 cutoff_max_ + skin_, neighbors_);
  else
    neighbor_builder_.build(atoms_.x, atoms_.id, atoms_.nlocal, atoms_.nall(), cutoff_max_ + skin_,
                            neighbors_);
  kmd::snapshot_positions(atoms_.x, x_at_build_, atoms_.nlocal);
  ++rebuilds_;
  last_rebuild_step_ = step_;
}

void MdSolver::compute_forces(bool with_energy) {
  auto t = ctx_.timers().scope("md: pair");
  const auto& x = atoms_.x;
  const auto& type = atoms_.type;
  const int n = atoms_.nlocal;
  // Energy and virial only when asked for (thermo steps): forces alone are a third cheaper.
  kmd::PairResult r;
  if (half_list_)
    r = with_energy ? kmd::compute_pair_forces_half<kmd::LJCut, true>(pair_, x, type, n, neighbors_,
                                                                      atoms_.f)
                    : kmd::compute_pair_forces_half<kmd::LJCut, false>(pair_, x, type, n,
                                                                       neighbors_, atoms_.f);
  else
    r = with_energy
            ? kmd::compute_pair_forces<kmd::LJCut, true>(pair_, x, type, n, neighbors_, atoms_.f)
            : kmd::compute_pair_forces<kmd::LJCut, false>(pair_, x, type, n, neighbors_, atoms_.f);
  pair_energy_ = r.energy;
  pair_virial_ = r.virial;
  energy_step_ = with_energy ? step_ : -1;
  if (integrator_ == "langevin")
    kmd::langevin_force(atoms_.f, atoms_.v, atoms_.type, masses_, atoms_.id, gamma_,
                        target_temperature_, dt_, static_cast<std::uint64_t>(langevin_seed_), step_,
                        atoms_.nlocal);
}

void MdSolver::step() {
  {
    auto t = ctx_.timers().scope("md: integrate");
    kmd::verlet_kick(atoms_.v, atoms_.f, atoms_.type, masses_, 0.5 * dt_, atoms_.nlocal);
    kmd::verlet_drift(atoms_.x, atoms_.v, dt_, atoms_.nlocal);
  }
  ++step_;
  bool need = rebuild_every_ > 0 && (step_ - last_rebuild_step_) >= rebuild_every_;
  if (rebuild_every_ == 0) {
    auto t = ctx_.timers().scope("md: neighbor");
    double d2 = kmd::max_displacement_sq(atoms_.x, x_at_build_, atoms_.nlocal);
    MPI_Allreduce(MPI_IN_PLACE, &d2, 1, MPI_DOUBLE, MPI_MAX, ctx_.comm());
    need = 4.0 * d2 > skin_ * skin_;
  }
  if (need) {
    rebuild();
  } else {
    auto t = ctx_.timers().scope("md: communication");
    exchange_->update_ghosts(atoms_);
  }
  compute_forces(energy_wanted_);
  energy_wanted_ = false;
  auto t = ctx_.timers().scope("md: integrate");
  kmd::verlet_kick(atoms_.v, atoms_.f, atoms_.type, masses_, 0.5 * dt_, atoms_.nlocal);
}

Thermo MdSolver::thermo() {
  // Pair energy and virial of the current positions (recomputed when the last step skipped them).
  if (energy_step_ != step_) compute_forces(true);
  Thermo th;
  th.step = step_;
  th.time = static_cast<double>(step_) * dt_;
  th.natoms = natoms_;
  const double local[3] = {kmd::kinetic_energy(atoms_.v, atoms_.type, masses_, atoms_.nlocal),
                           pair_energy_, pair_virial_};
  double global[3];
  MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  const double n = static_cast<double>(natoms_);
  const double dof = 3.0 * n - 3.0;
  th.volume = box_.length(0) * box_.length(1) * box_.length(2);
  th.temperature = dof > 0 ? 2.0 * global[0] / dof : 0.0;
  th.kinetic = global[0] / n;
  th.potential = (global[1] + tail_energy_) / n;
  th.total = th.kinetic + th.potential;
  th.pressure = (2.0 * global[0] + global[2] + tail_virial_) / (3.0 * th.volume);
  return th;
}

void MdSolver::write_frame() {
  auto t = ctx_.timers().scope("md: output");
  trajectory_->append(step_, static_cast<double>(step_) * dt_, atoms_.x, atoms_.v, atoms_.type,
                      atoms_.id, atoms_.image, atoms_.nlocal);
}

void MdSolver::run() {
  const std::int64_t steps = deck_.integer("run.steps");
  trajectory_every_ = deck_.integer("md.trajectory.every");
  if (trajectory_every_ > 0) {
    trajectory_ = std::make_unique<io::H5mdWriter>(
        ctx_.comm(), io::output_path(deck_, ".h5md"), deck_.to_toml(), natoms_,
        std::array<double, 3>{box_.length(0), box_.length(1), box_.length(2)}, "sigma", "tau");
    write_frame();
  }
  const std::int64_t every = deck_.integer("md.thermo.every");
  const auto& log = ctx_.log();
  std::FILE* csv = nullptr;
  const std::string csv_path = io::output_path(deck_, ".thermo.csv");
  if (ctx_.rank() == 0) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) throw RuntimeError(fmt::format("{}: cannot create the thermo file", csv_path));
    std::fprintf(
        csv, "# units lj: energies per atom in epsilon, temperature in epsilon/k_B, time in tau\n");
    std::fprintf(csv, "step,time,temperature,kinetic,potential,total,pressure\n");
  }
  auto report = [&] {
    auto t = ctx_.timers().scope("md: output");
    const Thermo th = thermo();
    log.info("{:>10} {:>12.6g} {:>12.7g} {:>14.8g} {:>14.8g} {:>14.8g} {:>14.8g}", th.step, th.time,
             th.temperature, th.kinetic, th.potential, th.total, th.pressure);
    if (csv)
      std::fprintf(csv, "%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                   static_cast<long long>(th.step), th.time, th.temperature, th.kinetic,
                   th.potential, th.total, th.pressure);
  };
  log.info("{:>10} {:>12} {:>12} {:>14} {:>14} {:>14} {:>14}", "step", "time", "temp", "kinetic/N",
           "potential/N", "total/N", "pressure");
  report();
  const std::int64_t rebuilds_before = rebuilds_;
  const double start = wall_seconds();
  for (std::int64_t s = 0; s < steps; ++s) {
    const std::int64_t next = step_ + 1;
    energy_wanted_ = (every > 0 && next % every == 0) || s + 1 == steps;
    step();
    if ((every > 0 && step_ % every == 0) || s + 1 == steps) report();
    if (trajectory_ && step_ % trajectory_every_ == 0) write_frame();
  }
  if (trajectory_) {
    trajectory_->close();
    log.info("md: wrote {} frames to {}", trajectory_->frames(), trajectory_->path());
  }
  const double elapsed = wall_seconds() - start;
  if (csv) std::fclose(csv);
  const double per_second = elapsed > 0 ? static_cast<double>(steps) / elapsed : 0.0;
  log.info("md: {} steps in {:.3f} s: {:.4g} timesteps/s, {:.4g} atom-steps/s, {:.4g} tau/day",
           steps, elapsed, per_second, per_second * static_cast<double>(natoms_),
           per_second * dt_ * 86400.0);
  log.info("md: {} neighbour list builds ({} during the run)", rebuilds_,
           rebuilds_ - rebuilds_before);
}

}  // namespace stratus::md
