#!/usr/bin/env bash
# Where a cycle's time goes: the euler solver and Athena++ on the same blast (PLM + HLLC + RK2,
# bench/lib/euler_blast.sh), each profiled by `perf record` (cpu-clock samples), one rank, one
# thread. Samples are grouped by function into the same phases for both codes:
#   face fluxes   reconstruction, Riemann solver, sound speeds of the faces
#   stage update  flux divergence and the Runge-Kutta combination
#   primitives    conserved to primitive variables
#   time step     the CFL reduction
#   halo          ghost cells (packing, copies, periodic boundaries)
# Each phase's share of the grouped samples times the loop's own time (Athena++'s "cpu time
# used", Stratus's time loop from its run summary) per cycle gives milliseconds per cycle.
# Samples outside these functions (set-up, page faults, the kernel) are left out and their
# share is printed.
#
#   ATHENA=/path/athena bench/euler_profile.sh           128^3, 12 cycles
#   CELLS=96 NLIM=20 ATHENA=... bench/euler_profile.sh
#
# Needs perf (Debian: linux-perf) and an Athena++ built outside this repository (see
# bench/euler_vs_athena.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
athena="${ATHENA:-}"
cells="${CELLS:-128}"
nlim="${NLIM:-12}"
# shellcheck disable=SC2034  # cfl_athena and xorder are read by athinput (bench/lib)
cfl_athena=0.3 xorder=2
cfl_stratus=0.8
integrator=rk2
python=/usr/bin/python3
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
command -v perf >/dev/null || { echo "euler_profile: no perf (apt-get install linux-perf)" >&2; exit 2; }
# shellcheck source=lib/euler_blast.sh
. "$here/bench/lib/euler_blast.sh"
need_athena euler_profile
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

athinput "$nlim" 1.0 1 >"$work/athinput"
mkdir -p "$work/ath"
(cd "$work/ath" && perf record -q -e cpu-clock -o "$work/ath.data" "$athena" -i "$work/athinput" \
  >"$work/ath.log" 2>&1) || { echo "Athena++ failed:" >&2; tail -20 "$work/ath.log" >&2; exit 1; }
# t_end 0: the cycle count alone stops the run
blast_deck "$cells" "$nlim" 0 "$integrator" "$cfl_stratus" 0 >"$work/blast.toml"
perf record -q -e cpu-clock -o "$work/st.data" "$stratus" run "$work/blast.toml" \
  --output-dir "$work/st" --restart none >"$work/st.log" 2>&1 ||
  { echo "Stratus failed:" >&2; tail -20 "$work/st.log" >&2; exit 1; }
for code in ath st; do
  perf report -i "$work/$code.data" --no-children --sort symbol --stdio 2>/dev/null |
    grep -v '^#' | grep '%' >"$work/$code.symbols" || true
done

"$python" - "$work" "$cells" "$nlim" <<'PY'
import json, re, sys
work, cells, nlim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
phases = ["face fluxes", "stage update", "primitives", "time step", "halo"]
rules = {
    "ath": [("face fluxes", r"RiemannSolver|Reconstruction::|SoundSpeed|CalculateFluxes|Face\dArea"),
            ("stage update", r"AddFluxDivergence|WeightedAve|CellVolume|CenterWidth"),
            ("primitives", r"ConservedToPrimitive"),
            ("time step", r"NewBlockTimeStep"),
            ("halo", r"PackData|UnpackData|Boundary")],
    "st": [("face fluxes", r"FaceFluxKernel|ViscousFluxKernel"),
           ("stage update", r"StageUpdateKernel"),
           ("primitives", r"PrimitivesKernel"),
           ("time step", r"MaxRate"),
           ("halo", r"GridHalo|copy_slab|copy_within|apply_boundar")],
}
def shares(code):
    got = {p: 0.0 for p in phases}
    total = 0.0
    for line in open(f"{work}/{code}.symbols"):
        m = re.match(r"\s*([0-9.]+)%\s+\[[.k]\]\s+(.*)", line)
        if not m:
            continue
        pct, sym = float(m.group(1)), m.group(2)
        total += pct
        for phase, rx in rules[code]:
            if re.search(rx, sym):
                got[phase] += pct
                break
    return got, total
ath_log = open(f"{work}/ath.log").read()
ath_loop = float(re.search(r"cpu time used\s*=\s*([0-9.eE+-]+)", ath_log).group(1))
ath_cycles = int(re.findall(r"time=\S+ cycle=(\d+)", ath_log)[-1])
summary = json.load(open(f"{work}/st/blast.summary.json"))
st_loop = float(summary["wall_seconds"])  # the time loop's wall time
st_cycles = int(summary["steps"]["run"])
rows = {}
for code, loop, cyc in (("ath", ath_loop, ath_cycles), ("st", st_loop, st_cycles)):
    got, total = shares(code)
    grouped = sum(got.values())
    rows[code] = ({p: 1e3 * loop / cyc * got[p] / grouped for p in phases}, 100 - grouped,
                  1e3 * loop / cyc)
print(f"euler_profile: blast {cells}^3, PLM + HLLC + RK2, 1 rank, 1 thread; Athena++ {ath_cycles} "
      f"cycles, Stratus {st_cycles}")
print(f"{'phase':<14} {'Athena++ [ms/cycle]':>20} {'Stratus [ms/cycle]':>19} {'Athena++ / Stratus':>19}")
for p in phases:
    a, s = rows["ath"][0][p], rows["st"][0][p]
    ratio = f"{a / s:.2f}" if s > 0 else "-"
    print(f"{p:<14} {a:20.1f} {s:19.1f} {ratio:>19}")
a, s = rows["ath"][2], rows["st"][2]
print(f"{'cycle':<14} {a:20.1f} {s:19.1f} {a / s:19.2f}")
print(f"(samples outside these phases: Athena++ {rows['ath'][1]:.0f}%, Stratus {rows['st'][1]:.0f}% "
      "of each run: set-up and the kernel)")
PY
