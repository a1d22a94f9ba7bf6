// The cuFFT backend: batched 1D transforms of contiguous lines (cufftMakePlanMany64), planned
// once, executed on the arrays of each call. Compiled into Stratus::fft only when Kokkos has
// its CUDA backend; CI compiles it on its own with nvcc (test fft.cufft_backend_compiles) so
// that it cannot rot on machines without a GPU.
#include "stratus/fft/local_fft.hpp"

#include <cuda_runtime.h>
#include <cufft.h>

#include <stdexcept>
#include <string>

namespace stratus::fft {

namespace {

void check(cufftResult r, const char* what) {
  if (r != CUFFT_SUCCESS)
    throw std::runtime_error(std::string("cufft: ") + what + " failed (cufftResult " +
                             std::to_string(static_cast<int>(r)) + ")");
}

class CufftPlan final : public LocalPlan {
 public:
  CufftPlan(Kind kind, LineBatch lines) : kind_(kind) {
    check(cufftCreate(&plan_), "cufftCreate");
    long long n = lines.n;
    const long long nc = lines.n / 2 + 1;
    long long idist = n, odist = n;
    cufftType type = CUFFT_Z2Z;
    if (kind == Kind::r2c) {
      type = CUFFT_D2Z;
      odist = nc;
    } else if (kind == Kind::c2r) {
      type = CUFFT_Z2D;
      idist = nc;
    }
    std::size_t work = 0;
    check(cufftMakePlanMany64(plan_, 1, &n, nullptr, 1, idist, nullptr, 1, odist, type, lines.batch,
                              &work),
          "cufftMakePlanMany64");
  }
  ~CufftPlan() override { cufftDestroy(plan_); }
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;

  void execute(double* in, double* out) override {
    auto* cin = reinterpret_cast<cufftDoubleComplex*>(in);
    auto* cout = reinterpret_cast<cufftDoubleComplex*>(out);
    switch (kind_) {
      case Kind::r2c:
        check(cufftExecD2Z(plan_, in, cout), "cufftExecD2Z");
        break;
      case Kind::c2r:
        check(cufftExecZ2D(plan_, cin, out), "cufftExecZ2D");
        break;
      case Kind::c2c_forward:
        check(cufftExecZ2Z(plan_, cin, cout, CUFFT_FORWARD), "cufftExecZ2Z");
        break;
      case Kind::c2c_backward:
        check(cufftExecZ2Z(plan_, cin, cout, CUFFT_INVERSE), "cufftExecZ2Z");
        break;
    }
  }

 private:
  cufftHandle plan_ = 0;
  Kind kind_;
};

class CufftBackend final : public LocalBackend {
 public:
  [[nodiscard]] std::string name() const override {
    int version = 0;
    cufftGetVersion(&version);
    return "cufft " + std::to_string(version);
  }
  std::unique_ptr<LocalPlan> plan(Kind kind, LineBatch lines, double*, double*) override {
    return std::make_unique<CufftPlan>(kind, lines);
  }
  void synchronize() override {
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
      throw std::runtime_error(std::string("cufft: cudaDeviceSynchronize: ") +
                               cudaGetErrorString(e));
  }
};

}  // namespace

std::unique_ptr<LocalBackend> make_cufft_backend() { return std::make_unique<CufftBackend>(); }

}  // namespace stratus::fft
