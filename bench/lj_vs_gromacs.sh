#!/usr/bin/env bash
# Lennard-Jones liquid: Stratus against GROMACS (Debian's `gromacs` package: `gmx`, its mixed
# precision build, and `gmx_d`, double) on the same machine, in one run, alternating.
#
# The system of LAMMPS's bench/in.lj (as bench/lj_vs_lammps.sh): fcc at reduced density 0.8442,
# 20^3 cells (32,000 atoms), T = 1.44, LJ truncated at 2.5 sigma, skin 0.3 sigma, lists rebuilt
# every 20 steps, NVE, dt = 0.005 tau. GROMACS gets it in argon units: sigma = 0.34 nm,
# epsilon = 0.996 kJ/mol, m = 39.948 u, so rvdw = 0.85 nm, rlist = 0.952 nm, tau = sigma
# sqrt(m / epsilon) = 2.1570 ps, dt = 0.010785 ps and T = 1.44 epsilon / k_B = 172.5 K; plain
# truncation (vdw-modifier = None, no dispersion correction), Verlet buffer fixed
# (verlet-buffer-tolerance = -1), no charges (its LJ-only kernels), one thread per rank, pinned.
#
# Stratus runs twice per repeat: md.precision = "mixed" (cluster-pair lists, float pair
# interactions) and "double" (the default: half lists). Each code's throughput comes from its
# own loop timer (GROMACS's "Wall t" of the run, Stratus's time loop), medians of REPEAT runs;
# ratios are Stratus / GROMACS mixed (> 1: Stratus is faster).
#
#   bench/lj_vs_gromacs.sh                     1 and 2 ranks, 1000 steps, 3 repeats
#   RANKS=1 REPEAT=5 bench/lj_vs_gromacs.sh
#   STRATUS=/path/to/a/native/build/apps/stratus bench/lj_vs_gromacs.sh
#
# Needs a built Stratus (tools/setup.sh), `apt-get install gromacs` and g++ (bench/lib/gromacs.sh:
# where GROMACS 2022 refuses to start because CPUID hides rdtscp, a shim is preloaded).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
gmx="${GMX:-$(command -v gmx || true)}"
gmx_d="${GMX_D:-$(command -v gmx_d || true)}"
steps="${STEPS:-1000}"
repeat="${REPEAT:-3}"
ranks_list="${RANKS:-1 2}"
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
[ -n "$gmx" ] || { echo "no gmx: apt-get install gromacs" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false
export GMX_MAXBACKUP=-1

# The lattice, as Stratus builds it: fcc cells of side a = (4 / 0.8442)^(1/3) sigma.
/usr/bin/python3 - "$work/conf.gro" <<'PY'
import sys
cells, sigma = 20, 0.34
a = (4 / 0.8442) ** (1 / 3) * sigma
basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
lines = ["argon, the in.lj lattice", str(4 * cells ** 3)]
n = 0
for i in range(cells):
    for j in range(cells):
        for k in range(cells):
            for b in basis:
                n += 1
                x, y, z = ((i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a)
                lines.append("%5d%-5s%5s%5d%8.3f%8.3f%8.3f" % (n % 100000, "AR", "AR", n % 100000, x, y, z))
lines.append("%10.5f%10.5f%10.5f" % ((cells * a,) * 3))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
cat >"$work/topol.top" <<'TOP'
[ defaults ]
; nbfunc comb-rule gen-pairs
1 2 no
[ atomtypes ]
; name mass charge ptype sigma epsilon
AR 39.948 0.0 A 0.34 0.996
[ moleculetype ]
AR 1
[ atoms ]
1 AR 1 AR AR 1 0.0 39.948
[ system ]
argon (in.lj)
[ molecules ]
AR 32000
TOP
cat >"$work/md.mdp" <<MDP
integrator = md
dt = 0.010785
nsteps = $steps
cutoff-scheme = Verlet
nstlist = 20
rlist = 0.952
verlet-buffer-tolerance = -1
coulombtype = Cut-off
rcoulomb = 0.85
vdwtype = Cut-off
vdw-modifier = None
rvdw = 0.85
DispCorr = no
tcoupl = no
pcoupl = no
gen-vel = yes
gen-temp = 172.5
gen-seed = 87287
nstcalcenergy = 100
nstenergy = 100
nstlog = 100
MDP

. "$here/bench/lib/common.sh"
. "$here/bench/lib/gromacs.sh"
gmx_grompp "$gmx" mixed.tpr
[ -z "$gmx_d" ] || gmx_grompp "$gmx_d" double.tpr
gmx_start "$gmx" mixed.tpr

# run_stratus PRECISION RANKS TAG: steps/s of the time loop appended to $work/TAG.RANKS.
run_stratus() {
  rm -f "$work/out/bench.summary.json"
  mpiexec -n "$2" "$stratus" run "$here/bench/decks/lj_inlj.toml" --output-dir "$work/out" \
    --restart none --set "run.steps=$steps" --set "md.precision=\"$1\"" \
    --set checkpoint.at_end=false --set checkpoint.interval=off >"$work/$3.out" 2>&1 ||
    { echo "stratus failed:" >&2; tail -20 "$work/$3.out" >&2; exit 1; }
  /usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['throughput']['steps_per_second'])" \
    "$work/out/bench.summary.json" >>"$work/$3.$2"
}

natoms=32000
printf '%-6s %-24s %16s %14s\n' ranks code atom-steps/s "/ GROMACS mixed"
for np in $ranks_list; do
  for tag in gm gd sm sd; do : >"$work/$tag.$np"; done
  for r in $(seq "$repeat"); do
    gmx_run "$gmx" mixed.tpr "$np" gm
    run_stratus mixed "$np" sm
    [ -z "$gmx_d" ] || gmx_run "$gmx_d" double.tpr "$np" gd
    run_stratus double "$np" sd
  done
  ref=$(median <"$work/gm.$np")
  for tag in gm gd sm sd; do
    [ -s "$work/$tag.$np" ] || continue
    case $tag in
      gm) name="GROMACS mixed (gmx)" ;; gd) name="GROMACS double (gmx_d)" ;;
      sm) name="Stratus mixed" ;; sd) name="Stratus double" ;;
    esac
    m=$(median <"$work/$tag.$np")
    printf '%-6s %-24s %16.4g %14.3f\n' "$np" "$name" "$(awk -v s="$m" -v n=$natoms 'BEGIN {print s * n}')" \
      "$(awk -v a="$m" -v b="$ref" 'BEGIN {print a / b}')"
  done
done
echo "# medians of $repeat runs of $steps steps; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
