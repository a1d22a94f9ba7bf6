#!/usr/bin/python3
"""How a run is launched, owns its output directory and keeps its checkpoints, end to end with
real processes and signals (issue 17): one run per output directory (the run lock), exit 75
kept through mpiexec (tools/stratus-mpiexec), one rank killed or frozen while the others live,
and two checkpoint levels (`levels`): `checkpoint.local` (node-local, fast) beside the durable
`checkpoint.dir`; each checkpoint is written and verified locally, copied to the durable
directory in the background, and counts as durable once read back equal. On 2 ranks of md:
  - periodic checkpoints land in both levels; the run summary reports the copies and how much
    of their time overlapped with the run;
  - SIGTERM: the stop's checkpoint is durable before exit 75 (named in the stop message);
  - the node-local level lost (a new instance): the same command resumes from the durable one,
    says so, and ends bitwise equal to a straight run;
  - the durable level behind (its newest copy lost): the resume takes the newer node-local
    checkpoint and says so; --restart none clears both levels.

  check_launch.py SCENARIO --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Scenarios: lock, mpiexec-sigterm, rank-killed, rank-frozen, levels, level-intervals (the
node-local and durable levels' own Young/Daly intervals). Run with Debian's /usr/bin/python3 (check_restart.py's
helpers need h5py).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

from check_restart import (ENV, HERE, MD_DECK, RESUMABLE, Runner, signal_ranks,  # noqa: E402
                           stop_after_checkpoint, wait_for_step)
from stratus_checks import (Failure, check, checkpoints, ckpt_path, resumed_step,  # noqa: E402
                            same_datasets, thermo_rows)


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


def lose_one_rank(r, out, args, sig, timeout, log_path=None, env=None):
    """Starts a 2-rank md run, sends `sig` to its last rank once the checkpoint of step 200
    exists, and waits up to `timeout` s for the job to end (a Failure: it hangs). Returns the
    job's exit code, the seconds it took to end and the ranks' pids."""
    log = open(log_path, "w") if log_path else None
    p = r.start(2, MD_DECK, out, args + ["--restart=none"], log=log, env=env)
    check(wait_for_step(out, "lj_small", 200, p), "the run ended before step 200")
    pids = signal_ranks(out, sig, only_last=True)
    lost = time.time()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        raise Failure(f"one rank (pid {pids[-1]}) given {sig.name}: the job still ran "
                      f"{timeout} s later (a hang)")
    finally:
        if log:
            log.close()
    return rc, time.time() - lost, pids


def scenario_rank_killed(r):
    """kill -9 of one rank of a 2-rank run while the other computes (a process lost alone, as
    the OOM killer does it): the job ends on its own, non-zero, within 30 s (no rank waits
    forever in a collective); the same command then resumes from the newest checkpoint (taking
    over the lock the dead run left) and finishes with exit 0."""
    base = os.path.join(r.work, "rank-killed")
    shutil.rmtree(base, ignore_errors=True)
    out = os.path.join(base, "run")
    args = ["--set=run.steps=40000", "--set=checkpoint.every=200", "--set=checkpoint.interval=off"]
    lost_rc, ended, _ = lose_one_rank(r, out, args, signal.SIGKILL, 30)
    check(lost_rc != 0, "one rank killed: the job exited 0")
    rc, text = r.run(2, MD_DECK, out, ["--set=run.steps=600", "--set=checkpoint.every=200",
                                        "--set=checkpoint.interval=off"], expect=None)
    check(rc == 0, f"the resume after a killed rank exited {rc}:\n{text[-3000:]}")
    step = resumed_step(text)
    check(step >= 200, f"the resume did not start from a checkpoint (step {step})")
    print(f"one of 2 ranks killed (SIGKILL): the job ended in {ended:.1f} s with exit {lost_rc}; "
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
    # Rank 0's watchdog records its exit for tools/stratus-mpiexec (the teardown guard).
    exit_file = os.path.join(base, "exit-file")
    lost_rc, ended, pids = lose_one_rank(r, out, args, signal.SIGSTOP, 60, log_path,
                                         dict(ENV, STRATUS_EXIT_FILE=exit_file))
    text = open(log_path).read()
    check(lost_rc != 0, "one rank frozen: the job exited 0")
    check("no progress for" in text and "run.hang_timeout" in text,
          f"the waiting rank did not say why it ended:\n{text[-3000:]}")
    recorded = open(exit_file).read().strip() if os.path.exists(exit_file) else "nothing"
    check(recorded == "1", f"rank 0's watchdog recorded {recorded!r} in $STRATUS_EXIT_FILE, "
          "expected 1 (tools/stratus-mpiexec's teardown guard reads it)")
    for pid in pids[-1:]:  # mpiexec kills it; make sure before the resume
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    rc, text = r.run(2, MD_DECK, out, ["--set=run.steps=600", "--set=checkpoint.every=200",
                                        "--set=checkpoint.interval=off"], expect=None)
    check(rc == 0, f"the resume after a frozen rank exited {rc}:\n{text[-3000:]}")
    print(f"one of 2 ranks frozen (SIGSTOP): the other ended after run.hang_timeout (5 s), the "
          f"job in {ended:.1f} s with exit {lost_rc}; the same command resumed from step "
          f"{resumed_step(text)} and finished (exit 0)")


NAME = "lj_small"  # MD_DECK's run name


def local_steps(local):
    return sorted(int(m.group(1)) for f in os.listdir(local)
                  if (m := re.fullmatch(re.escape(NAME) + r"\.step(\d{12})\.h5", f)))


def scenario_levels(r):
    """Two checkpoint levels, on 2 ranks of the md solver (docs/checkpointing.md): see the
    module's docstring."""
    base = os.path.join(r.work, "levels")
    shutil.rmtree(base, ignore_errors=True)
    straight = os.path.join(base, "straight")
    out, local = os.path.join(base, "run"), os.path.join(base, "instance-nvme")
    steps = 600
    common = [f"--set=run.steps={steps}", "--set=checkpoint.every=100",
              "--set=checkpoint.interval=off", "--set=checkpoint.keep=3"]
    two = common + [f"--set=checkpoint.local=\"{local}\""]
    r.run(2, MD_DECK, straight, common + ["--restart=none"])

    # A run with two levels, stopped by SIGTERM once the durable copy of step 200 exists.
    os.makedirs(base, exist_ok=True)
    stopped, text = stop_after_checkpoint(r, 2, MD_DECK, out, NAME, 200, two + ["--restart=none"],
                                          os.path.join(base, "stopped.log"))
    m = re.search(r"at step (\d+): checkpoint (\S+) written", text)
    check(m, f"no stop message naming the checkpoint:\n{text[-3000:]}")
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
    check(steps in checkpoints(out, NAME) and "is on the node-local level only" in text,
          f"the node-local checkpoint resumed from was not copied to the durable level: "
          f"{checkpoints(out, NAME)}")
    print(f"durable level behind: resumed from the node-local level at step {steps}, copied it "
          f"to the durable level, continued to {steps + 100} (durable)")
    _, text = r.run(2, MD_DECK, out, two + ["--restart=none"])
    check(resumed_step(text) == 0, "--restart none did not start from step 0")
    check(max(local_steps(local)) == steps and checkpoints(out, NAME)[-1] == steps,
          f"--restart none left the older run's step {steps + 100} behind: node-local "
          f"{local_steps(local)}, durable {checkpoints(out, NAME)}")
    print("--restart none cleared both levels")


