#!/usr/bin/python3
"""How a run is launched and owns its output directory, end to end with real processes and
signals (issue 17): one run per output directory (the run lock), exit 75 kept through mpiexec
(tools/stratus-mpiexec), and one rank killed or frozen while the others live.

  check_launch.py SCENARIO --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Scenarios: lock, mpiexec-sigterm, rank-killed, rank-frozen. Run with Debian's /usr/bin/python3 (check_restart.py's
helpers need h5py).
"""
import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from check_restart import (ENV, HERE, MD_DECK, RESUMABLE, Runner, signal_ranks,  # noqa: E402
                           wait_for_step)
from stratus_checks import Failure, check, resumed_step, thermo_rows  # noqa: E402


def scenario_lock(r):
    """One run per output directory: a second run while the first runs is refused (exit 2,
    naming the holder) and the first keeps every row; a lock whose holder is gone (dead pid,
    reused pid, expired lease of another host) is taken over with a warning; a live lease of
    another host is respected; a finished or stopped run leaves no lock."""
    base = os.path.join(r.work, "lock")
    shutil.rmtree(base, ignore_errors=True)
    out = os.path.join(base, "run")
    lock = os.path.join(out, "stratus.lock")
    steps = 10000
    first = r.start(1, MD_DECK, out, [f"--set=run.steps={steps}", "--restart=none",
                                      "--set=checkpoint.interval=off"])
    end = time.time() + 60
    while not os.path.exists(lock) and first.poll() is None and time.time() < end:
        time.sleep(0.01)
    check(os.path.exists(lock), "the first run took no lock")
    rc, text = r.run(1, MD_DECK, out, [f"--set=run.steps={steps}"], expect=None)
    holder = f"pid {first.pid}"
    check(rc == 2 and "is in use by another run" in text and holder in text,
          f"second run: exit {rc}, expected 2 naming {holder}:\n{text[-2000:]}")
    check(first.poll() is None, "the first run ended while the second was refused")
    check(first.wait(timeout=300) == 0, "the first run failed after the second was refused")
    rows = thermo_rows(os.path.join(out, "lj_small.thermo.csv"))
    check(len(rows) == steps // 10 + 1, f"the first run's thermo CSV has {len(rows)} rows, "
          f"expected {steps // 10 + 1}")
    check(not os.path.exists(lock), "the finished run left its lock behind")
    print(f"concurrent run refused (exit 2, {holder}); the first run finished with all "
          f"{len(rows)} thermo rows and removed its lock")

    host = socket.gethostname()
    gone = subprocess.Popen(["true"])
    gone.wait()
    cases = [
        ("dead pid", f"host = {host}\npid = {gone.pid}\nstart_ticks = 1\njob = \nsince = x\n", 0,
         0, "no longer exists"),
        ("reused pid", f"host = {host}\npid = {os.getpid()}\nstart_ticks = 1\njob = \nsince = x\n",
         0, 0, "the pid was reused"),
        ("live lease elsewhere", "host = other-host\npid = 7\nstart_ticks = 1\njob = 99\nsince = x\n",
         0, 2, "host other-host, pid 7, Slurm job 99"),
        ("expired lease elsewhere", "host = other-host\npid = 7\nstart_ticks = 1\njob = 99\nsince = x\n",
         600, 0, "its host is gone or cut off"),
    ]
    for what, content, age, expect, phrase in cases:
        with open(lock, "w") as f:
            f.write(content)
        if age:
            then = time.time() - age
            os.utime(lock, (then, then))
        rc, text = r.run(1, MD_DECK, out, ["--set=run.steps=20", "--restart=none"], expect=None)
        check(rc == expect and phrase in text,
              f"{what}: exit {rc}, expected {expect} with '{phrase}':\n{text[-2000:]}")
        if expect == 0:
            check("taking over the stale lock" in text, f"{what}: the takeover was silent")
            check(not os.path.exists(lock), f"{what}: the run left its lock behind")
        else:
            os.remove(lock)
        print(f"{what}: exit {rc} ({phrase})")

    # A requeued Slurm job (same id, next attempt) takes over its earlier attempt's live-looking
    # lock at once, from any host; a lock of the same attempt (a second run in the job) is not.
    slurm = [("earlier attempt of this job", "1", 0, "it belongs to attempt 0 of this Slurm job 99"),
             ("same attempt of this job", "0", 2, "host other-host, pid 7, Slurm job 99")]
    for what, count, expect, phrase in slurm:
        with open(lock, "w") as f:
            f.write("host = other-host\npid = 7\nstart_ticks = 1\njob = 99\nattempt = 0\nsince = x\n")
        env = dict(ENV, SLURM_JOB_ID="99", SLURM_RESTART_COUNT=count)
        rc, text = r.run(1, MD_DECK, out, ["--set=run.steps=20", "--restart=none"], expect=None,
                         env=env)
        check(rc == expect and phrase in text,
              f"{what}: exit {rc}, expected {expect} with '{phrase}':\n{text[-2000:]}")
        if expect != 0:
            os.remove(lock)
        print(f"{what}: exit {rc} ({phrase})")

    # A run stopped by a signal (exit 75) releases the lock too.
    p = r.start(1, MD_DECK, out, [f"--set=run.steps={steps}", "--restart=none"])
    while not os.path.exists(lock) and p.poll() is None:
        time.sleep(0.01)
    time.sleep(0.5)
    signal_ranks(out, signal.SIGTERM)
    check(p.wait(timeout=120) == RESUMABLE, "SIGTERM: not exit 75")
    check(not os.path.exists(lock), "a run stopped by SIGTERM left its lock behind")
    print("a run stopped by SIGTERM (exit 75) removed its lock")


