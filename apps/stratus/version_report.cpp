#include "version_report.hpp"

#include "stratus/core/device.hpp"
#include "stratus/core/text.hpp"
#include "stratus/core/version.hpp"
#include "stratus/fft/local_fft.hpp"
#include "stratus/io/h5file.hpp"

#include <fmt/format.h>

namespace stratus::app {

extern const char* const kBuiltCpuFeatures;  // cpu_features.cpp

std::string version_report() {
  std::string compiler;
#if defined(__clang__)
  compiler = fmt::format("Clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  compiler = fmt::format("GCC {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  compiler = "unknown compiler";
#endif
  return fmt::format(
      "stratus {} (git {})\n"
      "Kokkos {}, backends: {} (kernels run on {})\n"
      "MPI: {}\n"
      "HDF5 {} (parallel)\n"
      "FFTW {}\n"
      "compiler: {}, C++{}\n"
      "host instruction sets beyond the baseline:{}\n",
      stratus_version(), git_revision(), kokkos_version(), join(kokkos_backends()),
      kokkos_default_space(), mpi_library_version(), io::hdf5_version(), fft::fftw_version(),
      compiler, __cplusplus / 100 % 100, *kBuiltCpuFeatures != '\0' ? kBuiltCpuFeatures : " none");
}

}  // namespace stratus::app
