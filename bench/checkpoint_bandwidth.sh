#!/usr/bin/env bash
# Checkpoint bandwidth: Stratus checkpoints against a plain sequential write and read of the same
# number of bytes (`dd` with fsync) on the same file system, in one run, at 1 and 2 ranks.
#
# The state is the heat solver's field on CELLS^3 cells (512^3 = 1.07 GB, the default). For each
# rank count: one step, a checkpoint at the end (write, fsync, rename, then a verifying read),
# then a restart from it (each block checksummed as it is restored). Then `dd` writes and reads a
# file of the same size. Page caches are dropped before each read when the kernel allows it
# (root outside a container); the report says whether they were.
#
# Also reports the overhead at the default interval (interval = "auto", mtbi = 6 h): the
# Young/Daly interval tau = sqrt(2 C M) from the measured checkpoint cost C, overhead C / tau.
#
#   bench/checkpoint_bandwidth.sh              512^3, 1 and 2 ranks, in runs/bench-checkpoint
#   CELLS=256 bench/checkpoint_bandwidth.sh    a quicker 134 MB check
#   DIR=/scratch/x bench/checkpoint_bandwidth.sh   another file system
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
stratus="${STRATUS:-$here/build/apps/stratus}"
cells="${CELLS:-512}"
ranks_list="${RANKS:-1 2}"
dir="${DIR:-$here/runs/bench-checkpoint}"
mtbi_h="${MTBI_HOURS:-6}"
[ -x "$stratus" ] || { echo "no stratus at $stratus: run tools/setup.sh" >&2; exit 2; }
mkdir -p "$dir"
trap 'rm -rf "$dir"/run-* "$dir"/dd.bin' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMP_PROC_BIND=false

cat >"$dir/bench.toml" <<TOML
[run]
solver = "heat"
steps = 1
[heat]
cells = [$cells, $cells, $cells]
diffusivity = 0.01
log_every = 0
write_field = false
[checkpoint]
interval = "off"
TOML

drop_caches() {
  sync
  if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then echo dropped; else echo "not dropped"; fi
}
now() { date +%s.%N; }
mb_s() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / 1e6 / t }'; }

echo "Checkpoint bandwidth, $cells^3 cells, $(nproc --all) cores, file system of $dir:"
df -hT "$dir" | tail -1
printf '%-6s %10s %12s %12s %12s %12s %8s %8s %s\n' ranks MB ckpt_write dd_write ckpt_read \
  dd_read w_ratio r_ratio caches
for ranks in $ranks_list; do
  out="$dir/run-np$ranks"
  rm -rf "$out"
  launch=()
  [ "$ranks" -gt 1 ] && launch=(mpiexec -n "$ranks" --oversubscribe)
  log="$("${launch[@]}" "$stratus" run "$dir/bench.toml" --output-dir "$out" --restart none 2>&1)"
  line="$(grep -E 'checkpoint: step 1 \(end of run\)' <<<"$log")" ||
    { echo "$log" | tail -20; echo "no checkpoint line" >&2; exit 1; }
  bytes_mb="$(sed -E 's/.* ([0-9.]+) MB written in ([0-9.]+) s.*/\1/' <<<"$line")"
  write_s="$(sed -E 's/.* MB written in ([0-9.]+) s.*/\1/' <<<"$line")"
  file="$(ls "$out"/checkpoints/*.h5)"
  bytes="$(stat -c %s "$file")"
  # Read: a restart from that checkpoint (each block checksummed as it is restored), caches dropped.
  caches="$(drop_caches)"
  relog="$("${launch[@]}" "$stratus" run "$dir/bench.toml" --output-dir "$out" --set run.steps=2 2>&1)"
  reline="$(grep -E 'checkpoint: resumed from' <<<"$relog")" ||
    { echo "$relog" | tail -20; echo "no resume line" >&2; exit 1; }
  read_s="$(sed -E 's/.* MB verified in ([0-9.]+) s, restored in ([0-9.]+) s.*/\1 \2/' <<<"$reline" |
    awk '{ print $1 + $2 }')"

  # dd: the same bytes, written with fsync, then read back.
  t0="$(now)"
  dd if=/dev/zero of="$dir/dd.bin" bs=8M count=$(( (bytes + 8388607) / 8388608 )) conv=fsync status=none
  dd_w="$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')"
  drop_caches >/dev/null
  t0="$(now)"
  dd if="$dir/dd.bin" of=/dev/null bs=8M status=none
  dd_r="$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')"
  rm -f "$dir/dd.bin"

  ckpt_w_bw="$(mb_s "$bytes" "$write_s")"
  dd_w_bw="$(mb_s "$bytes" "$dd_w")"
  ckpt_r_bw="$(mb_s "$bytes" "$read_s")"
  dd_r_bw="$(mb_s "$bytes" "$dd_r")"
  printf '%-6s %10s %9s MB/s %7s MB/s %7s MB/s %7s MB/s %8s %8s %s\n' "$ranks" "$bytes_mb" \
    "$ckpt_w_bw" "$dd_w_bw" "$ckpt_r_bw" "$dd_r_bw" \
    "$(awk -v a="$ckpt_w_bw" -v b="$dd_w_bw" 'BEGIN { printf "%.2f", a / b }')" \
    "$(awk -v a="$ckpt_r_bw" -v b="$dd_r_bw" 'BEGIN { printf "%.2f", a / b }')" "$caches"
  cost="$(grep -E 'interval|verified in' <<<"$log" | sed -nE 's/.*verified in ([0-9.]+) s.*/\1/p')"
  total="$(awk -v w="$write_s" -v v="$cost" 'BEGIN { print w + v }')"
  awk -v c="$total" -v m="$mtbi_h" -v r="$ranks" 'BEGIN {
    tau = sqrt(2 * c * m * 3600);
    printf "       np%d: checkpoint cost C = %.2f s (write + verify); default interval (auto, M = %g h): tau = %.0f s, overhead C/tau = %.2f%%\n", r, c, m, tau, 100 * c / tau }'
done
echo "(ckpt_write: write, fsync, rename; ckpt_read: a restart: in the writing layout one pass that checksums"
echo " each block as the restore reads it, else a verifying pass then the restore; dd: bs=8M, conv=fsync.)"
