# `stratus --version` exits 0 and its "backends:" line lists exactly the Kokkos backends that
# CMake found (STRATUS_KOKKOS_BACKENDS, e.g. OPENMP;SERIAL).
#
#   cmake -DSTRATUS=path -DBACKENDS="OPENMP|SERIAL" -P check_version.cmake
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" BACKENDS "${BACKENDS}")

set(names_CUDA Cuda)
set(names_HIP HIP)
set(names_SYCL SYCL)
set(names_OPENMPTARGET OpenMPTarget)
set(names_OPENMP OpenMP)
set(names_THREADS Threads)
set(names_SERIAL Serial)

set(expected "")
foreach(b IN LISTS BACKENDS)
  if(NOT DEFINED names_${b})
    message(FATAL_ERROR "check_version.cmake: no name known for the Kokkos backend '${b}'")
  endif()
  list(APPEND expected ${names_${b}})
endforeach()
if(NOT expected)
  message(FATAL_ERROR "check_version.cmake: -DBACKENDS is empty")
endif()

execute_process(COMMAND "${STRATUS}" --version RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 30)
message(STATUS "exit code: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "stratus --version: exit code '${rc}', expected 0")
endif()
if(NOT out MATCHES "(^|\n)stratus [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "stratus --version: no 'stratus X.Y.Z' line")
endif()
if(NOT out MATCHES "Kokkos [0-9.]+, backends: ([^\n(]*) \\(kernels run on ([A-Za-z]+)\\)")
  message(FATAL_ERROR "stratus --version: no 'Kokkos X.Y.Z, backends: ... (kernels run on ...)' line")
endif()
set(default_space "${CMAKE_MATCH_2}")
string(REPLACE ", " ";" listed "${CMAKE_MATCH_1}")

set(sorted_listed ${listed})
set(sorted_expected ${expected})
list(SORT sorted_listed)
list(SORT sorted_expected)
if(NOT sorted_listed STREQUAL sorted_expected)
  message(FATAL_ERROR "stratus --version lists backends '${listed}', CMake found '${expected}'")
endif()
list(FIND listed "${default_space}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "kernels run on '${default_space}', which is not among the backends '${listed}'")
endif()
