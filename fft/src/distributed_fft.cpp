#include "stratus/fft/distributed_fft.hpp"

#include "stratus/core/error.hpp"
#include "transpose.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace stratus::fft {

std::string to_string(Decomposition d) {
  switch (d) {
    case Decomposition::slab:
      return "slab";
    case Decomposition::pencil:
      return "pencil";
    default:
      return "auto";
  }
}

namespace {

/// Why a P1 x P2 grid does not fit `n`, or "" when it does.
std::string misfit(std::array<int, 2> g, std::array<std::int64_t, 3> n) {
  const std::int64_t nzc = n[2] / 2 + 1;
  if (n[0] < g[0]) return fmt::format("Nx = {} < P1 = {} (x planes are split over P1)", n[0], g[0]);
  if (n[1] < g[0])
    return fmt::format("Ny = {} < P1 = {} (ky planes are split over P1)", n[1], g[0]);
  if (n[1] < g[1]) return fmt::format("Ny = {} < P2 = {} (y planes are split over P2)", n[1], g[1]);
  if (nzc < g[1])
    return fmt::format("Nz/2+1 = {} < P2 = {} (kz planes are split over P2)", nzc, g[1]);
  return "";
}

}  // namespace

std::array<int, 2> choose_process_grid(int ranks, std::array<std::int64_t, 3> n,
                                       Decomposition decomposition, std::array<int, 2> hint) {
  if (hint[0] > 0 && hint[1] > 0) {
    if (hint[0] * hint[1] != ranks)
      throw InputError(
          fmt::format("process grid {} x {} does not match {} ranks", hint[0], hint[1], ranks));
    if (decomposition == Decomposition::slab && hint[1] != 1)
      throw InputError(
          fmt::format("a slab decomposition has P2 = 1, found {} x {}", hint[0], hint[1]));
    const auto why = misfit(hint, n);
    if (!why.empty())
      throw InputError(fmt::format("process grid {} x {} does not fit the grid {} x {} x {}: {}",
                                   hint[0], hint[1], n[0], n[1], n[2], why));
    return hint;
  }
  const std::array<int, 2> slab{ranks, 1};
  const std::string slab_misfit = misfit(slab, n);
  if (decomposition == Decomposition::slab || ranks == 1) {
    if (!slab_misfit.empty())
      throw InputError(fmt::format("no slab decomposition of {} x {} x {} over {} ranks: {}", n[0],
                                   n[1], n[2], ranks, slab_misfit));
    return slab;
  }
  if (decomposition == Decomposition::automatic && slab_misfit.empty()) return slab;
  std::array<int, 2> best{0, 0};
  std::string last;
  for (int p2 = 2; p2 <= ranks; ++p2) {
    if (ranks % p2 != 0) continue;
    const std::array<int, 2> g{ranks / p2, p2};
    last = misfit(g, n);
    if (!last.empty()) continue;
    if (best[0] == 0 || std::abs(g[0] - g[1]) < std::abs(best[0] - best[1])) best = g;
  }
  if (best[0] == 0)
    throw InputError(
        fmt::format("no {} decomposition of {} x {} x {} over {} ranks{}{}",
                    decomposition == Decomposition::pencil ? "pencil" : "slab or pencil", n[0],
                    n[1], n[2], ranks, last.empty() ? "" : ": ", last));
  return best;
}

