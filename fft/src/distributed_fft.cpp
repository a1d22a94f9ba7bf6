#include "stratus/fft/distributed_fft.hpp"

#include "stratus/core/error.hpp"
#include "transpose.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

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

// Pruned transforms on one rank. Scratch arrays X and Y are [x][y][kz] (kz fastest); the
// spectral layout S is [kz][ky][kx]. Only the nzk planes kz <= Kz and the two ranges of ky
// with |ky| <= Ky are transformed along x and y; the z transform covers every (x, y) line.
//   backward: S -x lines (kept kz, ky)-> X -y lines (kept kz)-> Y -c2r along z-> real
//   forward:  real -r2c along z-> Y -y lines (kept kz), in place-> Y -x lines (kept)-> S
// X is written only at the kept lines, so its other lines stay zero; Y's planes kz > Kz are
// written by the forward r2c and set to zero again before the next backward c2r reads them.
struct DistributedFft::Pruned {
  std::int64_t nzk = 0;                    // kept kz planes
  std::array<std::int64_t, 2> ky_begin{};  // the ranges of kept ky: 0.., ..Ny-1
  std::array<std::int64_t, 2> ky_count{};
  std::array<std::unique_ptr<LocalPlan>, 2> x_backward, x_forward;  // one per ky range
  std::unique_ptr<LocalPlan> y_backward, y_forward, z_c2r, z_r2c;
  SpectralField lines, planes;  // X and Y
  bool planes_dirty = false;    // Y holds non-zero planes kz > Kz
  // fused_pointwise(): per field, F[x][kz < nzk][ky] (entries of dropped ky zero), and per
  // host thread one plane of spectral lines P[y][kz] (the y transforms' output), one Q (the
  // r2c output) and the fields' real planes, each block aligned to 64 bytes.
  std::vector<SpectralField> fused;
  std::array<std::unique_ptr<LocalPlan>, 2> fx_backward, fx_forward;       // x lines, to/from F
  std::unique_ptr<LocalPlan> fy_backward, fy_forward, fz_c2r, fz_r2c;      // one plane each
  Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> scratch;  // per thread
  std::int64_t p_offset = 0, q_offset = 0, r_offset = 0, r_stride = 0;     // in doubles
};

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
      if (options.truncation[0] >= 0 && options.truncation[1] >= 0 && options.truncation[2] >= 0)
        make_pruned_plans(options.truncation);
      // The copy a whole c2r runs on: Y of the pruned plans where there are some (its planes
      // are set to zero again before a pruned c2r reads them).
      c_ = pruned_
               ? SpectralField(pruned_->planes.data(), nzc, n[1], n[0])
               : SpectralField(Kokkos::ViewAllocateWithoutInitializing("fft::c"), nzc, n[1], n[0]);
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

void DistributedFft::make_pruned_plans(const std::array<std::int64_t, 3>& kmax) {
  const std::int64_t nx = n_[0], ny = n_[1], nz = n_[2], nc = nzc();
  auto p = std::make_unique<Pruned>();
  p->nzk = std::min(kmax[2] + 1, nc);
  const std::int64_t low_end = std::min(kmax[1] + 1, ny);
  const std::int64_t high_begin = std::max(ny - kmax[1], low_end);
  p->ky_begin = {0, high_begin};
  p->ky_count = {low_end, ny - high_begin};
  // X is made by the first truncated backward (a fused solver never needs it); Y serves as
  // the copy of the whole c2r too.
  p->planes = SpectralField("fft::pruned_y", nx, ny, nc);
  SpectralField lines_for_planning("fft::pruned_x", nx, ny, nc);
  RealField real_scratch = make_real("fft::plan_real");
  SpectralField spectral_scratch = make_spectral("fft::plan_spectral");
  auto* r = real_scratch.data();
  auto* s = reinterpret_cast<double*>(spectral_scratch.data());
  auto* x = reinterpret_cast<double*>(lines_for_planning.data());
  auto* y = reinterpret_cast<double*>(p->planes.data());
  const std::int64_t xy = ny * nc;  // distance between x planes of X and Y
  for (int q = 0; q < 2; ++q) {
    if (p->ky_count[q] == 0) continue;
    const std::int64_t so = 2 * p->ky_begin[q] * nx, yo = 2 * p->ky_begin[q] * nc;
    p->x_backward[q] = backend_->plan_strided(
        Kind::c2c_backward, {nx, 1, xy},
        {Stride{p->nzk, nx * ny, 1}, Stride{p->ky_count[q], nx, nc}}, s + so, x + yo);
    p->x_forward[q] = backend_->plan_strided(
        Kind::c2c_forward, {nx, xy, 1},
        {Stride{p->nzk, 1, nx * ny}, Stride{p->ky_count[q], nc, nx}}, y + yo, s + so);
    if (!p->x_backward[q] || !p->x_forward[q]) return;
  }
  const std::array<Stride, 2> y_loops{Stride{nx, xy, xy}, Stride{p->nzk, 1, 1}};
  p->y_backward = backend_->plan_strided(Kind::c2c_backward, {ny, nc, nc}, y_loops, x, y);
  p->y_forward = backend_->plan_strided(Kind::c2c_forward, {ny, nc, nc}, y_loops, y, y);
  p->z_c2r =
      backend_->plan_strided(Kind::c2r, {nz, 1, 1}, {Stride{nx * ny, nc, nz}, Stride{}}, y, r);
  p->z_r2c =
      backend_->plan_strided(Kind::r2c, {nz, 1, 1}, {Stride{nx * ny, nz, nc}, Stride{}}, r, y);
  if (!p->y_backward || !p->y_forward || !p->z_c2r || !p->z_r2c) return;
  // Planning may have written Y: every line of it starts at zero (X, made on first use, too).
  Kokkos::deep_copy(p->planes, Complex(0.0, 0.0));
  pruned_ = std::move(p);
}

