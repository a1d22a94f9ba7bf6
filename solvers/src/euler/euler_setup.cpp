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

/// The scheme, the time integrator and the step control.
void read_scheme(const io::Deck& deck, EulerConfig& c) {
  using TimeIntegrator = EulerConfig::TimeIntegrator;
  ke::Scheme& scheme = c.scheme;
  const auto& rec = deck.string("euler.reconstruction");
  scheme.reconstruction = deck.choice<ke::Reconstruction>(
      "euler.reconstruction", {{"first_order", ke::Reconstruction::first_order},
                               {"plm", ke::Reconstruction::plm},
                               {"weno5", ke::Reconstruction::weno5},
                               {"weno5z", ke::Reconstruction::weno5z}});
  scheme.limiter = deck.choice<ke::Limiter>("euler.limiter", {{"minmod", ke::Limiter::minmod},
                                                              {"mc", ke::Limiter::mc},
                                                              {"van_leer", ke::Limiter::van_leer}});
  scheme.riemann =
      deck.choice<ke::RiemannSolver>("euler.riemann", {{"hllc", ke::RiemannSolver::hllc},
                                                       {"hlle", ke::RiemannSolver::hlle},
                                                       {"rusanov", ke::RiemannSolver::rusanov}});
  scheme.fourth_order = deck.boolean("euler.fourth_order");
  if (scheme.fourth_order && scheme.reconstruction != ke::Reconstruction::weno5 &&
      scheme.reconstruction != ke::Reconstruction::weno5z)
    throw deck.error_at("euler.fourth_order",
                        fmt::format("needs euler.reconstruction = weno5 or weno5z, found {}", rec));
  c.integrator = deck.choice<TimeIntegrator>(
      "euler.integrator",
      {{"rk2", TimeIntegrator::rk2}, {"rk3", TimeIntegrator::rk3}, {"rk4", TimeIntegrator::rk4}});
  c.cfl = deck.real("euler.cfl");
  c.t_end = deck.real("euler.t_end");
  c.scheme_text = fmt::format("{}{}{}, {}, {}", rec,
                              scheme.reconstruction == ke::Reconstruction::plm
                                  ? " (" + deck.string("euler.limiter") + ")"
                                  : std::string(),
                              scheme.fourth_order ? " with fourth-order corrections" : "",
                              deck.string("euler.riemann"), deck.string("euler.integrator"));
}

/// [euler.initial]: the problem and the keys it reads; a key set in the deck that the problem
/// ignores is a mistake, and says so.
void read_problem(const io::Deck& deck, EulerConfig& c) {
  const std::string& name = deck.string("euler.initial.problem");
  c.problem_name = name;
  const auto used = problem_keys(name);
  for (const char* key : {"left", "right", "x0", "amplitude", "wavenumber", "centre", "upper_right",
                          "upper_left", "lower_left", "lower_right", "velocity", "strength",
                          "energy", "radius", "ambient_pressure", "mach"}) {
    const std::string full = std::string("euler.initial.") + key;
    if (deck.differs_from_default(full) && std::find(used.begin(), used.end(), key) == used.end())
      throw deck.error_at(full, fmt::format("problem \"{}\" does not use {} (it reads: {})", name,
                                            key, fmt::join(used, ", ")));
  }
  ke::Problem& p = c.problem;
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
  c.centre_given = !centre.empty();
  for (int a = 0; a < 3; ++a) p.centre[a] = c.centre_given ? centre[a] : 0.0;
  const auto& vel = deck.real_list("euler.initial.velocity");
  for (int a = 0; a < 3; ++a) p.velocity[a] = vel[a];
  p.strength = deck.real("euler.initial.strength");
  p.mach = deck.real("euler.initial.mach");
  p.p_ambient = deck.real("euler.initial.ambient_pressure");
  p.radius = deck.real("euler.initial.radius");
  c.blast_energy = deck.real("euler.initial.energy");
}

/// A problem that splits its states at `at` along axis `a` (key `key`) must have cell centres on
/// both sides; otherwise the deck sets up a uniform state and says otherwise (DeckError). Where
/// one side alone is `legitimate` (Shu-Osher's density wave without the shock), it is a warning.
void check_split(const io::Deck& deck, EulerConfig& c, int a, double at, const std::string& key,
                 bool legitimate = false) {
  const char axis = "xyz"[a];
  if (c.cells[a] == 1)
    throw deck.error_at(
        "euler.cells",
        fmt::format("problem \"{}\" splits its states along {}, but the grid has 1 cell along {}: "
                    "every cell would hold one state; give {} more cells (a 1D tube lies along x: "
                    "cells = [N, 1, 1])",
                    c.problem_name, axis, axis, axis));
  const double dx = (c.hi[a] - c.lo[a]) / static_cast<double>(c.cells[a]);
  const double first = c.lo[a] + 0.5 * dx, last = c.hi[a] - 0.5 * dx;
  if (at > first && at <= last) return;
  const std::string what = fmt::format(
      "{} = {} puts every cell on one side of the discontinuity: the cell centres "
      "along {} span [{}, {}] (box [{}, {}])",
      key.substr(key.rfind('.') + 1), at, axis, first, last, c.lo[a], c.hi[a]);
  if (!legitimate) throw deck.error_at(key, what + "; it must lie between them");
  c.warnings.push_back(fmt::format("{} ({}): {}; the whole grid holds the {} state", key,
                                   deck.origin(key).str(), what, at <= first ? "right" : "left"));
}

