# Runs `stratus` on one malformed deck and checks that it is rejected cleanly.
#
#   cmake -DSTRATUS=/path/to/stratus -DDECK=bad_decks/x.toml [-DOUTPUT_DIR=dir]
#         [-DLAUNCHER="mpiexec|-n|2"] [-DEXPECT_ONCE=ON] [-DTIMEOUT=30] -P check_rejection.cmake
#
# Run it from tests/cli so that the deck path printed by stratus is the one in the header.
# The deck's leading comment block says what is expected:
#   # expect-location: bad_decks/x.toml:9      where the problem is reported: FILE:LINE,
#                                               FILE, or the option ("--set a.b=c")
#   # expect-message: did you mean 'diffusivity' a substring of that same problem line
#                                               (several lines: all of them; each belongs to
#                                               the expect-location above it)
#   # expect-count: 3                           the deck has exactly 3 problems
#   # args: --set run.steps=abc                 extra arguments after the deck
#   # command: run                              `run` instead of `check`
#   # deck-arg: bad_decks/missing.toml          path given instead of DECK (missing file, ...)
#   # ranks: 1 2 4                              rank counts to test (read by CMakeLists.txt)
#
# Checks: exit code exactly 2 (a hang is a failure, after TIMEOUT seconds); every expected
# problem is on its own line of stderr, "[error: ]LOCATION: ...MESSAGE..."; no sign of a crash
# or of an abort; for `check`, nothing on stdout; with EXPECT_ONCE (mpiexec runs), each
# expected message is printed exactly once (rank 0 alone prints a collective failure).
cmake_minimum_required(VERSION 3.25)

foreach(var STRATUS DECK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_rejection.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 30)
endif()
if(NOT EXISTS "${DECK}")
  message(FATAL_ERROR "deck ${DECK} not found (working directory must be tests/cli)")
endif()

