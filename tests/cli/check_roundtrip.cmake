# `stratus check DECK` prints the resolved deck; that printout must itself be a valid deck that
# resolves to the same thing.
#
#   cmake -DSTRATUS=path -DDECK=file -DWORK=dir [-DARGS="--set|a.b=1"] [-DEXPECT="x|y"]
#         -P check_roundtrip.cmake
#
# pass 1: check DECK [ARGS]  -> out1 (exit 0; contains every EXPECT substring, with the
#                               padding before " = " ignored: "name = 1" finds "name   = 1")
# pass 2: check out1         -> out2 (exit 0); out2 == out1 without its "# default" and
#                               "# --set ..." notes (those say where a value came from, and in
#                               pass 2 every value comes from the file)
# pass 3: check out2         -> out3 (exit 0); out3 == out2 exactly (a fixed point)
cmake_minimum_required(VERSION 3.25)

foreach(var STRATUS DECK WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_roundtrip.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" expect "${EXPECT}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(check_pass n deck)
  execute_process(COMMAND "${STRATUS}" check "${deck}" ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 30)
  file(WRITE "${WORK}/pass${n}.toml" "${out}")
  if(NOT rc STREQUAL "0" OR NOT err STREQUAL "")
    message(FATAL_ERROR "pass ${n}: stratus check ${deck} ${ARGN}: exit code '${rc}' (expected 0), "
                        "stderr:\n${err}\nstdout:\n${out}")
  endif()
  set(out${n} "${out}" PARENT_SCOPE)
endfunction()

function(require_equal a b what)
  if(NOT "${${a}}" STREQUAL "${${b}}")
    file(WRITE "${WORK}/${a}.toml" "${${a}}")
    file(WRITE "${WORK}/${b}.toml" "${${b}}")
    execute_process(COMMAND diff -u "${WORK}/${a}.toml" "${WORK}/${b}.toml" OUTPUT_VARIABLE d)
    message(FATAL_ERROR "${what}:\n${d}")
  endif()
endfunction()

check_pass(1 "${DECK}" ${args})
message(STATUS "pass 1 printed:\n${out1}")
string(REGEX REPLACE " +=" " =" out1_unpadded "${out1}")
foreach(s IN LISTS expect)
  string(FIND "${out1_unpadded}" "${s}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "pass 1 output lacks '${s}'")
  endif()
endforeach()
foreach(s "[run]" "solver = \"heat\"" "[heat]")
  string(FIND "${out1_unpadded}" "${s}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "pass 1 output lacks '${s}': not a resolved deck")
  endif()
endforeach()

check_pass(2 "${WORK}/pass1.toml")
string(REGEX REPLACE " +# (default|--set [^\n]*)\n" "\n" stripped1 "${out1}")
require_equal(stripped1 out2 "the resolved deck, read back, resolves differently")

check_pass(3 "${WORK}/pass2.toml")
require_equal(out2 out3 "the resolved deck is not a fixed point of `stratus check`")