void DistributedFft::make_fused_plans(int fields) {
  Pruned& p = *pruned_;
  const std::int64_t nx = n_[0], ny = n_[1], nz = n_[2], nc = nzc(), nzk = p.nzk;
  for (auto i = static_cast<int>(p.fused.size()); i < fields; ++i)
    p.fused.emplace_back("fft::fused_lines", nx, nzk, ny);
  if (p.fz_c2r) return;
  auto round64 = [](std::int64_t doubles) { return (doubles + 7) / 8 * 8; };
  p.p_offset = 0;
  p.q_offset = round64(2 * ny * nc);
  p.r_offset = p.q_offset + round64(2 * ny * nc);
  p.r_stride = round64(ny * nz);
  const int threads = HostExecSpace().concurrency();
  p.scratch = decltype(p.scratch)("fft::fused_planes", threads, p.r_offset + 6 * p.r_stride);
  SpectralField spectral_scratch = make_spectral("fft::plan_spectral");
  auto* s = reinterpret_cast<double*>(spectral_scratch.data());
  auto* f = reinterpret_cast<double*>(p.fused[0].data());
  double* base = p.scratch.data();
  double *pp = base + p.p_offset, *qq = base + p.q_offset, *rr = base + p.r_offset;
  const std::int64_t fxy = ny * nzk;  // distance between x planes of F
  for (int q = 0; q < 2; ++q) {
    if (p.ky_count[q] == 0) continue;
    const std::int64_t so = 2 * p.ky_begin[q] * nx, fo = 2 * p.ky_begin[q];
    p.fx_backward[q] = backend_->plan_strided(
        Kind::c2c_backward, {nx, 1, fxy}, {Stride{nzk, nx * ny, ny}, Stride{p.ky_count[q], nx, 1}},
        s + so, f + fo);
    p.fx_forward[q] = backend_->plan_strided(
        Kind::c2c_forward, {nx, fxy, 1}, {Stride{nzk, ny, nx * ny}, Stride{p.ky_count[q], 1, nx}},
        f + fo, s + so);
  }
  p.fy_backward = backend_->plan_strided(Kind::c2c_backward, {ny, 1, nc},
                                         {Stride{nzk, ny, 1}, Stride{}}, f, pp);
  p.fy_forward =
      backend_->plan_strided(Kind::c2c_forward, {ny, nc, 1}, {Stride{nzk, 1, ny}, Stride{}}, qq, f);
  // P is scratch: its c2r may overwrite it (the planes kz > Kz are set to zero before each).
  p.fz_c2r =
      backend_->plan_strided(Kind::c2r, {nz, 1, 1}, {Stride{ny, nc, nz}, Stride{}}, pp, rr, false);
  p.fz_r2c = backend_->plan_strided(Kind::r2c, {nz, 1, 1}, {Stride{ny, nz, nc}, Stride{}}, rr, qq);
  if (!p.fy_backward || !p.fy_forward || !p.fz_c2r || !p.fz_r2c)
    throw std::runtime_error("fft: no plans for the fused transforms");
  for (int q = 0; q < 2; ++q)
    if (p.ky_count[q] > 0 && (!p.fx_backward[q] || !p.fx_forward[q]))
      throw std::runtime_error("fft: no plans for the fused transforms");
  // Planning may have written the arrays: the entries of dropped ky of F are zero from here
  // on (only kept ones are written, or set to zero again).
  for (auto& a : p.fused) Kokkos::deep_copy(a, Complex(0.0, 0.0));
  Kokkos::deep_copy(p.scratch, 0.0);
}

