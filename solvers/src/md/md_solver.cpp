#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/core/agree.hpp"
#include "stratus/core/device.hpp"

#include "exact_sum.hpp"
#include "stratus/io/h5md.hpp"
#include "stratus/io/lammps_data.hpp"
#include "stratus/io/output.hpp"
#include "stratus/kernels/md/integrate.hpp"
#include "stratus/kernels/md/pair.hpp"
#include "stratus/solvers/md/lattice.hpp"
#include "stratus/solvers/md/lj_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <variant>

namespace stratus::md {

namespace kmd = kernels::md;

MdSolver::MdSolver(Context& ctx, const io::Deck& deck) : ctx_(ctx), config_(MdConfig::from(deck)) {
  const MdConfig& c = config_;
  dt_ = c.timestep;
  skin_ = c.neighbor.skin;
  rebuild_every_ = c.neighbor.every;
  integrator_ = c.integrator.style;
  target_kt_ = c.units.boltz * c.integrator.temperature;
  gamma_ = 1.0 / c.integrator.damping;
  langevin_seed_ = c.integrator.seed;

  ntypes_ = c.ntypes();
  read_initial_configuration(deck);
  if (!config_.pair.tabulated())
    config_.pair.tabulate(ntypes_, &data_->topology.pair_coeffs, config_.file, deck,
                          deck.origin("md.masses").is_default ? config_.file : "md.masses");
  cutoff_max_ = c.pair.cutoff_max;
  pair_ = make_pair_tables(c);
  setup_molecules(deck);
  masses_ = kmd::TypeMasses("md::masses", config_.masses.size());
  {
    auto h = Kokkos::create_mirror_view(masses_);
    // The kernels take m mvv2e (units.hpp): a = f / (m mvv2e), KE = 1/2 (m mvv2e) v^2.
    for (std::size_t t = 0; t < config_.masses.size(); ++t)
      h(t) = config_.masses[t] * config_.units.mvv2e;
    Kokkos::deep_copy(masses_, h);
  }
  decompose(deck);
  create_atoms();
  // Each constraint removes a degree of freedom (as LAMMPS's fix shake tells its temperature).
  dof_ = 3.0 * static_cast<double>(natoms_) - 3.0 -
         (constraints_ ? static_cast<double>(constraints_->count()) : 0.0);
  create_velocities(deck);
  setup_kspace(deck);
  setup_thermostat_and_tail();
  {
    constexpr bool host = Kokkos::SpaceAccessibility<DevExecSpace, HostMemSpace>::accessible;
    const bool mixed = c.precision == Precision::mixed;
    // auto: on CPUs half lists in double for atoms and uncharged molecules (faster than 4 x 4
    // clusters in double, whose 16-byte lanes hold half as many numbers), cluster lists for
    // lj/cut/coul/long (AVX2 or AVX-512 registers) and in mixed precision; full lists on GPUs.
    NeighborListKind kind = c.neighbor.list;
    const auto* coul_long = std::get_if<kmd::LJCutCoulLong>(&pair_);
    if (coul_long) cluster_lj_ = lj_factors(coul_long->lj);
    const bool wide =
        mixed ? clusters_mixed_.coul_long_supported() : clusters_double_.coul_long_supported();
    // Why cluster lists cannot take this system (empty when they can).
    std::string why;
    if (c.pair.charged() && !coul_long)
      why =
          "cluster lists (and mixed precision) take lj/cut/coul/long and coul/long only among "
          "the charged pair styles";
    else if (coul_long && !cluster_lj_)
      why =
          "cluster lists (and mixed precision) with charges need LJ coefficients that are the "
          "geometric means of the types' own (md.pair.mix = \"geometric\") with one LJ cutoff";
    else if (coul_long && !wide)
      why =
          "cluster lists (and mixed precision) with charges need AVX2 or AVX-512 registers, "
          "which this CPU (or a build for another architecture) lacks";
    if (kind == NeighborListKind::automatic)
      kind = !host ? NeighborListKind::full
                   : (mixed || (coul_long && why.empty()) ? NeighborListKind::cluster
                                                          : NeighborListKind::half);
    if (kind == NeighborListKind::cluster && !why.empty())
      throw deck.error_at(mixed ? "md.precision" : "md.neighbor.list",
                          why + ": take half or full lists in double precision");
    if (kind == NeighborListKind::cluster && !host)
      throw deck.error_at("md.neighbor.list",
                          "cluster lists run on CPU backends; this build runs on a GPU: take "
                          "full, half or auto");
    if (mixed && kind != NeighborListKind::cluster)
      throw deck.error_at("md.precision",
                          "mixed precision runs with cluster lists only (md.neighbor.list = "
                          "\"cluster\", or \"auto\" on CPU backends)");
    list_mode_ = kind == NeighborListKind::full   ? ListMode::full
                 : kind == NeighborListKind::half ? ListMode::half
                 : mixed                          ? ListMode::cluster_mixed
                                                  : ListMode::cluster;
  }
  if (topology_) {
    topology_->install(atoms_);
    topology_->release_file();
    if (topology_->active()) ctx.log().info("md: topology: {}", topology_->summary());
  }
  if (constraints_) {
    constraints_->install(atoms_);
    ctx.log().info("md: constraints: {}", constraints_->summary());
  }
  rebuild();
  if (constraints_ && constraints_->rattle())
    constraints_->rattle_velocities(atoms_, *exchange_, masses_, step_, ctx.comm());
  compute_forces(true, ForceStage::setup);
  if (list_mode_ == ListMode::full || list_mode_ == ListMode::half) {
    ctx.log().info("md: {}", list_mode_ == ListMode::full
                                 ? "full neighbour lists (global-id order)"
                                 : "half neighbour lists (each pair once, ghost forces sent back)");
  } else {
    const bool mixed = list_mode_ == ListMode::cluster_mixed;
    const int local = mixed ? clusters_mixed_.local_clusters() : clusters_double_.local_clusters();
    const int pairs = mixed ? clusters_mixed_.cluster_pairs() : clusters_double_.cluster_pairs();
    const int bytes = std::visit(
        [&]<class Pair>(const Pair& pair) {
          return mixed ? clusters_mixed_.register_bytes(pair)
                       : clusters_double_.register_bytes(pair);
        },
        pair_);
    const std::string regs = fmt::format("{}-byte registers{}", bytes,
                                         bytes == 64 ? ", AVX-512" : (bytes == 32 ? ", AVX2" : ""));
    ctx.log().info(
        "md: cluster-pair lists of {} atoms, pair forces in {}; rank 0: {} local clusters, {} "
        "cluster pairs",
        kmd::kCluster,
        mixed ? fmt::format("mixed precision (float pairs in {}, double sums)", regs)
              : fmt::format("double precision ({})", regs),
        local, pairs);
  }
  ctx.log().info(
      "md: {} atoms, box {:.6g} x {:.6g} x {:.6g}, {} ranks ({} x {} x {}), cutoff {:.4g} + skin "
      "{:.4g}; units {} ({}, {}, {})",
      natoms_, box_.length(0), box_.length(1), box_.length(2), ctx.size(),
      decomposition_->dims()[0], decomposition_->dims()[1], decomposition_->dims()[2], cutoff_max_,
      skin_, c.units.name, c.units.length, c.units.energy, c.units.time);
}

void MdSolver::decompose(const io::Deck& deck) {
  try {
    decomposition_ = std::make_unique<CartDecomposition>(
        ctx_.comm(), std::array<bool, 3>{true, true, true}, config_.ranks);
    exchange_ = std::make_unique<AtomExchange>(*decomposition_, box_, cutoff_max_ + skin_,
                                               device::choice(ctx_).transport);
  } catch (const InputError& e) {
    throw deck.error_at(deck.origin("md.ranks").is_default ? "md.lattice.cells" : "md.ranks",
                        e.what());
  }
}

void MdSolver::setup_thermostat_and_tail() {
  const MdConfig& c = config_;
  if (integrator_ == Integrator::nvt)
    thermostat_ = NoseHooverChain(c.integrator.chain, dof_, target_kt_, c.integrator.damping);
  setup_barostat();
  if (c.pair.tail) {
    // Type counts over all ranks, for the homogeneous-mixture tail correction.
    std::vector<GlobalId> counts(ntypes_, 0);
    auto h = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.type);
    for (int i = 0; i < atoms_.nlocal; ++i) counts[h(i)] += 1;
    static_assert(sizeof(GlobalId) == sizeof(long long));
    MPI_Allreduce(MPI_IN_PLACE, counts.data(), ntypes_, MPI_LONG_LONG, MPI_SUM, ctx_.comm());
    const double volume = box_.length(0) * box_.length(1) * box_.length(2);
    const auto tail =
        lj_tail_correction(ntypes_, c.pair.epsilon, c.pair.sigma, c.pair.cutoff, counts, volume);
    // Both go as 1 / V (a barostat changes V: set_box rescales them).
    tail_energy_ = tail.energy;
    tail_virial_ = tail.virial;
    tail_energy_volume_ = tail.energy * volume;
    tail_virial_volume_ = tail.virial * volume;
  }
}

