#!/usr/bin/python3
"""Two checkpoint levels (issue 17): `checkpoint.local` (node-local, fast) beside the durable
`checkpoint.dir`. Each checkpoint is written and verified locally, copied to the durable
directory in the background, and counts as durable once read back equal.

  check_levels.py --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Checks, on 2 ranks of the md solver:
  - periodic checkpoints land in both levels; the run summary reports the copies and how much
    of their time overlapped with the run;
  - SIGTERM: the stop's checkpoint is durable before exit 75 (named in the stop message);
  - the node-local level lost (a new instance): the same command resumes from the durable one,
    says so, and ends bitwise equal to a straight run;
  - the durable level behind (its newest copy lost): the resume takes the newer node-local
    checkpoint and says so; --restart none clears both levels.
Run with Debian's /usr/bin/python3 (h5py).
"""
import argparse
import os
import re
import shutil
import signal
import sys

from check_restart import MD_DECK, RESUMABLE, Runner, signal_ranks, wait_for_step  # noqa: E402
from stratus_checks import (Failure, check, checkpoints, ckpt_path, resumed_step,  # noqa: E402
                            same_datasets)

NAME = "lj_small"


def local_steps(local):
    return sorted(int(m.group(1)) for f in os.listdir(local)
                  if (m := re.fullmatch(re.escape(NAME) + r"\.step(\d{12})\.h5", f)))


def scenario(r):
    base = os.path.join(r.work, "levels")
    shutil.rmtree(base, ignore_errors=True)
    straight = os.path.join(base, "straight")
    out, local = os.path.join(base, "run"), os.path.join(base, "instance-nvme")
    steps = 600
    common = [f"--set=run.steps={steps}", "--set=checkpoint.every=100",
              "--set=checkpoint.interval=off", "--set=checkpoint.keep=3"]
    two = common + [f"--set=checkpoint.local=\"{local}\""]
    r.run(2, MD_DECK, straight, common + ["--restart=none"])

    # A run with two levels, stopped by SIGTERM after its checkpoint of step 200.
    os.makedirs(base, exist_ok=True)
    log = open(os.path.join(base, "stopped.log"), "w")
    p = r.start(2, MD_DECK, out, two + ["--restart=none"], log=log)
    end_wait = wait_for_step(out, NAME, 200, p)  # the durable copy of step 200 exists
    check(end_wait, "the run ended before its durable checkpoint of step 200")
    signal_ranks(out, signal.SIGTERM)
    rc = p.wait(timeout=120)
    log.close()
    text = open(log.name).read()
    check(rc == RESUMABLE, f"SIGTERM: exit {rc}, expected {RESUMABLE}:\n{text[-3000:]}")
    m = re.search(r"at step (\d+): checkpoint (\S+) written", text)
    check(m, f"no stop message naming the checkpoint:\n{text[-3000:]}")
    stopped = int(m.group(1))
    check(m.group(2) == ckpt_path(out, NAME, stopped) and os.path.exists(m.group(2)),
          f"the stop message names {m.group(2)}, not the durable checkpoint of step {stopped}")
    check(stopped in local_steps(local), "the stop's checkpoint is not on the node-local level")
    check(re.search(rf"step {stopped} copied to \S+ in [0-9.]+ s .* read back equal: durable", text),
          "the log does not say the stop's checkpoint was copied and read back")
    flush = re.search(r"flushes +(\d+) copied to the durable directory in ([0-9.]+) s, "
                      r"([0-9.]+)% of it overlapped with the run", text)
    check(flush and int(flush.group(1)) >= 2, f"no flush line in the run summary:\n{text[-2500:]}")
    print(f"two levels: stopped at step {stopped} by SIGTERM; its checkpoint on both levels before "
          f"exit 75; summary: {flush.group(1)} copies in {flush.group(2)} s, {flush.group(3)}% "
          f"overlapped with the run")

    # The instance is gone: its node-local disk with it. The durable level carries on.
    shutil.rmtree(local)
    _, text = r.run(2, MD_DECK, out, two)
    check(resumed_step(text) == stopped and "durable level" in text,
          f"after losing the node-local level: resumed at {resumed_step(text)} "
          f"(stopped at {stopped}), or not from the durable level")
    names = same_datasets(ckpt_path(straight, NAME, steps), ckpt_path(out, NAME, steps),
                          "/particles")
    print(f"node-local level lost: resumed from the durable level at step {stopped}; step {steps} "
          f"bitwise equal to the straight run ({', '.join(names)})")

    # The durable level behind the node-local one (its newest copy lost): the newer wins.
    os.remove(ckpt_path(out, NAME, steps))
    _, text = r.run(2, MD_DECK, out, [s if not s.startswith("--set=run.steps") else
                                      f"--set=run.steps={steps + 100}" for s in two])
    check(resumed_step(text) == steps and "node-local level" in text,
          f"resumed at {resumed_step(text)} (expected {steps}, from the node-local level)")
    check(checkpoints(out, NAME)[-1] == steps + 100, "the continued run's end is not durable")
    print(f"durable level behind: resumed from the node-local level at step {steps}, continued "
          f"to {steps + 100} (durable)")
    _, text = r.run(2, MD_DECK, out, two + ["--restart=none"])
    check(resumed_step(text) == 0, "--restart none did not start from step 0")
    check(max(local_steps(local)) == steps and checkpoints(out, NAME)[-1] == steps,
          f"--restart none left the older run's step {steps + 100} behind: node-local "
          f"{local_steps(local)}, durable {checkpoints(out, NAME)}")
    print("--restart none cleared both levels")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    r = Runner(args)
    os.makedirs(args.work, exist_ok=True)
    try:
        scenario(r)
    except Failure as e:
        print(f"FAILED (levels): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