double DistributedFft::fused_pointwise(const SpectralField* in, int n_in, const SpectralField* out,
                                       int n_out, const PlaneOp& op) {
  if (!fuses() || n_in > 6 || n_out > n_in || n_out < 1)
    throw std::logic_error("fft: fused_pointwise() called where it does not run fused");
  Kokkos::fence();
  Pruned& p = *pruned_;
  make_fused_plans(n_in);
  const std::int64_t nx = n_[0], ny = n_[1], nc = nzc(), nzk = p.nzk;
  Kokkos::Timer t;
  for (int f = 0; f < n_in; ++f) {
    auto* s = reinterpret_cast<double*>(in[f].data());
    auto* x = reinterpret_cast<double*>(p.fused[f].data());
    for (int q = 0; q < 2; ++q)
      if (p.fx_backward[q])
        p.fx_backward[q]->execute(s + 2 * p.ky_begin[q] * nx, x + 2 * p.ky_begin[q]);
  }
  // Each host thread takes a contiguous block of x planes.
  const int threads = static_cast<int>(p.scratch.extent(0));
  const std::int64_t plane = 2 * ny * nzk;   // doubles per x plane of F
  const std::int64_t tail = 2 * (nc - nzk);  // doubles of kz > Kz in a line of P
  const std::array<std::int64_t, 2> ky_end{p.ky_begin[0] + p.ky_count[0],
                                           p.ky_begin[1] + p.ky_count[1]};
  double result = 0;
  Kokkos::parallel_reduce(
      "fft::fused_planes", Kokkos::RangePolicy<HostExecSpace>(0, threads),
      [&](const int thread, double& best) {
        double* base = &p.scratch(thread, 0);
        double *pp = base + p.p_offset, *qq = base + p.q_offset;
        double* fields[6];
        for (int f = 0; f < n_in; ++f) fields[f] = base + p.r_offset + f * p.r_stride;
        const std::int64_t x0 = nx * thread / threads, x1 = nx * (thread + 1) / threads;
        for (std::int64_t x = x0; x < x1; ++x) {
          for (int f = 0; f < n_in; ++f) {
            p.fy_backward->execute(reinterpret_cast<double*>(p.fused[f].data()) + x * plane, pp);
            for (std::int64_t y = 0; y < ny && tail > 0; ++y)
              std::fill_n(pp + 2 * (y * nc + nzk), tail, 0.0);
            p.fz_c2r->execute(pp, fields[f]);
          }
          const double v = op(fields, x);
          best = v > best ? v : best;
          for (int f = 0; f < n_out; ++f) {
            auto* row = reinterpret_cast<double*>(p.fused[f].data()) + x * plane;
            p.fz_r2c->execute(fields[f], qq);
            p.fy_forward->execute(qq, row);
            // Entries of dropped ky go back to zero for the next backward y transform.
            for (std::int64_t kz = 0; kz < nzk; ++kz) {
              double* line = row + 2 * kz * ny;
              std::fill(line + 2 * ky_end[0], line + 2 * p.ky_begin[1], 0.0);
              std::fill(line + 2 * ky_end[1], line + 2 * ny, 0.0);
            }
          }
        }
      },
      Kokkos::Max<double>(result));
  for (int f = 0; f < n_out; ++f) {
    auto* x = reinterpret_cast<double*>(p.fused[f].data());
    auto* o = reinterpret_cast<double*>(out[f].data());
    for (int q = 0; q < 2; ++q)
      if (p.fx_forward[q])
        p.fx_forward[q]->execute(x + 2 * p.ky_begin[q], o + 2 * p.ky_begin[q] * nx);
  }
  stats_.fft_seconds += t.seconds();
  stats_.backward_calls += n_in;
  stats_.forward_calls += n_out;
  return result;
}

