// The built-in solvers: the one file of the registry that sees the solvers' device state (the
// rest of the registry, the driver and the run report are host code).
#include "stratus/solvers/euler.hpp"
#include "stratus/solvers/heat.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/solver.hpp"
#include "stratus/solvers/spectral.hpp"

#include <memory>
#include <string>
#include <utility>

namespace stratus {

namespace {

/// A solver's entry: `Config` declares the deck sections and reads the checked deck
/// (Config::declare, Config::from, Config::memory); `S` runs it.
template <class S, class Config>
SolverEntry entry(std::string name, std::string summary) {
  return SolverEntry{
      std::move(name), std::move(summary), [](Schema& s) { Config::declare(s); },
      [](Context& ctx, const io::Deck& deck) { return std::make_unique<S>(ctx, deck); },
      [](const io::Deck& deck) { return Config::from(deck).memory(); }};
}

}  // namespace

void register_builtin_solvers(SolverRegistry& registry) {
  registry.add(entry<HeatSolver, HeatConfig>(
      "heat", "explicit finite-volume heat equation on a 3D block-decomposed grid"));
  registry.add(entry<md::MdSolver, md::MdConfig>(
      "md", "molecular dynamics of Lennard-Jones atoms with MPI spatial decomposition"));
  registry.add(entry<SpectralSolver, SpectralConfig>(
      "spectral",
      "pseudo-spectral incompressible Navier-Stokes on periodic 2D and 3D boxes (distributed "
      "FFTs)"));
  registry.add(entry<EulerSolver, EulerConfig>(
      "euler",
      "compressible finite-volume Euler and Navier-Stokes equations on a block-decomposed "
      "Cartesian grid"));
}

}  // namespace stratus
