#!/usr/bin/env bash
# Spectral Navier-Stokes: time per step against the time of the FFTs one step needs, measured
# standalone with the same plans in the same run (spectral.output.fft_timing), at 64^3 and
# 128^3 modes on 1 and 2 ranks. Reports the share of the step spent outside FFTs and transposes
# (pointwise kernels, reductions, launches), also from the time inside the FFT calls of the
# steps themselves (no drift between two measurements on a shared machine). On one rank, the
# step is also set against FFTW's own 3D plans (fftw_plan_dft_r2c_3d / c2r_3d, same threads,
# measured planning) running the same number of whole transforms in the same process: the
# floor of a step made of library transforms (issue 16's target: step <= 1.2x that).
#
#   bench/spectral_step.sh                 64 and 128, 1 and 2 ranks, RK4, rotational form
#   SIZES="128 256" STEPS=10 bench/spectral_step.sh
#   EXTRA='--set spectral.nonlinear="skew"' bench/spectral_step.sh
#
# One thread per rank at 2 ranks, 2 threads at 1 rank (ranks x threads = 2 cores here); set
# THREADS to change that. Machines here are shared: compare figures of one run only.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
sizes="${SIZES:-64 128}"
ranks_list="${RANKS:-1 2}"
steps="${STEPS:-20}"
extra="${EXTRA:-}"
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_PROC_BIND=false
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

printf '%-6s %-6s %-22s %10s %16s %9s %16s %9s %13s %10s\n' size ranks transform "step [ms]" \
  "FFTs alone [ms]" outside "FFTs in step" outside "FFTW 3D [ms]" step/FFTW
for n in $sizes; do
  for r in $ranks_list; do
    threads="${THREADS:-$((2 / r > 0 ? 2 / r : 1))}"
    log="$work/run_${n}_${r}.log"
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=$threads mpiexec -n "$r" --oversubscribe "$stratus" run \
      "$here/inputs/cfd/isotropic_forced.toml" --output-dir "$work/out_${n}_${r}" --restart none \
      --set "spectral.points=[$n,$n,$n]" --set "run.steps=$steps" \
      --set spectral.output.fft_timing=true --set spectral.output.diag_every=0 \
      --set spectral.output.spectrum_every=0 --set spectral.output.snapshot_every=0 \
      --set 'checkpoint.interval="off"' --set checkpoint.at_end=false $extra >"$log" 2>&1 ||
      { echo "run failed ($n^3, $r ranks):" >&2; tail -20 "$log" >&2; exit 1; }
    line="$(grep 'fft timing' "$log")"
    step="$(sed -E 's/.*timing: step ([0-9.]+) ms.*/\1/' <<<"$line")"
    fft="$(sed -E 's/.*one step ([0-9.]+) ms.*/\1/' <<<"$line")"
    out="$(sed -E 's/.*outside FFTs and transposes (-?[0-9.]+%).*/\1/' <<<"$line")"
    inside="$(sed -E 's/.*inside the steps: FFTs and transposes ([0-9.]+) ms.*/\1/' <<<"$line")"
    out2="$(sed -E 's/.*ms, outside (-?[0-9.]+%).*/\1/' <<<"$line")"
    what="$(sed -E 's/.*% \((slab|pencil) ([0-9]+ x [0-9]+).*/\1 \2/' <<<"$line")"
    floor="-" ratio="-"
    if grep -q "FFTW's own 3D plans" <<<"$line"; then
      floor="$(sed -E 's/.*same transforms: ([0-9.]+) ms.*/\1/' <<<"$line")"
      ratio="$(sed -E 's/.*step \/ those ([0-9.]+).*/\1/' <<<"$line")"
    fi
    printf '%-6s %-6s %-22s %10s %16s %9s %16s %9s %13s %10s\n' "$n^3" "$r" "$what, $threads thr" \
      "$step" "$fft" "$out" "$inside" "$out2" "$floor" "$ratio"
  done
done
