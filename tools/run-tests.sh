#!/usr/bin/env bash
# Runs the Stratus test suite: unit, mpi (1, 2 and 4 ranks) and regression tests, then the CUDA
# compile check (tools/check-cuda-build.sh: every target built for the GPU with nvcc; it says
# "skipped" where no nvcc or no Kokkos source is found). Builds first if needed (same steps as
# tools/setup.sh, without the example run), so it also works in a fresh clone.
#
#   tools/run-tests.sh               the default suite (everything not labelled `slow`) and the
#                                    CUDA compile check
#   tools/run-tests.sh -L unit       any ctest arguments are passed on (no CUDA check then)
#
#   STRATUS_CUDA_CHECK=0             leave the CUDA compile check out
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${STRATUS_BUILD_DIR:-$here/build}"
"$here/tools/setup.sh" --no-example --quiet
args=("$@")
cuda_check=1
if [ "${#args[@]}" -eq 0 ]; then
  args=(-LE slow)
else
  cuda_check=0
fi
[ "${STRATUS_CUDA_CHECK:-}" = 0 ] && cuda_check=0
# Two test processes at a time: the machines have two cores; MPI tests reserve their ranks.
status=0
(cd "$build_dir" && ctest --output-on-failure -j2 "${args[@]}") || status=$?
if [ "$cuda_check" = 1 ]; then
  "$here/tools/check-cuda-build.sh" || status=1
fi
exit "$status"
