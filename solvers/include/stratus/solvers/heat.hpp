// The heat solver: u_t = D lap(u) on a 3D box, explicit (forward Euler, 7-point Laplacian),
// block-decomposed over MPI with ghost exchange. It starts from an eigenmode of the Laplacian,
// so the exact solution is known at every step: it is the framework's end-to-end check from
// deck to kernel to HDF5 file (convergence order, conservation, decomposition invariance).
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/grid_halo.hpp"
#include "stratus/io/output.hpp"
#include "stratus/io/series.hpp"
#include "stratus/kernels/heat.hpp"
#include "stratus/solvers/grid_solver.hpp"

#include <memory>
#include <string>

namespace stratus {

/// [heat] and [heat.initial] as typed values, read from the checked deck once.
struct HeatConfig {
  std::array<std::int64_t, 3> cells{};
  std::array<double, 3> box{};
  kernels::HeatBoundary boundary = kernels::HeatBoundary::periodic;
  double diffusivity = 0;
  double dt_fraction = 0;  ///< of the explicit stability limit
  std::array<int, 3> modes{};
  double amplitude = 0, offset = 0;
  std::array<int, 3> ranks{};  ///< process grid; 0: MPI_Dims_create chooses that axis
  std::int64_t log_every = 0;
  bool write_field = true;
  io::OutputPaths output;
  std::string deck_toml;  ///< the resolved deck, stored in the field file

  /// Reads the keys and checks what the schema cannot (offset and modes against the walls,
  /// modes against the grid): DeckError naming the key.
  static HeatConfig from(const io::Deck& deck);
  /// Declares [heat] and [heat.initial].
  static void declare(Schema& schema);
  /// The field and its update: 16 bytes a cell.
  [[nodiscard]] MemoryNeed memory() const;
};

class HeatSolver : public GridSolver {
 public:
  /// Builds the decomposition, allocates the fields and sets the initial mode (the deck is read
  /// into a HeatConfig and not kept). Collective. Throws DeckError when the grid cannot be
  /// split over the ranks.
  HeatSolver(Context& ctx, const io::Deck& deck);

  // The shared time loop's hooks (see Solver). Outputs: OUTPUT_DIR/NAME.diag.csv (diagnostics
  // every heat.log_every steps) and, at the end, OUTPUT_DIR/NAME.h5 (the field, x fastest)
  // with its XDMF index OUTPUT_DIR/NAME.xdmf.
  [[nodiscard]] double current_time() const override { return static_cast<double>(step_) * dt_; }
  void declare_outputs(OutputDescriptor& outputs) override;
  void declare_state(StateDescriptor& state) override;
  void step() override;

  struct Diagnostics {
    std::int64_t step = 0;
    double time = 0;
    double total_heat = 0;  ///< integral of u over the box
    double max_abs = 0;     ///< max |u|
    double l2_error = 0;    ///< RMS over cells of u - exact
    double l2_exact = 0;    ///< RMS over cells of exact - offset (scale of the error)
  };
  /// Diagnostics of the current state. Collective.
  [[nodiscard]] Diagnostics diagnostics() const;

  /// Writes the field file, (nz, ny, nx) with x fastest, and its XDMF index (collective).
  void write_field_file(const std::string& path) const;

  [[nodiscard]] double dt() const noexcept { return dt_; }

 private:
  void fill_ghosts(const Field3D& u);
  /// OUTPUT_DIR/NAME.xdmf describing the field file for ParaView (rank 0).
  void write_xdmf(const std::string& field_path) const;
  /// Diagnostics row and log line; blow_up() first when one is not finite.
  void report();
  /// Stops the run (RuntimeError, exit 1) naming the step, `what` was found and the first
  /// non-finite cell. Collective.
  [[noreturn]] void blow_up(const std::string& what) const;

  Context& ctx_;
  HeatConfig config_;
  std::unique_ptr<CartDecomposition> decomposition_;
  GridBlock block_;
  kernels::HeatBlock geometry_;
  kernels::HeatBoundaries boundary_{};
  kernels::HeatModes modes_{};
  double diffusivity_ = 0, amplitude_ = 0, offset_ = 0, dt_ = 0, decay_rate_ = 0;
  std::array<Real, 3> coefficients_{};
  std::unique_ptr<GridHalo> halo_;
  Field3D u_, next_;
  std::unique_ptr<io::SeriesFile> diag_;
};

}  // namespace stratus
