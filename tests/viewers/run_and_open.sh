#!/bin/sh
# Runs a deck on 2 ranks in WORK/out (a parallel write), then a reader's check in WORK.
# usage: run_and_open.sh WORK MPIEXEC "PREFLAGS" STRATUS DECK [--set k=v ...] -- CHECK_COMMAND...
set -e
work=$1 mpiexec=$2 preflags=$3 stratus=$4 deck=$5
shift 5
sets=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do sets="$sets $1"; shift; done
shift
rm -rf "$work" && mkdir -p "$work" && cd "$work"
# shellcheck disable=SC2086 # PREFLAGS and the --set pairs are lists of words
"$mpiexec" -n 2 $preflags "$stratus" run "$deck" --output-dir out --restart none $sets >run.log 2>&1 ||
  { tail -30 run.log; echo "FAILED: the run exited non-zero (log: $work/run.log)"; exit 1; }
exec "$@"
