# Fails when a C++ file of the tree is not formatted with the checked-in .clang-format.
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}"
     "${SOURCE_DIR}/core/*.[ch]pp" "${SOURCE_DIR}/kernels/*.[ch]pp" "${SOURCE_DIR}/io/*.[ch]pp"
     "${SOURCE_DIR}/solvers/*.[ch]pp" "${SOURCE_DIR}/apps/*.[ch]pp" "${SOURCE_DIR}/tests/*.[ch]pp"
     "${SOURCE_DIR}/bench/*.[ch]pp")
list(LENGTH files n)
if(n EQUAL 0)
  message(FATAL_ERROR "no C++ files found under ${SOURCE_DIR}")
endif()
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror ${files}
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${err}\nSome files are not clang-formatted: run tools/format.sh")
endif()
message(STATUS "${n} files clang-formatted")
