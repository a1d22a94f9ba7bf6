# GROMACS as a peer, shared by bench/lj_vs_gromacs.sh and bench/water_vs_gromacs.sh (sourced, not
# run). They set `here` (the repository), `work` (a scratch directory holding md.mdp, conf.gro and
# topol.top) and `steps`, and export GMX_MAXBACKUP=-1.

# gmx_grompp BINARY OUT.tpr: preprocesses $work's inputs (up to 2 warnings), or stops with the log.
gmx_grompp() {
  (cd "$work" && "$1" grompp -f md.mdp -c conf.gro -p topol.top -o "$2" -maxwarn 2 >"$2.log" 2>&1) ||
    { echo "grompp failed:" >&2; tail -20 "$work/$2.log" >&2; exit 1; }
}

# gmx_start BINARY TPR: sets gmx_preload. Debian's GROMACS 2022 refuses to start where CPUID
# hides the rdtscp instruction (as on the cloud VMs these scripts were written on): it is tried
# plain first, then with bench/lib/gmx_rdtscp_shim.cpp built and preloaded (the shim only adds
# rdtscp to GROMACS's CPU detection), and the script says so. Prints GROMACS's version and SIMD.
gmx_start() {
  gmx_preload=""
  gmx_probe() {
    (cd "$work" && LD_PRELOAD="$gmx_preload" "$1" mdrun -s "$2" -nsteps 10 -ntmpi 1 -ntomp 1 \
      -nb cpu -noconfout -deffnm probe >probe.out 2>&1)
  }
  if ! gmx_probe "$1" "$2"; then
    g++ -O2 -shared -fPIC -o "$work/gmx_rdtscp_shim.so" "$here/bench/lib/gmx_rdtscp_shim.cpp" -ldl
    gmx_preload="$work/gmx_rdtscp_shim.so"
    gmx_probe "$1" "$2" ||
      { echo "GROMACS does not start, even with the rdtscp shim:" >&2; tail -20 "$work/probe.out" >&2; exit 1; }
    echo "# GROMACS refused to start here (CPUID hides rdtscp); it runs with bench/lib/gmx_rdtscp_shim.cpp preloaded"
  fi
  echo "# GROMACS: $("$1" --version 2>/dev/null | grep -m1 'GROMACS version' | sed 's/ *GROMACS version: *//'), $(grep -m1 'SIMD instructions selected at compile time' "$work/probe.log" | sed 's/.*: *//') SIMD"
}

# gmx_run BINARY TPR RANKS TAG: one run on RANKS thread-MPI ranks of one thread, pinned, no
# separate PME ranks, non-bonded on the CPU; its steps/s (from the "Wall t" mdrun prints at the
# end) appended to $work/TAG.RANKS, its log kept as $work/run_TAG.RANKS.log. A run that printed its
# timings counts even if mdrun then fails on its way out (Debian's GROMACS 2022 on 2 thread-MPI
# ranks sometimes aborts here in free() after printing them); the script says so.
gmx_run() {
  local rc=0
  (cd "$work" && LD_PRELOAD="$gmx_preload" "$1" mdrun -s "$2" -ntmpi "$3" -ntomp 1 -npme 0 -pin on \
    -nb cpu -noconfout -deffnm "run_$4.$3" >"run_$4.$3.out" 2>&1) || rc=$?
  if ! grep -q '^ *Time:' "$work/run_$4.$3.out" 2>/dev/null; then
    echo "gmx mdrun failed (exit $rc):" >&2; tail -20 "$work/run_$4.$3.out" >&2; exit 1
  fi
  [ "$rc" = 0 ] || echo "# $(basename "$1") on $3 rank(s) exited with status $rc after completing its run and its timings"
  awk -v n="$steps" '/^ +Time:/ {print n / $3}' "$work/run_$4.$3.out" >>"$work/$4.$3"
}