MdSolver::~MdSolver() = default;

namespace {

/// This rank's kinetic energy in fixed point (to_fixed): the sum does not depend on the order.
/// A free function: nvcc does not take device lambdas in private members.
std::int64_t local_kinetic_fixed(const kernels::md::Vectors& v, const kernels::md::Types& type,
                                 const kernels::md::TypeMasses& m, int nlocal) {
  std::int64_t local = 0;
  Kokkos::parallel_reduce(
      "md::kinetic_energy_exact", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, std::int64_t& acc) {
        const double e =
            0.5 * m(type(i)) * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
        acc += to_fixed(e);
      },
      local);
  return local;
}

}  // namespace

double MdSolver::kinetic_energy_exact() const {
  // Order-independent, on the device: the chain scales the velocities by a factor computed from
  // this sum, so it must not depend on the decomposition.
  const std::int64_t local = local_kinetic_fixed(atoms_.v, atoms_.type, masses_, atoms_.nlocal);
  std::int64_t global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT64_T, MPI_SUM, ctx_.comm());
  return from_fixed(global);
}

void MdSolver::chain_half_step() {
  // The atoms' chain (nose_hoover.hpp). The global kinetic energy is an order-independent sum,
  // so the scaling, applied once, is the same at any rank count.
  const double s = thermostat_.half_step(2.0 * kinetic_energy_exact(), 0.5 * dt_, step_,
                                         "md.integrator.damping");
  kmd::scale_velocities(atoms_.v, s, atoms_.nlocal);
}