WRAPPER = os.path.join(HERE, "..", "..", "tools", "stratus-mpiexec")


def scenario_mpiexec_sigterm(r):
    """SIGTERM to the launcher of a 2-rank run (what systemd or a container stop sends): Open
    MPI's mpiexec exits 1 (reported, not asserted), tools/stratus-mpiexec has the ranks write a
    checkpoint and exits 75; the same command then resumes and finishes (exit 0)."""
    base = os.path.join(r.work, "mpiexec-sigterm")
    shutil.rmtree(base, ignore_errors=True)
    out = os.path.join(base, "run")
    args = ["-n", "2"] + r.preflags + [r.stratus, "run", MD_DECK, "--output-dir", out,
                                       "--set=run.steps=40000", "--set=checkpoint.every=200",
                                       "--set=checkpoint.interval=off"]
    env = dict(ENV, STRATUS_MPIEXEC=r.mpiexec)
    os.makedirs(base)
    codes = {}
    for launcher in ("mpiexec", "wrapper"):
        shutil.rmtree(out, ignore_errors=True)
        cmd = ([r.mpiexec] if launcher == "mpiexec" else [WRAPPER]) + args
        log = open(os.path.join(base, f"{launcher}.log"), "w")
        p = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=base)
        check(wait_for_step(out, "lj_small", 200, p), f"{launcher}: ended before step 200")
        p.send_signal(signal.SIGTERM)
        codes[launcher] = p.wait(timeout=120)
        log.close()
    # Plain mpiexec tears down on SIGTERM (its code and the ranks' last output are lost); the
    # wrapper stops the ranks through SIGUSR1 and keeps both.
    text = open(os.path.join(base, "wrapper.log")).read()
    check("stopped: signal (SIGUSR1)" in text, "wrapper: the ranks did not stop on the "
          f"signal:\n{text[-3000:]}")
    check(codes["wrapper"] == RESUMABLE, f"tools/stratus-mpiexec exited {codes['wrapper']} after "
          f"a SIGTERM, expected {RESUMABLE}")
    check(not [f for f in os.listdir(base) if f.startswith(".stratus-exit")],
          "the wrapper left its exit-code file behind")
    rc = subprocess.run([WRAPPER] + args[:-3] + ["--set=run.steps=600"], env=env, cwd=base,
                        capture_output=True, text=True, timeout=300)
    check(rc.returncode == 0, f"resume through the wrapper: exit {rc.returncode}:\n{rc.stdout[-2000:]}")
    check(resumed_step(rc.stdout + rc.stderr) >= 200, "the resume did not start from a checkpoint")
    print(f"SIGTERM to the launcher of 2 ranks: plain mpiexec exited {codes['mpiexec']}, "
          f"tools/stratus-mpiexec exited {codes['wrapper']}; resumed through the wrapper: exit 0")


