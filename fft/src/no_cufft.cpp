// Builds without the CUDA backend of Kokkos have no cuFFT: asking for it is a clear error.
#include "stratus/fft/local_fft.hpp"

#include <stdexcept>

namespace stratus::fft {

std::unique_ptr<LocalBackend> make_cufft_backend() {
  throw std::runtime_error(
      "the cufft FFT backend is only in builds with the CUDA backend of Kokkos; this build has "
      "fftw3");
}

}  // namespace stratus::fft
