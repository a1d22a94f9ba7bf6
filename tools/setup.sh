#!/usr/bin/env bash
# Stratus setup: installs the Debian packages Stratus needs, provides a threaded Kokkos
# (OpenMP + Serial), configures and builds Stratus, and runs an example deck.
#
# Idempotent: a second run only checks what is there and rebuilds what changed.
#
#   tools/setup.sh                 everything, then runs inputs/examples/heat_decay.toml
#   tools/setup.sh --no-example    stop after the build
#   tools/setup.sh --cuda          the GPU build: a CUDA Kokkos from STRATUS_KOKKOS_SOURCE and
#                                  Stratus in build-cuda/ (runs the example only where a GPU is)
#   tools/setup.sh --verbose-build the whole output of the build (default: its last lines)
#   tools/setup.sh --help
#
# Environment:
#   STRATUS_CACHE          where built dependencies are kept (default ~/.cache/stratus)
#   Kokkos_ROOT            use this Kokkos install instead of building one
#   STRATUS_KOKKOS_SOURCE  build Kokkos from this source archive (.tar.gz) or directory instead
#                          of Debian's Kokkos 3.4.01 (needed for --cuda: CUDA 13 needs >= 4.7,
#                          or 4.6.99 with STRATUS_KOKKOS_PATCH)
#   STRATUS_KOKKOS_PATCH   a patch (-p1) applied to that source before it is built
#   STRATUS_CUDA_ARCH      GPU of --cuda: 90 (H100/H200, default) or 80 (A100/A800)
#   STRATUS_BUILD_DIR      build directory (default <repo>/build, <repo>/build-cuda for --cuda)
#   STRATUS_BUILD_TYPE     CMake build type (default Release)
#   STRATUS_BUILD_TARGETS  build only these targets (space-separated; default: all)
#   STRATUS_CPU_ARCH       -march of the host code at the first configure (default: empty, any
#                          x86-64 CPU; "native" for this machine's instructions, see README)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${STRATUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stratus}"
build_type="${STRATUS_BUILD_TYPE:-Release}"
cpu_arch="${STRATUS_CPU_ARCH:-}"
cuda_arch="${STRATUS_CUDA_ARCH:-90}"
run_example=1
quiet=0
cuda=0
verbose_build=0

for arg in "$@"; do
  case "$arg" in
    --no-example) run_example=0 ;;
    --quiet) quiet=1 ;;
    --cuda) cuda=1 ;;
    --verbose-build) verbose_build=1 ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
case "$cuda_arch" in
  80) cuda_arch_flag=AMPERE80 ;;
  90) cuda_arch_flag=HOPPER90 ;;
  *) echo "setup.sh: STRATUS_CUDA_ARCH=$cuda_arch: expected 80 (A100/A800) or 90 (H100/H200)" >&2; exit 2 ;;
esac
if [ "$cuda" = 1 ]; then
  build_dir="${STRATUS_BUILD_DIR:-$here/build-cuda}"
else
  build_dir="${STRATUS_BUILD_DIR:-$here/build}"
fi

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
# 2. Kokkos
#    Default: Debian 12 ships only a Serial Kokkos 3.4 (inside Trilinos) whose CMake config is
#    broken. The same Trilinos release is in Debian's source archive; its packages/kokkos builds
#    standalone (OpenMP + Serial). With STRATUS_KOKKOS_SOURCE, the Kokkos of that archive (or
#    directory), patched with STRATUS_KOKKOS_PATCH if given, is built instead: OpenMP + Serial,
#    or CUDA + Serial with --cuda. Every build is cached in $cache under a name made of the
#    version, the checksums of source and patch, and the backends, and is reused by later runs.
# ---------------------------------------------------------------------------------------------
kokkos_version=3.4.01
trilinos_version=13.2.0
trilinos_tarball=trilinos_${trilinos_version}.orig.tar.gz
trilinos_sha256=0ddb47784ba7b8a6b9a07a4822b33be508feb4ccd54301b2a5d10c9e54524b90