void MdSolver::create_velocities(const io::Deck& deck) {
  if (!config_.velocity) return;  // the data file's velocities (or zero)
  const double kt = config_.units.boltz * config_.velocity->temperature;
  const std::uint64_t seed = config_.velocity->seed;
  // A kinetic energy beyond the exact sums' range would wrap around (every velocity scaled to 0).
  const double target = 0.5 * dof_ * kt;
  if (!(target < kFixedRange))
    throw deck.error_at(
        "md.velocity.temperature",
        fmt::format(
            "{:g}: the kinetic energy of {} atoms at this temperature "
            "({:.3g}) is beyond the range of the order-independent sums that keep runs the same at "
            "any rank count (|E| < {:.3g} in the deck's units); give a physical temperature",
            config_.velocity->temperature, natoms_, target, kFixedRange));
  kmd::init_velocities(atoms_.v, atoms_.type, masses_, atoms_.id, kt, seed, atoms_.nlocal);
  // Zero total momentum, then scale to the temperature exactly with dof_ degrees of freedom.
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
  const double scale = kinetic > 0 && dof_ > 0 ? std::sqrt(0.5 * dof_ * kt / kinetic) : 0.0;
  for (int i = 0; i < atoms_.nlocal; ++i)
    for (int d = 0; d < 3; ++d) v(i, d) *= scale;
  Kokkos::deep_copy(atoms_.v, v);
}

void MdSolver::rebuild() {
  {
    auto t = ctx_.timers().scope("md: communication", Phase::communication);
    try {
      exchange_->migrate(atoms_);
    } catch (const RuntimeError& e) {
      throw RuntimeError(fmt::format("step {}: {}", step_, e.what()));
    }
  }
  // On host back-ends the last build's positions and the build's bins are never held at once
  // (peak memory: the positions go before the build, the bins after it; issue 16).
  constexpr bool host = Kokkos::SpaceAccessibility<DevExecSpace, HostMemSpace>::accessible;
  if constexpr (host) x_at_build_ = kmd::Vectors("md::x_at_build", 0);
  build_ghosts_and_list();
  auto t = ctx_.timers().scope("md: neighbor", Phase::neighbor);
  if constexpr (host) neighbor_builder_.release();
  snapshot_positions(atoms_.x, x_at_build_, atoms_.nlocal);
  ++rebuilds_;
  last_rebuild_step_ = step_;
  box_at_build_ = box_;
  sync_box_state();
}

