# Fails when docs/input-reference.md differs from what `stratus schema` generates.
execute_process(COMMAND "${STRATUS}" schema OUTPUT_FILE "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "stratus schema failed (${rc})")
endif()
file(READ "${OUT}" generated)
file(READ "${DOC}" checked_in)
if(NOT generated STREQUAL checked_in)
  message(FATAL_ERROR "docs/input-reference.md is out of date: run tools/gen-docs.sh and commit it "
                      "(generated copy: ${OUT})")
endif()
