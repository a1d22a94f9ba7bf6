# FindFFTW3: double-precision FFTW 3 and its MPI interface.
# Defines FFTW3::fftw3 and FFTW3::fftw3_mpi (when found) and FFTW3_VERSION.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_FFTW3 QUIET fftw3)
endif()
find_path(FFTW3_INCLUDE_DIR fftw3.h HINTS ${PC_FFTW3_INCLUDE_DIRS})
find_library(FFTW3_LIBRARY fftw3 HINTS ${PC_FFTW3_LIBRARY_DIRS})
find_library(FFTW3_MPI_LIBRARY fftw3_mpi HINTS ${PC_FFTW3_LIBRARY_DIRS})
set(FFTW3_VERSION "${PC_FFTW3_VERSION}")

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_LIBRARY FFTW3_INCLUDE_DIR
                                  VERSION_VAR FFTW3_VERSION)
if(FFTW3_FOUND AND NOT TARGET FFTW3::fftw3)
  add_library(FFTW3::fftw3 UNKNOWN IMPORTED)
  set_target_properties(FFTW3::fftw3 PROPERTIES IMPORTED_LOCATION "${FFTW3_LIBRARY}"
                                                INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}")
  if(FFTW3_MPI_LIBRARY)
    add_library(FFTW3::fftw3_mpi UNKNOWN IMPORTED)
    set_target_properties(FFTW3::fftw3_mpi PROPERTIES IMPORTED_LOCATION "${FFTW3_MPI_LIBRARY}")
    target_link_libraries(FFTW3::fftw3_mpi INTERFACE FFTW3::fftw3 MPI::MPI_C)
  endif()
endif()
mark_as_advanced(FFTW3_INCLUDE_DIR FFTW3_LIBRARY FFTW3_MPI_LIBRARY)
