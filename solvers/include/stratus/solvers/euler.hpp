// The compressible finite-volume solver: Euler and Navier-Stokes equations of an ideal gas on a
// uniform Cartesian grid (1D, 2D or 3D), block-decomposed over MPI with ghost cells as wide as
// the stencil. Method of lines: PLM (minmod/MC/van Leer) or WENO5 reconstruction, HLLC/HLLE/
// Rusanov fluxes, SSP-RK2/RK3 or classical RK4, CFL time step from a global reduction.
// docs/cfd-euler.md is the user's guide; kernels live in kernels/euler/.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/grid_halo.hpp"
#include "stratus/io/output.hpp"
#include "stratus/io/series.hpp"
#include "stratus/kernels/euler/fluxes.hpp"
#include "stratus/kernels/euler/problems.hpp"
#include "stratus/kernels/euler/reductions.hpp"
#include "stratus/solvers/grid_solver.hpp"

#include <memory>
#include <string>
#include <vector>

namespace stratus {

/// [euler...] as typed values, read from the checked deck once and checked where the schema
/// cannot (box, scheme and boundary combinations, the keys a problem reads). What depends on
/// the decomposition (stencil width against the blocks, the Sedov deposit) is checked by the
/// solver.
struct EulerConfig {
  enum class TimeIntegrator { rk2, rk3, rk4 };
  std::array<std::int64_t, 3> cells{};
  std::array<double, 3> lo{}, hi{};
  kernels::euler::Scheme scheme;  ///< reconstruction, limiter, Riemann solver, corrections
  TimeIntegrator integrator = TimeIntegrator::rk2;
  double cfl = 0, t_end = 0;
  kernels::euler::Gas gas;
  std::array<std::array<kernels::euler::Boundary, 2>, 3> boundary{};
  kernels::euler::Vars inflow{};  ///< primitive (rho, u, v, w, p)
  std::array<int, 3> ranks{};     ///< 0: MPI_Dims_create chooses that axis
  /// The initial condition; `centre` is the box centre where the deck leaves it empty
  /// (centre_given false), `p_inside` (Sedov) is set by the solver from `blast_energy`.
  kernels::euler::Problem problem;
  bool centre_given = false;
  double blast_energy = 0;
  std::int64_t log_every = 0;
  double field_interval = 0;
  bool write_fields = true;
  io::OutputPaths output;
  std::string deck_toml;  ///< the resolved deck, stored in every field file
  /// For the log: "plm (mc), hllc, rk2" as the deck spells them, the problem's name and the
  /// viscosity model's.
  std::string scheme_text, problem_name, viscosity_model;
  /// What the set-up should say about a legitimate but unusual initial condition (logged as
  /// warnings, counted in the run summary).
  std::vector<std::string> warnings;

  static EulerConfig from(const io::Deck& deck);
  /// Declares [euler], [euler.boundary], [euler.viscosity] and [euler.initial].
  static void declare(Schema& schema);
  /// The conserved state, its stage copy and the fluxes: 25 reals a cell, whatever the scheme.
  [[nodiscard]] MemoryNeed memory() const;
};

class EulerSolver : public GridSolver {
 public:
  /// Checks the deck, builds the decomposition and sets the initial condition. Collective.
  /// Throws DeckError pointing at the key to change.
  EulerSolver(Context& ctx, const io::Deck& deck);

  // The shared time loop's hooks (see Solver). Outputs: OUTPUT_DIR/NAME.series.csv (totals every
  // euler.log_every steps), field files OUTPUT_DIR/NAME.fields.STEP.h5 and their XDMF index
  // OUTPUT_DIR/NAME.xdmf (ParaView).
  [[nodiscard]] bool reached_end() const override;
  [[nodiscard]] double end_time() const override { return t_end_; }
  void declare_outputs(OutputDescriptor& outputs) override;
  void declare_state(StateDescriptor& state) override;

  /// Advances one step (dt from the CFL condition, clipped to reach euler.t_end). Throws
  /// RuntimeError naming the cell, step and values when a density or pressure goes
  /// non-positive. Collective.
  void step() override;

  struct Totals {
    std::int64_t step = 0;
    double time = 0;
    double mass = 0;
    std::array<double, 3> momentum{};
    double energy = 0;
    double kinetic_energy = 0;  ///< integral of rho |u|^2 / 2 (Taylor-Green dissipation)
    double min_density = 0, min_pressure = 0;
  };
  /// Integrals over the box of the conserved variables, minimum density and pressure.
  /// Collective.
  [[nodiscard]] Totals totals() const;

  /// L1 norm over the box (integral of |a - b| / volume) of conserved variable `var` between
  /// this solver's state and `other`'s (same grid and decomposition). Collective.
  [[nodiscard]] double l1_difference(const EulerSolver& other, int var) const;

  /// Writes a field file (rho, velocity, pressure, energy) of the current state. Collective.
  void write_fields(const std::string& path) const;

  [[nodiscard]] double dt() const noexcept { return dt_; }
  [[nodiscard]] const kernels::euler::Grid& grid() const noexcept { return grid_; }
  [[nodiscard]] const GridBlock& block() const noexcept { return block_; }
  [[nodiscard]] const kernels::euler::State& state() const noexcept { return u_; }

 private:
  /// The conserved state, its work arrays and the halo plan on blocks with `ghosts` layers.
  void allocate_state(const std::array<int, 3>& ghosts);
  /// The initial condition (DeckError on euler.initial.radius when no cell lies in the
  /// Sedov deposit).
  void setup_problem(const io::Deck& deck);
  void fill_ghosts_start();
  void fill_ghosts_finish();
  void compute_fluxes(bool overlap);
  void rhs_and_stage(const kernels::euler::Stage& st, double dt);
  double next_dt();
  void check_positivity(double rate) const;
  void report();
  void write_frame();
  void write_xdmf() const;

  Context& ctx_;
  EulerConfig config_;
  std::unique_ptr<CartDecomposition> decomposition_;
  GridBlock block_;
  kernels::euler::Grid grid_;
  kernels::euler::Gas gas_;
  kernels::euler::Scheme scheme_;
  kernels::euler::Problem problem_;
  std::array<std::array<kernels::euler::Boundary, 2>, 3> boundary_{};
  kernels::euler::Vars inflow_{};  // conserved
  EulerConfig::TimeIntegrator integrator_ = EulerConfig::TimeIntegrator::rk2;
  double cfl_ = 0.8, t_end_ = 0;
  std::unique_ptr<GridHalo> halo_;
  kernels::euler::State u_, u0_, acc_, flux_, states_, w_;
  std::vector<Field3D> fields_;  // the five components of u_ (halo exchange, files)
  double dt_ = 0;
  // field output: next output time, and the frames written so far (step, time)
  double next_frame_time_ = 0;
  std::vector<std::int64_t> frame_steps_;
  std::vector<double> frame_times_;
  std::unique_ptr<io::SeriesFile> series_;
};

}  // namespace stratus
