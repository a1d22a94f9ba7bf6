// Batched one-dimensional FFTs on one device: the interface every FFT library plugs into.
//
// Plain C++ (no Kokkos, no MPI), so that a backend compiles on its own: the cuFFT backend is
// compiled by nvcc in CI (test fft.cufft_backend_compiles) although nothing CUDA runs there.
// Complex numbers are two interleaved doubles (re, im), the layout of fftw_complex,
// cufftDoubleComplex and Kokkos::complex<double>.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

namespace stratus::fft {

/// The transforms a plan performs. Forward transforms use exp(-i k x), backward exp(+i k x);
/// none is normalised.
enum class Kind { r2c, c2r, c2c_forward, c2c_backward };

/// What one plan transforms: `batch` contiguous lines of length `n` (complex lines of a r2c/c2r
/// transform have n / 2 + 1 entries), line after line.
struct LineBatch {
  std::int64_t n = 0;
  std::int64_t batch = 0;
};

/// One axis of a strided transform: `n` points, `in` and `out` the distances between
/// neighbours on the input and on the output side.
struct Stride {
  std::int64_t n = 1;
  std::int64_t in = 1;
  std::int64_t out = 1;
};

/// A plan made once and executed many times. `in` and `out` must have the alignment of the
/// arrays the plan was made with (whole Kokkos or cudaMalloc allocations always do); an
/// in-place plan is executed with in == out.
class LocalPlan {
 public:
  virtual ~LocalPlan() = default;
  virtual void execute(double* in, double* out) = 0;
};

/// A factory of plans for one FFT library on one device.
class LocalBackend {
 public:
  virtual ~LocalBackend() = default;
  /// "fftw3 (2 threads)", "cufft", ...
  [[nodiscard]] virtual std::string name() const = 0;
  /// Makes a plan for `kind` on `lines`. `in` and `out` are arrays of the sizes the plan needs,
  /// used for planning only (their contents may be overwritten); in == out makes an in-place
  /// plan. Throws std::runtime_error naming the library's error.
  virtual std::unique_ptr<LocalPlan> plan(Kind kind, LineBatch lines, double* in, double* out) = 0;
  /// A whole 3D transform of a grid held by one rank, or nullptr when the library has none
  /// (the caller then uses 1D plans and transposes). `kind` is r2c or c2r; the real array is
  /// n[0] x n[1] x n[2] with z fastest, the complex one (n[2]/2 + 1) x n[1] x n[0] with kx
  /// fastest (DistributedFft's spectral layout). A c2r plan may overwrite its input. Planning
  /// arrays as for plan().
  virtual std::unique_ptr<LocalPlan> plan_3d(Kind /*kind*/, std::array<std::int64_t, 3> /*n*/,
                                             double* /*in*/, double* /*out*/) {
    return nullptr;
  }
  /// Strided transforms: the 1D transform along `line` for every index of the two `loops` (a
  /// loop of n = 1 is none). Strides and distances count elements of each side's type (doubles
  /// on the real side of r2c/c2r, complex values otherwise); line.n is the real length of r2c
  /// and c2r. A c2r plan leaves its input unchanged unless `preserve_input` is false. nullptr
  /// where the library has no such plan (the caller then keeps its other plans). Planning
  /// arrays as for plan().
  virtual std::unique_ptr<LocalPlan> plan_strided(Kind /*kind*/, Stride /*line*/,
                                                  std::array<Stride, 2> /*loops*/, double* /*in*/,
                                                  double* /*out*/, bool /*preserve_input*/ = true) {
    return nullptr;
  }
  /// The library's own 3D transform of the natural layout (real n[0] x n[1] x n[2], z fastest;
  /// complex n[0] x n[1] x (n[2]/2 + 1)), as the library's users call it: the reference a
  /// spectral step is measured against, never used by the solvers. nullptr where there is none.
  virtual std::unique_ptr<LocalPlan> plan_natural_3d(Kind /*kind*/,
                                                     std::array<std::int64_t, 3> /*n*/,
                                                     double* /*in*/, double* /*out*/) {
    return nullptr;
  }
  /// Waits until every transform launched so far has finished (a no-op on the host).
  virtual void synchronize() {}
};

/// FFTW 3 on the host with `threads` threads; `measure`: FFTW_MEASURE planning (slower plans,
/// faster transforms) instead of FFTW_ESTIMATE.
std::unique_ptr<LocalBackend> make_fftw_backend(int threads, bool measure);

/// A serial 3D real-to-complex transform on the host with FFTW (for tools that read whole
/// fields): `in` holds n[2] x n[1] x n[0] reals with x fastest, `out` n[2] x n[1] x (n[0]/2 + 1)
/// complex values, kx fastest. Planned with FFTW_ESTIMATE (the arrays are not touched); execute
/// the plan on arrays of the same sizes and alignment. Throws std::runtime_error if FFTW makes
/// no plan.
std::unique_ptr<LocalPlan> make_fftw_r2c_3d(std::array<std::int64_t, 3> n, double* in, double* out);

/// The FFTW library's version ("fftw-3.3.10-sse2-avx" and the like).
std::string fftw_version();

/// cuFFT on the current CUDA device (only in builds with the CUDA backend of Kokkos; throws
/// std::runtime_error elsewhere).
std::unique_ptr<LocalBackend> make_cufft_backend();

}  // namespace stratus::fft
