#!/usr/bin/env bash
# Runs a pack of bench/gpu/pack.sh on a GPU machine, in one go of at most BUDGET seconds
# (default 450): the tests labelled gpu, then the Lennard-Jones benchmark (LAMMPS's in.lj
# system) at 32k, 256k, 2M and 16M atoms, euler at 256^3 cells and spectral at 256^3 and
# 512^3 points, one rank on one GPU. Prints one table.
#
#   bench/gpu/run.sh PACK.tar.xz          everything
#   bench/gpu/run.sh PACK.tar.xz --quick  the tests and the smallest case of each solver
#   bench/gpu/run.sh --help
#
# Anchors (figures of other codes, not measured here): LAMMPS-KOKKOS on one H100, in.lj at
# 16M atoms, full neighbour lists, double precision: 1.33e9 atom-steps/s; AthenaK on one GH200:
# about 1e9 cell-updates/s. Exit codes: 0 all ran and passed, 1 a test or run failed, 2 bad
# usage or a broken pack, 3 no GPU on this machine (the pack is checked, nothing is run).
set -uo pipefail
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
pack="" quick=0
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    --quick) quick=1 ;;
    -*) echo "run.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
    *) pack="$arg" ;;
  esac
done
[ -n "$pack" ] || { echo "run.sh: expected the pack (bench/gpu/pack.sh makes it)" >&2; usage >&2; exit 2; }
[ -f "$pack" ] || { echo "run.sh: $pack: no such file" >&2; exit 2; }
budget="${BUDGET:-450}"
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
xz -dc "$pack" | tar -C "$work" -xf - || { echo "run.sh: cannot unpack $pack" >&2; exit 2; }
root="$work/stratus-gpu"
[ -x "$root/bin/stratus" ] || { echo "run.sh: $pack holds no bin/stratus" >&2; exit 2; }
cuda_lib="$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda-*/lib64 2>/dev/null | head -n1)"
export LD_LIBRARY_PATH="$root/lib${cuda_lib:+:$cuda_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Open MPI as a singleton (no mpirun, no daemon), with the packed plugins, on one process.
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_mca_base_component_path="$root/lib/openmpi3"
export OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_btl=self OMPI_MCA_pml=ob1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OMP_PROC_BIND=false
stratus="$root/bin/stratus"
decks="$(cd "$(dirname "${BASH_SOURCE[0]}")/../decks" && pwd)"  # the LJ deck of bench/lj_vs_lammps.sh

echo "pack: $(head -n1 "$root/BUILD"), $(wc -l <"$root/tests/manifest") gpu tests"
# libcuda.so.1 is the GPU driver's: it is on a GPU machine, never in the pack.
missing="$(ldd "$stratus" | grep 'not found' | grep -v 'libcuda\.so' || true)"
if [ -n "$missing" ]; then
  echo "run.sh: libraries missing for stratus on this machine:" >&2
  echo "$missing" >&2
  exit 2
fi
gpu="$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n1)"
if [ -z "$gpu" ]; then
  echo "run.sh: no GPU here (nvidia-smi finds none): every library of the pack but the GPU" \
    "driver's is found; nothing is run"
  exit 3
fi
"$stratus" --version | head -n 3
echo "gpu: $gpu"

status=0
rows=()
row() { rows+=("$(printf '%-10s %-12s %6s %9s %12s %-16s %10s %12s' "$@")"); }

# 1. The tests labelled gpu.
passed=0 failed=0 failed_names=""
while read -r name exe; do
  if [ "$(left)" -lt 60 ]; then
    failed_names+=" $name(no-time)"
    failed=$((failed + 1))
    continue
  fi
  if (cd "$work" && timeout 120 "$root/tests/$exe" >"$work/$name.log" 2>&1); then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failed_names+=" $name"
    tail -n 30 "$work/$name.log"
  fi
done <"$root/tests/manifest"
echo "gpu tests: $passed passed, $failed failed${failed_names:+:$failed_names}"
[ "$failed" = 0 ] || status=1

