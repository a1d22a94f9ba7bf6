#!/usr/bin/env bash
# Lennard-Jones liquid: Stratus against LAMMPS (Debian's `lmp`) on the same machine, in one run.
#
# The same system as LAMMPS's bench/in.lj: fcc lattice at reduced density 0.8442, 20x20x20 unit
# cells (32,000 atoms), T = 1.44, lj/cut 2.5, skin 0.3, lists rebuilt every 20 steps, NVE,
# dt = 0.005. Runs alternate between the two codes, REPEAT times per rank count, and the
# median of each is reported with the ratio (Stratus / LAMMPS; > 1 means Stratus is faster).
#
#   bench/lj_vs_lammps.sh                  1 and 2 ranks, in.lj box, 1000 steps, 3 repeats
#   CELLS=32 bench/lj_vs_lammps.sh         a 4x larger system (131,072 atoms): weak scaling
#   STRATUS_BASELINE=/path/to/old/stratus bench/lj_vs_lammps.sh
#                                          also an earlier Stratus build, in the same alternation:
#                                          a before/after ratio from one run
#
# Peak resident memory per atom is reported twice: with each code saving its state at the end
# (Stratus's end-of-run checkpoint, LAMMPS's write_restart: the same work), and with neither
# doing so (one more run of each, checkpoint.at_end = false and no write_restart). LAMMPS's
# Performance line times its run loop only, so write_restart does not change its throughput.
#
# Needs a built Stratus (tools/setup.sh) and `apt-get install lammps`. One thread per rank.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
lmp="${LMP:-$(command -v lmp || true)}"
steps="${STEPS:-1000}"
repeat="${REPEAT:-3}"
ranks_list="${RANKS:-1 2}"
cells="${CELLS:-20}"
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
[ -n "$lmp" ] || { echo "no lmp: apt-get install lammps" >&2; exit 2; }
baseline="${STRATUS_BASELINE:-}"
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "STRATUS_BASELINE: no executable at $baseline" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

cat >"$work/lammps.in" <<LMP
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 $cells 0 $cells 0 $cells
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
thermo 100
run $steps
LMP
# The same run saving its state at the end, as Stratus's end-of-run checkpoint does.
cp "$work/lammps.in" "$work/lammps-plain.in"
echo "write_restart lammps.restart" >>"$work/lammps.in"


. "$here/bench/lib/common.sh"
# Peak resident memory (kB) of the whole job, from GNU time's %M (max over the ranks, per rank).
run_timed() { /usr/bin/time -f "%M" -o "$work/rss" "$@"; }

# run_stratus BINARY RANKS TAG: one run; its steps/s appended to $work/TAG.RANKS, its peak RSS in
# $work/TAG.rss.RANKS.
run_stratus() {
  local extra=("${@:4}")
  # --restart none: every repeat runs all its steps (the previous repeat's end-of-run checkpoint
  # would otherwise make it "already complete"); the old summary goes first so that a failed
  # run cannot report the previous one's figures.
  rm -f "$work/out/bench.summary.json"
  run_timed mpiexec -n "$2" "$1" run "$here/bench/decks/lj_inlj.toml" --output-dir "$work/out" \
    --restart none --set "run.steps=$steps" --set "md.lattice.cells=[$cells,$cells,$cells]" \
    "${extra[@]}" >"$work/$3.out" 2>&1
  /usr/bin/python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['throughput']['steps_per_second'])" \
    "$work/out/bench.summary.json" >>"$work/$3.$2"
  cat "$work/rss" >"$work/$3.rss.$2"
}

natoms=$((4 * cells * cells * cells))
per_atom() { awk -v m="$(cat "$1")" -v n="$natoms" -v p="$2" 'BEGIN {printf "%.2f kB", m * p / n}'; }
printf '%-6s %-8s %16s %16s %14s %14s\n' ranks code atom-steps/s timesteps/s "RSS/atom" \
  "(none saved)"
for np in $ranks_list; do
  : >"$work/l.$np"
  : >"$work/s.$np"
  : >"$work/b.$np"
  for r in $(seq "$repeat"); do
    (cd "$work" && run_timed mpiexec -n "$np" "$lmp" -in lammps.in -log none >"lmp.out" 2>&1)
    grep -m1 "^Performance:" "$work/lmp.out" | sed -E 's/.* ([0-9.]+) timesteps\/s.*/\1/' >>"$work/l.$np"
    echo "$(cat "$work/rss")" >"$work/l.rss.$np"
    run_stratus "$stratus" "$np" s
    [ -z "$baseline" ] || run_stratus "$baseline" "$np" b
  done
  # Memory with no state saved at the end: one more run of each.
  (cd "$work" && run_timed mpiexec -n "$np" "$lmp" -in lammps-plain.in -log none >"lmp.out" 2>&1)
  cp "$work/rss" "$work/l.rss0.$np"
  run_stratus "$stratus" "$np" s0 --set checkpoint.at_end=false
  cp "$work/s0.rss.$np" "$work/s.rss0.$np"
  l=$(median <"$work/l.$np")
  s=$(median <"$work/s.$np")
  printf '%-6s %-8s %16.4g %16.4g %14s %14s\n' "$np" lammps "$(echo "$l * $natoms" | bc -l)" "$l" \
    "$(per_atom "$work/l.rss.$np" "$np")" "$(per_atom "$work/l.rss0.$np" "$np")"
  printf '%-6s %-8s %16.4g %16.4g %14s %14s\n' "$np" stratus "$(echo "$s * $natoms" | bc -l)" "$s" \
    "$(per_atom "$work/s.rss.$np" "$np")" "$(per_atom "$work/s.rss0.$np" "$np")"
  printf '%-6s ratio stratus/lammps = %.3f  (%d atoms, %s steps, median of %s)\n' "$np" \
    "$(echo "$s / $l" | bc -l)" "$natoms" "$steps" "$repeat"
  if [ -n "$baseline" ]; then
    b=$(median <"$work/b.$np")
    printf '%-6s %-8s %16.4g %16.4g %14s\n' "$np" baseline "$(echo "$b * $natoms" | bc -l)" "$b" \
      "$(per_atom "$work/b.rss.$np" "$np")"
    printf '%-6s ratio stratus/baseline = %.3f  (baseline %s)\n' "$np" "$(echo "$s / $b" | bc -l)" "$baseline"
  fi
done
