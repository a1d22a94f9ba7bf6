#!/usr/bin/python3
"""Stratus jobscripts against a real Slurm (munged, slurmctld, slurmd started here).

  check_slurm.py --stratus BIN --work DIR [--deadline SECONDS]

1. plain: a 2-rank job (`stratus submit`, srun --mpi=pmix) whose deck and output live in a
   directory named with spaces, quotes and `$(...)`; checks the output (one 2-rank MPI world,
   every thermo row, energy conservation, nothing executed from the path). It is also the
   uninterrupted reference of 2 and 3.
2. spot-usr1: `stratus submit --spot`; `scancel --signal=USR1 --batch` mid-run; the job must
   checkpoint, exit 75, requeue itself, resume from the checkpoint, finish, and end bitwise equal
   to the reference.
3. spot-watch: the same, stopped by stratus-preempt-watch seeing an AWS spot notice played by an
   HTTP server on loopback (IMDSv2: token PUT, then GET with the token).
4. early: SIGUSR1 the moment the job starts, before the ranks have their handler: requeued too.
5. fallback: a spot job with no requeue left continues as a new job on the fallback partition
   (this one launched with mpirun inside the allocation instead of srun).
6. chain: `--chain 2` (afterany); the first job is stopped and ends with 75, the second resumes.
7. The daemons are stopped whatever happens (also on SIGTERM/SIGINT and at --deadline).
If Slurm cannot start, the test fails and says why.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from slurm_cluster import SlurmCluster, SlurmError  # noqa: E402
from played_http import Played, serve  # noqa: E402
from stratus_checks import (Failure, check, checkpoints, ckpt_path, resumed_step,  # noqa: E402
                            same_datasets, thermo_rows)

DECK = os.path.join(HERE, "..", "checkpoint", "lj_small.toml")
NAME = "lj_small"
# Long enough that an interruption sent once the checkpoint of step 100 exists lands well
# before the end (600 steps took 0.26 s here: a watcher polling every 0.2 s lost that race).
STEPS = 6000
SETTINGS = [f"run.steps={STEPS}", "checkpoint.interval=off", "checkpoint.every=100",
            "md.lattice.cells=[6,6,6]", "md.thermo.every=20", "md.trajectory.every=1000"]
# A directory name that would run commands if it ever reached a shell unquoted.
ODD_DIR = "deck dir 'single' \"double\" $(touch PWNED) `touch PWNED` ; touch PWNED"


class Deadline(Exception):
    pass


def say(text):
    print(text, flush=True)


class AwsNotice(Played):
    """IMDSv2 on loopback: PUT /latest/api/token gives a token; GET .../spot/instance-action with
    it answers 404 until the test arms a notice, then the JSON of a 2-minute notice."""
    armed = threading.Event()
    seen = {"token": 0, "with_token": 0, "without_token": 0}
    TOKEN = "stratus-test-token"

    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get(
                "X-aws-ec2-metadata-token-ttl-seconds"):
            AwsNotice.seen["token"] += 1
            self.answer(200, self.TOKEN)
        else:
            self.answer(400, "")

    def do_GET(self):
        if self.headers.get("X-aws-ec2-metadata-token") != self.TOKEN:
            AwsNotice.seen["without_token"] += 1
            return self.answer(401, "")
        AwsNotice.seen["with_token"] += 1
        if self.path != "/latest/meta-data/spot/instance-action" or not self.armed.is_set():
            return self.answer(404, "")
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 120))
        self.answer(200, json.dumps({"action": "terminate", "time": when}))



class Suite:
    def __init__(self, args, cluster):
        self.stratus = os.path.abspath(args.stratus)
        self.work = os.path.abspath(args.work)
        self.cluster = cluster
        self.figures = {}

    def chain(self, reference):
        """`--chain 2` without --spot: the first job, stopped by SIGUSR1, ends with 75 (not
        requeued); the second (afterany) resumes and finishes."""
        base = os.path.join(self.work, "chain")
        os.makedirs(base)
        out = os.path.join(base, "out")
        cmd = self.submit_command(DECK, out, ["--chain", "2"])
        p = subprocess.run(cmd, cwd=base, env=self.cluster.env, capture_output=True, text=True,
                           timeout=60)
        jobs = [int(j) for j in re.findall(r"submitted job (\d+)", p.stderr)]
        check(p.returncode == 0 and len(jobs) == 2, f"--chain 2: {p.returncode} {p.stderr}")
        check(f"submitted job {jobs[1]} (after job {jobs[0]} ends)" in p.stderr, p.stderr)
        info = self.cluster.job(jobs[1])
        check(info.get("Dependency", "").startswith(f"afterany:{jobs[0]}"),
              f"job {jobs[1]}: Dependency={info.get('Dependency')}")
        log = os.path.join(base, f"{NAME}.{jobs[0]}.out")
        self.wait_for("periodic checkpoint", lambda: any(s >= 100 for s in checkpoints(out, NAME)),
                      120, log)
        self.usr1(jobs[0])
        info = self.cluster.wait_job(jobs[0], timeout=60)
        first = self.read(log)
        check(info.get("JobState") == "FAILED" and info.get("ExitCode") == "75:0",
              f"job {jobs[0]}: {info.get('JobState')} {info.get('ExitCode')}, expected FAILED 75:0")
        check("requeueing" not in first and "submit the job again to resume" in first,
              "the first job of the chain:\n" + first[-2000:])
        second = self.finished_job(jobs[1], os.path.join(base, f"{NAME}.{jobs[1]}.out"), 0)
        stop_step = self.stop_step(first)
        check(resumed_step(second) == stop_step, f"job {jobs[1]} resumed at "
              f"{resumed_step(second)}, job {jobs[0]} stopped at {stop_step}")
        same = self.same_as_reference(reference, out)
        say(f"chain: job {jobs[0]} stopped at step {stop_step} (exit 75, FAILED, not requeued); job "
            f"{jobs[1]} (afterany:{jobs[0]}) resumed and finished; {same}")

    def submit_command(self, deck, outdir, extra):
        return [self.stratus, "submit", deck, "--ntasks-per-node", "2", "--output-dir", outdir,
                "--time", "10"] + [f"--set={s}" for s in SETTINGS] + extra

    def submit(self, workdir, deck, outdir, extra):
        p = subprocess.run(self.submit_command(deck, outdir, extra), cwd=workdir, env=self.cluster.env, capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 0, f"stratus submit exited {p.returncode}:\n{p.stderr}")
        m = re.search(r"submitted job (\d+)", p.stderr)
        check(m, f"stratus submit did not say which job: {p.stderr}")
        job = int(m.group(1))
        return job, os.path.join(workdir, f"{NAME}.{job}.out")

    @staticmethod
    def read(path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def wait_for(self, what, predicate, timeout, log=None):
        end = time.time() + timeout
        while time.time() < end:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        tail = self.read(log)[-3000:] if log else ""
        raise Failure(f"no {what} after {timeout} s\n{tail}")

    def finished_job(self, job, log, restarts):
        info = self.cluster.wait_job(job, timeout=240)
        text = self.read(log)
        check(info.get("JobState") == "COMPLETED" and info.get("ExitCode") == "0:0",
              f"job {job}: {info.get('JobState')} exit {info.get('ExitCode')}:\n{text[-3000:]}")
        check(info.get("Restarts") == str(restarts),
              f"job {job}: Restarts={info.get('Restarts')}, expected {restarts}")
        return text

    # -- 1 -------------------------------------------------------------------------------------
    def plain(self):
        base = os.path.join(self.work, "plain")
        odd = os.path.join(base, ODD_DIR)
        os.makedirs(odd)
        deck = os.path.join(odd, f"{NAME}.toml")
        with open(DECK) as src, open(deck, "w") as dst:
            dst.write(src.read())
        out = os.path.join(odd, "out put")
        t0 = time.time()
        job, log = self.submit(base, deck, out, [])
        text = self.finished_job(job, log, 0)
        self.figures["plain job (submit to end)"] = time.time() - t0
        check(text.count("2 ranks (2 x 1 x 1)") == 1,
              "the log does not show one 2-rank MPI world (srun --mpi=pmix):\n" + text[-3000:])
        check("run finished" in text and "attempt 1 (SLURM_RESTART_COUNT=0)" in text,
              "no attempt header or no 'run finished':\n" + text[-3000:])
        rows = thermo_rows(os.path.join(out, f"{NAME}.thermo.csv"))
        steps = [int(r.split(",")[0]) for r in rows]
        check(steps == list(range(0, STEPS + 1, 20)), f"thermo steps {steps}")
        # NVE from a lattice at dt = 0.005: the conserved energy stays within 1 % (it drifts by
        # about 0.1 % while the crystal melts); a broken exchange between the ranks does not.
        # By name: columns are added at the end (pxx, pyy, pzz follow conserved).
        with open(os.path.join(out, f"{NAME}.thermo.csv")) as f:
            header = next(line for line in f if line.startswith("step,")).strip().split(",")
        column = header.index("conserved")
        conserved = [float(r.split(",")[column]) for r in rows]
        drift = max(abs(c - conserved[0]) for c in conserved) / abs(conserved[0])
        check(drift < 0.01, f"conserved energy per atom drifts by {drift:.2%} (> 1 %)")
        check(checkpoints(out, NAME)[-1] == STEPS, f"no final checkpoint in {out}")
        pwned = [os.path.join(d, f) for d, _, fs in os.walk(self.work) for f in fs if f == "PWNED"]
        check(not pwned, f"a command in the deck's path was executed: {pwned}")
        say(f"plain: 2-rank job {job} from a directory named {ODD_DIR!r}: one 2-rank world, "
            f"{len(rows)} thermo rows, conserved energy within {drift:.2e}, nothing executed "
            f"from the path ({self.figures['plain job (submit to end)']:.1f} s)")
        return out

    # -- 2 and 3 -------------------------------------------------------------------------------
    def start_and_stop(self, tag, extra, interrupt, after_stop=lambda: None):
        """Submits a spot job, interrupts it after its first periodic checkpoint, waits for
        exit 75. Returns (job, log, out, seconds from the interruption to exit 75)."""
        base = os.path.join(self.work, tag)
        os.makedirs(base)
        out = os.path.join(base, "out")
        job, log = self.submit(base, DECK, out, ["--spot"] + extra)
        self.wait_for("periodic checkpoint", lambda: any(s >= 100 for s in checkpoints(out, NAME)),
                      120, log)
        sent = time.time()
        interrupt(job)
        self.wait_for("exit 75", lambda: "stratus exited with 75" in self.read(log), 60, log)
        stopped = time.time() - sent
        after_stop()
        self.figures[f"{tag}: signal to exit 75"] = stopped
        return job, log, out, stopped

    def stop_step(self, first):
        m = re.search(r"stopped: signal \(SIGUSR1\) at step (\d+): checkpoint (\S+) written", first)
        check(m, "the first attempt does not say it stopped on SIGUSR1 with a checkpoint:\n" + first[-3000:])
        step = int(m.group(1))
        check(0 < step < STEPS, f"stopped at step {step}")
        return step

    def same_as_reference(self, reference, out):
        names = same_datasets(ckpt_path(reference, NAME, STEPS), ckpt_path(out, NAME, STEPS),
                              "/particles")
        ref_rows = thermo_rows(os.path.join(reference, f"{NAME}.thermo.csv"))
        rows = thermo_rows(os.path.join(out, f"{NAME}.thermo.csv"))
        check(rows == ref_rows, "thermo CSV differs from the uninterrupted run")
        return f"step {STEPS} bitwise equal to the uninterrupted run ({', '.join(names)}), " \
               f"thermo identical ({len(rows)} rows)"

    def spot(self, tag, reference, extra, interrupt, after_stop=lambda: None):
        job, log, out, stopped = self.start_and_stop(tag, ["--max-restarts", "3"] + extra,
                                                     interrupt, after_stop)
        self.wait_for("requeue", lambda: "requeueing job" in self.read(log), 20, log)
        requeued = time.time()
        self.wait_for("second attempt", lambda: "attempt 2 (SLURM_RESTART_COUNT=1)" in self.read(log),
                      240, log)
        restarted = time.time()
        text = self.finished_job(job, log, 1)
        first, second = text.split("attempt 2 (SLURM_RESTART_COUNT=1)")
        stop_step = self.stop_step(first)
        check("received SIGUSR1" in first or "SIGUSR1 sent to" in first,
              "no record of the signal reaching the job:\n" + first[-2000:])
        check(resumed_step(second) == stop_step,
              f"the second attempt resumed at {resumed_step(second)}, the first stopped at {stop_step}")
        check("run finished" in second, "the second attempt did not finish:\n" + second[-2000:])
        same = self.same_as_reference(reference, out)
        self.figures[f"{tag}: requeue to next attempt"] = restarted - requeued
        say(f"{tag}: job {job} stopped at step {stop_step} (exit 75 {stopped:.2f} s after "
            f"the signal), requeued, attempt 2 began {restarted - requeued:.1f} s later, resumed "
            f"at step {stop_step}, finished; {same}")
        return text

    def usr1(self, job):
        p = subprocess.run(["scancel", "--signal=USR1", "--batch", str(job)],
                           env=self.cluster.env, capture_output=True, text=True)
        check(p.returncode == 0, f"scancel --signal=USR1 --batch: {p.stderr}")

    def spot_usr1(self, reference):
        self.spot("spot-usr1", reference, [], self.usr1)

    def early(self, reference):
        """SIGUSR1 the moment the jobscript starts, before the ranks do: the jobscript forwards it
        once they have started; ranks killed by it before their handler is installed (exit 138)
        count as resumable. Either way the job is requeued and ends equal to the reference."""
        base = os.path.join(self.work, "early")
        os.makedirs(base)
        out = os.path.join(base, "out")
        job, log = self.submit(base, DECK, out, ["--spot", "--max-restarts", "3"])
        # The attempt header is printed after the traps are set, before the ranks start.
        self.wait_for("attempt header", lambda: "attempt 1 (SLURM_RESTART_COUNT=0)" in self.read(log),
                      60, log)
        self.usr1(job)
        text = self.finished_job(job, log, 1)
        first, second = text.split("attempt 2 (SLURM_RESTART_COUNT=1)")
        check("requeueing job" in first, "the first attempt was not requeued:\n" + first[-3000:])
        m = re.search(r"stopped: signal \(SIGUSR1\) at step (\d+)", first)
        if m:
            how, step = f"stopped with a checkpoint at step {m.group(1)}", int(m.group(1))
        else:
            check("died of the forwarded SIGUSR1 while starting up" in first,
                  "neither a checkpoint nor a death during start-up:\n" + first[-3000:])
            how, step = "killed while starting up (exit 138, counted as resumable)", 0
        check(resumed_step(second) == step, f"attempt 2 resumed at {resumed_step(second)}, not {step}")
        before = "before the ranks started" in first
        same = self.same_as_reference(reference, out)
        say(f"early: SIGUSR1 as job {job} started{' (before srun: forwarded once the ranks had started)' if before else ''}: "
            f"{how}; requeued, finished; {same}")

    def fallback(self, reference):
        """No requeue left (--max-restarts 0): the run continues as a new job on the fallback
        partition, which resumes and finishes. Launched with Open MPI's mpirun inside the
        allocation (--launcher mpirun), which forwards SIGUSR1 to the ranks."""
        job, log, out, _ = self.start_and_stop(
            "fallback", ["--max-restarts", "0", "--partition", "test", "--fallback-partition",
                         "fallback", "--launcher", "mpirun"], self.usr1)
        first = self.read(log)
        info = self.cluster.wait_job(job, timeout=60)
        check(info.get("JobState") == "FAILED" and info.get("ExitCode") == "75:0",
              f"job {job}: {info.get('JobState')} {info.get('ExitCode')}, expected FAILED 75:0")
        m = self.wait_for("fallback job", lambda: re.search(r"Submitted batch job (\d+)",
                                                           self.read(log)), 30, log)
        second_job = int(m.group(1))
        second_log = os.path.join(os.path.dirname(log), f"{NAME}.{second_job}.out")
        info = self.cluster.job(second_job)
        check(info.get("Partition") == "fallback", f"job {second_job} is on {info.get('Partition')}")
        second = self.finished_job(second_job, second_log, 0)
        stop_step = self.stop_step(first)
        check(resumed_step(second) == stop_step, f"job {second_job} resumed at "
              f"{resumed_step(second)}, job {job} stopped at {stop_step}")
        check("requeueing" not in first + second, "a job was requeued with --max-restarts 0")
        same = self.same_as_reference(reference, out)
        check(first.count("2 ranks (2 x 1 x 1)") == 1, "mpirun: not one 2-rank world:\n" + first[-2000:])
        say(f"fallback (mpirun): spot job {job} stopped at step {stop_step} with no restart left (exit 75); "
            f"job {second_job} on partition 'fallback' resumed at step {stop_step} and finished; "
            f"{same}")

    def spot_watch(self, reference):
        server, url = serve(AwsNotice)
        try:
            text = self.spot("spot-watch", reference,
                             ["--watch", "aws", "--watch-url", url, "--watch-interval", "0.2"],
                             lambda job: AwsNotice.armed.set(), AwsNotice.armed.clear)
        finally:
            server.shutdown()
        check("notice: AWS spot instance-action terminate" in text,
              "the watcher did not report the notice:\n" + text[-3000:])
        m = re.search(r"SIGUSR1 sent to 2 process\(es\) \[[\d, ]+\] ([\d.]+) s after the notice", text)
        check(m, "the watcher did not signal the 2 ranks:\n" + text[-3000:])
        seen = AwsNotice.seen
        check(seen["token"] > 0 and seen["with_token"] > 0 and seen["without_token"] == 0,
              f"the watcher did not use IMDSv2 tokens as it should: {seen}")
        self.figures["spot-watch: notice to signal (watcher)"] = float(m.group(1))
        say(f"spot-watch: the watcher saw the AWS notice and signalled both ranks {m.group(1)} s "
            f"later (polls every 0.2 s; IMDSv2 requests: {seen})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--deadline", type=float, default=500)
    args = ap.parse_args()
    start = time.time()

    def stop_now(signum, _frame):
        raise Deadline(f"stopped by {signal.Signals(signum).name} after {time.time() - start:.0f} s")
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(s, stop_now)
    signal.alarm(int(args.deadline))

    cluster = SlurmCluster(os.path.join(args.work, "cluster"))
    status = 0
    try:
        with cluster:
            say(f"slurm: munged, slurmctld and slurmd up in {time.time() - start:.1f} s "
                f"({cluster.conf})")
            suite = Suite(args, cluster)
            for d in ("plain", "spot-usr1", "spot-watch", "early", "fallback", "chain"):
                subprocess.run(["rm", "-rf", os.path.join(suite.work, d)])
            reference = suite.plain()
            suite.spot_usr1(reference)
            suite.spot_watch(reference)
            suite.early(reference)
            suite.fallback(reference)
            suite.chain(reference)
            for k, v in suite.figures.items():
                say(f"  {k}: {v:.2f} s")
    except SlurmError as e:
        print(f"FAILED: Slurm: {e}", file=sys.stderr)
        status = 1
    except (Failure, Deadline) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        status = 1
    finally:
        signal.alarm(0)
        left = [d for d in ("munged", "slurmctld", "slurmd")
                if os.path.exists(cluster.pid_file(d)) and _alive(cluster.pid_file(d), d)]
        if left:
            print(f"FAILED: daemons still running: {left}", file=sys.stderr)
            status = 1
        else:
            say(f"slurm: daemons stopped; {time.time() - start:.1f} s in all")
    sys.exit(status)


def _alive(pid_file, name):
    try:
        pid = int(open(pid_file).read().split()[0])
        return open(f"/proc/{pid}/comm").read().strip() == name
    except (OSError, ValueError, IndexError):
        return False


if __name__ == "__main__":
    main()