# 2. Benchmarks: one run each, the figures of its run summary.
summary_fields() {
  /usr/bin/env python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = s["throughput"]
dev = s["memory"].get("device_peak_bytes_max")
dev = "-" if dev is None or dev < 0 else f"{dev / 2**20:.0f}"
print(f'{t["work_per_second"]:.4g} {t["work_unit"]} {1e3 / t["steps_per_second"]:.3f} {dev}')
PY
}
bench() {  # bench NAME SIZE STEPS NEED_SECONDS DECK [--set ...]
  local name="$1" size="$2" steps="$3" need="$4" deck="$5"
  shift 5
  if [ "$(left)" -lt "$need" ]; then
    row "$name" "$size" "$steps" "-" "skipped" "(time budget)" "-" "-"
    return
  fi
  local out="$work/out-$name-$size" t0=$SECONDS
  if timeout "$(left)" "$stratus" run "$deck" --output-dir "$out" --restart none \
      --set "run.steps=$steps" --set 'checkpoint.interval="off"' --set checkpoint.at_end=false \
      "$@" >"$out.log" 2>&1; then
    read -r rate unit ms dev < <(summary_fields "$(ls "$out"/*.summary.json | head -n1)")
    row "$name" "$size" "$steps" "$((SECONDS - t0))" "$rate" "$unit" "$ms" "$dev"
  else
    status=1
    row "$name" "$size" "$steps" "$((SECONDS - t0))" "FAILED" "" "-" "-"
    tail -n 20 "$out.log"
  fi
}

cat >"$work/euler.toml" <<'TOML'
[run]
solver = "euler"
steps = 10
name = "euler"
[euler]
cells = [64, 64, 64]
box_hi = [6.283185307179586, 6.283185307179586, 6.283185307179586]
reconstruction = "plm"
riemann = "hllc"
integrator = "rk3"
log_every = 0
write_fields = false
[euler.initial]
problem = "taylor_green"
mach = 0.3
TOML
cat >"$work/spectral.toml" <<'TOML'
[run]
solver = "spectral"
steps = 10
name = "spectral"
[spectral]
points = [64, 64, 64]
viscosity = 0.005
[spectral.time]
scheme = "rk4"
cfl = 0.6
[spectral.forcing]
type = "band"
injection = 0.1
band = [1.0, 2.5]
[spectral.initial]
type = "random"
energy = 0.5
peak = 3.0
seed = 1
[spectral.output]
diag_every = 0
spectrum_every = 0
snapshot_every = 0
TOML

lj_cases="20:5000:30 40:2000:40 80:500:60 160:200:120"
euler_cases="256:40:60"
spectral_cases="256:20:40 512:10:90"
if [ "$quick" = 1 ]; then
  lj_cases="20:2000:20" euler_cases="64:20:20" spectral_cases="64:10:20"
fi
for c in $lj_cases; do
  IFS=: read -r cells steps need <<<"$c"
  bench md "$((4 * cells * cells * cells)) at" "$steps" "$need" "$decks/lj_inlj.toml" \
    --set "md.lattice.cells=[$cells,$cells,$cells]"
done
for c in $euler_cases; do
  IFS=: read -r n steps need <<<"$c"
  bench euler "$n^3" "$steps" "$need" "$work/euler.toml" --set "euler.cells=[$n,$n,$n]"
done
for c in $spectral_cases; do
  IFS=: read -r n steps need <<<"$c"
  bench spectral "$n^3" "$steps" "$need" "$work/spectral.toml" --set "spectral.points=[$n,$n,$n]"
done

echo
echo "Stratus on one GPU ($gpu), $(head -n1 "$root/BUILD"), $((SECONDS - start)) s"
printf '%-10s %-12s %6s %9s %12s %-16s %10s %12s\n' solver size steps "wall [s]" rate unit \
  "ms/step" "dev peak MiB"
for r in "${rows[@]}"; do echo "$r"; done
echo "anchors: LAMMPS-KOKKOS 1 H100 in.lj 16M atoms 1.33e9 atom-steps/s; AthenaK 1 GH200 ~1e9 cell-updates/s"
exit "$status"
