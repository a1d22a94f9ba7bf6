// The FFTW 3 backend: batched 1D transforms of contiguous lines with fftw_plan_many_*, planned
// once, executed with the new-array interface on the arrays of each call.
#include "stratus/fft/local_fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>

namespace stratus::fft {

namespace {

/// FFTW's planner is global and not thread-safe: plans are made under one lock, and its
/// threads are initialised once per process.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

/// Threads available to one plan (1 without FFTW's threads library).
int init_threads_once(int wanted) {
#ifdef STRATUS_FFTW_THREADS
  static const bool ok = fftw_init_threads() != 0;
  if (!ok) throw std::runtime_error("fftw3: fftw_init_threads failed");
  return wanted < 1 ? 1 : wanted;
#else
  (void)wanted;
  return 1;
#endif
}

class FftwPlan final : public LocalPlan {
 public:
  FftwPlan(fftw_plan plan, Kind kind, double* in, double* out)
      : plan_(plan),
        kind_(kind),
        in_place_(in == out),
        in_align_(fftw_alignment_of(in)),
        out_align_(fftw_alignment_of(out)) {}
  ~FftwPlan() override {
    const std::lock_guard<std::mutex> lock(planner_mutex());
    fftw_destroy_plan(plan_);
  }
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;

  void execute(double* in, double* out) override {
    if ((in == out) != in_place_ || fftw_alignment_of(in) != in_align_ ||
        fftw_alignment_of(out) != out_align_)
      throw std::logic_error("fftw3: plan executed on arrays of another alignment or placement");
    switch (kind_) {
      case Kind::r2c:
        fftw_execute_dft_r2c(plan_, in, reinterpret_cast<fftw_complex*>(out));
        break;
      case Kind::c2r:
        fftw_execute_dft_c2r(plan_, reinterpret_cast<fftw_complex*>(in), out);
        break;
      default:
        fftw_execute_dft(plan_, reinterpret_cast<fftw_complex*>(in),
                         reinterpret_cast<fftw_complex*>(out));
    }
  }

 private:
  fftw_plan plan_;
  Kind kind_;
  bool in_place_;
  int in_align_, out_align_;
};

class FftwBackend final : public LocalBackend {
 public:
  FftwBackend(int threads, bool measure)
      : threads_(init_threads_once(threads)), measure_(measure) {}
  [[nodiscard]] std::string name() const override {
    return "fftw3 (" + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads") +
           (measure_ ? ", measured plans)" : ")");
  }

