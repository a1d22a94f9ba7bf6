// The built-in solvers: the one file of the registry that sees the solvers' device state (the
// rest of the registry, the driver and the run report are host code).
#include "stratus/solvers/euler.hpp"
#include "stratus/solvers/heat.hpp"
#include "stratus/solvers/md/md_solver.hpp"
#include "stratus/solvers/solver.hpp"
#include "stratus/solvers/spectral.hpp"

namespace stratus {

void register_builtin_solvers(SolverRegistry& registry) {
  registry.add(SolverEntry{
      "heat", "explicit finite-volume heat equation on a 3D block-decomposed grid",
      [](Schema& s) { HeatSolver::declare_sections(s); },
      [](Context& ctx, const io::Deck& deck) { return std::make_unique<HeatSolver>(ctx, deck); },
      [](const io::Deck& deck) { return HeatConfig::from(deck).memory(); }});
  registry.add(SolverEntry{
      "md", "molecular dynamics of Lennard-Jones atoms with MPI spatial decomposition",
      [](Schema& s) { md::MdSolver::declare_sections(s); },
      [](Context& ctx, const io::Deck& deck) { return std::make_unique<md::MdSolver>(ctx, deck); },
      [](const io::Deck& deck) { return md::MdConfig::from(deck).memory(); }});
  registry.add(SolverEntry{
      "spectral",
      "pseudo-spectral incompressible Navier-Stokes on periodic 2D and 3D boxes (distributed FFTs)",
      [](Schema& s) { SpectralSolver::declare_sections(s); },
      [](Context& ctx, const io::Deck& deck) {
        return std::make_unique<SpectralSolver>(ctx, deck);
      },
      [](const io::Deck& deck) { return SpectralConfig::from(deck).memory(); }});
  registry.add(SolverEntry{
      "euler",
      "compressible finite-volume Euler and Navier-Stokes equations on a block-decomposed "
      "Cartesian grid",
      [](Schema& s) { EulerSolver::declare_sections(s); },
      [](Context& ctx, const io::Deck& deck) { return std::make_unique<EulerSolver>(ctx, deck); },
      [](const io::Deck& deck) { return EulerConfig::from(deck).memory(); }});
}

}  // namespace stratus