void MdSolver::build_ghosts_and_list() {
  {
    auto t = ctx_.timers().scope("md: communication", Phase::communication);
    exchange_->build_ghosts(atoms_);
  }
  auto t = ctx_.timers().scope("md: neighbor", Phase::neighbor);
  const Real cut = cutoff_max_ + skin_;
  switch (list_mode_) {
    case ListMode::full:
      neighbor_builder_.build(atoms_.x, atoms_.id, atoms_.nlocal, atoms_.nall(), cut, neighbors_);
      break;
    case ListMode::half:
      neighbor_builder_.build_half(atoms_.x, atoms_.ghost_side, atoms_.nlocal, atoms_.nall(), cut,
                                   neighbors_);
      break;
    case ListMode::cluster:
    case ListMode::cluster_mixed: {
      // Molecules: their excluded special pairs left out; charges: the lanes' parameters.
      ClusterCharges extra;
      if (topology_) extra.exclusions = topology_->cluster_exclusions(atoms_);
      if (cluster_lj_) {
        extra.q = atoms_.q;
        extra.lj = cluster_lj_->factor;
      }
      if (list_mode_ == ListMode::cluster)
        clusters_double_.build(atoms_.x, atoms_.id, atoms_.type, atoms_.ghost_side, atoms_.nlocal,
                               atoms_.nall(), cut, &extra);
      else
        clusters_mixed_.build(atoms_.x, atoms_.id, atoms_.type, atoms_.ghost_side, atoms_.nlocal,
                              atoms_.nall(), cut, &extra);
      break;
    }
  }
  if (topology_) {
    if (list_mode_ == ListMode::half || list_mode_ == ListMode::full)
      topology_->exclude(neighbors_, atoms_);
    topology_->build(atoms_, natoms_, step_, ctx_.comm());
  }
  if (constraints_) constraints_->build(atoms_, *topology_, step_, ctx_.comm());
  lists_released_ = false;
}

void MdSolver::rebuild_list_as_built() {
  const int n = atoms_.nlocal;
  kernels::md::Vectors current("md::x_current", n);
  const auto owned = std::make_pair(0, n);
  Kokkos::deep_copy(current, Kokkos::subview(atoms_.x, owned, Kokkos::ALL));
  Kokkos::deep_copy(Kokkos::subview(atoms_.x, owned, Kokkos::ALL),
                    Kokkos::subview(x_at_build_, owned, Kokkos::ALL));
  // In the box of that build (a barostat's box has moved since).
  const Box now = box_;
  if (barostat_) set_box(box_at_build_);
  build_ghosts_and_list();
  if (barostat_) set_box(now);
  Kokkos::deep_copy(Kokkos::subview(atoms_.x, owned, Kokkos::ALL), current);
  exchange_->update_ghosts(atoms_);
}

void MdSolver::release_step_scratch() {
  neighbor_builder_.release();
  neighbors_ = kmd::NeighborList{};
  clusters_double_.release();
  clusters_mixed_.release();
  lists_released_ = true;
}

