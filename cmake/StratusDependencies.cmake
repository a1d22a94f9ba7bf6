# Every external dependency of Stratus, found once. Backends come from the Kokkos install:
# Stratus has no CUDA/OpenMP switch of its own.

find_package(Kokkos 3.4 REQUIRED)
set(STRATUS_KOKKOS_BACKENDS "")
foreach(backend IN ITEMS CUDA HIP SYCL OPENMPTARGET OPENMP THREADS SERIAL)
  kokkos_check(DEVICES ${backend} RETURN_VALUE _stratus_has_${backend})
  if(_stratus_has_${backend})
    list(APPEND STRATUS_KOKKOS_BACKENDS ${backend})
  endif()
endforeach()
message(STATUS "Stratus: Kokkos ${Kokkos_VERSION} with backends: ${STRATUS_KOKKOS_BACKENDS}")

find_package(MPI 3.0 REQUIRED COMPONENTS C)

set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 1.10 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "Stratus needs a parallel (MPI) HDF5; found a serial one at ${HDF5_INCLUDE_DIRS}. "
                      "On Debian: apt-get install libhdf5-openmpi-dev")
endif()
find_package(FFTW3 REQUIRED)
find_package(tomlplusplus 3 REQUIRED)
find_package(CLI11 2 REQUIRED)
find_package(fmt 8 REQUIRED)
