#!/usr/bin/env bash
# Packs the CUDA build of Stratus for a GPU machine that has the CUDA toolkit (cudart, cuFFT)
# but no MPI, no HDF5 and no internet: the stratus command, the tests labelled `gpu`, and every
# shared library they load that is not glibc or CUDA (Open MPI with its plugins, HDF5, FFTW,
# fmt, toml++, Kokkos, libstdc++, ...), stripped and compressed into one archive.
#
#   bench/gpu/pack.sh [OUT]   builds (tools/check-cuda-build.sh: 0 errors, 0 warnings) and
#                             writes OUT/stratus-gpu.tar.xz (default OUT: <repo>/build-gpu-pack)
#   bench/gpu/pack.sh --help
#
# Then, on the GPU machine, from a copy of the repository that carries OUT:
#   bench/gpu/run.sh OUT/stratus-gpu.tar.xz
# The archive must stay under 64 MiB (what the device tool carries); this script fails above.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
case "${1:-}" in
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
out="${1:-$here/build-gpu-pack}"
build="${STRATUS_CUDA_BUILD_DIR:-$here/build-cuda}"
limit=$((64 * 1024 * 1024))

STRATUS_CUDA_CHECK=require STRATUS_CUDA_BUILD_DIR="$build" "$here/tools/check-cuda-build.sh"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/stratus-gpu"
mkdir -p "$root/bin" "$root/tests" "$root/lib/openmpi3"

# The tests labelled gpu: one rank, no launcher needed (the command's last word is the binary).
(cd "$build" && ctest -L gpu --show-only=json-v1) >"$stage/tests.json"
/usr/bin/python3 - "$stage/tests.json" >"$stage/tests.txt" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["tests"]:
    print(t["name"], t["command"][-1])
PY
[ -s "$stage/tests.txt" ] || { echo "pack: no test is labelled gpu in $build" >&2; exit 1; }
: >"$root/tests/manifest"
while read -r name exe; do
  cp "$exe" "$root/tests/"
  echo "$name $(basename "$exe")" >>"$root/tests/manifest"
done <"$stage/tests.txt"
cp "$build/apps/stratus" "$root/bin/"

# Open MPI's components are plugins: a singleton run (no mpirun) loads them from this folder.
ompi_plugins="$(dirname "$(readlink -f "$(ldconfig -p | sed -n 's/.*libmpi.so.40 .*=> //p' | head -n1)")")/openmpi/lib/openmpi3"
[ -d "$ompi_plugins" ] || ompi_plugins=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
cp "$ompi_plugins"/mca_*.so "$root/lib/openmpi3/"

# Every library these need, except glibc (the target has its own) and CUDA (the toolkit and
# the driver are there). A plugin whose libraries are missing on the target is skipped by
# Open MPI; the ones a singleton needs only use what is packed here.
is_system() {
  case "$(basename "$1")" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libutil.so*) return 0 ;;
    libcuda.so*|libcudart.so*|libcufft*.so*|libnvidia*) return 0 ;;
  esac
  case "$1" in /usr/local/cuda*) return 0 ;; esac
  return 1
}
for f in "$root"/bin/* "$root"/tests/test_* "$root"/lib/openmpi3/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  is_system "$lib" && continue
  cp -L "$lib" "$root/lib/"
done
strip --strip-unneeded "$root"/bin/* "$root"/tests/test_* "$root"/lib/*.so* "$root"/lib/openmpi3/*.so 2>/dev/null || true

{
  echo "stratus $(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  grep -m1 "^Kokkos_DIR" "$build/CMakeCache.txt" || true
  nvcc --version | tail -n 2
} >"$root/BUILD"

mkdir -p "$out"
tar -C "$stage" -cf - stratus-gpu | xz -T2 -6 >"$out/stratus-gpu.tar.xz"
size=$(stat -c %s "$out/stratus-gpu.tar.xz")
raw=$(du -sb "$root" | cut -f1)
echo "pack: $out/stratus-gpu.tar.xz: $((size / 1024 / 1024)) MiB ($((raw / 1024 / 1024)) MiB unpacked): stratus, $(wc -l <"$root/tests/manifest") gpu tests, $(ls "$root/lib" | grep -c '\.so') libraries, $(ls "$root/lib/openmpi3" | wc -l) Open MPI plugins"
if [ "$size" -ge "$limit" ]; then
  echo "pack: FAILED: the archive is over the 64 MiB the device tool carries" >&2
  exit 1
fi
echo "pack: run it on the GPU machine with: bench/gpu/run.sh ${out#"$here/"}/stratus-gpu.tar.xz"