void MdSolver::compute_forces(bool with_energy, ForceStage stage) {
  if (lists_released_) rebuild_list_as_built();
  auto t = ctx_.timers().scope("md: pair", Phase::compute);
  const auto& x = atoms_.x;
  const auto& type = atoms_.type;
  const int n = atoms_.nlocal;
  // Energy and virial only when asked for (thermo steps): forces alone are a third cheaper.
  // One kernel per pair style (the tables' type), list kind and energy flag.
  const auto& q = atoms_.q;
  const kmd::PairResult r = std::visit(
      [&]<class Pair>(const Pair& pair) {
        switch (list_mode_) {
          case ListMode::full:
            return with_energy ? kmd::compute_pair_forces<Pair, true>(pair, x, type, n, neighbors_,
                                                                      atoms_.f, q)
                               : kmd::compute_pair_forces<Pair, false>(pair, x, type, n, neighbors_,
                                                                       atoms_.f, q);
          case ListMode::half:
            return with_energy ? kmd::compute_pair_forces_half<Pair, true>(pair, x, type, n,
                                                                           neighbors_, atoms_.f, q)
                               : kmd::compute_pair_forces_half<Pair, false>(
                                     pair, x, type, n, neighbors_, atoms_.f, q);
          case ListMode::cluster:
          case ListMode::cluster_mixed:
            // Of the charged styles, only lj/cut/coul/long takes cluster lists (the constructor
            // refuses the others).
            if constexpr (std::is_same_v<Pair, kmd::LJCutCoulLong>) {
              if (list_mode_ == ListMode::cluster)
                return with_energy ? clusters_double_.forces_coul_long<true>(pair, *cluster_lj_, x,
                                                                             atoms_.f)
                                   : clusters_double_.forces_coul_long<false>(pair, *cluster_lj_, x,
                                                                              atoms_.f);
              return with_energy
                         ? clusters_mixed_.forces_coul_long<true>(pair, *cluster_lj_, x, atoms_.f)
                         : clusters_mixed_.forces_coul_long<false>(pair, *cluster_lj_, x, atoms_.f);
            } else if constexpr (!kmd::is_charged_v<Pair>) {
              if (list_mode_ == ListMode::cluster)
                return with_energy ? clusters_double_.forces<true>(pair, x, atoms_.f)
                                   : clusters_double_.forces<false>(pair, x, atoms_.f);
              return with_energy ? clusters_mixed_.forces<true>(pair, x, atoms_.f)
                                 : clusters_mixed_.forces<false>(pair, x, atoms_.f);
            }
            break;
        }
        return kmd::PairResult{};
      },
      pair_);
  if (with_energy) {
    pair_energy_ = r.energy;
    pair_coul_ = r.coul;
    pair_virial_ = {r.virial[0], r.virial[1], r.virial[2]};
  }
  energy_step_ = with_energy ? step_ : -1;
  const bool molecular = topology_ && topology_->active();
  if (molecular) {
    auto tb = ctx_.timers().scope("md: bonded", Phase::compute);
    if (list_mode_ == ListMode::full)  // full lists leave the ghost rows as they were
      Kokkos::deep_copy(
          Kokkos::subview(atoms_.f, std::make_pair(atoms_.nlocal, atoms_.nall()), Kokkos::ALL),
          Real(0));
    const BondedEnergies b = topology_->forces(atoms_, pair_, q, with_energy);
    if (with_energy) bonded_ = b;
  }
  // Each pair (and each bonded term) on one rank: the ghosts' reactions go home.
  if (list_mode_ != ListMode::full || molecular) {
    auto tc = ctx_.timers().scope("md: communication", Phase::communication);
    exchange_->reverse_forces(atoms_);
  }
  if (pppm_) {
    auto tk = ctx_.timers().scope("md: kspace", Phase::compute);
    const Pppm::Result k = pppm_->compute(atoms_.x, q, atoms_.nlocal, atoms_.f, with_energy);
    if (with_energy) kspace_ = k;
  }
  if (integrator_ == Integrator::langevin)
    kmd::langevin_force(atoms_.f, atoms_.v, atoms_.type, masses_, atoms_.id, gamma_, target_kt_,
                        dt_, langevin_seed_, step_, atoms_.nlocal);
  // Constraint forces last: they see every other force.
  if (constraints_) {
    auto tc = ctx_.timers().scope("md: constraints", Phase::compute);
    // RATTLE solves the positions' constraints at the end of the step instead, after its
    // velocity constraints (step()): the second half kick takes no position constraint force.
    if (stage == ForceStage::again)
      constraints_->reuse(atoms_);
    else if (stage == ForceStage::setup || !constraints_->rattle())
      constraints_->shake(atoms_, *exchange_, masses_, dt_, stage == ForceStage::setup ? 0.5 : 1.0,
                          step_, ctx_.comm());
  }
}