# kokkos_build SRC PREFIX LOG: configures, builds and installs the Kokkos tree SRC into PREFIX
# with the backends of this run (OpenMP + Serial, or CUDA + Serial for --cuda).
kokkos_build() {
  local src="$1" prefix="$2" log="$3" std="$4" cxx=g++
  local opts=(-DKokkos_ENABLE_SERIAL=ON)
  if [ "$cuda" = 1 ]; then
    # nvcc_wrapper compiles Kokkos itself; Stratus then keeps g++ as its C++ compiler and only
    # the targets that link Kokkos go through nvcc (Kokkos's launcher redirects them).
    cxx="$src/bin/nvcc_wrapper"
    opts+=(-DKokkos_ENABLE_CUDA=ON "-DKokkos_ARCH_${cuda_arch_flag}=ON" -DKokkos_ENABLE_CUDA_LAMBDA=ON)
  else
    opts+=(-DKokkos_ENABLE_OPENMP=ON)
  fi
  local flags=""
  [ "$std" = 17 ] || flags="$kokkos_view_flags"
  cmake -S "$src" -B "$work/kokkos-build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_STANDARD="$std" \
    -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=ON "${opts[@]}" \
    -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF >"$log.configure" 2>&1 ||
    { tail -30 "$log.configure" >&2; die "Kokkos configure failed (log: $log.configure)"; }
  cmake --build "$work/kokkos-build" --parallel >"$log.build" 2>&1 ||
    { tail -30 "$log.build" >&2; die "Kokkos build failed (log: $log.build)"; }
  cmake --install "$work/kokkos-build" >/dev/null
}

# GCC 12.2-12.4 miscompile the mdspan-based Views of Kokkos 4.5-4.6 (kokkos/kokkos#8187): a
# source-built Kokkos gets its Views without [[no_unique_address]], as Stratus's CMake does for
# its own code, so that both sides agree.
kokkos_view_flags=""
case "$(g++ -dumpfullversion 2>/dev/null)" in
  12.2*|12.3*|12.4*) kokkos_view_flags="-DMDSPAN_IMPL_USE_ATTRIBUTE_NO_UNIQUE_ADDRESS=1 -DMDSPAN_IMPL_NO_UNIQUE_ADDRESS=" ;;
esac

new_work() {
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
}

if [ -n "${Kokkos_ROOT:-}" ]; then
  say "Kokkos: using Kokkos_ROOT=$Kokkos_ROOT"
  kokkos_prefix="$Kokkos_ROOT"
elif [ -n "${STRATUS_KOKKOS_SOURCE:-}" ]; then
  ksource="$STRATUS_KOKKOS_SOURCE"
  kpatch="${STRATUS_KOKKOS_PATCH:-}"
  [ -e "$ksource" ] || die "STRATUS_KOKKOS_SOURCE=$ksource does not exist (a Kokkos source .tar.gz or directory)"
  [ -z "$kpatch" ] || [ -f "$kpatch" ] || die "STRATUS_KOKKOS_PATCH=$kpatch does not exist"
  if [ -d "$ksource" ]; then
    src_sum=$(cd "$ksource" && find . -type f -not -path './.git/*' -print0 | LC_ALL=C sort -z |
              xargs -0 sha256sum | sha256sum | cut -c1-12)
  else
    src_sum=$(sha256sum "$ksource" | cut -c1-12)
  fi
  patch_sum=none
  [ -z "$kpatch" ] || patch_sum=$(sha256sum "$kpatch" | cut -c1-12)
  backends=openmp-serial-cxx20
  [ "$cuda" = 1 ] && backends="cuda-sm${cuda_arch}-serial-cxx20"
  [ -z "$kokkos_view_flags" ] || backends="${backends}-views-gcc12"
  kokkos_prefix="$cache/kokkos-src-${src_sum}-patch-${patch_sum}-${backends}"
  if [ -f "$kokkos_prefix/.stratus-complete" ]; then
    say "Kokkos from $ksource ($backends): cached in $kokkos_prefix"
  else
    say "Kokkos from $ksource ($backends): building once into $kokkos_prefix"
    [ "$cuda" = 0 ] || command -v nvcc >/dev/null || die "--cuda needs nvcc on the PATH (the CUDA toolkit)"
    new_work
    if [ -d "$ksource" ]; then
      cp -a "$ksource" "$work/kokkos-src"
    else
      mkdir "$work/kokkos-src"
      tar -xzf "$ksource" -C "$work/kokkos-src" --strip-components=1 ||
        die "cannot unpack $ksource (expected a .tar.gz of a Kokkos source tree)"
    fi
    [ -f "$work/kokkos-src/CMakeLists.txt" ] && [ -d "$work/kokkos-src/core" ] ||
      die "$ksource does not hold a Kokkos source tree (no CMakeLists.txt and core/ at its top)"
    if [ -n "$kpatch" ]; then
      say "applying $kpatch"
      patch -d "$work/kokkos-src" -p1 --quiet <"$kpatch" || die "$kpatch does not apply to $ksource"
    fi
    mkdir -p "$cache/logs"
    # C++20 like Stratus: from Kokkos 4.5 on, Views are mdspan-based and their layout depends
    # on the language standard, so a C++17 Kokkos under C++20 code breaks at run time.
    kokkos_build "$work/kokkos-src" "$kokkos_prefix" "$cache/logs/kokkos-${src_sum}-${backends}" 20
    echo "kokkos from $ksource sha256 ${src_sum} patch ${patch_sum} backends ${backends}" \
      >"$kokkos_prefix/.stratus-complete"
    say "Kokkos installed in $kokkos_prefix"
  fi