def scenario_level_intervals(r):
    """interval = "auto" with two levels: the node-local level's interval is Young/Daly on the
    node-local write and mtbi_local, the durable level's on the copy's duration and mtbi. With
    M_local = 1 s and M = 20 min, several node-local checkpoints come between two copies, and
    the log states both intervals."""
    base = os.path.join(r.work, "level-intervals")
    shutil.rmtree(base, ignore_errors=True)
    out, local = os.path.join(base, "run"), os.path.join(base, "instance-nvme")
    _, text = r.run(2, MD_DECK, out, ["--set=run.steps=2500", "--set=checkpoint.interval=auto",
                                      "--set=checkpoint.mtbi_local=1s",
                                      "--set=checkpoint.mtbi=20min",
                                      f"--set=checkpoint.local=\"{local}\"", "--restart=none"])
    m = re.search(r"interval auto: every (.+?) \(C = ([0-9.e+-]+) s, M = 1 s\).*two levels: "
                  r"node-local sqrt\(2 C M\) = (.+?); durable copies every (.+?) \(sqrt\(2 C_copy M\) "
                  r"with C_copy (.+?) and M = 20 min", text)
    check(m, f"the log does not state both levels' intervals:\n{text[-3000:]}")
    written = re.search(r"checkpoints +(\d+) written", text)
    copies = re.search(r"flushes +(\d+) copied to the durable directory", text)
    check(written and copies, f"no checkpoints or flushes line in the summary:\n{text[-2500:]}")
    n_written, n_copies = int(written.group(1)), int(copies.group(1))
    local_only = text.count("on the node-local level only (the durable level's interval")
    check(n_copies >= 1 and n_written >= n_copies + 2 and local_only >= 2,
          f"{n_written} checkpoints, {n_copies} copies, {local_only} kept node-local only: "
          "expected several node-local checkpoints per copy")
    check(text.count("is durable") >= 1, "no checkpoint was announced durable")
    print(f"two levels, interval auto: node-local every {m.group(3)} (C = {m.group(2)} s, "
          f"M_local = 1 s), durable copies every {m.group(4)} (C_copy {m.group(5)}, M = 20 min): "
          f"{n_written} checkpoints, {n_copies} copied, {local_only} kept node-local only")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario",
                    choices=["lock", "mpiexec-sigterm", "rank-killed", "rank-frozen", "levels",
                             "level-intervals"])
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    r = Runner(args)
    os.makedirs(args.work, exist_ok=True)
    try:
        {"lock": scenario_lock, "mpiexec-sigterm": scenario_mpiexec_sigterm,
         "rank-killed": scenario_rank_killed, "rank-frozen": scenario_rank_frozen,
         "levels": scenario_levels, "level-intervals": scenario_level_intervals}[args.scenario](r)
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
