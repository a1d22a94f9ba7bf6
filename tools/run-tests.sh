#!/usr/bin/env bash
# Runs the Stratus test suite: unit, mpi (1, 2 and 4 ranks) and regression tests.
# Builds first if needed (same steps as tools/setup.sh, without the example run), so it also
# works in a fresh clone.
#
#   tools/run-tests.sh               the default suite (everything not labelled `slow`)
#   tools/run-tests.sh -L unit       any ctest arguments are passed on
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${STRATUS_BUILD_DIR:-$here/build}"
"$here/tools/setup.sh" --no-example --quiet
cd "$build_dir"
args=("$@")
if [ "${#args[@]}" -eq 0 ]; then
  args=(-LE slow)
fi
# Two test processes at a time: the machines have two cores; MPI tests reserve their ranks.
exec ctest --output-on-failure -j2 "${args[@]}"
