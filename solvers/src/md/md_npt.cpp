// The MD solver's pressure control (md.barostat): the barostat's coupling to the atoms, the box
// that changes, and the tensors it reads (barostat.hpp has the equations).
#include "stratus/kernels/md/integrate.hpp"
#include "stratus/solvers/md/md_solver.hpp"

#include "exact_sum.hpp"

#include <fmt/format.h>

#include <cmath>

namespace stratus::md {

namespace kmd = kernels::md;

namespace detail {

/// Three fixed-point sums (a Kokkos reduction value; named, not in an anonymous namespace, so
/// that nvcc sees its volatile join used).
struct Fixed3 {
  std::int64_t v[3] = {0, 0, 0};
  KOKKOS_INLINE_FUNCTION void operator+=(const Fixed3& o) {
    for (int d = 0; d < 3; ++d) v[d] += o.v[d];
  }
  // Kokkos 3.x joins through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Fixed3& o) volatile {
    for (int d = 0; d < 3; ++d) v[d] = v[d] + o.v[d];
  }
};

/// This rank's sum m v_a^2 per axis in fixed point. A free function: nvcc does not take device
/// lambdas in private members.
Fixed3 local_kinetic_tensor(const kmd::Vectors& v, const kmd::Types& type, const kmd::TypeMasses& m,
                            int nlocal) {
  Fixed3 local;
  Kokkos::parallel_reduce(
      "md::kinetic_tensor_exact", Kokkos::RangePolicy<DevExecSpace>(0, nlocal),
      KOKKOS_LAMBDA(const int i, Fixed3& acc) {
        const double mi = m(type(i));
        for (int d = 0; d < 3; ++d) acc.v[d] += to_fixed(mi * v(i, d) * v(i, d));
      },
      local);
  return local;
}

}  // namespace detail

void MdSolver::setup_barostat() {
  const MdConfig& c = config_;
  {
    // The total mass, for the density.
    auto type = Kokkos::create_mirror_view_and_copy(HostMemSpace(), atoms_.type);
    double mass = 0;
    for (int i = 0; i < atoms_.nlocal; ++i) mass += c.masses[static_cast<std::size_t>(type(i))];
    MPI_Allreduce(&mass, &total_mass_, 1, MPI_DOUBLE, MPI_SUM, ctx_.comm());
  }
  using Style = MdConfig::Barostat::Style;
  if (c.barostat.style == Style::none) return;
  BarostatSettings s;
  s.coupling = c.barostat.style == Style::iso ? Coupling::iso : Coupling::aniso;
  s.pressure = c.barostat.pressure / c.units.nktv2p;
  s.period = c.barostat.damping;
  s.chain = c.barostat.chain;
  s.kt = target_kt_;
  s.natoms = natoms_;
  barostat_ = std::make_unique<Barostat>(s, box_.length(0) * box_.length(1) * box_.length(2));
  ctx_.log().info("md: barostat {} at {:g} {}, period {:g} {} (cell mass W = {:.6g}), chain of {}",
                  s.coupling == Coupling::iso ? "iso" : "aniso", c.barostat.pressure,
                  c.units.pressure, s.period, c.units.time, barostat_->mass(), s.chain);
}

std::array<double, 3> MdSolver::kinetic_tensor_exact() const {
  const detail::Fixed3 local =
      detail::local_kinetic_tensor(atoms_.v, atoms_.type, masses_, atoms_.nlocal);
  std::int64_t global[3] = {0, 0, 0};
  MPI_Allreduce(local.v, global, 3, MPI_INT64_T, MPI_SUM, ctx_.comm());
  return {from_fixed(global[0]), from_fixed(global[1]), from_fixed(global[2])};
}

void MdSolver::couple_barostat(bool first_half) {
  const double half = 0.5 * dt_;
  const auto scale_velocities = [&] {
    const auto s = barostat_->velocity_scale(half);
    kmd::scale_velocities(atoms_.v, Kokkos::Array<Real, 3>{s[0], s[1], s[2]}, atoms_.nlocal);
  };
  if (!first_half) scale_velocities();
  const std::array<double, 3> k = kinetic_tensor_exact();
  const std::array<double, 3> w = global_virial_tensor();
  const double volume = box_.length(0) * box_.length(1) * box_.length(2);
  std::array<double, 3> p{};
  for (int a = 0; a < 3; ++a) p[a] = (k[a] + w[a]) / volume;
  barostat_->kick(p, k[0] + k[1] + k[2], volume, half);
  for (const double rate : barostat_->omega_dot)
    if (!std::isfinite(rate))
      blow_up(
          fmt::format("the barostat's strain rate is {} (pressure tensor {:.6g}, {:.6g}, "
                      "{:.6g} in energy per volume)",
                      rate, p[0], p[1], p[2]));
  if (first_half) scale_velocities();
}

void MdSolver::dilate(double dt) {
  const auto s = barostat_->box_scale(dt);
  kmd::dilate_positions(atoms_.x, Kokkos::Array<Real, 3>{box_.lo[0], box_.lo[1], box_.lo[2]},
                        Kokkos::Array<Real, 3>{s[0], s[1], s[2]}, atoms_.nlocal);
  for (int d = 0; d < 3; ++d) box_.hi[d] = box_.lo[d] + (box_.hi[d] - box_.lo[d]) * s[d];
}

void MdSolver::set_box(const Box& box) {
  box_ = box;
  try {
    exchange_->set_box(box_);
  } catch (const InputError& e) {
    throw RuntimeError(fmt::format(
        "step {}: under md.barostat the box became {:.6g} x {:.6g} x {:.6g}: {}. The run stops; "
        "its last checkpoint is kept (a larger system, fewer ranks along that axis, or a slower "
        "barostat: md.barostat.damping)",
        step_, box_.length(0), box_.length(1), box_.length(2), e.what()));
  }
  if (pppm_) pppm_->set_box(box_);
  const double volume = box_.length(0) * box_.length(1) * box_.length(2);
  // Both go as 1 / V; a function of the box alone, so that a restored run has the same bits.
  tail_energy_ = tail_energy_volume_ / volume;
  tail_virial_ = tail_virial_volume_ / volume;
  sync_box_state();
}

void MdSolver::sync_box_state() {
  const auto put = [](std::vector<double>& lo, std::vector<double>& hi, const Box& b) {
    lo.assign(b.lo.begin(), b.lo.end());
    hi.assign(b.hi.begin(), b.hi.end());
  };
  put(box_lo_state_, box_hi_state_, box_);
  put(build_lo_state_, build_hi_state_, box_at_build_);
}

}  // namespace stratus::md
