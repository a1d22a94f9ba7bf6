#!/usr/bin/env bash
# Rigid SPC/E water: Stratus against GROMACS (Debian's `gromacs`: `gmx`, mixed precision, and
# `gmx_d`, double) on the same molecules, in one run, alternating.
#
# tools/make_water_data.py writes MOLECULES molecules (default 4000, 12,000 atoms) on a lattice at
# 0.997 g/cm^3 as a LAMMPS data file for Stratus and, with --gromacs, as conf.gro (nm, 5 decimals)
# and topol.top (SPC/E with SETTLE, intramolecular pairs excluded) for GROMACS. Both run from
# rest, NVE, 2 fs, the Lennard-Jones term plainly truncated at 1.0 nm (vdw-modifier = None, no
# dispersion correction: LAMMPS's lj/cut), the Coulomb term by Ewald with the same split and mesh:
# Stratus chooses PPPM's grid and g_ewald for a relative force accuracy of 1e-5 (as
# bench/water_vs_lammps.sh), and GROMACS's PME gets that grid (fourier-nx/ny/nz), the same order 5
# and ewald-rtol = erfc(g_ewald r_c), so that both split the sum at the same place (GROMACS's PME
# and PPPM differ in their influence function, not in cost). Lists: Stratus's skin 2 A (rebuilt when
# an atom moved half of it), GROMACS's rlist 1.2 nm every 10 steps (verlet-buffer-tolerance = -1).
# Constraints: SHAKE at 1e-4 for Stratus, SETTLE (analytic) for GROMACS. One thread per rank,
# GROMACS pinned, no separate PME ranks. Throughput from each code's own loop timer (GROMACS's
# "Wall t", Stratus's time loop), medians of REPEAT runs; ratios are Stratus / GROMACS (> 1:
# Stratus is faster). Stratus runs twice per repeat, md.precision = "double" and "mixed" (float
# pair interactions on cluster-pair lists, as GROMACS's default build), each compared with the
# GROMACS build of its precision.
#
#   bench/water_vs_gromacs.sh                       1 and 2 ranks, 4000 molecules, 200 steps, 3 repeats
#   MOLECULES=512 STEPS=100 RANKS=1 bench/water_vs_gromacs.sh
#
# Needs a built Stratus (tools/setup.sh), `apt-get install gromacs` and g++ (bench/lib/gromacs.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
gmx="${GMX:-$(command -v gmx || true)}"
gmx_d="${GMX_D:-$(command -v gmx_d || true)}"
steps="${STEPS:-200}"
repeat="${REPEAT:-3}"
ranks_list="${RANKS:-1 2}"
molecules="${MOLECULES:-4000}"
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
[ -n "$gmx" ] || { echo "no gmx: apt-get install gromacs" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false
export GMX_MAXBACKUP=-1
. "$here/bench/lib/common.sh"
. "$here/bench/lib/gromacs.sh"

/usr/bin/python3 "$here/tools/make_water_data.py" --molecules "$molecules" \
  --output "$work/water.data" --gromacs "$work/water" >/dev/null
mv "$work/water.gro" "$work/conf.gro"
mv "$work/water.top" "$work/topol.top"
natoms=$((3 * molecules))

# run_stratus RANKS STEPS PRECISION TAG: steps/s of the time loop appended to $work/TAG.RANKS;
# output kept in $work/TAG.RANKS.out.
run_stratus() {
  rm -f "$work/out/bench.summary.json"
  mpiexec -n "$1" "$stratus" run "$here/bench/decks/water_spce.toml" --output-dir "$work/out" \
    --restart none --set "run.steps=$2" --set "md.read_data.file=\"$work/water.data\"" \
    --set "md.precision=\"$3\"" --set checkpoint.at_end=false --set checkpoint.interval=off \
    >"$work/$4.$1.out" 2>&1 ||
    { echo "stratus failed:" >&2; tail -20 "$work/$4.$1.out" >&2; exit 1; }
  /usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['throughput']['steps_per_second'])" \
    "$work/out/bench.summary.json" >>"$work/$4.$1"
}

