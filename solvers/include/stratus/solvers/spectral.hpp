// The pseudo-spectral incompressible Navier-Stokes solver on periodic 2D and 3D boxes
// (docs/cfd-spectral.md). Fourier-Galerkin in velocity form: the nonlinear term in rotational
// (u x omega) or skew-symmetric form is computed on the grid, the pressure is removed by the
// Leray projection, aliasing by the 2/3 rule; viscosity is integrated exactly (integrating
// factor) inside a low-storage RK3 or RK4. Transforms are Stratus::fft's distributed r2c/c2r.
#pragma once

#include "stratus/fft/distributed_fft.hpp"
#include "stratus/io/field_series.hpp"
#include "stratus/io/output.hpp"
#include "stratus/io/series.hpp"
#include "stratus/kernels/spectral/navier_stokes.hpp"
#include "stratus/solvers/grid_solver.hpp"

#include <memory>
#include <string>
#include <vector>

namespace stratus {

/// [spectral...] as typed values, read from the checked deck once and checked where the schema
/// cannot (list lengths against the dimension, forcing modes against the grid, what an initial
/// condition needs).
struct SpectralConfig {
  enum class TimeScheme { rk3, rk4 };
  enum class Initial { taylor_green, abc, random, file };
  int dims = 3;
  std::array<std::int64_t, 3> n{};        ///< points; n[2] = 1 in 2D
  std::array<double, 3> box{}, origin{};  ///< 2 pi and 0 where the deck leaves them empty
  double viscosity = 0;
  bool rotational = true;  ///< spectral.nonlinear: rotational or skew
  int dealias_q = 3;       ///< 3: the 2/3 rule; 2: none
  fft::Options fft;        ///< transport is the run's, set by the solver
  TimeScheme scheme = TimeScheme::rk4;
  double dt = 0, cfl = 0, dt_max = 0;  ///< dt 0: adaptive from cfl
  /// Forcing kind, Kolmogorov amplitude and mode, band (|k|^2 range) of the stage kernels.
  kernels::spectral::StageParams forcing;
  double injection = 0;
  struct InitialCondition {
    Initial type = Initial::taylor_green;
    std::array<std::int64_t, 3> modes{};
    double amplitude = 0;
    std::array<double, 3> abc{};
    double energy = 0, peak = 0;
    std::uint64_t seed = 0;
    std::string file;
  } initial;
  std::int64_t diag_every = 0, spectrum_every = 0, snapshot_every = 0;
  bool pressure = false, fft_timing = false;
  io::OutputPaths output;
  std::string deck_toml;    ///< the resolved deck, stored in every field and spectrum file
  std::string scheme_name;  ///< "rk3" or "rk4", for the log

  static SpectralConfig from(const io::Deck& deck);
  /// Declares [spectral] and its subsections.
  static void declare(Schema& schema);
  /// Six spectral and two grid vector fields: 192 bytes a grid point at the least.
  [[nodiscard]] MemoryNeed memory() const;
};

class SpectralSolver : public GridSolver {
 public:
  /// Builds the transforms and the fields and sets the initial condition. Collective. Throws
  /// DeckError for settings that do not fit together (naming the key).
  SpectralSolver(Context& ctx, const io::Deck& deck);
  ~SpectralSolver() override;

  // The shared time loop's hooks (see Solver). Outputs: NAME.diag.csv, NAME.spectrum.csv and
  // NAME.spectra.h5 (E(k)), NAME.fields.STEP.h5 snapshots with the series NAME.xmf.
  void declare_outputs(OutputDescriptor& outputs) override;
  void declare_state(StateDescriptor& state) override;
  void step() override;

