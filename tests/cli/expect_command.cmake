# Runs `stratus` with some arguments and checks its exit code and output.
#
#   cmake -DSTRATUS=path -DARGS="a|b|c" -DEXPECT_RC=n [-DSTDOUT_HAS="x|y"] [-DSTDERR_HAS="x|y"]
#         [-DSTDOUT_NOT="x|y"] [-DWRITES=file] [-DTIMEOUT=s] -P expect_command.cmake
#
# Lists use '|' (ctest would split ';'). Checks: exit code exactly EXPECT_RC (a hang fails after
# TIMEOUT seconds); stdout/stderr contain every STDOUT_HAS/STDERR_HAS substring and no
# STDOUT_NOT one; WRITES (a file the command must write) exists afterwards; and no sign of a
# crash anywhere.
cmake_minimum_required(VERSION 3.25)

foreach(var STRATUS EXPECT_RC)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_command.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 30)
endif()

string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" stdout_has "${STDOUT_HAS}")
string(REPLACE "|" ";" stderr_has "${STDERR_HAS}")
string(REPLACE "|" ";" stdout_not "${STDOUT_NOT}")

string(REPLACE ";" " " shown "${args}")
message(STATUS "running: ${STRATUS} ${shown}")
if(WRITES)
  file(REMOVE "${WRITES}")
endif()
execute_process(COMMAND "${STRATUS}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT ${TIMEOUT})
message(STATUS "exit code: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}--------------")

set(failures "")
if(NOT rc STREQUAL "${EXPECT_RC}")
  string(APPEND failures "  - exit code '${rc}', expected exactly ${EXPECT_RC}\n")
endif()
foreach(s IN LISTS stdout_has)
  string(FIND "${out}" "${s}" pos)
  if(pos EQUAL -1)
    string(APPEND failures "  - stdout lacks '${s}'\n")
  endif()
endforeach()
foreach(s IN LISTS stderr_has)
  string(FIND "${err}" "${s}" pos)
  if(pos EQUAL -1)
    string(APPEND failures "  - stderr lacks '${s}'\n")
  endif()
endforeach()
foreach(s IN LISTS stdout_not)
  string(FIND "${out}" "${s}" pos)
  if(NOT pos EQUAL -1)
    string(APPEND failures "  - stdout has '${s}'\n")
  endif()
endforeach()
if(WRITES AND NOT EXISTS "${WRITES}")
  string(APPEND failures "  - ${WRITES} was not written\n")
endif()
foreach(bad "terminate called" "Aborted" "Segmentation" "what():" "acktrace" "internal error"
            "MPI_ABORT" "Process received signal" "core dumped")
  string(FIND "${err}${out}" "${bad}" pos)
  if(NOT pos EQUAL -1)
    string(APPEND failures "  - output contains '${bad}'\n")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "stratus ${shown}:\n${failures}")
endif()