# Stratus's PPPM choice (one step), which GROMACS's PME then takes.
run_stratus 1 1 double sd
cp "$work/sd.1.out" "$work/stratus.1.out"
pppm=$(grep -m1 "PPPM order" "$work/stratus.1.out")
read -r nx ny nz g <<<"$(echo "$pppm" | sed -E 's/.*grid ([0-9]+) x ([0-9]+) x ([0-9]+), g_ewald ([0-9.eE+-]+),.*/\1 \2 \3 \4/')"
rtol=$(/usr/bin/python3 -c "import math, sys; print('%.6e' % math.erfc(float(sys.argv[1]) * 10.0))" "$g")
echo "# Stratus:$(echo "$pppm" | sed 's/^ *md://')"
echo "# GROMACS PME: grid $nx x $ny x $nz, order 5, ewald-rtol $rtol (= erfc(g_ewald * 10 A))"

cat >"$work/md.mdp" <<MDP
integrator = md
dt = 0.002
nsteps = $steps
cutoff-scheme = Verlet
nstlist = 10
rlist = 1.2
verlet-buffer-tolerance = -1
coulombtype = PME
coulomb-modifier = None
rcoulomb = 1.0
ewald-rtol = $rtol
fourier-nx = $nx
fourier-ny = $ny
fourier-nz = $nz
pme-order = 5
vdwtype = Cut-off
vdw-modifier = None
rvdw = 1.0
DispCorr = no
tcoupl = no
pcoupl = no
gen-vel = no
continuation = no
nstcalcenergy = 100
nstenergy = 100
nstlog = 100
MDP
gmx_grompp "$gmx" mixed.tpr
[ -z "$gmx_d" ] || gmx_grompp "$gmx_d" double.tpr
gmx_start "$gmx" mixed.tpr

printf '%-6s %-24s %16s %10s %22s\n' ranks code atom-steps/s ns/day "Stratus same precision / it"
for np in $ranks_list; do
  for tag in gm gd sm sd; do : >"$work/$tag.$np"; done
  for r in $(seq "$repeat"); do
    gmx_run "$gmx" mixed.tpr "$np" gm
    run_stratus "$np" "$steps" mixed sm
    [ -z "$gmx_d" ] || gmx_run "$gmx_d" double.tpr "$np" gd
    run_stratus "$np" "$steps" double sd
  done
  for tag in gm gd sm sd; do
    [ -s "$work/$tag.$np" ] || continue
    case $tag in
      gm) name="GROMACS mixed (gmx)" ours=sm ;; gd) name="GROMACS double (gmx_d)" ours=sd ;;
      sm) name="Stratus mixed" ours= ;; sd) name="Stratus double" ours= ;;
    esac
    m=$(median <"$work/$tag.$np")
    printf '%-6s %-24s %16.4g %10.3g %22s\n' "$np" "$name" "$(awk -v v="$m" -v n=$natoms 'BEGIN {print v * n}')" \
      "$(awk -v v="$m" 'BEGIN {print v * 0.002 * 86400 / 1000}')" \
      "$([ -z "$ours" ] && echo - || awk -v a="$(median <"$work/$ours.$np")" -v b="$m" 'BEGIN {printf "%.3f", a / b}')"
  done
done
first=$(echo "$ranks_list" | awk '{print $1}')
echo
echo "GROMACS mixed's time split ($first rank(s), last run):"
grep -A30 "R E A L   C Y C L E" "$work/run_gm.$first.log" | grep -E "Neighbor search|Force|PME|Constraints|Update|Comm|Rest|Total" | sed 's/^/  /' || true
echo "Stratus's time split ($first rank(s), last run):"
grep -E "^    md: " "$work/sd.$first.out" || true
echo "# medians of $repeat runs of $steps steps, $molecules molecules; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