def scenario_rank_killed(r):
    """kill -9 of one rank of a 2-rank run while the other computes (a process lost alone, as
    the OOM killer does it): the job ends on its own, non-zero, within 30 s (no rank waits
    forever in a collective); the same command then resumes from the newest checkpoint (taking
    over the lock the dead run left) and finishes with exit 0."""
    base = os.path.join(r.work, "rank-killed")
    shutil.rmtree(base, ignore_errors=True)
    out = os.path.join(base, "run")
    args = ["--set=run.steps=40000", "--set=checkpoint.every=200", "--set=checkpoint.interval=off"]
    p = r.start(2, MD_DECK, out, args + ["--restart=none"])
    check(wait_for_step(out, "lj_small", 200, p), "the run ended before step 200")
    pids = signal_ranks(out, signal.SIGKILL, only_last=True)
    killed = time.time()
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise Failure(f"one rank (pid {pids[-1]}) killed: the job still ran 30 s later (a hang)")
    ended = time.time() - killed
    check(rc != 0, "one rank killed: the job exited 0")
    rc, text = r.run(2, MD_DECK, out, ["--set=run.steps=600", "--set=checkpoint.every=200",
                                        "--set=checkpoint.interval=off"], expect=None)
    check(rc == 0, f"the resume after a killed rank exited {rc}:\n{text[-3000:]}")
    step = resumed_step(text)
    check(step >= 200, f"the resume did not start from a checkpoint (step {step})")
    print(f"one of 2 ranks killed (SIGKILL): the job ended in {ended:.1f} s with exit {p.returncode}; "
          f"the same command resumed from step {step} and finished (exit 0)")


def scenario_rank_frozen(r):
    """SIGSTOP to one rank of a 2-rank run (a frozen instance: alive, silent): the other rank
    waits in a collective; run.hang_timeout (5 s here) ends it with a message naming the step,
    mpiexec then ends the job, and the same command resumes and finishes."""
    base = os.path.join(r.work, "rank-frozen")
    shutil.rmtree(base, ignore_errors=True)
    out = os.path.join(base, "run")
    args = ["--set=run.steps=40000", "--set=checkpoint.every=200", "--set=checkpoint.interval=off",
            "--set=run.hang_timeout=\"5s\""]
    os.makedirs(base)
    log_path = os.path.join(base, "frozen.log")
    log = open(log_path, "w")
    p = r.start(2, MD_DECK, out, args + ["--restart=none"], log=log)
    check(wait_for_step(out, "lj_small", 200, p), "the run ended before step 200")
    pids = signal_ranks(out, signal.SIGSTOP, only_last=True)
    frozen = time.time()
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise Failure(f"one rank (pid {pids[-1]}) stopped: the job still ran 60 s later (a hang)")
    ended = time.time() - frozen
    log.close()
    text = open(log_path).read()
    check(rc != 0, "one rank frozen: the job exited 0")
    check("no progress for" in text and "run.hang_timeout" in text,
          f"the waiting rank did not say why it ended:\n{text[-3000:]}")
    for pid in pids[-1:]:  # mpiexec kills it; make sure before the resume
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    rc, text = r.run(2, MD_DECK, out, ["--set=run.steps=600", "--set=checkpoint.every=200",
                                        "--set=checkpoint.interval=off"], expect=None)
    check(rc == 0, f"the resume after a frozen rank exited {rc}:\n{text[-3000:]}")
    print(f"one of 2 ranks frozen (SIGSTOP): the other ended after run.hang_timeout (5 s), the "
          f"job in {ended:.1f} s with exit {p.returncode}; the same command resumed from step "
          f"{resumed_step(text)} and finished (exit 0)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["lock", "mpiexec-sigterm", "rank-killed", "rank-frozen"])
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    r = Runner(args)
    os.makedirs(args.work, exist_ok=True)
    try:
        {"lock": scenario_lock, "mpiexec-sigterm": scenario_mpiexec_sigterm,
         "rank-killed": scenario_rank_killed, "rank-frozen": scenario_rank_frozen}[args.scenario](r)
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