/// Problems whose discontinuity the deck places: it must separate cells.
void check_problem_geometry(const io::Deck& deck, EulerConfig& c) {
  const ke::Problem& p = c.problem;
  const bool same_states = [&] {
    for (int v = 0; v < ke::kVars; ++v)
      if (p.left[v] != p.right[v]) return false;
    return true;
  }();
  // Shu-Osher without its shock is the density wave alone: legitimate, and said.
  if (p.kind == ke::ProblemKind::shu_osher) check_split(deck, c, 0, p.x0, "euler.initial.x0", true);
  if (p.kind == ke::ProblemKind::riemann && !same_states)
    check_split(deck, c, 0, p.x0, "euler.initial.x0");
  if (p.kind == ke::ProblemKind::riemann2d)
    for (int a = 0; a < 2; ++a)
      check_split(deck, c, a, c.centre_given ? p.centre[a] : 0.5 * (c.lo[a] + c.hi[a]),
                  "euler.initial.centre");
}

}  // namespace

MemoryNeed EulerConfig::memory() const {
  return memory_of({cells[0], cells[1], cells[2]}, 25 * 8, "euler.cells", "cells",
                   "the 5 conserved variables, their stage copy and 3 fluxes of each");
}

EulerConfig EulerConfig::from(const io::Deck& deck) {
  EulerConfig c;
  const auto& cells = deck.integer_list("euler.cells");
  const auto& lo = deck.real_list("euler.box_lo");
  const auto& hi = deck.real_list("euler.box_hi");
  const auto& ranks = deck.integer_list("euler.ranks");
  for (int a = 0; a < 3; ++a) {
    c.cells[a] = cells[a];
    c.lo[a] = lo[a];
    c.hi[a] = hi[a];
    c.ranks[a] = static_cast<int>(ranks[a]);
    if (!(hi[a] > lo[a]))
      throw deck.error_at("euler.box_hi", fmt::format("must exceed euler.box_lo along {}: {} <= {}",
                                                      "xyz"[a], hi[a], lo[a]));
    if (cells[a] == 1 && ranks[a] > 1)
      throw deck.error_at("euler.ranks", fmt::format("axis {} has 1 cell (unused) but {} ranks",
                                                     "xyz"[a], ranks[a]));
  }

  read_scheme(deck, c);

  // Gas
  ke::Gas& gas = c.gas;
  gas.gamma = deck.real("euler.gamma");
  c.viscosity_model = deck.string("euler.viscosity.model");
  gas.viscosity = deck.choice<ke::Viscosity>("euler.viscosity.model",
                                             {{"none", ke::Viscosity::none},
                                              {"constant", ke::Viscosity::constant},
                                              {"sutherland", ke::Viscosity::sutherland}});
  gas.mu_ref = deck.real("euler.viscosity.mu");
  gas.prandtl = deck.real("euler.viscosity.prandtl");
  gas.gas_constant = deck.real("euler.viscosity.gas_constant");
  gas.t_ref = deck.real("euler.viscosity.t_ref");
  gas.sutherland = deck.real("euler.viscosity.sutherland");
  c.scheme.viscous = gas.viscosity != ke::Viscosity::none;
  if (c.scheme.viscous && gas.mu_ref <= 0)
    throw deck.error_at(
        "euler.viscosity.mu",
        fmt::format("must be > 0 with model = \"{}\", found {}", c.viscosity_model, gas.mu_ref));

  // Boundaries: periodic on both faces of an axis or on neither.
  for (int a = 0; a < 3; ++a) {
    for (int side = 0; side < 2; ++side)
      c.boundary[a][side] = deck.choice<ke::Boundary>("euler.boundary." + kFaces[2 * a + side],
                                                      {{"periodic", ke::Boundary::periodic},
                                                       {"outflow", ke::Boundary::outflow},
                                                       {"reflecting", ke::Boundary::reflecting},
                                                       {"inflow", ke::Boundary::inflow}});
    const bool periodic = c.boundary[a][0] == ke::Boundary::periodic;
    if (periodic != (c.boundary[a][1] == ke::Boundary::periodic))
      throw deck.error_at(
          "euler.boundary." + kFaces[2 * a + (periodic ? 1 : 0)],
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
  c.inflow = vars5(inflow);

  read_problem(deck, c);
  check_problem_geometry(deck, c);
  c.log_every = deck.integer("euler.log_every");
  c.field_interval = deck.real("euler.field_interval");
  c.write_fields = deck.boolean("euler.write_fields");
  c.output = io::OutputPaths::from(deck);
  c.deck_toml = deck.to_toml();
  return c;
}

EulerSolver::EulerSolver(Context& ctx, const io::Deck& deck)
    : ctx_(ctx), config_(EulerConfig::from(deck)) {
  const EulerConfig& c = config_;
  for (const std::string& w : c.warnings) ctx_.log().warn("euler: {}", w);
  const auto& cells = c.cells;
  scheme_ = c.scheme;
  gas_ = c.gas;
  boundary_ = c.boundary;
  integrator_ = c.integrator;
  cfl_ = c.cfl;
  t_end_ = c.t_end;
  inflow_ = ke::to_conserved(gas_, c.inflow);

  // Decomposition: inactive axes (1 cell) get one rank and no ghosts.
  std::array<bool, 3> periodic{};
  std::array<int, 3> hint = c.ranks;
  for (int a = 0; a < 3; ++a) {
    periodic[a] = boundary_[a][0] == ke::Boundary::periodic;
    if (cells[a] == 1) {
      hint[a] = 1;
      periodic[a] = true;
    }
  }
  const char* split_key = deck.origin("euler.ranks").is_default ? "euler.cells" : "euler.ranks";
  try {
    decomposition_ = std::make_unique<CartDecomposition>(ctx.comm(), periodic, hint);
    cells_ = cells;
    block_ = decomposition_->local_block(cells_);
  } catch (const InputError& e) {
    throw deck.error_at(split_key, e.what());
  }
  int width = ke::stencil_width(scheme_.reconstruction);
  if (scheme_.viscous && width < 1) width = 1;
  std::array<int, 3> ghosts{};
  for (int a = 0; a < 3; ++a) {
    ghosts[a] = cells[a] > 1 ? width : 0;
    grid_.g[a] = ghosts[a];
    grid_.n[a] = block_.extent[a];
    grid_.begin[a] = block_.begin[a];
    grid_.lo[a] = c.lo[a];
    grid_.length[a] = c.hi[a] - c.lo[a];
    grid_.dx[a] = grid_.length[a] / static_cast<double>(cells[a]);
    if (ghosts[a] > 0 && block_.extent[a] < width && decomposition_->dims()[a] > 1)
      throw deck.error_at(
          split_key,
          fmt::format("{} cells along {} over {} ranks leave blocks of {} cells, fewer than the "
                      "stencil's {} ghost layers",
                      cells[a], "xyz"[a], decomposition_ -> dims()[a], block_.extent[a], width));
    if (ghosts[a] > 0 && periodic[a] && cells[a] < width)
      throw deck.error_at("euler.cells", fmt::format("{} cells along {}: a periodic axis needs at "
                                                     "least {} (the stencil's ghost layers)",
                                                     cells[a], "xyz"[a], width));
  }
  allocate_state(ghosts);
  setup_problem(deck);
  dt_ = next_dt();
  const auto& d = decomposition_->dims();
  ctx.log().info(
      "euler: {} x {} x {} cells on {} ranks ({} x {} x {}), {}, gamma {}, problem {}{}", cells[0],
      cells[1], cells[2], ctx.size(), d[0], d[1], d[2], c.scheme_text, gas_.gamma, c.problem_name,
      scheme_.viscous ? fmt::format(", Navier-Stokes ({} mu = {})", c.viscosity_model, gas_.mu_ref)
                      : "");
}

void EulerSolver::allocate_state(const std::array<int, 3>& ghosts) {
  const auto shape = [&](int a) {
    return static_cast<std::size_t>(block_.extent[a] + 2 * ghosts[a]);
  };
  u_ = ke::State("euler::u", ke::kVars, shape(0), shape(1), shape(2));
  u0_ = ke::State("euler::u0", ke::kVars, shape(0), shape(1), shape(2));
  if (integrator_ == EulerConfig::TimeIntegrator::rk4)
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
}

void EulerSolver::setup_problem(const io::Deck& deck) {
  ke::Problem& p = problem_;
  p = config_.problem;
  if (!config_.centre_given)
    for (int a = 0; a < 3; ++a) p.centre[a] = grid_.lo[a] + 0.5 * grid_.length[a];
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
    p.p_inside = (gas_.gamma - 1) * config_.blast_energy / volume;
  }
  ke::set_problem(u_, grid_, gas_, p, ke::problem_is_smooth(p.kind));
  Kokkos::fence();
}

}  // namespace stratus
