#!/usr/bin/env bash
# The euler solver against Athena++ on the same blast wave, in one run (issue 16).
#
# Athena++'s `blast` problem generator (configure --prob blast --flux hllc, built with -mpi
# outside this repository; ATHENA=path/to/bin/athena): a sphere of radius 0.1 at pressure
# 100 x 0.1 in gas at rest with density 1 and pressure 0.1, gamma 5/3, in the periodic cube
# [-0.5, 0.5]^3. Stratus runs the same state with its `sedov` problem (bench/lib/euler_blast.sh).
# Both: PLM (Athena++ xorder = 2; Stratus van Leer limiter), HLLC, RK2.
#
# Two comparisons, each code at its own default CFL number (Athena++ 0.3, the value of its
# athinput.blast; Stratus 0.8). They are defined differently (Athena++ takes
# dt = C min over cells and directions of dx_a / (|u_a| + c), Stratus dt = C / max over cells
# of sum_a (|u_a| + c) / dx_a, about 3x smaller at the same C in 3D):
#   per cycle      NLIM cycles (default 20): zone-cycles per wall second of the time loop
#   to a time      to simulated time TLIM (default 0.01): wall seconds and cycles
#
# SCHEME=plm (default): both PLM as above. SCHEME=high: the third-order-class reconstruction of
# each code, Athena++'s PPM (xorder = 3) against Stratus's WENO5-Z (euler.reconstruction =
# "weno5z", its default second-order face fluxes); INTEGRATOR (default rk2) for both. PPM needs
# an Athena++ configured with --nghost=3 or more (the PLM build has 2).
#
#   ATHENA=/path/athena bench/euler_vs_athena.sh          128^3, 1 and 2 ranks
#   CELLS=64 CFL_STRATUS=1.0 ATHENA=... bench/euler_vs_athena.sh
#
# Runs alternate Athena++ / Stratus, REPEAT times (default 1: each 128^3 run is long here);
# medians reported with the ratio Stratus / Athena++ (> 1: Stratus faster). One thread a rank.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
athena="${ATHENA:-}"
cells="${CELLS:-128}"
nlim="${NLIM:-20}"
tlim="${TLIM:-0.01}"
repeat="${REPEAT:-1}"
ranks_list="${RANKS:-1 2}"
cfl_athena="${CFL_ATHENA:-0.3}"
cfl_stratus="${CFL_STRATUS:-0.8}"
scheme="${SCHEME:-plm}"
integrator="${INTEGRATOR:-rk2}"
case "$scheme" in
  plm) xorder=2 stratus_sets=() ;;
  high) xorder=3 stratus_sets=(--set 'euler.reconstruction="weno5z"') ;;
  *) echo "euler_vs_athena: SCHEME must be plm or high, not '$scheme'" >&2; exit 2 ;;
esac
python=/usr/bin/python3
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
# shellcheck source=lib/euler_blast.sh
. "$here/bench/lib/euler_blast.sh"
need_athena euler_vs_athena

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

# run_athena RANKS NLIM TLIM: "wall_seconds cycles own_rate": the whole job's wall time (set-up
# included, as for Stratus) and the zone-cycles per CPU second Athena++ reports for its loop
run_athena() {
  athinput "$2" "$3" "$1" >"$work/athinput"
  rm -rf "$work/ath" && mkdir -p "$work/ath"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$work/ath" && mpiexec -n "$1" --oversubscribe "$athena" -i "$work/athinput" >"$work/ath.log" 2>&1) || {
    echo "Athena++ failed; its log ends:" >&2; tail -20 "$work/ath.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  "$python" - "$work/ath.log" "$t0" "$t1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
cycles = int(re.findall(r"time=\S+ cycle=(\d+)", t)[-1])
zc = float(re.search(r"zone-cycles/cpu_second\s*=\s*([0-9.eE+-]+)", t).group(1))
print(float(sys.argv[3]) - float(sys.argv[2]), cycles, zc)
PY
}

# run_stratus RANKS NLIM TLIM: "wall_seconds cycles own_rate": the whole job's wall time and the
# cell updates per second of the time loop (the run summary)
run_stratus() {
  blast_deck "$cells" "$2" "$3" "$integrator" "$cfl_stratus" 0 >"$work/bench.toml"
  rm -f "$work/out/bench.summary.json"
  local t0 t1
  t0=$(date +%s.%N)
  mpiexec -n "$1" --oversubscribe "$stratus" run "$work/bench.toml" --output-dir "$work/out" \
    --restart none "${stratus_sets[@]}" >"$work/stratus.log" 2>&1 || {
    echo "Stratus failed; its log ends:" >&2; tail -20 "$work/stratus.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  "$python" - "$work/out/bench.summary.json" "$t0" "$t1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(float(sys.argv[3]) - float(sys.argv[2]), s["steps"]["run"], s["throughput"]["work_per_second"])
PY
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { awk -v c="$1" '{print $c}'; }

if [ "$scheme" = plm ]; then what_scheme="PLM"; else what_scheme="Athena++ PPM, Stratus WENO5-Z"; fi
echo "euler_vs_athena: blast ${cells}^3, $what_scheme + HLLC + ${integrator^^}; CFL Athena++ $cfl_athena, Stratus $cfl_stratus;" \
     "$repeat repeat(s); load $(cut -d' ' -f1-3 /proc/loadavg)"
# zone-cycles/s: cells x cycles / the job's wall time (set-up included); own: each code's figure
# for its loop alone (Athena++: per CPU second of rank 0; Stratus: per wall second).
printf '%-6s %-9s %-8s %14s %14s %10s %10s\n' ranks what code "zone-cyc/s" "own" cycles "wall s"
for np in $ranks_list; do
  for what in cycles time; do
    if [ "$what" = cycles ]; then n=$nlim t=0; else n=100000000 t=$tlim; fi
    [ "$what" = cycles ] && ta=100 || ta=$tlim  # Athena++'s tlim must be reached after nlim
    : >"$work/a" && : >"$work/s"
    for r in $(seq "$repeat"); do
      run_athena "$np" "$( [ "$what" = cycles ] && echo "$nlim" || echo -1 )" "$ta" >>"$work/a"
      run_stratus "$np" "$n" "$t" >>"$work/s"
    done
    for code in athena stratus; do
      f="$work/${code:0:1}"
      w=$(col 1 <"$f" | median)
      c=$(col 2 <"$f" | median)
      printf '%-6s %-9s %-8s %14.4g %14.4g %10s %10.2f\n' "$np" "$what" "$code" \
        "$(awk -v n="$cells" -v c="$c" -v w="$w" 'BEGIN {print n * n * n * c / w}')" \
        "$(col 3 <"$f" | median)" "$c" "$w"
    done
    if [ "$what" = cycles ]; then
      ratio=$(paste <(col 1 <"$work/a" | median) <(col 1 <"$work/s" | median) | awk '{printf "%.3f", $1 / $2}')
      own=$(paste <(col 3 <"$work/s" | median) <(col 3 <"$work/a" | median) | awk '{printf "%.3f", $1 / $2}')
      echo "$np      per cycle ($nlim each): Stratus / Athena++ = $ratio (job wall time); $own (each loop's own rate)"
    else
      ratio=$(paste <(col 1 <"$work/a" | median) <(col 1 <"$work/s" | median) | awk '{printf "%.3f", $1 / $2}')
      echo "$np      to t = $tlim: Stratus / Athena++ = $ratio (speed: Athena++ wall time / Stratus wall time)"
    fi
  done
done
