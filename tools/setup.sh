#!/usr/bin/env bash
# Stratus setup: installs the Debian packages Stratus needs, provides a threaded Kokkos
# (OpenMP + Serial), configures and builds Stratus, and runs an example deck.
#
# Idempotent: a second run only checks what is there and rebuilds what changed.
#
#   tools/setup.sh                 everything, then runs inputs/examples/heat_decay.toml
#   tools/setup.sh --no-example    stop after the build
#   tools/setup.sh --help
#
# Environment:
#   STRATUS_CACHE        where built dependencies are kept (default ~/.cache/stratus)
#   Kokkos_ROOT          use this Kokkos install instead of building one
#   STRATUS_BUILD_DIR    build directory (default <repo>/build)
#   STRATUS_BUILD_TYPE   CMake build type (default Release)
#   STRATUS_CPU_ARCH     -march of the host code at the first configure (default: empty, any
#                        x86-64 CPU; "native" for this machine's instructions, see README)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${STRATUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratus}"
build_dir="${STRATUS_BUILD_DIR:-$here/build}"
build_type="${STRATUS_BUILD_TYPE:-Release}"
cpu_arch="${STRATUS_CPU_ARCH:-}"
run_example=1
quiet=0

for arg in "$@"; do
  case "$arg" in
    --no-example) run_example=0 ;;
    --quiet) quiet=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { [ "$quiet" = 1 ] || echo "[setup] $*"; }
die() { echo "[setup] error: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# 1. Debian packages
# ---------------------------------------------------------------------------------------------
packages=(
  cmake ninja-build g++ pkg-config git ca-certificates
  libopenmpi-dev openmpi-bin
  libhdf5-openmpi-dev hdf5-tools
  libfftw3-dev libfftw3-mpi-dev
  libtomlplusplus-dev libcli11-dev libfmt-dev
  libgtest-dev clang-format python3-h5py python3-mdanalysis python3-matplotlib
  slurm-wlm munge
  python3-paraview  # pvpython; pulls paraview (540 MB) and ~216 packages in all: tests/viewers
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing missing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo: install these packages first: ${missing[*]}"
    sudo_cmd=(sudo)
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  say "Debian packages: all ${#packages[@]} present"
fi

# ---------------------------------------------------------------------------------------------
# 2. Kokkos with the OpenMP and Serial backends
#    Debian 12 ships only a Serial Kokkos 3.4 (inside Trilinos) whose CMake config is broken.
#    The same Trilinos release is in Debian's source archive; its packages/kokkos builds
#    standalone. The result is cached in $cache and reused by every later run.
# ---------------------------------------------------------------------------------------------
kokkos_version=3.4.01
trilinos_version=13.2.0
trilinos_tarball=trilinos_${trilinos_version}.orig.tar.gz
trilinos_sha256=0ddb47784ba7b8a6b9a07a4822b33be508feb4ccd54301b2a5d10c9e54524b90
kokkos_prefix="$cache/kokkos-${kokkos_version}-openmp-serial"
kokkos_marker="$kokkos_prefix/.stratus-complete"

if [ -n "${Kokkos_ROOT:-}" ]; then
  say "Kokkos: using Kokkos_ROOT=$Kokkos_ROOT"
  kokkos_prefix="$Kokkos_ROOT"
elif [ -f "$kokkos_marker" ]; then
  say "Kokkos $kokkos_version (OpenMP, Serial): cached in $kokkos_prefix"
else
  say "Kokkos $kokkos_version (OpenMP, Serial): building once into $kokkos_prefix"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  src_list=/etc/apt/sources.list.d/stratus-trilinos-src.list
  if ! grep -qs "trixie main" "$src_list"; then
    say "adding a deb-src line (Debian trixie, main) for the Trilinos source package: $src_list"
    [ "$(id -u)" = 0 ] || die "need root to add $src_list (or set Kokkos_ROOT to an existing Kokkos install)"
    echo "deb-src http://deb.debian.org/debian trixie main" >"$src_list"
    apt-get update -qq
  fi
  say "downloading the Trilinos $trilinos_version source tarball from Debian's archive"
  # apt-get exits non-zero here because the .dsc of this version is gone from the archive while
  # the tarball is still served: trust the checksum, not the exit code.
  (cd "$work" && apt-get source --download-only "trilinos=${trilinos_version}-6" >/dev/null 2>&1) || true
  [ -f "$work/$trilinos_tarball" ] || die "could not download $trilinos_tarball"
  echo "$trilinos_sha256  $work/$trilinos_tarball" | sha256sum --check --status ||
    die "$trilinos_tarball does not match its SHA256 $trilinos_sha256"
  say "extracting packages/kokkos"
  tar -xzf "$work/$trilinos_tarball" -C "$work" --wildcards '*/packages/kokkos/*'
  ksrc="$(echo "$work"/Trilinos-*/packages/kokkos)"
  rm -f "$work/$trilinos_tarball"
  say "configuring and building Kokkos (about 30 s on 2 cores)"
  cmake -S "$ksrc" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_INSTALL_PREFIX="$kokkos_prefix" -DBUILD_SHARED_LIBS=ON \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF >"$work/kokkos-configure.log" 2>&1 ||
    { tail -30 "$work/kokkos-configure.log" >&2; die "Kokkos configure failed"; }
  cmake --build "$work/build" --parallel >"$work/kokkos-build.log" 2>&1 ||
    { tail -30 "$work/kokkos-build.log" >&2; die "Kokkos build failed"; }
  cmake --install "$work/build" >/dev/null
  echo "kokkos ${kokkos_version} from trilinos ${trilinos_version} sha256 ${trilinos_sha256}" >"$kokkos_marker"
  say "Kokkos installed in $kokkos_prefix"
fi

# ---------------------------------------------------------------------------------------------
# 3. Configure and build Stratus
# ---------------------------------------------------------------------------------------------
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  say "configuring Stratus in $build_dir ($build_type)"
  log="$(mktemp)"
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
    -DKokkos_ROOT="$kokkos_prefix" -DSTRATUS_CPU_ARCH="$cpu_arch" >"$log" 2>&1 ||
    { cat "$log" >&2; rm -f "$log"; die "CMake configure failed"; }
  rm -f "$log"
fi
say "building Stratus"
cmake --build "$build_dir" --parallel "$(nproc)" | { if [ "$quiet" = 1 ]; then cat >/dev/null; else tail -n 3; fi; }
[ "${PIPESTATUS[0]}" = 0 ] || die "build failed (run: cmake --build $build_dir)"
say "built $build_dir/apps/stratus"

# ---------------------------------------------------------------------------------------------
# 4. Run an example deck
# ---------------------------------------------------------------------------------------------
if [ "$run_example" = 1 ]; then
  out="$here/runs/quickstart"
  say "running inputs/examples/heat_decay.toml on 2 MPI ranks, output in $out"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
  mpiexec -n 2 "$build_dir/apps/stratus" run "$here/inputs/examples/heat_decay.toml" --output-dir "$out"
  "$build_dir/apps/stratus" info "$out/heat_decay.h5"
  say "done. Run the tests with: tools/run-tests.sh"
fi
