#!/usr/bin/python3
"""Runs across several hosts (issue 17), with the test hosts of netns_hosts.py: network
namespaces on this machine, each with its own address, hostname and node-local directory, Open
MPI launching ranks into them over TCP through netns-agent.

  check_multihost.py SCENARIO --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Scenarios:
  same-results  md, euler and spectral on 2 hosts x 2 ranks give bitwise the results of 4
                ranks on one host (the final checkpoint's state and the CSV series).
  host-loss     TRIALS times (--trials, 20): a 2 x 2 euler run (through tools/stratus-mpiexec)
                loses host 1 at a random step, its processes killed (even trials) or its link
                cut (odd ones); the job must end on its own, and the same command on host 0
                alone (2 ranks) must resume from the newest checkpoint and finish bitwise equal
                to an uninterrupted run.
  host-loss-two-levels
                the same with checkpoint.local: each host's part on its own disk, copied to the
                durable level in the background (throttled, so that losses fall mid-copy); host
                1's disk is lost with it; the resume loses nothing the run had announced
                durable.
  slurm-requeue a Slurm cluster of 3 test hosts; a 2-node job loses a node (not the batch host,
                then the batch host) and is requeued onto another node set, resuming bitwise.
  launch-loss   host 1 frozen while mpiexec starts its daemons: tools/stratus-mpiexec must end
                the launch (STRATUS_LAUNCH_TIMEOUT) with exit 1, and the run on host 0 finish.
  teardown-loss host 1 frozen once rank 0 has recorded the run's exit code: tools/stratus-mpiexec
                must end mpiexec (STRATUS_TEARDOWN_TIMEOUT) and exit with that code, 0.
Exit 77 (a skip ctest shows) when this machine cannot make test hosts (not root).
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "checkpoint"))
from check_restart import ENV, EULER_DECK, MD_DECK, SPECTRAL_DECK  # noqa: E402
from netns_hosts import NetnsHosts, usable  # noqa: E402
from stratus_checks import (Failure, check, ckpt_path, resumed_step, same_datasets,  # noqa: E402
                            thermo_rows)

SKIP = 77
WRAPPER = os.path.join(HERE, "..", "..", "tools", "stratus-mpiexec")

# (deck, run name, final step, checkpoint group, CSV series compared, extra settings)
CASES = {
    "md": (MD_DECK, "lj_small", 200, "/particles", "thermo.csv", []),
    "euler": (EULER_DECK, "euler_small", 200, "/fields", "series.csv", []),
    "spectral": (SPECTRAL_DECK, "spectral_small", 200, "/fields", "diag.csv", []),
}


def run(cmd, env, log, timeout=600):
    with open(log, "w") as f:
        p = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    text = open(log).read()
    check(p.returncode == 0, f"{' '.join(cmd)}\nexited {p.returncode}:\n{text[-3000:]}")
    return text


def scenario_same_results(args, hosts):
    for solver, (deck, name, steps, group, series, extra) in CASES.items():
        common = [args.stratus, "run", deck, f"--set=run.steps={steps}",
                  f"--set=checkpoint.every={steps}", "--set=checkpoint.interval=off",
                  "--restart=none"] + extra
        base = os.path.join(args.work, "same-results", solver)
        os.makedirs(base, exist_ok=True)
        one, two = os.path.join(base, "one-host"), os.path.join(base, "two-hosts")
        t0 = time.time()
        run([args.mpiexec, "-n", "4"] + args.preflags + common + ["--output-dir", one], ENV,
            os.path.join(base + "-one-host.log"))
        t1 = time.time()
        before = hosts.link_bytes(0)
        text = run(hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common +
                   ["--output-dir", two], hosts.env(ENV), os.path.join(base + "-two-hosts.log"))
        t2 = time.time()
        traffic = hosts.link_bytes(0) - before
        check(traffic > 100_000, f"{solver}: only {traffic} bytes crossed host 0's link: the ranks "
              "did not talk over the network")
        check("2 of 4 rank(s)" in text, "the run does not say 2 of its 4 ranks share a host")
        check("4 rank(s) on 2 node(s)" in text,
              f"the run summary does not count 2 nodes:\n{text[-2000:]}")
        names = same_datasets(ckpt_path(one, name, steps), ckpt_path(two, name, steps), group)
        a = thermo_rows(os.path.join(one, f"{name}.{series}"))
        b = thermo_rows(os.path.join(two, f"{name}.{series}"))
        check(a == b, f"{solver}: {series} differs between 4 ranks on one host and 2 x 2")
        print(f"{solver}: 2 hosts x 2 ranks = 4 ranks on one host, bitwise: step {steps} "
              f"{group} ({', '.join(names)}) and {len(b)} {series} rows; {traffic / 1e6:.1f} MB "
              f"over host 0's link ({t1 - t0:.1f} s one host, {t2 - t1:.1f} s two hosts)")
    scenario_two_levels(args, hosts)


def parts_of(directory, name, step, parts=2):
    return [os.path.join(directory, f"{name}.step{step:012d}.part{k}of{parts}.h5")
            for k in range(parts)]


def same_as_parts(whole, parts, group):
    """Every dataset of `group` in the parts of a checkpoint, assembled from the blocks their
    manifests list, bitwise equal to the whole file's; the parts together store no more values
    than the whole file (compact)."""
    import h5py
    with h5py.File(whole, "r") as fw:
        names = sorted(fw[group].keys())
        for n in names:
            want = fw[group][n][()]
            got = want.copy()
            got.fill(0)
            covered = 0
            for p in parts:
                with h5py.File(p, "r") as fp:
                    text = bytes(fp["/checkpoint/manifest"][()]).decode()
                    for line in text.splitlines():
                        w = line.split()
                        if w[0] != "block" or w[1] != f"{group}/{n}":
                            continue
                        # A part stores each block compactly: its values in C order from
                        # "@OFFSET" on, in a 1D dataset (docs/file-formats.md).
                        check(w[-1].startswith("@"), f"{p}: block without its offset: {line}")
                        at = int(w[-1][1:])
                        rank = want.ndim
                        start = [int(v) for v in w[2:2 + rank]]
                        count = [int(v) for v in w[2 + rank:2 + 2 * rank]]
                        size = int(np.prod(count))
                        sl = tuple(slice(a, a + c) for a, c in zip(start, count))
                        got[sl] = fp[f"{group}/{n}"][at:at + size].reshape(count)
                        covered += size
            check(covered == want.size, f"{group}/{n}: the parts' blocks cover {covered} of "
                  f"{want.size} values")
            stored = 0
            for p in parts:
                with h5py.File(p, "r") as fp:
                    stored += fp[f"{group}/{n}"].size
            check(stored == want.size, f"{group}/{n}: the parts store {stored} values, the whole "
                  f"file {want.size}")
            check(np.array_equal(got, want), f"{group}/{n}: the parts differ from {whole}")
    return names


def scenario_two_levels(args, hosts):
    """checkpoint.local on 2 hosts x 2 ranks: each host writes its own part on its own disk and
    copies it to the durable level; the parts resume a run on one host with 4 ranks, and on the
    same two hosts from their node-local disks alone, bitwise equal to 4 ranks on one host."""
    name, steps = "lj_small", 200
    base = os.path.join(args.work, "two-levels")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    for d in hosts.local:
        shutil.rmtree(os.path.join(d, "ckpt"), ignore_errors=True)
    local = os.path.join(hosts.node_local, "ckpt")
    common = [args.stratus, "run", MD_DECK, "--set=checkpoint.every=100",
              "--set=checkpoint.interval=off"]
    two = os.path.join(base, "two-hosts")
    text = run(hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common +
               [f"--set=run.steps={steps}", f"--set=checkpoint.local=\"{local}\"",
                "--restart=none", "--output-dir", two], hosts.env(ENV),
               os.path.join(base, "two-hosts.log"))
    for k in range(2):
        mine = parts_of(os.path.join(hosts.local[k], "ckpt"), name, steps)
        check(os.path.exists(mine[k]) and not os.path.exists(mine[1 - k]),
              f"host {k}'s node-local disk does not hold exactly its own part {k} of step {steps}: "
              f"{sorted(os.listdir(os.path.join(hosts.local[k], 'ckpt')))}")
    durable = os.path.join(two, "checkpoints")
    check(all(os.path.exists(p) for p in parts_of(durable, name, steps)),
          f"the durable level lacks a part of step {steps}: {sorted(os.listdir(durable))}")
    check(re.search(rf"step {steps} is durable \(all 2 parts", text),
          "the log does not say when step 200 became durable on both hosts")
    check(re.search(r"flushes +\d+ copied to the durable directory", text),
          f"the run summary has no flushes line:\n{text[-2000:]}")
    # The reference: 4 ranks on one host, one level, to step 300.
    ref = os.path.join(base, "one-host")
    run([args.mpiexec, "-n", "4"] + args.preflags + common +
        ["--set=run.steps=300", "--restart=none", "--output-dir", ref], ENV,
        os.path.join(base, "one-host.log"))
    # The parts resume 4 ranks on one host (outside the test hosts: no node-local level).
    one = os.path.join(base, "from-parts")
    shutil.copytree(two, one)
    text = run([args.mpiexec, "-n", "4"] + args.preflags + common +
               ["--set=run.steps=300", "--output-dir", one], ENV,
               os.path.join(base, "from-parts.log"))
    check(resumed_step(text) == steps and "(+1 parts)" in text,
          f"4 ranks on one host did not resume from the 2 parts of step {steps}")
    same_datasets(ckpt_path(ref, name, 300), ckpt_path(one, name, 300), "/particles")
    # --restart naming one part reads all of them; `stratus info` on a part shows the whole.
    named = os.path.join(base, "named")
    shutil.copytree(two, named)
    text = run([args.mpiexec, "-n", "4"] + args.preflags + common +
               ["--set=run.steps=300", "--output-dir", named, "--restart",
                parts_of(os.path.join(named, "checkpoints"), name, steps)[1]], ENV,
               os.path.join(base, "named.log"))
    check(resumed_step(text) == steps, "--restart naming part 1 did not resume at its step")
    same_datasets(ckpt_path(ref, name, 300), ckpt_path(named, name, 300), "/particles")
    info = run([args.stratus, "info", parts_of(durable, name, steps)[0], "--verify"], ENV,
               os.path.join(base, "info.log"))
    check("Parts:          2 files" in info and "step 200" in info,
          f"stratus info on a part does not report the whole checkpoint:\n{info}")
    # The durable level lost its copies of step 200 (a flush never done): the same two hosts
    # resume from their node-local disks, each copying its part to the durable level first.
    for p in parts_of(durable, name, steps):
        os.remove(p)
    text = run(hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common +
               ["--set=run.steps=300", f"--set=checkpoint.local=\"{local}\"", "--output-dir", two],
               hosts.env(ENV), os.path.join(base, "node-local-resume.log"))
    check(resumed_step(text) == steps and "after copying from the node-local disks" in text,
          f"the two hosts did not resume from their node-local parts of step {steps}:\n"
          f"{text[-3000:]}")
    check(all(os.path.exists(p) for p in parts_of(durable, name, 300)),
          "the continued run's last checkpoint is not durable")
    same_as_parts(ckpt_path(ref, name, 300), parts_of(durable, name, 300), "/particles")
    # A stop (SIGTERM to the launcher, forwarded to the ranks) waits for every host's copy of
    # its checkpoint: both parts are on the durable level before exit 75.
    stop_out = os.path.join(base, "stopped")
    env = hosts.env(ENV)
    env["STRATUS_MPIEXEC"] = args.mpiexec
    launch = hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common + \
        ["--set=run.steps=20000", f"--set=checkpoint.local=\"{local}\"", "--restart=none",
         "--output-dir", stop_out]
    log_path = os.path.join(base, "stopped.log")
    with open(log_path, "w") as log:
        p = subprocess.Popen([WRAPPER] + launch[1:], env=env, stdout=log, stderr=subprocess.STDOUT)
        end = time.time() + 120
        while time.time() < end and p.poll() is None and \
                not any(s >= 100 for s in durable_steps(log_path)[0]):
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=120)
    text = open(log_path).read()
    # (tools/stratus-mpiexec hands the ranks SIGUSR1: Open MPI forwards it to every rank.)
    m = re.search(r"signal \(SIG\w+\) at step (\d+): checkpoint (\S+) \(and 1 more parts\)", text)
    check(rc == 75 and m, f"SIGTERM on 2 hosts with two levels: exit {rc} (expected 75 and the "
          f"stop's checkpoint named):\n{text[-3000:]}")
    stopped = int(m.group(1))
    check(all(os.path.exists(q) for q in parts_of(os.path.join(stop_out, "checkpoints"), name,
                                                   stopped)),
          f"the stop's checkpoint (step {stopped}) is not on the durable level in both parts")
    check(re.search(rf"step {stopped} is durable \(all 2 parts", text),
          "the log does not say the stop's checkpoint became durable before the exit")
    print(f"checkpoint.local on 2 hosts x 2 ranks: each host wrote its own part on its own disk and "
          f"copied it (durable in both); the parts resumed 4 ranks on one host, bitwise equal to "
          f"4 ranks throughout at step 300; with the durable copies gone, the two hosts resumed "
          f"from their node-local parts; SIGTERM at step {stopped}: both parts durable before "
          f"exit 75")


def last_progress_step(log):
    """The step of the last progress line ("progress: step N/M ...") of a log (-1: none)."""
    steps = re.findall(r"^progress: step (\d+)/\d+ ", open(log).read(), flags=re.M)
    return int(steps[-1]) if steps else -1


def durable_steps(log):
    """(steps announced durable, steps whose copy started) in a two-level run's log."""
    text = open(log).read()
    return ([int(s) for s in re.findall(r"checkpoint: step (\d+) is durable", text)],
            [int(s) for s in re.findall(r"checkpoint: step (\d+): copying to ", text)])


