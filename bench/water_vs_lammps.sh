#!/usr/bin/env bash
# Rigid SPC/E water: Stratus against LAMMPS (Debian's `lmp`) on the same data file, in one run.
#
# tools/make_water_data.py writes MOLECULES molecules (default 4000, 12,000 atoms) on a lattice
# at 0.997 g/cm^3; both codes run it from rest, NVE, 2 fs: lj/cut/coul/long 10 A, PPPM at 1e-5
# relative force accuracy (each code picks its grid and Ewald parameter from it), SHAKE on the
# O-H bonds and the H-O-H angle (tolerance 1e-4), neighbour skin 2 A. Runs alternate between
# the two codes, REPEAT times per rank count; medians are reported with the ratio (Stratus /
# LAMMPS; > 1 means Stratus is faster), then each code's own time split of the last 1-rank run.
#
#   bench/water_vs_lammps.sh                     1 and 2 ranks, 4000 molecules, 200 steps, 3 repeats
#   MOLECULES=512 STEPS=100 bench/water_vs_lammps.sh
#   STRATUS_SET='md.precision="mixed"' bench/water_vs_lammps.sh   Stratus in mixed precision
# (STRATUS_SET: space-separated key=value settings passed to `stratus run --set`).
#
# Needs a built Stratus (tools/setup.sh) and `apt-get install lammps`. One thread per rank.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
lmp="${LMP:-$(command -v lmp || true)}"
steps="${STEPS:-200}"
repeat="${REPEAT:-3}"
ranks_list="${RANKS:-1 2}"
molecules="${MOLECULES:-4000}"
settings=()
for kv in ${STRATUS_SET:-}; do settings+=(--set "$kv"); done
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
[ -n "$lmp" ] || { echo "no lmp: apt-get install lammps" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

python3 "$here/tools/make_water_data.py" --molecules "$molecules" --output "$work/water.data" >/dev/null
natoms=$((3 * molecules))

cat >"$work/lammps.in" <<LMP
units real
atom_style full
boundary p p p
bond_style harmonic
angle_style harmonic
pair_style lj/cut/coul/long 10.0
read_data $work/water.data
kspace_style pppm 1.0e-5
special_bonds lj/coul 0.0 0.0 0.0
neighbor 2.0 bin
neigh_modify every 1 delay 0 check yes
fix 1 all shake 1.0e-4 20 0 b 1 a 1
fix 2 all nve
timestep 2.0
thermo 100
run $steps
LMP

. "$here/bench/lib/common.sh"

printf '%-6s %-8s %16s %12s %12s\n' ranks code atom-steps/s timesteps/s ns/day
for np in $ranks_list; do
  : >"$work/l.$np"
  : >"$work/s.$np"
  for r in $(seq "$repeat"); do
    (cd "$work" && mpiexec -n "$np" "$lmp" -in lammps.in -log "lmp.$np.log" >"lmp.out" 2>&1)
    grep -m1 "^Performance:" "$work/lmp.out" | sed -E 's/.* ([0-9.]+) timesteps\/s.*/\1/' >>"$work/l.$np"
    rm -f "$work/out/bench.summary.json"
    mpiexec -n "$np" "$stratus" run "$here/bench/decks/water_spce.toml" --output-dir "$work/out" \
      --restart none --set "run.steps=$steps" --set "md.read_data.file=\"$work/water.data\"" \
      "${settings[@]}" >"$work/stratus.$np.out" 2>&1
    /usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['throughput']['steps_per_second'])" \
      "$work/out/bench.summary.json" >>"$work/s.$np"
  done
  l=$(median <"$work/l.$np")
  s=$(median <"$work/s.$np")
  for code in lammps stratus; do
    v=$([ "$code" = lammps ] && echo "$l" || echo "$s")
    printf '%-6s %-8s %16.4g %12.4g %12.4g\n' "$np" "$code" "$(echo "$v * $natoms" | bc -l)" "$v" \
      "$(echo "$v * 2.0 * 86400 / 1000000" | bc -l)"
  done
  printf '%-6s ratio stratus/lammps = %.3f  (%d molecules, %s steps, median of %s)\n' "$np" \
    "$(echo "$s / $l" | bc -l)" "$molecules" "$steps" "$repeat"
done
first=$(echo "$ranks_list" | awk '{print $1}')
echo
echo "LAMMPS's time split ($first rank(s), last run):"
grep -A9 "^MPI task timing breakdown" "$work/lmp.$first.log" | tail -8
echo
echo "Stratus's time split ($first rank(s), last run):"
grep -E "^    md: " "$work/stratus.$first.out" || true
grep -E "PPPM" "$work/stratus.$first.out" | sed 's/^/  /' || true
grep -E "G vector|grid =" "$work/lmp.$first.log" | sed 's/^/  lmp: /' || true