DistributedFft::DistributedFft(MPI_Comm comm, std::array<std::int64_t, 3> n, const Options& options)
    : n_(n) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int a = 0; a < 3; ++a)
    if (n[a] < 1) throw InputError(fmt::format("FFT grid: N along axis {} is {}", a, n[a]));
  grid_ = choose_process_grid(size, n, options.decomposition, options.process_grid);
  const int p1 = rank / grid_[1], p2 = rank % grid_[1];
  MPI_Comm_split(comm, p1, p2, &row_);
  MPI_Comm_split(comm, p2, p1, &col_);

  const std::int64_t nzc = this->nzc();
  const auto xr = CartDecomposition::block_range(n[0], grid_[0], p1);
  const auto yr = CartDecomposition::block_range(n[1], grid_[1], p2);
  const auto zr = CartDecomposition::block_range(nzc, grid_[1], p2);
  const auto kyr = CartDecomposition::block_range(n[1], grid_[0], p1);
  const std::int64_t xl = xr[1] - xr[0], yl = yr[1] - yr[0], zl = zr[1] - zr[0],
                     kyl = kyr[1] - kyr[0];
  real_block_ = GridBlock{{xr[0], yr[0], 0}, {xl, yl, n[2]}};
  spectral_block_ = GridBlock{{0, kyr[0], zr[0]}, {n[0], kyl, zl}};
  zc_begin_ = zr[0];
  zc_extent_ = zl;

  const bool device_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, DevMemSpace>::accessible;
  std::string backend = options.backend;
  if (backend == "auto") backend = device_host ? "fftw3" : "cufft";
  if (backend == "fftw3") {
    if (!device_host)
      throw InputError("the fftw3 FFT backend needs host-accessible memory; this build runs on " +
                       std::string(DevExecSpace::name()) + " (use cufft)");
    backend_ = make_fftw_backend(DevExecSpace().concurrency(), options.measure);
  } else if (backend == "cufft") {
    backend_ = make_cufft_backend();
  } else {
    throw InputError("unknown FFT backend \"" + backend + "\" (auto, fftw3 or cufft)");
  }
  // One rank holds the whole grid: whole 3D plans, with no transpose, where the library has
  // them (FFTW; cuFFT has no plan with the spectral layout's strides).
  if (options.whole_plans && grid_[0] * grid_[1] == 1) {
    RealField real_scratch = make_real("fft::plan_real");
    SpectralField spectral_scratch = make_spectral("fft::plan_spectral");
    auto* r = real_scratch.data();
    auto* s = reinterpret_cast<double*>(spectral_scratch.data());
    whole_r2c_ = backend_->plan_3d(Kind::r2c, n, r, s);
    if (whole_r2c_) whole_c2r_ = backend_->plan_3d(Kind::c2r, n, s, r);
    if (whole_r2c_ && whole_c2r_) {
      c_ = SpectralField(Kokkos::ViewAllocateWithoutInitializing("fft::c"), nzc, n[1], n[0]);
      return;
    }
    whole_r2c_.reset();
    whole_c2r_.reset();
  }
  const MpiTransport transport = options.transport;

  auto ranges = [](std::int64_t total, int parts) {
    Ranges r;
    for (int q = 0; q < parts; ++q) {
      const auto b = CartDecomposition::block_range(total, parts, q);
      r.push_back({b[0], b[1] - b[0]});
    }
    return r;
  };
  const BlockLayout la{{xl, yl, nzc}, {0, 1, 2}};
  const BlockLayout lb{{xl, n[1], zl}, {0, 2, 1}};
  const BlockLayout lc{{n[0], kyl, zl}, {2, 1, 0}};
  const Ranges y_ranges = ranges(n[1], grid_[1]), z_ranges = ranges(nzc, grid_[1]);
  const Ranges x_ranges = ranges(n[0], grid_[0]), ky_ranges = ranges(n[1], grid_[0]);
  row_forward_ = std::make_unique<Transpose>(row_, la, lb, 1, 2, y_ranges, z_ranges, transport);
  row_backward_ = std::make_unique<Transpose>(row_, lb, la, 2, 1, z_ranges, y_ranges, transport);
  col_forward_ = std::make_unique<Transpose>(col_, lb, lc, 0, 1, x_ranges, ky_ranges, transport);
  col_backward_ = std::make_unique<Transpose>(col_, lc, lb, 1, 0, ky_ranges, x_ranges, transport);

  a_ = SpectralField(Kokkos::ViewAllocateWithoutInitializing("fft::a"), xl, yl, nzc);
  b_ = SpectralField(Kokkos::ViewAllocateWithoutInitializing("fft::b"), xl, zl, n[1]);
  c_ = SpectralField(Kokkos::ViewAllocateWithoutInitializing("fft::c"), zl, kyl, n[0]);
  // Plans are made on arrays of the sizes (and alignment) of those they will run on.
  {
    RealField real_scratch = make_real("fft::plan_real");
    SpectralField spectral_scratch = make_spectral("fft::plan_spectral");
    auto* r = real_scratch.data();
    auto* a = reinterpret_cast<double*>(a_.data());
    auto* b = reinterpret_cast<double*>(b_.data());
    auto* c = reinterpret_cast<double*>(c_.data());
    auto* s = reinterpret_cast<double*>(spectral_scratch.data());
    r2c_ = backend_->plan(Kind::r2c, {n[2], xl * yl}, r, a);
    c2r_ = backend_->plan(Kind::c2r, {n[2], xl * yl}, a, r);
    y_forward_ = backend_->plan(Kind::c2c_forward, {n[1], xl * zl}, b, b);
    y_backward_ = backend_->plan(Kind::c2c_backward, {n[1], xl * zl}, b, b);
    x_forward_ = backend_->plan(Kind::c2c_forward, {n[0], zl * kyl}, s, s);
    x_backward_ = backend_->plan(Kind::c2c_backward, {n[0], zl * kyl}, s, c);
  }
}

