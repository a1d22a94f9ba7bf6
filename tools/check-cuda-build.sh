#!/usr/bin/env bash
# The CUDA compile check of CI: builds every target of Stratus for the GPU (CUDA + Serial Kokkos,
# nvcc through Kokkos's launcher, sm_90 unless STRATUS_CUDA_ARCH says 80) and fails on any error
# or any device-code warning of nvcc ("calling a __host__ function from a __host__ __device__
# function", "lambda captures this", ...). Nothing is run: this machine has no GPU.
#
# The Kokkos comes from STRATUS_KOKKOS_SOURCE (and STRATUS_KOKKOS_PATCH), or else from the
# newest kokkos-*.tar.gz in ../shared/deps beside the repository with its -cuda13.patch. With no
# nvcc or no Kokkos source the check says "skipped" and why, and exits 0; with
# STRATUS_CUDA_CHECK=require it fails instead.
#
#   tools/check-cuda-build.sh          build in <repo>/build-cuda (STRATUS_CUDA_BUILD_DIR overrides)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${STRATUS_CUDA_BUILD_DIR:-$here/build-cuda}"

skip() {
  if [ "${STRATUS_CUDA_CHECK:-}" = require ]; then
    echo "[cuda-check] FAILED: $* (STRATUS_CUDA_CHECK=require)" >&2
    exit 1
  fi
  echo "[cuda-check] skipped: $*"
  exit 0
}

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || skip "no nvcc (CUDA toolkit) on this machine"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

source="${STRATUS_KOKKOS_SOURCE:-}"
patch="${STRATUS_KOKKOS_PATCH:-}"
if [ -z "$source" ]; then
  deps="$here/../shared/deps"
  source="$(ls -1 "$deps"/kokkos-*.tar.gz 2>/dev/null | sort -V | tail -n 1 || true)"
  [ -n "$source" ] || skip "no Kokkos source: set STRATUS_KOKKOS_SOURCE, or put kokkos-*.tar.gz in $deps"
  candidate="${source%.tar.gz}-cuda13.patch"
  [ -f "$candidate" ] && patch="$candidate"
fi

echo "[cuda-check] nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), Kokkos from $source${patch:+ + $(basename "$patch")}, sm_${STRATUS_CUDA_ARCH:-90}, in $build_dir"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
start=$SECONDS
set +e
STRATUS_KOKKOS_SOURCE="$source" STRATUS_KOKKOS_PATCH="$patch" STRATUS_BUILD_DIR="$build_dir" \
  "$here/tools/setup.sh" --cuda --no-example --verbose-build >"$log" 2>&1
status=$?
set -e
# nvcc's front end reports "warning #NNNN-D"; the host compiler's "warning:" lines count too.
# Only Stratus's own build counts (from its configure on), not a Kokkos built on the way.
own="$(mktemp)"
trap 'rm -f "$log" "$own"' EXIT
sed -n '/^\[setup\] configuring Stratus/,$p' "$log" >"$own"
warnings=$(grep -cE 'warning #[0-9]+|: warning:' "$own" || true)
if [ "$status" != 0 ]; then
  grep -E 'error|FAILED' "$log" | head -n 40 >&2
  echo "[cuda-check] FAILED: the CUDA build stopped (exit $status) after $((SECONDS - start)) s" >&2
  exit 1
fi
if [ "$warnings" != 0 ]; then
  grep -E -A3 'warning #[0-9]+|: warning:' "$own" | head -n 60 >&2
  echo "[cuda-check] FAILED: $warnings compiler warning(s) in the CUDA build" >&2
  exit 1
fi
echo "[cuda-check] ok: every target compiled for CUDA, 0 errors, 0 warnings, $((SECONDS - start)) s"
