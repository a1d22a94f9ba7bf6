#!/usr/bin/env bash
# The largest stable CFL number of the euler solver, by a sweep (issue 16).
#
# The blast of bench/euler_vs_athena.sh (pressure 10 in a sphere of radius 0.1, 0.1 outside,
# gamma 5/3, periodic cube) at CELLS^3 to t = TEND, PLM (van Leer) + HLLC, for each integrator
# in INTEGRATORS and each Courant number in CFLS. Stratus's definition:
#   dt = cfl / max over cells of sum_a (|u_a| + c) / dx_a
# (Athena++ takes min_a dx_a / (|u_a| + c) instead: about 3x larger in 3D at the same number).
# A run is stable when it reaches TEND (no non-positive density or pressure, which stops it with
# exit 1) with its minimum density and pressure (over rows every 2 steps) within 5% of the
# smallest-CFL run's: an unstable step shows as undershoots there long before it turns negative.
#
# SETS: deck overrides for every run (`stratus run --set`), for the other schemes.
#
#   bench/euler_cfl_sweep.sh                     64^3 to t = 0.05, rk2 and rk3, cfl 0.3 .. 1.0
#   CELLS=128 CFLS="0.8 0.9 1.0" bench/euler_cfl_sweep.sh
#   SETS='euler.reconstruction="weno5z"' INTEGRATORS="rk3 rk4" bench/euler_cfl_sweep.sh
#   SETS='euler.reconstruction="weno5z" euler.fourth_order=true' INTEGRATORS=rk4 bench/euler_cfl_sweep.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
cells="${CELLS:-64}"
tend="${TEND:-0.05}"
cfls="${CFLS:-0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0}"
integrators="${INTEGRATORS:-rk2 rk3}"
ranks="${RANKS:-2}"
read -r -a sets <<<"${SETS:-}"
set_args=()
for s in "${sets[@]}"; do set_args+=(--set "$s"); done
python=/usr/bin/python3
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# shellcheck source=lib/euler_blast.sh
. "$here/bench/lib/euler_blast.sh"

echo "euler_cfl_sweep: blast ${cells}^3 to t = $tend, PLM (van Leer) + HLLC${SETS:+, with $SETS}, $ranks ranks; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %5s %8s %8s %12s %12s %s\n' integ cfl steps "wall s" "min rho" "min p" verdict
for integ in $integrators; do
  ref_rho="" ref_p=""
  for cfl in $cfls; do
    blast_deck "$cells" 100000000 "$tend" "$integ" "$cfl" 2 >"$work/deck.toml"
    rm -rf "$work/out"
    t0=$(date +%s.%N)
    if mpiexec -n "$ranks" --oversubscribe "$stratus" run "$work/deck.toml" --output-dir "$work/out" \
        --restart none "${set_args[@]}" >"$work/log" 2>&1; then
      t1=$(date +%s.%N)
      read -r steps rho p < <("$python" - "$work/out" <<'PY'
import csv, glob, sys
rows = list(csv.DictReader(open(glob.glob(sys.argv[1] + "/*.series.csv")[0])))
print(rows[-1]["step"], min(float(r["min_density"]) for r in rows), min(float(r["min_pressure"]) for r in rows))
PY
)
      [ -n "$ref_rho" ] || { ref_rho=$rho; ref_p=$p; }
      verdict=$("$python" -c "import sys; r, p, r0, p0 = map(float, sys.argv[1:]); print('stable' if r > 0.95 * r0 and p > 0.95 * p0 else 'undershoots')" "$rho" "$p" "$ref_rho" "$ref_p")
      printf '%-5s %5s %8s %8.1f %12.5g %12.5g %s\n' "$integ" "$cfl" "$steps" "$(echo "$t1 - $t0" | bc -l)" "$rho" "$p" "$verdict"
    else
      printf '%-5s %5s %8s %8s %12s %12s %s\n' "$integ" "$cfl" - - - - "failed: $(grep -m1 -i "error" "$work/log" | cut -c1-100)"
    fi
  done
done