  std::unique_ptr<LocalPlan> plan(Kind kind, LineBatch lines, double* in, double* out) override {
    const std::lock_guard<std::mutex> lock(planner_mutex());
    threads_for(lines.n * lines.batch);
    const int n = static_cast<int>(lines.n);
    const int howmany = static_cast<int>(lines.batch);
    const int nc = n / 2 + 1;
    const unsigned flags = measure_ ? FFTW_MEASURE : FFTW_ESTIMATE;
    fftw_plan p = nullptr;
    auto* cin = reinterpret_cast<fftw_complex*>(in);
    auto* cout = reinterpret_cast<fftw_complex*>(out);
    switch (kind) {
      case Kind::r2c:
        p = fftw_plan_many_dft_r2c(1, &n, howmany, in, nullptr, 1, n, cout, nullptr, 1, nc, flags);
        break;
      case Kind::c2r:
        p = fftw_plan_many_dft_c2r(1, &n, howmany, cin, nullptr, 1, nc, out, nullptr, 1, n, flags);
        break;
      case Kind::c2c_forward:
      case Kind::c2c_backward:
        p = fftw_plan_many_dft(1, &n, howmany, cin, nullptr, 1, n, cout, nullptr, 1, n,
                               kind == Kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        break;
    }
    if (p == nullptr)
      throw std::runtime_error("fftw3: no plan for " + std::to_string(howmany) + " lines of " +
                               std::to_string(n));
    return std::make_unique<FftwPlan>(p, kind, in, out);
  }

  std::unique_ptr<LocalPlan> plan_3d(Kind kind, std::array<std::int64_t, 3> n, double* in,
                                     double* out) override {
    if (kind != Kind::r2c && kind != Kind::c2r) return nullptr;
    const std::lock_guard<std::mutex> lock(planner_mutex());
    threads_for(n[0] * n[1] * n[2]);
    // One guru plan: the real array's strides (z fastest) on one side, the spectral layout's
    // (kx fastest, then ky, then kz) on the other; the last dimension is the halved one.
    const int nx = static_cast<int>(n[0]), ny = static_cast<int>(n[1]), nz = static_cast<int>(n[2]);
    const int real_stride[3] = {ny * nz, nz, 1};
    const int spectral_stride[3] = {1, nx, nx * ny};
    fftw_iodim dims[3];
    for (int d = 0; d < 3; ++d) {
      dims[d].n = d == 0 ? nx : d == 1 ? ny : nz;
      dims[d].is = kind == Kind::r2c ? real_stride[d] : spectral_stride[d];
      dims[d].os = kind == Kind::r2c ? spectral_stride[d] : real_stride[d];
    }
    const unsigned flags = measure_ ? FFTW_MEASURE : FFTW_ESTIMATE;
    fftw_plan p = kind == Kind::r2c
                      ? fftw_plan_guru_dft_r2c(3, dims, 0, nullptr, in,
                                               reinterpret_cast<fftw_complex*>(out), flags)
                      : fftw_plan_guru_dft_c2r(3, dims, 0, nullptr,
                                               reinterpret_cast<fftw_complex*>(in), out, flags);
    if (p == nullptr) return nullptr;
    return std::make_unique<FftwPlan>(p, kind, in, out);
  }

  std::unique_ptr<LocalPlan> plan_strided(Kind kind, Stride line, std::array<Stride, 2> loops,
                                          double* in, double* out,
                                          bool preserve_input = true) override {
    const std::lock_guard<std::mutex> lock(planner_mutex());
    threads_for(line.n * loops[0].n * loops[1].n);
    auto dim = [](const Stride& s) {
      return fftw_iodim{static_cast<int>(s.n), static_cast<int>(s.in), static_cast<int>(s.out)};
    };
    const fftw_iodim d = dim(line);
    const fftw_iodim l[2] = {dim(loops[0]), dim(loops[1])};
    const unsigned flags = measure_ ? FFTW_MEASURE : FFTW_ESTIMATE;
    auto* cin = reinterpret_cast<fftw_complex*>(in);
    auto* cout = reinterpret_cast<fftw_complex*>(out);
    fftw_plan p = nullptr;
    switch (kind) {
      case Kind::r2c:
        p = fftw_plan_guru_dft_r2c(1, &d, 2, l, in, cout, flags);
        break;
      case Kind::c2r:
        p = fftw_plan_guru_dft_c2r(1, &d, 2, l, cin, out,
                                   preserve_input ? flags | FFTW_PRESERVE_INPUT : flags);
        break;
      case Kind::c2c_forward:
      case Kind::c2c_backward:
        p = fftw_plan_guru_dft(1, &d, 2, l, cin, cout,
                               kind == Kind::c2c_forward ? FFTW_FORWARD : FFTW_BACKWARD, flags);
        break;
    }
    if (p == nullptr) return nullptr;
    return std::make_unique<FftwPlan>(p, kind, in, out);
  }

  std::unique_ptr<LocalPlan> plan_natural_3d(Kind kind, std::array<std::int64_t, 3> n, double* in,
                                             double* out) override {
    if (kind != Kind::r2c && kind != Kind::c2r) return nullptr;
    const std::lock_guard<std::mutex> lock(planner_mutex());
    threads_for(n[0] * n[1] * n[2]);
    const int nx = static_cast<int>(n[0]), ny = static_cast<int>(n[1]), nz = static_cast<int>(n[2]);
    const unsigned flags = measure_ ? FFTW_MEASURE : FFTW_ESTIMATE;
    fftw_plan p =
        kind == Kind::r2c
            ? fftw_plan_dft_r2c_3d(nx, ny, nz, in, reinterpret_cast<fftw_complex*>(out), flags)
            : fftw_plan_dft_c2r_3d(nx, ny, nz, reinterpret_cast<fftw_complex*>(in), out, flags);
    if (p == nullptr) return nullptr;
    return std::make_unique<FftwPlan>(p, kind, in, out);
  }

 private:
  /// Threads of the next plan: threads only pay off on large transforms, about 32k points per
  /// thread at least. Called under the planner lock.
  void threads_for(std::int64_t points) const {
#ifdef STRATUS_FFTW_THREADS
    const int useful = static_cast<int>(std::max<std::int64_t>(1, points / 32768));
    fftw_plan_with_nthreads(std::min(threads_, useful));
#else
    (void)points;
#endif
  }

  int threads_;
  bool measure_;
};

}  // namespace

std::unique_ptr<LocalBackend> make_fftw_backend(int threads, bool measure) {
  return std::make_unique<FftwBackend>(threads, measure);
}

std::unique_ptr<LocalPlan> make_fftw_r2c_3d(std::array<std::int64_t, 3> n, double* in,
                                            double* out) {
  const std::lock_guard<std::mutex> lock(planner_mutex());
#ifdef STRATUS_FFTW_THREADS
  init_threads_once(1);
  fftw_plan_with_nthreads(1);
#endif
  fftw_plan p =
      fftw_plan_dft_r2c_3d(static_cast<int>(n[2]), static_cast<int>(n[1]), static_cast<int>(n[0]),
                           in, reinterpret_cast<fftw_complex*>(out), FFTW_ESTIMATE);
  if (p == nullptr)
    throw std::runtime_error("fftw3: no 3D r2c plan for " + std::to_string(n[0]) + " x " +
                             std::to_string(n[1]) + " x " + std::to_string(n[2]) + " points");
  return std::make_unique<FftwPlan>(p, Kind::r2c, in, out);
}

std::string fftw_version() { return ::fftw_version; }

}  // namespace stratus::fft
