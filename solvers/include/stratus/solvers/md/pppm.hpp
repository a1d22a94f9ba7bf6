// Long-range electrostatics by PPPM (md.kspace): the reciprocal part of the Ewald sum whose real
// part is the erfc-screened Coulomb term of lj/cut/coul/long and coul/long. Charges are assigned
// to a global grid (kernels/md/pppm.hpp), summed over the ranks, transformed by Stratus's
// distributed FFT (fft/distributed_fft.hpp: FFTW on CPUs, cuFFT on GPUs), multiplied by the
// optimal influence function of ik differentiation, transformed back as the three field
// components, and interpolated to the atoms. Every rank sums the same grid whatever the
// decomposition, so the result is the same at any rank count to round-off.
//
// Parameters from a requested relative force accuracy, as LAMMPS's `kspace_style pppm ACC`
// chooses them: the Ewald parameter g from the real-space error of Kolafa and Perram (Mol. Sim.
// 9 (1992) 351), the coarsest grid (factors 2, 3, 5) whose k-space error estimate of Deserno and
// Holm (J. Chem. Phys. 109 (1998) 7694, eq. 38 with their Table I) meets it, then g adjusted so
// that the two errors are equal. Both can be fixed instead (md.kspace.mesh, md.kspace.g_ewald).
//
// Scaling note: the charge grid and the three field grids are summed over all ranks (one
// MPI_Allreduce each per step): fine at a few ranks; a brick decomposition of the grid with
// ghost planes is the next step for many nodes.
#pragma once

#include "stratus/core/context.hpp"
#include "stratus/core/decomposition.hpp"
#include "stratus/kernels/md/pppm.hpp"
#include "stratus/kernels/md/types.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stratus::fft {
class DistributedFft;
}

namespace stratus::md {

struct PppmSettings {
  double accuracy =
      1e-5;       ///< relative force accuracy (of the force between unit charges 1 length apart)
  int order = 5;  ///< charge-assignment order, 2 .. 7
  std::array<int, 3> mesh{0, 0, 0};  ///< 0: chosen from the accuracy
  double g_ewald = 0;                ///< 0: chosen from the accuracy
};

/// What the system contributes to the error estimates.
struct ChargeSums {
  double qsum = 0;    ///< sum q
  double qsqsum = 0;  ///< sum q^2
  std::int64_t natoms = 0;
};

class Pppm {
 public:
  /// Chooses the parameters and plans the FFT. `cutoff` is the real-space Coulomb cutoff,
  /// `qqrd2e` Coulomb's constant, `two_charge_force` the force between two unit charges at unit
  /// distance (the scale of the relative accuracy). Collective.
  Pppm(Context& ctx, const PppmSettings& settings, const Box& box, double cutoff, double qqrd2e,
       double two_charge_force, const ChargeSums& charges);
  ~Pppm();
  Pppm(const Pppm&) = delete;
  Pppm& operator=(const Pppm&) = delete;

  [[nodiscard]] double g_ewald() const noexcept { return g_; }
  [[nodiscard]] const std::array<int, 3>& mesh() const noexcept { return n_; }
  /// The estimated relative force accuracy (real and k-space errors combined).
  [[nodiscard]] double estimated_accuracy() const noexcept { return estimated_; }
  [[nodiscard]] double kspace_error() const noexcept { return df_kspace_ / two_charge_force_; }
  [[nodiscard]] double real_error() const noexcept { return df_real_ / two_charge_force_; }
  /// One line for the log.
  [[nodiscard]] std::string describe() const;

  /// A new box of the same grid and g_ewald (a barostat's step): the spacing, the wavevectors
  /// and the influence function follow it (as LAMMPS's PPPM does under fix npt; the error
  /// estimates stay those of the box at setup).
  void set_box(const Box& box);

  struct Result {
    double energy = 0;  ///< global: reciprocal + self + neutralising background
    /// Global diagonal of the virial tensor (W_xx, W_yy, W_zz in the W = sum r f convention;
    /// the scalar virial is their sum): reciprocal part and background.
    std::array<double, 3> virial{0, 0, 0};
  };
  /// ADDS the reciprocal-space forces to f(i) for atoms [0, nlocal); energy and virial when
  /// `energy` (zeros otherwise). Collective.
  Result compute(const kernels::md::Vectors& x, const kernels::md::Charges& q, int nlocal,
                 const kernels::md::Vectors& f, bool energy);

 private:
  /// Root-mean-square k-space force error of ik PPPM along an axis (Deserno and Holm).
  [[nodiscard]] double axis_error(double h, double length) const;
  [[nodiscard]] double kspace_estimate() const;
  [[nodiscard]] double real_estimate() const;
  void tabulate_influence();

  Context& ctx_;
  int order_ = 5;
  std::array<int, 3> n_{};
  std::array<double, 3> length_{};
  double volume_ = 0, cutoff_ = 0, qqrd2e_ = 1, two_charge_force_ = 1, g_ = 0;
  ChargeSums charges_;
  double df_kspace_ = 0, df_real_ = 0, estimated_ = 0;
  std::unique_ptr<fft::DistributedFft> fft_;
  kernels::md::Grid3 rho_, ex_, ey_, ez_;    ///< global grids (every rank)
  kernels::md::Grid3 block_, fx_, fy_, fz_;  ///< this rank's real block of the FFT
  /// Slabs: every rank's real block is a run of whole x planes, the ranks' runs in rank order,
  /// and MPI reads the grids' memory. Then the charges are summed straight into the blocks
  /// (MPI_Reduce_scatter) and the fields gathered from them (MPI_Allgatherv), instead of summing
  /// whole grids over the ranks. slab_count_ and slab_begin_: each rank's run, in grid points.
  bool slabs_ = false;
  std::vector<int> slab_count_, slab_begin_;
  Kokkos::View<Kokkos::complex<double>***, Kokkos::LayoutRight, DevMemSpace> spectrum_, work_;
  Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace> influence_;  ///< G(k), spectral block
  /// Wavevector components of the spectral block's indices along x, y, z (FFT order; the
  /// Nyquist index as -N/2).
  kernels::md::AxisTable k_[3];
};

}  // namespace stratus::md
