#!/usr/bin/env bash
# Euler solver throughput: cell updates per second per core on a 128^3 grid at 1 and 2 ranks,
# set against a memory-bandwidth floor measured in the same run.
#
# The floor: a step of an RK method with S stages must at least read and write the five
# conserved fields once per stage and save them once per step (the RK base state), that is
# B = (2 S + 1) * 5 * 8 bytes per cell. A STREAM-like copy (numpy, one process per rank, run at
# the same time as many as there are ranks) moves B * cells bytes per step's worth of data and
# gives the bandwidth W per core; the floor is W / B cell updates per second per core. The
# solver moves much more (face fluxes, reconstruction stencils, ghost exchange), so the
# fraction of the floor says how far the kernels are from memory-speed streaming.
#
#   bench/euler_cells.sh                        128^3, PLM + HLLC + RK3, 6 steps, 1 and 2 ranks
#   CELLS=64 STEPS=20 SCHEME=weno bench/euler_cells.sh
#   STRATUS_BASELINE=/path/to/old/stratus bench/euler_cells.sh
#                                               also an earlier build, alternating in the same run:
#                                               its rate and the before/after ratio
#
# One thread per rank; runs alternate solver / copy, REPEAT times, medians reported.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
cells="${CELLS:-128}"
steps="${STEPS:-6}"
repeat="${REPEAT:-3}"
ranks_list="${RANKS:-1 2}"
scheme="${SCHEME:-plm}"
python=/usr/bin/python3
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
baseline="${STRATUS_BASELINE:-}"
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "STRATUS_BASELINE: no executable at $baseline" >&2; exit 2; }
"$python" -c "import numpy" 2>/dev/null || { echo "needs $python with numpy" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

case "$scheme" in
  plm) recon='reconstruction = "plm"'; stages=3 ;;
  weno) recon='reconstruction = "weno5z"'; stages=3 ;;
  *) echo "SCHEME must be plm or weno" >&2; exit 2 ;;
esac
cat >"$work/bench.toml" <<DECK
[run]
solver = "euler"
steps = $steps
[euler]
cells = [$cells, $cells, $cells]
box_hi = [6.283185307179586, 6.283185307179586, 6.283185307179586]
$recon
riemann = "hllc"
integrator = "rk3"
log_every = 0
write_fields = false
[euler.initial]
problem = "taylor_green"
mach = 0.3
[checkpoint]
interval = "off"
at_end = false
DECK

bytes_per_cell=$(( (2 * stages + 1) * 5 * 8 ))
ncells=$(( cells * cells * cells ))

# Copy bandwidth per process (GB/s) with `n` copies running at once; each copies the bytes
# one rank's share of a step moves: bytes_per_cell * ncells / n (read + write counted).
copy_bw() {
  local n=$1
  local per=$(( bytes_per_cell * ncells / n ))
  local pids=() out=()
  for r in $(seq 1 "$n"); do
    "$python" - "$per" >"$work/copy.$r" <<'PY' &
import sys, time
import numpy as np
total = int(sys.argv[1])          # bytes moved: read + write
n = total // 16                   # doubles per array
a = np.ones(n); b = np.zeros(n)
np.copyto(b, a)                   # touch the pages first
best = 0.0
for _ in range(5):
    t = time.perf_counter(); np.copyto(b, a); dt = time.perf_counter() - t
    best = max(best, 16 * n / dt)
print(best / 1e9)
PY
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  cat "$work"/copy.* | "$python" -c "import sys; v=[float(x) for x in sys.stdin]; print(sum(v)/len(v))"
  rm -f "$work"/copy.*
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# cell_rate BINARY RANKS LOG: one run's cell updates per second (its summary's work_per_second).
cell_rate() {
  rm -f "$work/out/bench.summary.json"  # a failed run must not report the previous figures
  if [ "$2" = 1 ]; then
    "$1" run "$work/bench.toml" --output-dir "$work/out" --restart none >"$3" 2>&1
  else
    mpiexec -n "$2" --oversubscribe "$1" run "$work/bench.toml" --output-dir "$work/out" --restart none >"$3" 2>&1
  fi
  local rate
  rate=$("$python" -c "import json, sys; print(json.load(open(sys.argv[1]))['throughput']['work_per_second'])" \
         "$work/out/bench.summary.json" 2>/dev/null)
  [ -n "$rate" ] || { echo "no rate in bench.summary.json ($1); the log ends:" >&2; tail -20 "$3" >&2; exit 1; }
  echo "$rate"
}

echo "euler_cells: ${cells}^3 cells, $scheme + HLLC + RK3, $steps steps, $repeat repeats; floor traffic $bytes_per_cell B/cell-update"
printf "%6s %16s %16s %12s %16s %10s\n" ranks "updates/s" "per core" "copy GB/s" "floor/core" fraction
for n in $ranks_list; do
  rates="" bws="" base_rates=""
  for rep in $(seq 1 "$repeat"); do
    rates="$rates $(cell_rate "$stratus" "$n" "$work/run.$n.$rep.log")"
    [ -z "$baseline" ] || base_rates="$base_rates $(cell_rate "$baseline" "$n" "$work/base.$n.$rep.log")"
    bws="$bws $(copy_bw "$n")"
  done
  rate=$(echo "$rates" | median)
  bw=$(echo "$bws" | median)
  "$python" - "$n" "$rate" "$bw" "$bytes_per_cell" <<'PY'
import sys
n, rate, bw, b = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
per_core = rate / n
floor = bw * 1e9 / b
print(f"{n:6d} {rate:16.4e} {per_core:16.4e} {bw:12.2f} {floor:16.4e} {per_core / floor:10.3f}")
PY
  if [ -n "$baseline" ]; then
    base=$(echo "$base_rates" | median)
    "$python" -c "import sys; s, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{int(sys.argv[3]):6d} baseline {b:.4e} updates/s; ratio stratus/baseline = {s / b:.3f} ({sys.argv[4]})')" \
      "$rate" "$base" "$n" "$baseline"
  fi
done
