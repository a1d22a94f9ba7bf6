// The Euler solver's setup from a checked deck: grid, decomposition, scheme, gas, boundaries
// and the initial condition of the chosen problem.
#include "euler_names.hpp"
#include "stratus/core/device.hpp"
#include "stratus/solvers/euler.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace stratus {

namespace ke = kernels::euler;
using euler_names::kFaces;
using euler_names::kProblems;

namespace {

// Keys of [euler.initial] each problem reads (besides `problem`).
std::vector<std::string> problem_keys(const std::string& p) {
  if (p == "riemann") return {"left", "right", "x0"};
  if (p == "shu_osher") return {"left", "right", "x0", "amplitude", "wavenumber"};
  if (p == "riemann2d") return {"centre", "upper_right", "upper_left", "lower_left", "lower_right"};
  if (p == "kelvin_helmholtz") return {"amplitude"};
  if (p == "isentropic_vortex") return {"centre", "velocity", "strength"};
  if (p == "sedov") return {"centre", "energy", "radius", "ambient_pressure"};
  return {"mach"};
}

ke::Vars vars5(const std::vector<double>& v) { return ke::Vars{v[0], v[1], v[2], v[3], v[4]}; }

}  // namespace

EulerSolver::EulerSolver(Context& ctx, const io::Deck& deck) : ctx_(ctx), deck_(deck) {
  const auto& cells = deck.integer_list("euler.cells");
  const auto& lo = deck.real_list("euler.box_lo");
  const auto& hi = deck.real_list("euler.box_hi");
  for (int a = 0; a < 3; ++a)
    if (!(hi[a] > lo[a]))
      throw deck.error_at("euler.box_hi", fmt::format("must exceed euler.box_lo along {}: {} <= {}",
                                                      "xyz"[a], hi[a], lo[a]));

  // Scheme
  const auto& rec = deck.string("euler.reconstruction");
  scheme_.reconstruction = rec == "first_order" ? ke::Reconstruction::first_order
                           : rec == "plm"       ? ke::Reconstruction::plm
                           : rec == "weno5"     ? ke::Reconstruction::weno5
                                                : ke::Reconstruction::weno5z;
  const auto& lim = deck.string("euler.limiter");
  scheme_.limiter = lim == "minmod" ? ke::Limiter::minmod
                    : lim == "mc"   ? ke::Limiter::mc
                                    : ke::Limiter::van_leer;
  const auto& rs = deck.string("euler.riemann");
  scheme_.riemann = rs == "hllc"   ? ke::RiemannSolver::hllc
                    : rs == "hlle" ? ke::RiemannSolver::hlle
                                   : ke::RiemannSolver::rusanov;
  scheme_.fourth_order = deck.boolean("euler.fourth_order");
  if (scheme_.fourth_order && scheme_.reconstruction != ke::Reconstruction::weno5 &&
      scheme_.reconstruction != ke::Reconstruction::weno5z)
    throw deck.error_at("euler.fourth_order",
                        fmt::format("needs euler.reconstruction = weno5 or weno5z, found {}", rec));
  integrator_ = deck.string("euler.integrator");
  cfl_ = deck.real("euler.cfl");
  t_end_ = deck.real("euler.t_end");

  // Gas
  gas_.gamma = deck.real("euler.gamma");
  const auto& model = deck.string("euler.viscosity.model");
  gas_.viscosity = model == "none"       ? ke::Viscosity::none
                   : model == "constant" ? ke::Viscosity::constant
                                         : ke::Viscosity::sutherland;
  gas_.mu_ref = deck.real("euler.viscosity.mu");
  gas_.prandtl = deck.real("euler.viscosity.prandtl");
  gas_.gas_constant = deck.real("euler.viscosity.gas_constant");
  gas_.t_ref = deck.real("euler.viscosity.t_ref");
  gas_.sutherland = deck.real("euler.viscosity.sutherland");
  scheme_.viscous = gas_.viscosity != ke::Viscosity::none;
  if (scheme_.viscous && gas_.mu_ref <= 0)
    throw deck.error_at(
        "euler.viscosity.mu",
        fmt::format("must be > 0 with model = \"{}\", found {}", model, gas_.mu_ref));

  // Boundaries: periodic on both faces of an axis or on neither.
  std::array<bool, 3> periodic{};
  for (int a = 0; a < 3; ++a) {
    for (int side = 0; side < 2; ++side) {
      const auto& t = deck.string("euler.boundary." + kFaces[2 * a + side]);
      boundary_[a][side] = t == "periodic"     ? ke::Boundary::periodic
                           : t == "outflow"    ? ke::Boundary::outflow
                           : t == "reflecting" ? ke::Boundary::reflecting
                                               : ke::Boundary::inflow;
    }
    periodic[a] = boundary_[a][0] == ke::Boundary::periodic;
    if (periodic[a] != (boundary_[a][1] == ke::Boundary::periodic))
      throw deck.error_at(
          "euler.boundary." + kFaces[2 * a + (periodic[a] ? 1 : 0)],
          fmt::format("periodic on one face of {0} needs periodic on the other ({0}_lo = \"{1}\", "
                      "{0}_hi = \"{2}\")",
                      "xyz"[a], deck.string("euler.boundary." + kFaces[2 * a]),
                      deck.string("euler.boundary." + kFaces[2 * a + 1])));
  }
  const auto& inflow = deck.real_list("euler.boundary.inflow");
  if (!(inflow[0] > 0 && inflow[4] > 0))
    throw deck.error_at(
        "euler.boundary.inflow",
        fmt::format("density and pressure must be > 0, found {} and {}", inflow[0], inflow[4]));
  inflow_ = ke::to_conserved(gas_, vars5(inflow));

  // Decomposition: inactive axes (1 cell) get one rank and no ghosts.
  const auto& ranks = deck.integer_list("euler.ranks");
  std::array<int, 3> hint{};
  for (int a = 0; a < 3; ++a) {
    hint[a] = static_cast<int>(ranks[a]);
    if (cells[a] == 1) {
      if (ranks[a] > 1)
        throw deck.error_at("euler.ranks", fmt::format("axis {} has 1 cell (unused) but {} ranks",
                                                       "xyz"[a], ranks[a]));
      hint[a] = 1;
      periodic[a] = true;
    }
  }
  try {
    decomposition_ = std::make_unique<CartDecomposition>(ctx.comm(), periodic, hint);
    cells_ = {cells[0], cells[1], cells[2]};
    block_ = decomposition_->local_block(cells_);
  } catch (const InputError& e) {
    throw deck.error_at(deck.origin("euler.ranks").is_default ? "euler.cells" : "euler.ranks",
                        e.what());
  }
  int width = ke::stencil_width(scheme_.reconstruction);
  if (scheme_.viscous && width < 1) width = 1;
  std::array<int, 3> ghosts{};
  for (int a = 0; a < 3; ++a) {
    ghosts[a] = cells[a] > 1 ? width : 0;
    grid_.g[a] = ghosts[a];
    grid_.n[a] = block_.extent[a];
    grid_.begin[a] = block_.begin[a];
    grid_.lo[a] = lo[a];
    grid_.length[a] = hi[a] - lo[a];
    grid_.dx[a] = grid_.length[a] / static_cast<double>(cells[a]);
    if (ghosts[a] > 0 && block_.extent[a] < width && decomposition_->dims()[a] > 1)
      throw deck.error_at(
          deck.origin("euler.ranks").is_default ? "euler.cells" : "euler.ranks",
          fmt::format("{} cells along {} over {} ranks leave blocks of {} cells, fewer than the "
                      "stencil's {} ghost layers",
                      cells[a], "xyz"[a], decomposition_ -> dims()[a], block_.extent[a], width));
    if (ghosts[a] > 0 && periodic[a] && cells[a] < width)
      throw deck.error_at("euler.cells", fmt::format("{} cells along {}: a periodic axis needs at "
                                                     "least {} (the stencil's ghost layers)",
                                                     cells[a], "xyz"[a], width));
  }

  const auto shape = [&](int a) {
    return static_cast<std::size_t>(block_.extent[a] + 2 * ghosts[a]);
  };
  u_ = ke::State("euler::u", ke::kVars, shape(0), shape(1), shape(2));
  u0_ = ke::State("euler::u0", ke::kVars, shape(0), shape(1), shape(2));
  if (integrator_ == "rk4")
    acc_ = ke::State("euler::rk4_acc", ke::kVars, shape(0), shape(1), shape(2));
  flux_ = ke::State("euler::flux", 3 * ke::kVars, shape(0), shape(1), shape(2));
  if (ke::needs_primitives(scheme_))
    w_ = ke::State("euler::primitives", ke::kVars, shape(0), shape(1), shape(2));
  if (scheme_.fourth_order)
    states_ = ke::State("euler::face_states", 2 * ke::kVars, shape(0), shape(1), shape(2));
  for (int v = 0; v < ke::kVars; ++v)
    fields_.push_back(Kokkos::subview(u_, v, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL));
  halo_ = std::make_unique<GridHalo>(*decomposition_, block_.extent, ghosts, ke::kVars,
                                     device::choice(ctx_).transport);

  setup_problem();
  dt_ = next_dt();
  const auto& d = decomposition_->dims();
  ctx.log().info(
      "euler: {} x {} x {} cells on {} ranks ({} x {} x {}), {}{}{}, {}, {}, gamma {}, "
      "problem {}{}",
      cells[0], cells[1], cells[2], ctx.size(), d[0], d[1], d[2], rec,
      rec == "plm" ? " (" + deck.string("euler.limiter") + ")" : std::string(),
      scheme_.fourth_order ? " with fourth-order corrections" : "", rs, integrator_, gas_.gamma,
      deck.string("euler.initial.problem"),
      scheme_.viscous ? fmt::format(", Navier-Stokes ({} mu = {})", model, gas_.mu_ref) : "");
}