elif [ "$cuda" = 1 ]; then
  die "--cuda needs a Kokkos that compiles with this CUDA: set STRATUS_KOKKOS_SOURCE (and STRATUS_KOKKOS_PATCH) or Kokkos_ROOT (Kokkos $kokkos_version, Debian's, does not build with CUDA 13)"
else
  kokkos_prefix="$cache/kokkos-${kokkos_version}-openmp-serial"
  if [ -f "$kokkos_prefix/.stratus-complete" ]; then
    say "Kokkos $kokkos_version (OpenMP, Serial): cached in $kokkos_prefix"
  else
    say "Kokkos $kokkos_version (OpenMP, Serial): building once into $kokkos_prefix"
    new_work
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
    kokkos_build "$ksrc" "$kokkos_prefix" "$work/kokkos" 17
    echo "kokkos ${kokkos_version} from trilinos ${trilinos_version} sha256 ${trilinos_sha256}" \
      >"$kokkos_prefix/.stratus-complete"
    say "Kokkos installed in $kokkos_prefix"
  fi
fi

# ---------------------------------------------------------------------------------------------
# 3. Configure and build Stratus
# ---------------------------------------------------------------------------------------------
if [ -f "$build_dir/CMakeCache.txt" ]; then
  configured=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
  case "$configured" in
    "$kokkos_prefix"/*) ;;
    *) die "$build_dir was configured with the Kokkos in ${configured:-?}, not $kokkos_prefix: remove $build_dir or choose another STRATUS_BUILD_DIR" ;;
  esac
else
  say "configuring Stratus in $build_dir ($build_type)"
  log="$(mktemp)"
  # g++ stays the C++ compiler in the CUDA build too: Kokkos's launcher sends only the targets
  # that link Kokkos (the device floor) through nvcc_wrapper.
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_CXX_COMPILER=g++ -DKokkos_ROOT="$kokkos_prefix" -DSTRATUS_CPU_ARCH="$cpu_arch" >"$log" 2>&1 ||
    { cat "$log" >&2; rm -f "$log"; die "CMake configure failed"; }
  rm -f "$log"
fi
targets=()
for t in ${STRATUS_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
say "building Stratus${STRATUS_BUILD_TARGETS:+ (targets: $STRATUS_BUILD_TARGETS)}"
cmake --build "$build_dir" --parallel "$(nproc)" "${targets[@]}" |
  { if [ "$verbose_build" = 1 ]; then cat; elif [ "$quiet" = 1 ]; then cat >/dev/null; else tail -n 3; fi; }
[ "${PIPESTATUS[0]}" = 0 ] || die "build failed (run: cmake --build $build_dir)"
say "built $build_dir"

# ---------------------------------------------------------------------------------------------
# 4. Run an example deck
# ---------------------------------------------------------------------------------------------
if [ "$run_example" = 1 ] && [ "$cuda" = 1 ] && ! nvidia-smi -L >/dev/null 2>&1; then
  say "no GPU on this machine (nvidia-smi finds none): the CUDA build is not run here"
  run_example=0
fi
if [ "$run_example" = 1 ]; then
  out="$here/runs/quickstart"
  say "running inputs/examples/heat_decay.toml on 2 MPI ranks, output in $out"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=1 OMP_PROC_BIND=false
  mpiexec -n 2 "$build_dir/apps/stratus" run "$here/inputs/examples/heat_decay.toml" --output-dir "$out"
  "$build_dir/apps/stratus" info "$out/heat_decay.h5"
  say "done. Run the tests with: tools/run-tests.sh"
fi
