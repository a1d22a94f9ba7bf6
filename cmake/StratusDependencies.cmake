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

# The device floor: only targets that link Kokkos (Stratus::base and what builds on it) are
# device code. With a CUDA Kokkos, g++ stays CMAKE_CXX_COMPILER and Kokkos's launcher sends
# exactly those targets through nvcc_wrapper (they carry -DKOKKOS_DEPENDENCE); decks, the CLI,
# HDF5, logging and error text are compiled by the host compiler.
set(STRATUS_DEVICE_COMPILE_DEFINITIONS "")
# GCC 12.2 to 12.4 skip the constexpr constructor of Kokkos's SharedAllocationTracker inside the
# mdspan-based Views of Kokkos 4.5 to 4.6.x (kokkos/kokkos#8187, fixed in 4.7 by #8223): every
# default-constructed View then crashes when it is assigned or destroyed. Building the Views
# without [[no_unique_address]] members (what mdspan already does under nvcc) avoids it;
# tools/setup.sh builds its Kokkos with the same definitions, so both sides agree.
set(STRATUS_KOKKOS_GCC12_DEFINITIONS MDSPAN_IMPL_USE_ATTRIBUTE_NO_UNIQUE_ADDRESS=1 MDSPAN_IMPL_NO_UNIQUE_ADDRESS=)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12.2
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 12.5
   AND Kokkos_VERSION VERSION_GREATER_EQUAL 4.5 AND Kokkos_VERSION VERSION_LESS 4.7)
  list(APPEND STRATUS_DEVICE_COMPILE_DEFINITIONS ${STRATUS_KOKKOS_GCC12_DEFINITIONS})
  message(STATUS "Stratus: GCC ${CMAKE_CXX_COMPILER_VERSION} with Kokkos ${Kokkos_VERSION}: Views "
                 "without [[no_unique_address]] (works around kokkos/kokkos#8187)")
endif()
if("CUDA" IN_LIST STRATUS_KOKKOS_BACKENDS)
  get_filename_component(_cxx_name "${CMAKE_CXX_COMPILER}" NAME)
  if(_cxx_name MATCHES "nvcc")
    message(FATAL_ERROR
      "CMAKE_CXX_COMPILER is ${CMAKE_CXX_COMPILER}: with a CUDA Kokkos, configure Stratus with the "
      "host compiler (-DCMAKE_CXX_COMPILER=g++, a fresh build directory). Kokkos then compiles "
      "only the device code with nvcc_wrapper; host-only code (decks, CLI, HDF5) stays with g++.")
  endif()
  # fmt's compile-time format checks (consteval) do not compile under nvcc: device-floor code
  # checks its format strings at run time instead (host-compiled code keeps the checks). fmt 9
  # also turns its FMT_CONSTEXPR off when it sees __NVCC__ but keeps plain constexpr functions
  # that call them, which g++ rejects in C++20; nvcc 12+ handles constexpr, so keep it on.
  list(APPEND STRATUS_DEVICE_COMPILE_DEFINITIONS "FMT_CONSTEVAL=" "FMT_USE_CONSTEXPR=1")
  message(STATUS "Stratus: CUDA build (Kokkos_ARCH ${Kokkos_ARCH}); the device floor is compiled by nvcc_wrapper")
endif()

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