void MdSolver::step() {
  // Under a barostat every step needs the pressure of the last forces (a restored run computes
  // them once more: the same forces, with the virial).
  if (barostat_ && energy_step_ != step_) compute_forces(true, ForceStage::again);
  {
    auto t = ctx_.timers().scope("md: integrate", Phase::compute);
    if (barostat_) barostat_->chain_half_step(0.5 * dt_, step_);
    if (integrator_ == Integrator::nvt) chain_half_step();
    if (barostat_) couple_barostat(true);
    kmd::verlet_kick(atoms_.v, atoms_.f, atoms_.type, masses_, 0.5 * dt_, atoms_.nlocal);
    if (barostat_) dilate(0.5 * dt_);
    kmd::verlet_drift(atoms_.x, atoms_.v, dt_, atoms_.nlocal);
    if (barostat_) {
      dilate(0.5 * dt_);
      set_box(box_);
    }
  }
  ++step_;
  bool need = rebuild_every_ > 0 && (step_ - last_rebuild_step_) >= rebuild_every_;
  if (rebuild_every_ == 0) {
    auto t = ctx_.timers().scope("md: neighbor", Phase::neighbor);
    // Displacements relative to the box: the build positions mapped to the current box. A box
    // that shrank by s brings listed-out pairs (r >= cutoff + skin at the build) closer by
    // (1 - s)(cutoff + skin), which the skin must also cover.
    Kokkos::Array<Real, 3> scale{1, 1, 1}, offset{0, 0, 0};
    double margin = skin_;
    if (barostat_) {
      double smallest = 1;
      for (int d = 0; d < 3; ++d) {
        scale[d] = box_.length(d) / box_at_build_.length(d);
        offset[d] = box_.lo[d] - box_at_build_.lo[d] * scale[d];
        smallest = std::min(smallest, static_cast<double>(scale[d]));
      }
      margin -= (1.0 - smallest) * (cutoff_max_ + skin_);
    }
    double d2 = kmd::max_displacement_sq(atoms_.x, x_at_build_, atoms_.nlocal, scale, offset);
    MPI_Allreduce(MPI_IN_PLACE, &d2, 1, MPI_DOUBLE, MPI_MAX, ctx_.comm());
    if (!std::isfinite(d2))
      blow_up(fmt::format("largest displacement since the last neighbour-list build {}",
                          std::sqrt(d2)));
    need = margin <= 0 || 4.0 * d2 > margin * margin;
  }
  if (need) {
    rebuild();
  } else {
    auto t = ctx_.timers().scope("md: communication", Phase::communication);
    exchange_->update_ghosts(atoms_);
  }
  compute_forces(energy_wanted_ || barostat_);
  energy_wanted_ = false;
  auto t = ctx_.timers().scope("md: integrate", Phase::compute);
  kmd::verlet_kick(atoms_.v, atoms_.f, atoms_.type, masses_, 0.5 * dt_, atoms_.nlocal);
  if (barostat_) couple_barostat(false);
  if (integrator_ == Integrator::nvt) chain_half_step();
  if (barostat_) barostat_->chain_half_step(0.5 * dt_, step_);
  if (constraints_ && constraints_->rattle()) {
    // RATTLE (Andersen 1983): the velocities at t + dt satisfy the constraints, then the
    // constraint forces of the next first half kick are solved from them (half a step of force,
    // as before the first step), so that the next drift lands on the constraints.
    auto tc = ctx_.timers().scope("md: constraints", Phase::compute);
    constraints_->rattle_velocities(atoms_, *exchange_, masses_, step_, ctx_.comm());
    constraints_->shake(atoms_, *exchange_, masses_, dt_, 0.5, step_, ctx_.comm());
  }
}

void MdSolver::blow_up(const std::string& what) const {
  // Rare path: find this rank's first atom (by id) with a non-finite position, velocity or
  // force on the host; the lowest rank with one tells everybody.
  auto x = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.x);
  auto v = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.v);
  auto f = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.f);
  auto id = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.id);
  int worst = -1;
  for (int i = 0; i < atoms_.nlocal; ++i) {
    bool finite = true;
    for (int d = 0; d < 3; ++d)
      finite = finite && std::isfinite(x(i, d)) && std::isfinite(v(i, d)) && std::isfinite(f(i, d));
    if (!finite && (worst < 0 || id(i) < id(worst))) worst = i;
  }
  const std::string atom =
      worst < 0 ? std::string()
                : fmt::format(
                      "atom id {} (id {} in a LAMMPS data file) has position ({:.6g}, {:.6g}, "
                      "{:.6g}), velocity "
                      "({:.6g}, {:.6g}, {:.6g}), force ({:.6g}, {:.6g}, {:.6g})",
                      id(worst), id(worst) + 1, x(worst, 0), x(worst, 1), x(worst, 2), v(worst, 0),
                      v(worst, 1), v(worst, 2), f(worst, 0), f(worst, 1), f(worst, 2));
  const std::string where = agree_on_message(ctx_.comm(), atom);
  throw RuntimeError(fmt::format(
      "md: the run blew up at step {} (t = {:.6g}): {}{}. The run stops; its last checkpoint is "
      "kept. Look for overlapping atoms in the initial configuration, a thermostat damping "
      "close to md.timestep, or take a smaller md.timestep.",
      step_, static_cast<double>(step_) * dt_, what, where.empty() ? std::string() : "; " + where));
}