# CMake lists split on ';' and do not split inside '[...]': text compared line by line gets
# these characters replaced by placeholders first (the expectations too).
function(protect out text)
  string(REPLACE "[" "<LB>" text "${text}")
  string(REPLACE "]" "<RB>" text "${text}")
  string(REPLACE ";" "<SC>" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(unprotect out text)
  string(REPLACE "<LB>" "[" text "${text}")
  string(REPLACE "<RB>" "]" text "${text}")
  string(REPLACE "<SC>" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# --- Header -------------------------------------------------------------------------------
file(READ "${DECK}" deck_text)
protect(deck_text "${deck_text}")
string(REPLACE "\n" ";" header_lines "${deck_text}")
set(command check)
set(deck_arg "${DECK}")
set(extra_args "")
set(expect_count "")
set(n_problems 0)
foreach(line IN LISTS header_lines)
  if(NOT line MATCHES "^#")
    break()  # the header is the leading comment block
  endif()
  if(NOT line MATCHES "^# ([a-z-]+): (.*)$")
    continue()
  endif()
  set(field "${CMAKE_MATCH_1}")
  string(STRIP "${CMAKE_MATCH_2}" value)
  unprotect(raw "${value}")
  if(field STREQUAL "expect-location")
    math(EXPR n_problems "${n_problems} + 1")
    set(location_${n_problems} "${value}")
    set(messages_${n_problems} "")
  elseif(field STREQUAL "expect-message")
    if(n_problems EQUAL 0)
      message(FATAL_ERROR "${DECK}: expect-message before any expect-location")
    endif()
    list(APPEND messages_${n_problems} "${value}")
  elseif(field STREQUAL "expect-count")
    set(expect_count "${value}")
  elseif(field STREQUAL "args")
    separate_arguments(extra_args UNIX_COMMAND "${raw}")
  elseif(field STREQUAL "command")
    set(command "${raw}")
  elseif(field STREQUAL "deck-arg")
    set(deck_arg "${raw}")
  elseif(field STREQUAL "ranks")
    # read by CMakeLists.txt
  else()
    message(FATAL_ERROR "${DECK}: unknown header field '${field}'")
  endif()
endforeach()
if(n_problems EQUAL 0)
  message(FATAL_ERROR "${DECK}: no '# expect-location:' in the header")
endif()
foreach(i RANGE 1 ${n_problems})
  if(NOT messages_${i})
    message(FATAL_ERROR "${DECK}: expect-location '${location_${i}}' has no expect-message")
  endif()
endforeach()

# --- Run ----------------------------------------------------------------------------------
set(cmd "")
if(LAUNCHER)
  string(REPLACE "|" ";" cmd "${LAUNCHER}")
endif()
list(APPEND cmd "${STRATUS}" ${command} "${deck_arg}" ${extra_args})
if(command STREQUAL "run")
  if(NOT OUTPUT_DIR)
    message(FATAL_ERROR "${DECK}: 'command: run' needs -DOUTPUT_DIR=...")
  endif()
  list(APPEND cmd --output-dir "${OUTPUT_DIR}")
endif()
string(REPLACE ";" " " shown "${cmd}")
message(STATUS "running: ${shown}")
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${TIMEOUT})
message(STATUS "exit code: ${rc}\n--- stderr ---\n${err}--- stdout (first 400 chars) ---")
string(SUBSTRING "${out}" 0 400 out_head)
message(STATUS "${out_head}")

set(failures "")
macro(fail text)
  string(APPEND failures "  - ${text}\n")
endmacro()

if(NOT rc STREQUAL "2")
  fail("exit code '${rc}', expected exactly 2 (bad input)")
endif()

# Problem lines: "error: " before the first one, nothing before the others.
protect(err_protected "${err}")
string(REPLACE "\n" ";" err_lines "${err_protected}")
foreach(i RANGE 1 ${n_problems})
  string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" loc_re "${location_${i}}")
  set(found FALSE)
  foreach(line IN LISTS err_lines)
    if(NOT line MATCHES "^(error: )?${loc_re}:")
      continue()
    endif()
    set(all TRUE)
    foreach(msg IN LISTS messages_${i})
      string(FIND "${line}" "${msg}" pos)
      if(pos EQUAL -1)
        set(all FALSE)
      endif()
    endforeach()
    if(all)
      set(found TRUE)
      break()
    endif()
  endforeach()
  if(NOT found)
    string(REPLACE ";" "' and '" wanted "${messages_${i}}")
    unprotect(wanted "${wanted}")
    unprotect(loc "${location_${i}}")
    fail("no stderr line starts with '${loc}:' and contains '${wanted}'")
  endif()
endforeach()

if(expect_count STREQUAL "")
  # One problem: no "(N problems in the deck)" summary.
  if(err MATCHES "problems in the deck")
    fail("expected a single problem, stderr reports several")
  endif()
elseif(NOT err MATCHES "\\(${expect_count} problems in the deck\\)")
  fail("stderr does not say '(${expect_count} problems in the deck)'")
endif()

foreach(bad "terminate called" "Aborted" "Segmentation" "what():" "acktrace" "internal error"
            "MPI_ABORT" "Process received signal" "core dumped" "[rank ")
  string(FIND "${err}${out}" "${bad}" pos)
  if(NOT pos EQUAL -1)
    fail("output contains '${bad}' (crash, abort or non-collective failure)")
  endif()
endforeach()

if(command STREQUAL "check" AND NOT out STREQUAL "")
  fail("`stratus check` printed to stdout although the deck is rejected")
endif()

if(EXPECT_ONCE)
  foreach(i RANGE 1 ${n_problems})
    foreach(msg IN LISTS messages_${i})
      string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" msg_re "${msg}")
      string(REGEX MATCHALL "${msg_re}" hits "${err_protected}")
      list(LENGTH hits n)
      if(NOT n EQUAL 1)
        unprotect(msg "${msg}")
        fail("'${msg}' printed ${n} times, expected once (rank 0 alone)")
      endif()
    endforeach()
  endforeach()
endif()

if(failures)
  message(FATAL_ERROR "${DECK} was not rejected as expected:\n${failures}")
endif()
