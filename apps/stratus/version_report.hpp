// The text of `stratus --version`.
#pragma once

#include <string>

namespace stratus::app {

/// Stratus version and git revision, Kokkos version and compiled-in backends, MPI, HDF5 and
/// FFTW versions, compiler.
std::string version_report();

}  // namespace stratus::app