std::array<double, 3> MdSolver::global_virial_tensor() const {
  const std::array<double, 3> shake =
      constraints_ ? constraints_->local_virial(atoms_) : std::array<double, 3>{0, 0, 0};
  std::array<double, 3> w{};
  for (std::size_t a = 0; a < 3; ++a) w[a] = pair_virial_[a] + bonded_.virial[a] + shake[a];
  MPI_Allreduce(MPI_IN_PLACE, w.data(), 3, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  for (std::size_t a = 0; a < 3; ++a) w[a] += tail_virial_ / 3.0 + kspace_.virial[a];
  return w;
}

Thermo MdSolver::thermo() {
  // Pair energy and virial of the current positions (recomputed when the last step skipped them).
  if (energy_step_ != step_) compute_forces(true, ForceStage::again);
  Thermo th;
  th.step = step_;
  th.time = static_cast<double>(step_) * dt_;
  th.natoms = natoms_;
  const BondedEnergies& b = bonded_;
  const kmd::Sum3 ke = kmd::kinetic_tensor(atoms_.v, atoms_.type, masses_, atoms_.nlocal);
  enum { kKinetic, kPair, kBond, kAngle, kDihedral, kImproper, kCoul, kKineticXx, kSums = 10 };
  const double local[kSums] = {kmd::kinetic_energy(atoms_.v, atoms_.type, masses_, atoms_.nlocal),
                               pair_energy_ + b.special,
                               b.bond,
                               b.angle,
                               b.dihedral,
                               b.improper,
                               pair_coul_ + b.special_coul,
                               ke.v[0],
                               ke.v[1],
                               ke.v[2]};
  double global[kSums];
  MPI_Allreduce(local, global, kSums, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  const std::array<double, 3> w = global_virial_tensor();
  const double n = static_cast<double>(natoms_);
  const double dof = dof_;
  th.volume = box_.length(0) * box_.length(1) * box_.length(2);
  const Units& u = config_.units;
  th.temperature = dof > 0 ? 2.0 * global[kKinetic] / (dof * u.boltz) : 0.0;
  th.kinetic = global[kKinetic] / n;
  th.pair = (global[kPair] + tail_energy_) / n;
  th.coul = global[kCoul] / n;
  th.bond = global[kBond] / n;
  th.angle = global[kAngle] / n;
  th.dihedral = global[kDihedral] / n;
  th.improper = global[kImproper] / n;
  th.kspace = kspace_.energy / n;
  th.potential = th.pair + th.coul + th.kspace + th.bond + th.angle + th.dihedral + th.improper;
  th.total = th.kinetic + th.potential;
  // P_aa = (2 KE_aa + W_aa) / V; the pressure, (2 KE + W) / (3 V), is the tensor's trace / 3.
  double p[3];
  for (int a = 0; a < 3; ++a)
    p[a] = (2.0 * global[kKineticXx + a] + w[static_cast<std::size_t>(a)]) / th.volume * u.nktv2p;
  th.pxx = p[0];
  th.pyy = p[1];
  th.pzz = p[2];
  th.pressure = (p[0] + p[1] + p[2]) / 3.0;
  th.density = total_mass_ * u.mv2d / th.volume;
  th.conserved = th.total + (integrator_ == Integrator::nvt ? thermostat_.energy() / n : 0.0) +
                 (barostat_ ? barostat_->energy(th.volume) / n : 0.0);
  return th;
}

}  // namespace stratus::md