DistributedFft::~DistributedFft() {
  if (row_ != MPI_COMM_NULL) MPI_Comm_free(&row_);
  if (col_ != MPI_COMM_NULL) MPI_Comm_free(&col_);
}

std::string DistributedFft::backend_name() const { return backend_->name(); }

std::string DistributedFft::describe() const {
  return fmt::format("{} {} x {} ({}{})", to_string(decomposition()), grid_[0], grid_[1],
                     backend_->name(), whole_r2c_ ? ", whole 3D plans" : "");
}

RealField DistributedFft::make_real(const std::string& label) const {
  return RealField(label, real_block_.extent[0], real_block_.extent[1], real_block_.extent[2]);
}

SpectralField DistributedFft::make_spectral(const std::string& label) const {
  return SpectralField(label, spectral_block_.extent[2], spectral_block_.extent[1],
                       spectral_block_.extent[0]);
}

void DistributedFft::run_plan(LocalPlan& plan, double* in, double* out) {
  Kokkos::Timer t;
  plan.execute(in, out);
  backend_->synchronize();
  stats_.fft_seconds += t.seconds();
}

void DistributedFft::forward(const RealField& in, const SpectralField& out) {
  Kokkos::fence();
  if (whole_r2c_) {
    run_plan(*whole_r2c_, const_cast<double*>(in.data()), reinterpret_cast<double*>(out.data()));
    ++stats_.forward_calls;
    return;
  }
  auto* a = reinterpret_cast<double*>(a_.data());
  auto* b = reinterpret_cast<double*>(b_.data());
  auto* o = reinterpret_cast<double*>(out.data());
  run_plan(*r2c_, const_cast<double*>(in.data()), a);
  Kokkos::Timer t;
  row_forward_->execute(a_.data(), b_.data());
  stats_.transpose_seconds += t.seconds();
  run_plan(*y_forward_, b, b);
  t.reset();
  col_forward_->execute(b_.data(), out.data());
  stats_.transpose_seconds += t.seconds();
  run_plan(*x_forward_, o, o);
  ++stats_.forward_calls;
}

void DistributedFft::backward(const SpectralField& in, const RealField& out) {
  Kokkos::fence();
  if (whole_c2r_) {
    // A multi-dimensional c2r transform overwrites its input: it runs on a copy.
    Kokkos::Timer t;
    Kokkos::deep_copy(c_, in);
    stats_.transpose_seconds += t.seconds();
    run_plan(*whole_c2r_, reinterpret_cast<double*>(c_.data()), out.data());
    ++stats_.backward_calls;
    return;
  }
  auto* a = reinterpret_cast<double*>(a_.data());
  auto* b = reinterpret_cast<double*>(b_.data());
  auto* c = reinterpret_cast<double*>(c_.data());
  run_plan(*x_backward_, reinterpret_cast<double*>(in.data()), c);
  Kokkos::Timer t;
  col_backward_->execute(c_.data(), b_.data());
  stats_.transpose_seconds += t.seconds();
  run_plan(*y_backward_, b, b);
  t.reset();
  row_backward_->execute(b_.data(), a_.data());
  stats_.transpose_seconds += t.seconds();
  run_plan(*c2r_, a, out.data());
  ++stats_.backward_calls;
}

}  // namespace stratus::fft
