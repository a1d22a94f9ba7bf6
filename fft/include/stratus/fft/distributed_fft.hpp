// Distributed 3D real-to-complex FFTs over MPI with slab or pencil decompositions.
//
// The ranks form a P1 x P2 process grid (rank = p1 * P2 + p2). In real space a rank holds
// x in block p1 of P1, y in block p2 of P2 and every z: a Field3D (x, y, z), z fastest. Forward:
//   1. r2c along z                                           (x_loc, y_loc, Nz/2+1)
//   2. transpose in the row of P2 ranks (same x block): y whole, kz split -> [x][kz][y]
//   3. c2c along y
//   4. transpose in the column of P1 ranks (same kz block): x whole, ky split -> [kz][ky][kx]
//   5. c2c along x
// Backward runs the same steps in reverse. A slab decomposition is P2 = 1 (step 2 is a local
// reordering, one all-to-all per transform); a pencil decomposition has P2 > 1 (two).
// One rank runs whole 3D plans instead, and, for the truncated transforms of a dealiased
// solver, three strided passes that skip the lines of dropped modes (make_pruned_plans).
// Transposes are own MPI_Alltoallv with packing and unpacking in one Kokkos kernel each;
// buffers are staged through host mirrors unless MPI can read device memory.
#pragma once

#include "stratus/core/decomposition.hpp"
#include "stratus/core/mpi_transport.hpp"
#include "stratus/core/types.hpp"
#include "stratus/fft/local_fft.hpp"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace stratus::fft {

using Complex = Kokkos::complex<double>;
/// Real-space data of a rank: (x, y, z) with z fastest (the same type as Field3D).
using RealField = Kokkos::View<double***, Kokkos::LayoutRight, DevMemSpace>;
/// Spectral data of a rank: [kz][ky][kx] with kx fastest; kx and ky in FFT order
/// (0, 1, ..., N/2, -N/2+1, ..., -1 for even N), kz = 0 .. Nz/2.
using SpectralField = Kokkos::View<Complex***, Kokkos::LayoutRight, DevMemSpace>;

enum class Decomposition { automatic, slab, pencil };

/// "slab", "pencil" or "auto" (for logs and decks).
std::string to_string(Decomposition d);

struct Options {
  Decomposition decomposition = Decomposition::automatic;
  /// P1 x P2; {0, 0} chooses from the decomposition, the rank count and the sizes.
  std::array<int, 2> process_grid{0, 0};
  /// "auto" (cuFFT with a CUDA build of Kokkos, FFTW 3 otherwise), "fftw3" or "cufft".
  std::string backend = "auto";
  /// FFTW_MEASURE plans (a second or so of planning for faster transforms).
  bool measure = false;
  /// On one rank, whole 3D plans where the backend has them (no transposes); false: batched 1D
  /// plans and transposes at every rank count (bitwise the results of earlier versions).
  bool whole_plans = true;
  /// The modes forward_truncated() and backward_truncated() keep: |m| <= truncation[a] along
  /// x, y and z (kz = m >= 0), the box of a dealiasing rule; negative: no truncation (the
  /// truncated calls are the full ones). On one rank with FFTW, the truncated calls run pruned
  /// plans that skip the lines of modes outside the box.
  std::array<std::int64_t, 3> truncation{-1, -1, -1};
  /// How the transposes hand their buffers to MPI: a solver passes the run's choice
  /// (stratus::device::choice(ctx).transport); staged is correct with any MPI.
  MpiTransport transport = MpiTransport::staged;
};

/// The process grid P1 x P2 for `ranks` ranks and a global real grid `n` (Nz = 1 for 2D):
/// slab puts P2 = 1, pencil P2 > 1 (P1 and P2 as close as the sizes allow), automatic a slab
/// whenever the sizes allow one. A `hint` of {P1, P2} (both > 0) is checked and used. Throws
/// InputError saying why when no grid fits (an axis with fewer planes than ranks along it).
std::array<int, 2> choose_process_grid(int ranks, std::array<std::int64_t, 3> n,
                                       Decomposition decomposition,
                                       std::array<int, 2> hint = {0, 0});

class Transpose;

/// A distributed 3D r2c/c2r transform of a fixed grid on a fixed communicator. Plans, buffers
/// and communicators are made once by the constructor; forward() and backward() only execute.
class DistributedFft {
 public:
  /// Collective over `comm`. Throws InputError when the grid cannot be decomposed.
  DistributedFft(MPI_Comm comm, std::array<std::int64_t, 3> n, const Options& options = {});
  ~DistributedFft();
  DistributedFft(const DistributedFft&) = delete;
  DistributedFft& operator=(const DistributedFft&) = delete;

