# The git revision is written into a generated source at every build (not only at configure
# time), so `stratus --version` never reports a stale revision. No network access.
find_package(Git QUIET)
set(STRATUS_REVISION_CPP "${CMAKE_BINARY_DIR}/generated/revision.cpp")
add_custom_target(stratus_revision
  BYPRODUCTS "${STRATUS_REVISION_CPP}"
  COMMAND "${CMAKE_COMMAND}" -DGIT="${GIT_EXECUTABLE}" -DSRC="${CMAKE_SOURCE_DIR}"
          -DOUT="${STRATUS_REVISION_CPP}" -P "${CMAKE_CURRENT_LIST_DIR}/StratusWriteRevision.cmake"
  COMMENT "Stratus git revision")