def scenario_host_loss(args, hosts, two_levels=False):
    steps, every = 1000, 100
    common = [args.stratus, "run", EULER_DECK, f"--set=run.steps={steps}",
              f"--set=checkpoint.every={every}", "--set=checkpoint.interval=off",
              "--set=run.hang_timeout=\"10s\"", "--progress-every=0.02s"]
    base = os.path.join(args.work, "host-loss" + ("-two-levels" if two_levels else ""))
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    ref = os.path.join(base, "reference")
    run([args.mpiexec, "-n", "4"] + args.preflags + common + ["--restart=none", "--output-dir", ref],
        ENV, os.path.join(base, "reference.log"))
    # An uninterrupted 2 x 2 run sets the time scale of the random moments of loss.
    t0 = time.time()
    run(hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common +
        ["--restart=none", "--output-dir", os.path.join(base, "timing")], hosts.env(ENV),
        os.path.join(base, "timing.log"))
    duration = time.time() - t0
    if two_levels:
        # Each host writes its part on its node-local disk and copies it to the durable level
        # in the background, throttled so that a copy takes about 40% of a checkpoint interval:
        # many losses then fall while a copy runs.
        size = os.path.getsize(ckpt_path(os.path.join(base, "timing"), "euler_small", steps)) / 2
        rate = size / 1e6 / (0.4 * duration * every / steps)
        common += [f"--set=checkpoint.local=\"{os.path.join(hosts.node_local, 'ckpt')}\"",
                   f"--set=checkpoint.flush_rate={rate:.3f}"]
        print(f"two levels: parts of {size / 1e6:.2f} MB copied at {rate:.2f} MB/s "
              f"({size / 1e6 / rate:.2f} s, one checkpoint interval is "
              f"{duration * every / steps:.2f} s)")
    # The lost runs are launched as docs/cloud.md says, through tools/stratus-mpiexec: a loss
    # while the job ends (once rank 0 has recorded its code) leaves plain mpiexec waiting for the
    # lost daemon (multihost.teardown_loss); the wrapper ends it STRATUS_TEARDOWN_TIMEOUT later.
    lost_env = hosts.env(ENV)
    lost_env.update({"STRATUS_MPIEXEC": args.mpiexec, "STRATUS_TEARDOWN_TIMEOUT": "10"})
    rng = random.Random(20261206)
    results = []
    trial = -1
    launch_failures = 0
    while len(results) < args.trials:
        trial += 1
        how = "kill" if len(results) % 2 == 0 else "cut"
        out = os.path.join(base, f"trial{trial:02d}")
        lost_log = os.path.join(base, f"trial{trial:02d}-lost.log")
        log = open(lost_log, "w")
        p = subprocess.Popen([WRAPPER] + hosts.mpiexec(args.mpiexec, [2, 2])[1:] + args.preflags +
                             common + ["--restart=none", "--output-dir", out], env=lost_env,
                             cwd=base, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        # Any moment once the ranks are stepping: in a step, in a checkpoint write. Not in the
        # launch: Open MPI's mpiexec waits without end for a daemon lost before it reported in
        # (docs/cloud.md), which is mpiexec's part, not the run's. The first progress line
        # marks the end of the launch (a loaded machine can take seconds to get there).
        started = time.time()
        while last_progress_step(lost_log) < 0 and p.poll() is None and time.time() - started < 60:
            time.sleep(0.01)
        if last_progress_step(lost_log) < 0:
            # The launch itself failed or hung before anything was lost: on a loaded machine
            # Open MPI's TCP wire-up between the test hosts can time out ("failed to TCP connect
            # to a peer", then mpiexec waits without end; tools/stratus-mpiexec's launch guard
            # ends such launches, multihost.launch_loss). Not a trial of a loss: drawn again, at
            # most twice in a test.
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            log.close()
            hosts.replace(1)
            launch_failures += 1
            check(launch_failures <= 2, f"trial {trial}: the launch failed before any loss, "
                  f"{launch_failures} times in this test:\n{open(lost_log).read()[-2000:]}")
            print(f"trial {trial:2d}: the launch failed before host 1 was lost (Open MPI wire-up); "
                  "drawn again")
            continue
        time.sleep(rng.uniform(0.0, 0.8) * duration)
        ckdir = os.path.join(out, "checkpoints")
        writing = os.path.isdir(ckdir) and any(f.endswith(".partial") for f in os.listdir(ckdir))
        announced, copying = durable_steps(lost_log)
        flushing = bool(copying) and (not announced or max(copying) > max(announced))
        lost_at = time.time()
        hosts.kill(1) if how == "kill" else hosts.cut(1)
        try:
            rc = p.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise Failure(f"trial {trial} ({how}): the job still ran 120 s after losing host 1:\n"
                          f"{open(lost_log).read()[-3000:]}")
        ended = time.time() - lost_at
        log.close()
        hosts.replace(1)  # a new instance in its place (not used by the resume)
        reached = last_progress_step(lost_log)
        if rc == 0:  # the run ended before the loss: not a trial of a loss
            print(f"trial {trial:2d}: the run finished before host 1 was lost; drawn again")
            continue
        # Host 1 is gone with its node-local disk (hosts.replace emptied it).
        text = run(hosts.mpiexec(args.mpiexec, [2], hosts=[0]) + args.preflags + common +
                   ["--output-dir", out], hosts.env(ENV),
                   os.path.join(base, f"trial{trial:02d}-resume.log"))
        resumed = resumed_step(text)
        if "run: already complete" in text:
            # The run wrote its last checkpoint (in parts, one per host) and was lost before it
            # exited: nothing was left to recompute, so this is not a trial of a loss either.
            print(f"trial {trial:2d}: host 1 was lost after the run's last checkpoint; drawn "
                  "again")
            continue
        if two_levels:
            # Nothing lost beyond the newest checkpoint the run had announced durable.
            announced, _ = durable_steps(lost_log)
            newest = max(announced, default=0)
            check(resumed >= newest,
                  f"trial {trial} ({how}): resumed at step {resumed}, but step {newest} had been "
                  "announced durable")
            check(resumed >= reached - 2 * every,
                  f"trial {trial} ({how}): resumed at step {resumed}, the run had reached "
                  f"{reached}: more lost than a checkpoint interval and one copy")
            writing = flushing
        else:
            check(resumed >= reached - every,
                  f"trial {trial} ({how}): resumed at step {resumed}, the run had reached "
                  f"{reached}: more lost than one checkpoint interval ({every} steps)")
        same_datasets(ckpt_path(ref, "euler_small", steps), ckpt_path(out, "euler_small", steps),
                      "/fields")
        results.append((how, ended, reached, resumed, writing))
        during = " (during a copy to the durable level)" if two_levels else " (during a checkpoint write)"
        print(f"trial {trial:2d}: {how:4s} host 1 at step ~{reached}{during if writing else ''}: "
              f"job ended in {ended:.1f} s (exit {rc}); resumed on host 0 (2 ranks) from step "
              f"{resumed}, finished bitwise equal to the uninterrupted run")
    for how in ("kill", "cut"):
        mine = [r for r in results if r[0] == how]
        if not mine:
            continue
        lost = [max(0, r[2] - r[3]) for r in mine]
        print(f"{how}: {len(mine)} trials, {len(mine)} resumed and finished bitwise; job ended "
              f"in {min(r[1] for r in mine):.1f}-{max(r[1] for r in mine):.1f} s; steps lost per "
              f"loss {min(lost)}-{max(lost)} (mean {sum(lost) / len(lost):.0f}, checkpoint every "
              f"{every}); {sum(1 for r in mine if r[4])} during a "
              f"{'copy to the durable level' if two_levels else 'checkpoint write'}")


def attempt_before(text):
    """The log of the attempt before the last one."""
    parts = text.split("===== Stratus job")
    return parts[-2] if len(parts) >= 3 else ""


def scenario_slurm_requeue(args, hosts):
    """A Slurm cluster of the 3 test hosts (one slurmd each): an euler job on 2 nodes x 2 ranks
    with two checkpoint levels (`stratus submit --spot`) loses one of its nodes, every process
    of it killed: first a node that is not the batch host (the jobscript finds it does not
    answer and requeues the job without it), then the batch host itself (Slurm finds the node
    down and requeues the job). Each time the requeued job runs on a different node set,
    resumes from the newest durable checkpoint and finishes bitwise equal to 4 ranks that were
    never interrupted."""
    from slurm_netns import NetnsSlurm
    if not shutil.which("slurmctld", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
        print("SKIPPED: Slurm is not installed (tools/setup.sh installs slurm-wlm)", file=sys.stderr)
        sys.exit(SKIP)
    steps, every = 4000, 100
    name = "euler_small"
    base = os.path.join(args.work, "slurm-requeue")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    settings = [f"run.steps={steps}", f"checkpoint.every={every}", "checkpoint.interval=off",
                "run.hang_timeout=\"10s\"", "output.progress_every=\"0.2s\""]
    ref = os.path.join(base, "reference")
    run([args.mpiexec, "-n", "4"] + args.preflags + [args.stratus, "run", EULER_DECK,
                                                     "--restart=none", "--output-dir", ref] +
        [f"--set={x}" for x in settings], ENV, os.path.join(base, "reference.log"))
    with NetnsSlurm(hosts, os.path.join(args.work, "slurm-cluster")) as cluster:
        env = hosts.env(cluster.env)
        for batch_host_lost in (False, True):
            tag = "batch-host" if batch_host_lost else "other-node"
            work = os.path.join(base, tag)
            os.makedirs(work)
            out = os.path.join(work, "out")
            for i in range(hosts.count):
                shutil.rmtree(os.path.join(hosts.local[i], "ckpt"), ignore_errors=True)
            cmd = [args.stratus, "submit", EULER_DECK, "--nodes", "2", "--ntasks-per-node", "2",
                   "--spot", "--output-dir", out, "--time", "10"] + \
                [f"--set={x}" for x in settings] + \
                [f"--set=checkpoint.local=\"{os.path.join(hosts.node_local, 'ckpt')}\""]
            p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=60)
            check(p.returncode == 0, f"stratus submit exited {p.returncode}:\n{p.stderr}")
            job = int(re.search(r"submitted job (\d+)", p.stderr).group(1))
            log = os.path.join(work, f"{name}.{job}.out")
            # Lose a node once a checkpoint is durable and the run is well on its way.
            end = time.time() + 120
            while time.time() < end:
                announced, _ = durable_steps(log) if os.path.exists(log) else ([], [])
                if announced and max(announced) >= 3 * every:
                    break
                check(cluster.job(job).get("JobState") in ("PENDING", "RUNNING", "CONFIGURING"),
                      f"job {job}: {cluster.job(job).get('JobState')} before any loss:\n"
                      f"{open(log).read()[-3000:] if os.path.exists(log) else ''}")
                time.sleep(0.1)
            check(announced and max(announced) >= 3 * every,
                  f"job {job}: no durable checkpoint after 120 s")
            info = cluster.job(job)
            nodes = subprocess.run(["scontrol", "show", "hostnames", info["NodeList"]], env=env,
                                   capture_output=True, text=True).stdout.split()
            victim = info["BatchHost"] if batch_host_lost else \
                next(n for n in nodes if n != info["BatchHost"])
            reached = last_progress_step(log)
            newest = max(durable_steps(log)[0])
            lost_at = time.time()
            hosts.kill(cluster.nodes.index(victim))
            final = cluster.wait_job(job, timeout=300)
            text = open(log).read()
            check(final.get("JobState") == "COMPLETED" and int(final.get("Restarts", 0)) >= 1,
                  f"job {job} after losing {victim}: {final.get('JobState')}, restarts "
                  f"{final.get('Restarts')}:\n{text[-4000:]}")
            last_nodes = subprocess.run(["scontrol", "show", "hostnames", final["NodeList"]],
                                        env=env, capture_output=True, text=True).stdout.split()
            check(victim not in last_nodes, f"job {job} ran again on the lost node {victim}")
            attempt = text.rsplit("===== Stratus job", 1)[-1]
            resumed = resumed_step(attempt)
            check(resumed >= newest, f"job {job} resumed at step {resumed}, but step {newest} "
                  "had been announced durable before the loss")
            # The last attempt ran on 2 nodes with a node-local level: the parts of each host.
            same_as_parts(ckpt_path(ref, name, steps),
                          parts_of(os.path.join(out, "checkpoints"), name, steps), "/fields")
            by_script = "requeueing job" in attempt_before(text)
            # Another node lost: the jobscript finds it silent and requeues (Slurm would notice
            # only after SlurmdTimeout). The batch host lost: the jobscript is gone with it, and
            # Slurm requeues the job on the node failure.
            check(by_script != batch_host_lost,
                  f"job {job}: expected the requeue from "
                  f"{'Slurm' if batch_host_lost else 'the jobscript'}:\n{attempt_before(text)[-3000:]}")
            how = "requeued by the jobscript" if by_script else "requeued by Slurm (node failure)"
            print(f"slurm, {'the batch host' if batch_host_lost else 'a node other than the batch host'} "
                  f"lost: job {job} on {','.join(nodes)} lost {victim} at step ~{reached} "
                  f"(newest durable {newest}); {how} (restarts {final.get('Restarts')}) onto "
                  f"{','.join(last_nodes)} in {time.time() - lost_at:.0f} s to the end, resumed "
                  f"from step {resumed}, finished bitwise equal to the uninterrupted run")
            hosts.replace(cluster.nodes.index(victim))
            cluster.restart_node(victim)


def launch_with_host1_frozen(cmd, env, cwd, log_path, hosts):
    """Starts cmd, freezes host 1 the moment its first process shows (while mpiexec starts its
    daemons) and returns the Popen and the time of the freeze."""
    log = open(log_path, "w")
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    started = time.time()
    while not hosts.pids(1):
        check(p.poll() is None, f"{' '.join(cmd)} ended ({p.returncode}) before host 1 had a process")
        check(time.time() - started < 60, "no process on host 1 60 s after the launch")
        time.sleep(0.002)
    hosts.freeze(1)
    return p, time.time()


def scenario_launch_loss(args, hosts):
    """Host 1 hangs while mpiexec starts its daemons. Plain mpiexec waits without end (reported,
    not asserted: it is Open MPI's behaviour); tools/stratus-mpiexec ends the launch after
    STRATUS_LAUNCH_TIMEOUT with exit 1 and says why, and the same run on host 0 alone finishes."""
    steps, timeout = 200, 10
    common = [args.stratus, "run", EULER_DECK, f"--set=run.steps={steps}",
              f"--set=checkpoint.every={steps}", "--set=checkpoint.interval=off",
              "--set=run.hang_timeout=\"10s\""]
    base = os.path.join(args.work, "launch-loss")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    out = os.path.join(base, "run")
    launch = hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common + ["--output-dir", out]

    p, frozen_at = launch_with_host1_frozen(launch, hosts.env(ENV), base,
                                            os.path.join(base, "plain.log"), hosts)
    try:
        rc = p.wait(timeout=2 * timeout)
        plain = f"ended by itself in {time.time() - frozen_at:.1f} s (exit {rc})"
    except subprocess.TimeoutExpired:
        plain = f"still waiting {2 * timeout} s later (ended by the test)"
        p.kill()
        p.wait()
    hosts.replace(1)
    print(f"plain mpiexec, host 1 frozen in the launch: {plain}")

    env = hosts.env(ENV)
    env.update({"STRATUS_MPIEXEC": args.mpiexec, "STRATUS_LAUNCH_TIMEOUT": str(timeout)})
    log_path = os.path.join(base, "wrapper.log")
    p, frozen_at = launch_with_host1_frozen([WRAPPER] + launch[1:], env, base, log_path, hosts)
    try:
        rc = p.wait(timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise Failure(f"tools/stratus-mpiexec still waited {timeout + 60} s after host 1 froze in "
                      f"the launch (STRATUS_LAUNCH_TIMEOUT={timeout})")
    ended = time.time() - frozen_at
    text = open(log_path).read()
    check(rc == 1 and "had not all started" in text,
          f"tools/stratus-mpiexec exited {rc} after host 1 froze in the launch, expected 1 and "
          f"the launch timeout named:\n{text[-2000:]}")
    hosts.replace(1)
    run(hosts.mpiexec(args.mpiexec, [2], hosts=[0]) + args.preflags + common +
        ["--output-dir", out], hosts.env(ENV), os.path.join(base, "host0.log"))
    check(os.path.exists(ckpt_path(out, "euler_small", steps)),
          f"the run on host 0 exited 0 without its step-{steps} checkpoint")
    print(f"tools/stratus-mpiexec, host 1 frozen in the launch: ended in {ended:.1f} s (exit 1, "
          f"STRATUS_LAUNCH_TIMEOUT={timeout}); the same run on host 0 alone finished")


def launch_with_host1_frozen_at_exit(cmd, env, cwd, log_path, hosts):
    """Starts cmd through tools/stratus-mpiexec, freezes host 1 the moment rank 0 prints the run
    summary (every collective of the run done; host 1's ranks cannot exit before rank 0 is
    through MPI_Finalize) and waits for rank 0 to record the run's exit code. Returns the Popen,
    the time of the freeze (None when the job ended first) and the code."""
    log = open(log_path, "w")
    # A session of its own: the test ends the wrapper and its mpiexec together (killpg).
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    started = time.time()
    while p.poll() is None and "\nRun summary:" not in open(log_path).read():
        check(time.time() - started < 120, "no run summary 120 s after the launch")
        time.sleep(0.001)
    if p.poll() is not None:
        return p, None, None
    hosts.freeze(1)
    frozen_at = time.time()
    while time.time() - frozen_at < 30:
        for name in os.listdir(cwd):
            if name.startswith(".stratus-exit.") and not name.endswith(".guard"):
                code = open(os.path.join(cwd, name)).read().strip()
                if code.isdigit():
                    return p, frozen_at, int(code)
        if p.poll() is not None:
            return p, None, None
        time.sleep(0.01)
    raise Failure("rank 0 recorded no exit code 30 s after its run summary")


def scenario_teardown_loss(args, hosts):
    """Host 1 hangs while the job ends, once rank 0 has recorded its exit code. Plain mpiexec
    (the wrapper with its teardown guard off) waits without end for host 1's daemon (reported,
    not asserted: Open MPI's behaviour); tools/stratus-mpiexec ends mpiexec
    STRATUS_TEARDOWN_TIMEOUT s later and exits 0, the run's code: its last checkpoint is
    complete."""
    steps, timeout = 200, 10
    common = [args.stratus, "run", EULER_DECK, f"--set=run.steps={steps}",
              f"--set=checkpoint.every={steps}", "--set=checkpoint.interval=off",
              "--set=run.hang_timeout=\"10s\"", "--restart=none"]
    base = os.path.join(args.work, "teardown-loss")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    env = hosts.env(ENV)
    # A launch whose TCP wire-up fails (as host_loss meets on this machine) ends after 30 s and
    # is drawn again.
    env.update({"STRATUS_MPIEXEC": args.mpiexec, "STRATUS_LAUNCH_TIMEOUT": "30"})
    bad = subprocess.run([WRAPPER, "true"], env=dict(env, STRATUS_TEARDOWN_TIMEOUT="1m"), cwd=base,
                         capture_output=True, text=True)
    check(bad.returncode == 2 and 'STRATUS_TEARDOWN_TIMEOUT: expected whole seconds (0: no '
          'guard), found "1m"' in bad.stderr,
          f"STRATUS_TEARDOWN_TIMEOUT=1m: exit {bad.returncode}, {bad.stderr!r}")
    for guard in (0, timeout):
        env["STRATUS_TEARDOWN_TIMEOUT"] = str(guard)
        for attempt in range(3):
            out = os.path.join(base, f"guard{guard}-{attempt}")
            log_path = out + ".log"
            cmd = [WRAPPER] + hosts.mpiexec(args.mpiexec, [2, 2])[1:] + args.preflags + common + \
                ["--output-dir", out]
            p, frozen_at, code = launch_with_host1_frozen_at_exit(cmd, env, base, log_path, hosts)
            if frozen_at is not None:
                break
            hosts.replace(1)
            print(f"the job ended before host 1 froze (exit {p.returncode}: 0 finished, 1 the "
                  "launch failed); drawn again")
        check(frozen_at is not None, "the job ended before host 1 froze, 3 times")
        check(code == 0, f"rank 0 recorded exit {code}, expected 0 (a finished run)")
        wait = timeout if guard == 0 else timeout + 60
        try:
            rc = p.wait(timeout=wait)
            ended = time.time() - frozen_at
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc, ended = None, None
        hosts.replace(1)
        if guard == 0:
            print("without the teardown guard, host 1 frozen once rank 0 recorded exit 0: "
                  + (f"mpiexec still waiting {wait} s later (ended by the test)" if rc is None
                     else f"mpiexec ended by itself in {ended:.1f} s (exit {rc})"))
            continue
        text = open(log_path).read()
        check(rc is not None, f"tools/stratus-mpiexec still waited {wait} s after host 1 froze at "
              f"the end of the job (STRATUS_TEARDOWN_TIMEOUT={timeout}):\n{text[-2000:]}")
        check(rc == 0 and "still waiting (STRATUS_TEARDOWN_TIMEOUT" in text,
              f"tools/stratus-mpiexec exited {rc} after host 1 froze at the end of the job, "
              f"expected 0 and the teardown timeout named:\n{text[-2000:]}")
        check(timeout <= ended <= timeout + 25,
              f"tools/stratus-mpiexec ended {ended:.1f} s after host 1 froze, expected "
              f"{timeout}-{timeout + 25} s (STRATUS_TEARDOWN_TIMEOUT={timeout}, then TERM and KILL)")
        info = run([args.stratus, "info", ckpt_path(out, "euler_small", steps), "--verify"], ENV,
                   os.path.join(base, "info.log"))
        check(f"step {steps}" in info, f"the finished run's last checkpoint:\n{info}")
        print(f"tools/stratus-mpiexec, host 1 frozen once rank 0 recorded exit 0: mpiexec ended "
              f"{ended:.1f} s later (STRATUS_TEARDOWN_TIMEOUT={timeout}), exit 0; the step-{steps} "
              f"checkpoint verifies")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["same-results", "host-loss", "host-loss-two-levels",
                                         "launch-loss", "teardown-loss", "slurm-requeue"])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    args.preflags = args.preflags.split() if args.preflags else []
    why = usable()
    if why:
        print(f"SKIPPED: the multi-host tests {why}", file=sys.stderr)
        sys.exit(SKIP)
    os.makedirs(args.work, exist_ok=True)
    try:
        count = 3 if args.scenario == "slurm-requeue" else 2
        with NetnsHosts(count, os.path.join(args.work, f"hosts-{args.scenario}")) as hosts:
            {"same-results": scenario_same_results,
             "host-loss": scenario_host_loss,
             "host-loss-two-levels": lambda a, h: scenario_host_loss(a, h, two_levels=True),
             "launch-loss": scenario_launch_loss,
             "teardown-loss": scenario_teardown_loss,
             "slurm-requeue": scenario_slurm_requeue}[args.scenario](args, hosts)
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