DistributedFft::~DistributedFft() {
  if (row_ != MPI_COMM_NULL) MPI_Comm_free(&row_);
  if (col_ != MPI_COMM_NULL) MPI_Comm_free(&col_);
}

std::string DistributedFft::backend_name() const { return backend_->name(); }

std::string DistributedFft::describe() const {
  return fmt::format("{} {} x {} ({}{}{})", to_string(decomposition()), grid_[0], grid_[1],
                     backend_->name(), whole_r2c_ ? ", whole 3D plans" : "",
                     pruned_ ? ", dealiased lines skipped" : "");
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
    if (pruned_) pruned_->planes_dirty = pruned_->nzk < nzc();
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

double DistributedFft::time_library_3d(int forward, int backward, int repeats) {
  if (grid_[0] * grid_[1] != 1) return -1;
  // Zeros: the time of an FFT does not depend on the values, and zeros never grow into
  // overflows or denormals over repeated unnormalised transforms.
  RealField real = make_real("fft::floor_real");
  SpectralField spectral("fft::floor_spectral", n_[0], n_[1], nzc());
  auto* r = real.data();
  auto* s = reinterpret_cast<double*>(spectral.data());
  auto r2c = backend_->plan_natural_3d(Kind::r2c, n_, r, s);
  auto c2r = r2c ? backend_->plan_natural_3d(Kind::c2r, n_, s, r) : nullptr;
  if (!r2c || !c2r) return -1;
  Kokkos::deep_copy(real, 0.0);
  Kokkos::deep_copy(spectral, Complex(0.0, 0.0));
  Kokkos::Timer t;
  for (int i = 0; i < repeats; ++i) {
    for (int b = 0; b < backward; ++b) c2r->execute(s, r);
    for (int f = 0; f < forward; ++f) r2c->execute(r, s);
  }
  backend_->synchronize();
  return t.seconds();
}

void DistributedFft::forward_truncated(const RealField& in, const SpectralField& out) {
  if (!pruned_) {
    forward(in, out);
    return;
  }
  Kokkos::fence();
  Pruned& p = *pruned_;
  auto* y = reinterpret_cast<double*>(p.planes.data());
  auto* o = reinterpret_cast<double*>(out.data());
  run_plan(*p.z_r2c, const_cast<double*>(in.data()), y);
  p.planes_dirty = p.nzk < nzc();
  run_plan(*p.y_forward, y, y);
  for (int q = 0; q < 2; ++q)
    if (p.x_forward[q])
      run_plan(*p.x_forward[q], y + 2 * p.ky_begin[q] * nzc(), o + 2 * p.ky_begin[q] * n_[0]);
  ++stats_.forward_calls;
}

void DistributedFft::backward_truncated(const SpectralField& in, const RealField& out) {
  if (!pruned_) {
    backward(in, out);
    return;
  }
  Kokkos::fence();
  Pruned& p = *pruned_;
  if (p.lines.size() == 0) p.lines = SpectralField("fft::pruned_x", n_[0], n_[1], nzc());
  auto* s = reinterpret_cast<double*>(in.data());
  auto* x = reinterpret_cast<double*>(p.lines.data());
  auto* y = reinterpret_cast<double*>(p.planes.data());
  for (int q = 0; q < 2; ++q)
    if (p.x_backward[q])
      run_plan(*p.x_backward[q], s + 2 * p.ky_begin[q] * n_[0], x + 2 * p.ky_begin[q] * nzc());
  run_plan(*p.y_backward, x, y);
  if (p.planes_dirty) {
    // The planes kz > Kz that the last forward r2c wrote are zero again for the c2r.
    Kokkos::Timer t;
    const SpectralField planes = p.planes;
    const std::int64_t nzk = p.nzk, nc = nzc();
    Kokkos::parallel_for(
        "fft::zero_dropped_planes",
        Kokkos::MDRangePolicy<DevExecSpace, Kokkos::Rank<2>>({0, 0}, {n_[0], n_[1]}),
        KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t j) {
          for (std::int64_t k = nzk; k < nc; ++k) planes(i, j, k) = Complex(0.0, 0.0);
        });
    Kokkos::fence();
    p.planes_dirty = false;
    stats_.transpose_seconds += t.seconds();
  }
  run_plan(*p.z_c2r, y, out.data());
  ++stats_.backward_calls;
}

}  // namespace stratus::fft