  struct Diagnostics {
    std::int64_t step = 0;
    double time = 0, dt = 0;
    double energy = 0;       ///< 1/2 <|u|^2>
    double enstrophy = 0;    ///< 1/2 <|omega|^2>
    double dissipation = 0;  ///< 2 nu enstrophy
    double max_div = 0;      ///< max |div u| on the grid
    double cfl = 0;          ///< dt max(|u|/dx + |v|/dy + |w|/dz) of the last step
    double re_lambda = 0;    ///< Taylor-microscale Reynolds number (3D; 0 in 2D)
  };
  /// Diagnostics of the current state. Collective.
  [[nodiscard]] Diagnostics diagnostics();
  /// Shell-summed energy spectrum E(k) (bins of width dk = min 2 pi / L, centred on
  /// integer multiples), complete on every rank. Collective.
  [[nodiscard]] std::vector<double> spectrum() const;
  [[nodiscard]] double spectrum_bin_width() const noexcept { return dk_; }

  /// Writes the velocity and vorticity on the grid to `path` (a "field" file). Collective.
  void write_snapshot(const std::string& path);

  /// Times the transforms one step needs (forward and backward counts of a step) standalone,
  /// `repeats` times; returns seconds per step's worth. With `library_3d`, also the seconds the
  /// same counts take with FFTW's own 3D plans of the whole grid (the floor; negative on
  /// several ranks). Collective.
  double time_fft_of_one_step(int repeats, double* library_3d = nullptr);

  [[nodiscard]] double dt() const noexcept { return dt_; }
  [[nodiscard]] int dims() const noexcept { return dims_; }
  [[nodiscard]] const fft::DistributedFft& transforms() const noexcept { return *fft_; }
  /// The velocity on the grid (component c) of the current state. Collective.
  [[nodiscard]] fft::RealField velocity(int c);

 private:
  /// The initial velocity (DeckError naming the spectral.initial key that gives no field).
  void set_initial_condition(const io::Deck& deck);
  void read_initial_file(const io::Deck& deck, const std::string& path);
  void rebuild_tables();
  void nonlinear(const kernels::spectral::SpectralVec& us, bool first_stage);
  /// Diagnostics row and log line; blow_up() first when one is not finite.
  void report();
  /// Stops the run (RuntimeError, exit 1) naming the step, `what` was found and the first grid
  /// point with a non-finite velocity. Collective.
  [[noreturn]] void blow_up(const std::string& what);
  void write_spectrum();
  void write_series_file() const;
  /// The snapshot list of a fresh run (empty) or of a resume (the files up to the checkpoint's
  /// step; later ones are deleted, rank 0).
  void open_snapshots(std::int64_t resumed_at);
  /// The summary of spectral.fft_timing (rank 0's figures).
  void log_fft_timing();

  Context& ctx_;
  SpectralConfig config_;
  std::unique_ptr<fft::DistributedFft> fft_;
  kernels::spectral::Modes modes_;
  int dims_ = 3;
  std::array<double, 3> box_{}, origin_{};
  double nu_ = 0, dt_ = 0, cfl_ = 0, cfl_rate_ = 0, dt_max_ = 0, dk_ = 1;
  bool adaptive_ = false, rotational_ = true;
  std::vector<double> rk_a_, rk_b_, rk_c_;
  double tables_dt_ = -1;
  std::vector<kernels::spectral::ModeTable> decay_;  // E(c_s), s = 0..S-1, then E(1)
  kernels::spectral::StageParams forcing_;
  double injection_ = 0;
  // state (frame of the step's start), RK register, stage velocity and vorticity, nonlinear
  // term and a spectral scratch (skew form)
  kernels::spectral::SpectralVec v_, q_, us_, om_, nl_, tmp_;
  // grid fields: velocity, vorticity / nonlinear product, accumulator (skew form)
  kernels::spectral::RealVec u_, w_, acc_;
  std::unique_ptr<io::SeriesFile> diag_, spectrum_csv_;
  std::unique_ptr<io::ProfileFile> profiles_;  // rank 0
  std::vector<std::int64_t> snapshot_steps_;
  std::vector<double> snapshot_times_;
  double step_seconds_ = 0;
  double fft_seconds_in_steps_ = 0;  // inside DistributedFft calls (FFTs and transposes)
  std::int64_t steps_timed_ = 0;
};

}  // namespace stratus