void EulerSolver::setup_problem() {
  const auto& deck = deck_;
  const std::string& name = deck.string("euler.initial.problem");
  // A key set in the deck that this problem ignores is a mistake: say so.
  const auto used = problem_keys(name);
  for (const char* key : {"left", "right", "x0", "amplitude", "wavenumber", "centre", "upper_right",
                          "upper_left", "lower_left", "lower_right", "velocity", "strength",
                          "energy", "radius", "ambient_pressure", "mach"}) {
    const std::string full = std::string("euler.initial.") + key;
    if (!deck.origin(full).is_default && std::find(used.begin(), used.end(), key) == used.end())
      throw deck.error_at(full, fmt::format("problem \"{}\" does not use {} (it reads: {})", name,
                                            key, fmt::join(used, ", ")));
  }
  ke::Problem& p = problem_;
  p.kind = static_cast<ke::ProblemKind>(std::find(kProblems.begin(), kProblems.end(), name) -
                                        kProblems.begin());
  for (const char* key :
       {"left", "right", "upper_right", "upper_left", "lower_left", "lower_right"}) {
    const auto& w = deck.real_list(std::string("euler.initial.") + key);
    if (!(w[0] > 0 && w[4] > 0) && std::find(used.begin(), used.end(), key) != used.end())
      throw deck.error_at(
          std::string("euler.initial.") + key,
          fmt::format("density and pressure must be > 0, found {} and {}", w[0], w[4]));
  }
  p.left = vars5(deck.real_list("euler.initial.left"));
  p.right = vars5(deck.real_list("euler.initial.right"));
  p.quadrants[0] = vars5(deck.real_list("euler.initial.upper_right"));
  p.quadrants[1] = vars5(deck.real_list("euler.initial.upper_left"));
  p.quadrants[2] = vars5(deck.real_list("euler.initial.lower_left"));
  p.quadrants[3] = vars5(deck.real_list("euler.initial.lower_right"));
  p.x0 = deck.real("euler.initial.x0");
  p.amplitude = deck.real("euler.initial.amplitude");
  p.wavenumber = deck.real("euler.initial.wavenumber");
  const auto& centre = deck.real_list("euler.initial.centre");
  if (!centre.empty() && centre.size() != 3)
    throw deck.error_at(
        "euler.initial.centre",
        fmt::format("expected 3 coordinates or an empty list, found {}", centre.size()));
  for (int a = 0; a < 3; ++a)
    p.centre[a] = centre.empty() ? grid_.lo[a] + 0.5 * grid_.length[a] : centre[a];
  const auto& vel = deck.real_list("euler.initial.velocity");
  for (int a = 0; a < 3; ++a) p.velocity[a] = vel[a];
  p.strength = deck.real("euler.initial.strength");
  p.mach = deck.real("euler.initial.mach");
  p.p_ambient = deck.real("euler.initial.ambient_pressure");
  p.radius = deck.real("euler.initial.radius");
  if (p.kind == ke::ProblemKind::sedov) {
    std::int64_t count = ke::count_cells_within(grid_, p.centre, p.radius);
    MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_INT64_T, MPI_SUM, ctx_.comm());
    if (count == 0)
      throw deck.error_at("euler.initial.radius",
                          fmt::format("no cell centre lies within {} of the blast centre: "
                                      "increase the radius or the resolution",
                                      p.radius));
    double volume = static_cast<double>(count);
    for (int a = 0; a < 3; ++a)
      if (grid_.active(a)) volume *= grid_.dx[a];
    // E = p V / (gamma - 1) over the deposit, the gas being at rest.
    p.p_inside = (gas_.gamma - 1) * deck.real("euler.initial.energy") / volume;
  }
  ke::set_problem(u_, grid_, gas_, p, ke::problem_is_smooth(p.kind));
  Kokkos::fence();
}

}  // namespace stratus