  [[nodiscard]] const std::array<std::int64_t, 3>& n() const noexcept { return n_; }
  /// Nz / 2 + 1: complex planes along kz.
  [[nodiscard]] std::int64_t nzc() const noexcept { return n_[2] / 2 + 1; }
  [[nodiscard]] const std::array<int, 2>& process_grid() const noexcept { return grid_; }
  [[nodiscard]] Decomposition decomposition() const noexcept {
    return grid_[1] == 1 ? Decomposition::slab : Decomposition::pencil;
  }
  /// This rank's block of the real grid (x, y, z).
  [[nodiscard]] const GridBlock& real_block() const noexcept { return real_block_; }
  /// This rank's block of the spectral grid in (kx, ky, kz) index order (kz < nzc()); it is
  /// stored [kz][ky][kx].
  [[nodiscard]] const GridBlock& spectral_block() const noexcept { return spectral_block_; }
  [[nodiscard]] std::string backend_name() const;
  /// "pencil 2 x 2 (fftw3 (1 thread))" and the like.
  [[nodiscard]] std::string describe() const;

  [[nodiscard]] RealField make_real(const std::string& label) const;
  [[nodiscard]] SpectralField make_spectral(const std::string& label) const;

  /// out = sum_x in(x) exp(-i k.x) (not normalised); `in` is left unchanged. Collective.
  void forward(const RealField& in, const SpectralField& out);
  /// out = sum_k in(k) exp(+i k.x) (not normalised: backward(forward(f)) = N f, N = Nx Ny Nz);
  /// `in` is left unchanged. `in` must be the spectrum of a real field (Hermitian in the
  /// kz = 0 and Nyquist planes); anything else is projected onto one. Collective.
  void backward(const SpectralField& in, const RealField& out);

  /// forward() of a field whose modes are needed only inside Options::truncation's box: the
  /// modes of `out` outside it are unspecified. Collective.
  void forward_truncated(const RealField& in, const SpectralField& out);
  /// backward() of a spectrum that vanishes outside Options::truncation's box (one rank skips
  /// the lines of modes that lie wholly outside it; the others are read). Collective.
  void backward_truncated(const SpectralField& in, const RealField& out);

  /// A pointwise operation on the real points of one x plane inside fused_pointwise():
  /// `fields[f]` is field f's plane (Ny lines of Nz points, z fastest); it writes its results
  /// over the first fields and returns a value to take the maximum of over the planes.
  using PlaneOp = std::function<double(double* const* fields, std::int64_t x)>;
  /// Whether fused_pointwise() runs fused here (one rank with pruned plans, 3D).
  [[nodiscard]] bool fuses() const noexcept { return pruned_ != nullptr && n_[2] > 1; }
  /// out[f] = forward_truncated(op(backward_truncated(in)))[f] for f < n_out, with the z
  /// transforms, `op` and the y transforms done plane by plane in cache: the real fields are
  /// never stored whole. Only where fuses(); n_out <= n_in <= 6. Returns the largest value `op`
  /// returned. Collective.
  double fused_pointwise(const SpectralField* in, int n_in, const SpectralField* out, int n_out,
                         const PlaneOp& op);

  /// Seconds that `forward` r2c and `backward` c2r transforms of the whole grid take, `repeats`
  /// times over, with the library's own 3D plans of the natural layout (FFTW's
  /// fftw_plan_dft_r2c_3d and c2r_3d; this object's threads and planner): the floor a spectral
  /// step is measured against. One rank only: negative where there is no such plan (several
  /// ranks, cuFFT). Arrays of the grid's size are allocated for the time of the call.
  [[nodiscard]] double time_library_3d(int forward, int backward, int repeats);

  /// Seconds spent so far in local FFTs and in transposes (packing, MPI, unpacking).
  struct Stats {
    double fft_seconds = 0;
    double transpose_seconds = 0;
    std::int64_t forward_calls = 0, backward_calls = 0;
  };
  [[nodiscard]] const Stats& stats() const noexcept { return stats_; }
  void reset_stats() noexcept { stats_ = {}; }

 private:
  void run_plan(LocalPlan& plan, double* in, double* out);
  void make_pruned_plans(const std::array<std::int64_t, 3>& kmax);

  void make_fused_plans(int fields);

  struct Pruned;  // one rank: plans that skip the lines outside the truncation box
  std::unique_ptr<Pruned> pruned_;

  MPI_Comm row_ = MPI_COMM_NULL, col_ = MPI_COMM_NULL;
  std::array<std::int64_t, 3> n_{};
  std::array<int, 2> grid_{1, 1};
  GridBlock real_block_, spectral_block_;
  std::int64_t zc_begin_ = 0, zc_extent_ = 0;  // kz block of this rank after step 2
  std::unique_ptr<LocalBackend> backend_;
  std::unique_ptr<LocalPlan> r2c_, c2r_, y_forward_, y_backward_, x_forward_, x_backward_;
  std::unique_ptr<LocalPlan> whole_r2c_, whole_c2r_;  // one rank: whole 3D plans (or none)
  std::unique_ptr<Transpose> row_forward_, row_backward_, col_forward_, col_backward_;
  SpectralField a_, b_, c_;  // after r2c; [x][kz][y]; scratch of the spectral layout
  Stats stats_;
};

}  // namespace stratus::fft
