#!/usr/bin/python3
"""What a run shows and leaves behind (docs/running.md), end to end through `stratus run`.

  check_run_report.py --stratus PATH --work DIR [--mpiexec PATH --preflags "..."] SCENARIO

Scenarios:
  solver-NAME   a small deck of solver NAME (md, heat, euler, spectral), finished: summary.json
                parses and its figures are consistent (steps, phases vs wall, throughput vs
                work x steps / wall, checkpoints vs files written, cost vs price x nodes x
                time), the log file holds the summary, progress lines were logged, and the
                resolved deck in the output directory checks back to itself.
  md-2ranks     the md deck on 2 ranks: work per step summed over ranks, 2 ranks on 1 node.
  walltime      --walltime stops a long run: exit 75, status "stopped: walltime".
  sigterm       SIGTERM stops a run: exit 75, status "stopped: signal"; the resumed run appends
                to the same log file after a separator line.
  tty           on a terminal (a pty) the progress line is redrawn in place with \\r, and the
                log file holds no progress line.
  quiet         --quiet prints no info line; the log file and summary.json are still written.
"""
import argparse
import json
import math
import os
import pathlib
import pty
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
DECKS = HERE.parent / "checkpoint"
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_ess_singleton_isolated="1", OMP_PROC_BIND="false",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# As if started from a shell, not by a launcher (ctest may run inside a Slurm step).
for launcher in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_SIZE",
                 "SLURM_STEP_ID", "STRATUS_TERMINAL"):
    ENV.pop(launcher, None)

# Small decks of every solver (those of the checkpoint tests), their steps here and their work
# per step, counted independently of the solver: atoms of an 8^3 fcc lattice, grid cells.
SOLVERS = {
    "md": ("lj_small.toml", 120, 4 * 8 ** 3, "atom-steps"),
    "heat": ("heat_small.toml", 60, 24 * 16 * 16, "cell-updates"),
    "euler": ("euler_small.toml", 40, 32 * 24, "cell-updates"),
    "spectral": ("spectral_small.toml", 30, 16 ** 3, "cell-updates"),
}
PRICE = 3.5


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def close(a, b, rel, what):
    check(abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-12, f"{what}: {a} vs {b} (tolerance {rel:g})")


class Runner:
    def __init__(self, args):
        self.stratus = args.stratus
        self.work = pathlib.Path(args.work)
        self.mpiexec = args.mpiexec
        self.preflags = args.preflags.split() if args.preflags else []

    def cmd(self, args, ranks=1):
        base = [self.stratus]
        if ranks > 1:
            base = [self.mpiexec, "-n", str(ranks), *self.preflags, self.stratus]
        return base + args

    def run(self, args, ranks=1, expect=0):
        p = subprocess.run(self.cmd(args, ranks), env=ENV, capture_output=True, text=True,
                           timeout=240)
        check(p.returncode == expect,
              f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout[-3000:]}\n{p.stderr}")
        return p

    def run_pty(self, args):
        master, slave = pty.openpty()
        p = subprocess.Popen(self.cmd(args), stdout=slave, stderr=slave, env=ENV)
        os.close(slave)
        out = b""
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
        p.wait(timeout=240)
        os.close(master)
        return p.returncode, out.decode(errors="replace")


def fresh(out_dir):
    shutil.rmtree(out_dir, ignore_errors=True)
    return out_dir


def load_summary(out_dir, name):
    path = out_dir / f"{name}.summary.json"
    check(path.exists(), f"{path} was not written")
    with open(path) as f:
        return json.load(f)  # raises on invalid JSON


def check_summary(s, steps, first, work_per_step, unit, ranks=1):
    """The figures of summary.json agree with each other and with the run."""
    check(s["steps"]["run"] == steps, f"steps.run {s['steps']['run']}, expected {steps}")
    check(s["steps"]["first"] == first and s["steps"]["last"] == first + steps,
          f"steps {s['steps']}, expected {first} -> {first + steps}")
    wall = s["wall_seconds"]
    check(wall > 0, "wall_seconds <= 0")
    phases = s["phases"]
    check(set(phases) == {"compute", "neighbor_fft", "communication", "output", "checkpoint",
                          "other"}, f"phases {sorted(phases)}")
    timed = sum(v["seconds"] for k, v in phases.items() if k != "other")
    everything = timed + phases["other"]["seconds"]
    # Timers cover the time loop: at most all of it, at least half of it.
    check(timed <= wall * 1.01 + 1e-3, f"timed phases {timed} s > wall {wall} s")
    check(timed >= 0.5 * wall, f"timed phases {timed} s < half the wall time {wall} s")
    if ranks == 1:
        close(everything, wall, 0.01, "phases with 'other' vs the wall time")
    for k, v in phases.items():
        check(v["min"] <= v["seconds"] * (1 + 1e-9) + 1e-12 and v["seconds"] <= v["max"] * (1 + 1e-9) + 1e-12,
              f"phase {k}: min {v['min']} <= mean {v['seconds']} <= max {v['max']} does not hold")
    t = s["throughput"]
    check(t["work_unit"] == unit, f"work unit {t['work_unit']}, expected {unit}")
    check(t["work_per_step"] == work_per_step,
          f"work per step {t['work_per_step']}, expected {work_per_step} (summed over ranks)")
    close(t["work_per_second"], work_per_step * steps / wall, 0.01, "throughput vs work x steps / wall")
    close(t["steps_per_second"], steps / wall, 0.01, "steps per second vs steps / wall")
    sim = s["simulated_time"]
    close(t["simulated_per_span"], (sim["end"] - sim["start"]) / wall * t["span_seconds"], 0.01,
          "simulated time per span")
    check(s["ranks"] == ranks and s["nodes"] == 1, f"ranks {s['ranks']}, nodes {s['nodes']}")
    mem = s["memory"]
    check(mem["host_peak_bytes_max"] > 1e6 and mem["host_peak_bytes_sum"] >= mem["host_peak_bytes_max"],
          f"memory {mem}")
    check(mem["device_peak_bytes_max"] is None or mem["device_peak_bytes_max"] > 0, f"memory {mem}")
    for key in ("solver", "run_name", "backend", "stratus_version"):
        check(isinstance(s[key], str) and s[key], f"{key} missing")
    check(s["warnings"]["count"] >= len(s["warnings"]["first"]), "warnings: more texts than the count")


def check_cost(s):
    c = s["cost"]
    check(c is not None, "no cost estimate although run.price_per_node_hour > 0")
    close(c["total"], PRICE * s["nodes"] * s["process_seconds"] / 3600.0, 1e-9,
          "cost vs price x nodes x process hours")
    sim = s["simulated_time"]
    per = PRICE * s["nodes"] * s["wall_seconds"] / 3600.0 / (sim["end"] - sim["start"]) * c["simulated_span"]
    close(c["per_simulated"], per, 1e-9, "cost per simulated span")


def checkpoint_files(out_dir, name):
    return sorted((out_dir / "checkpoints").glob(f"{name}.step*.h5"))


def check_log(out_dir, name, runs):
    log = out_dir / f"{name}.log"
    check(log.exists(), f"{log} was not written")
    text = log.read_text()
    check("\r" not in text, f"{log} holds carriage returns")
    check(text.count("==== stratus run ") == runs,
          f"{log}: {text.count('==== stratus run ')} separator lines, expected {runs}")
    check(text.count("Run summary: ") == runs, f"{log}: {text.count('Run summary: ')} summaries, expected {runs}")
    return text


def normalized(deck_text):
    """key = value lines without the notes and the padding."""
    out = []
    for line in deck_text.splitlines():
        line = re.sub(r"\s+#.*$", "", line) if not line.startswith("#") else ""
        line = re.sub(r"\s+=\s+", " = ", line).strip()
        if line:
            out.append(line)
    return out


def scenario_solver(r, solver, ranks=1):
    deck, steps, work, unit = SOLVERS[solver]
    name = pathlib.Path(deck).stem
    out_dir = fresh(r.work / f"{solver}_np{ranks}")
    every = max(steps // 4, 1)
    p = r.run(["run", str(DECKS / deck), "--output-dir", str(out_dir), "--restart", "none",
               "--set", f"run.steps={steps}", "--set", f"checkpoint.every={every}",
               "--set", "checkpoint.keep=1000", "--set", "checkpoint.interval=off",
               "--set", f"run.price_per_node_hour={PRICE}", "--progress-every", "0.001s"], ranks)
    s = load_summary(out_dir, name)
    check(s["status"] == "finished" and s["stop_detail"] == "", f"status {s['status']!r}")
    check(s["solver"] == solver and s["run_name"] == name, f"solver {s['solver']}, name {s['run_name']}")
    check_summary(s, steps, 0, work, unit, ranks)
    check_cost(s)
    files = checkpoint_files(out_dir, name)
    expected = steps // every + (1 if steps % every else 0)  # and one at the end
    check(s["checkpoints"]["written"] == len(files) == expected,
          f"checkpoints: {s['checkpoints']['written']} in the summary, {len(files)} files, "
          f"{expected} expected")
    check(s["checkpoints"]["seconds"] <= s["wall_seconds"], "checkpoint seconds > wall")
    # Progress lines in a batch log (stdout is a pipe here), and the summary at the end.
    check(re.search(rf"progress: step \d+/{steps} ", p.stdout), "no progress line on stdout")
    check("Run summary: " in p.stdout and "  phase " in p.stdout, "no run summary on stdout")
    log = check_log(out_dir, name, 1)
    check("progress: step" in log, "the log file lacks the progress lines")
    # The resolved deck runs as the same run: `stratus check` on it gives it back.
    deck_file = out_dir / f"{name}.deck.toml"
    check(deck_file.exists(), f"{deck_file} was not written")
    c = r.run(["check", str(deck_file)])
    check(normalized(c.stdout) == normalized(deck_file.read_text()),
          f"`stratus check {deck_file}` differs from the file:\n{c.stdout}")
    check(f'name = "{name}"' in normalized(c.stdout), "the resolved deck does not name the run")
    # Every output in the one directory.
    expected = {f"{name}.log", f"{name}.deck.toml", f"{name}.summary.json", "checkpoints"}
    present = {f.name for f in out_dir.iterdir()}
    check(expected <= present, f"missing in {out_dir}: {sorted(expected - present)}")
    check(any(f.endswith(".csv") for f in present), f"no time-series CSV in {out_dir}: {sorted(present)}")
    print(f"{solver} ({ranks} rank(s)): {steps} steps in {s['wall_seconds']:.3f} s, "
          f"{s['throughput']['work_per_second']:.3g} {unit}/s, timed phases "
          f"{100 * sum(v['seconds'] for k, v in s['phases'].items() if k != 'other') / s['wall_seconds']:.1f}% "
          f"of the wall, {len(files)} checkpoints, cost {s['cost']['total']:.3g}")


def long_md(r, out_dir, extra):
    return ["run", str(DECKS / "lj_small.toml"), "--output-dir", str(out_dir), "--set",
            "run.steps=1000000", "--set", "md.thermo.every=100", "--set", "md.trajectory.every=0",
            "--progress-every", "0.2s", *extra]


def scenario_walltime(r):
    out_dir = fresh(r.work / "walltime")
    p = r.run(long_md(r, out_dir, ["--restart", "none", "--walltime", "3s"]), expect=75)
    s = load_summary(out_dir, "lj_small")
    check(s["status"] == "stopped: walltime", f"status {s['status']!r}")
    files = checkpoint_files(out_dir, "lj_small")
    check(files and f"step{s['steps']['last']:012d}" in files[-1].name,
          f"the last checkpoint {files[-1:]} is not of the last step {s['steps']['last']}")
    check_summary(s, s["steps"]["last"], 0, 2048, "atom-steps")
    check("stopped: wall-time limit" in p.stderr, "no 'stopped:' message")
    log = check_log(out_dir, "lj_small", 1)
    check("stopped: wall-time limit" in log, "the log file lacks the 'stopped:' message")
    print(f"walltime: stopped at step {s['steps']['last']} after {s['wall_seconds']:.2f} s in the loop")


def scenario_sigterm(r):
    out_dir = fresh(r.work / "sigterm")
    log_path = out_dir / "lj_small.log"
    args = long_md(r, out_dir, ["--restart", "none"])
    p = subprocess.Popen(r.cmd(args), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the time loop runs
        if log_path.exists() and "progress: step" in log_path.read_text():
            break
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 75, f"exit {p.returncode} after SIGTERM, expected 75\n{err}")
    s = load_summary(out_dir, "lj_small")
    check(s["status"] == "stopped: signal" and s["stop_detail"] == "SIGTERM",
          f"status {s['status']!r} ({s['stop_detail']!r})")
    check_summary(s, s["steps"]["last"], 0, 2048, "atom-steps")
    first_stop = s["steps"]["last"]
    # The resumed run continues the log file after a separator and reports its own steps.
    r.run(long_md(r, out_dir, ["--set", f"run.steps={first_stop + 50}"]))
    s = load_summary(out_dir, "lj_small")
    check(s["status"] == "finished", f"resumed run: status {s['status']!r}")
    check_summary(s, 50, first_stop, 2048, "atom-steps")
    check_log(out_dir, "lj_small", 2)
    print(f"sigterm: stopped at step {first_stop}, resumed to {first_stop + 50}; log appended")


def scenario_tty(r):
    out_dir = fresh(r.work / "tty")
    rc, out = r.run_pty(["run", str(DECKS / "lj_small.toml"), "--output-dir", str(out_dir),
                         "--restart", "none", "--set", "run.steps=500", "--set", "md.thermo.every=100"])
    check(rc == 0, f"exit {rc}\n{out[-2000:]}")
    redraws = re.findall(r"\rstep (\d+)/500 ", out)
    check(len(redraws) >= 2, f"{len(redraws)} progress redraws on the terminal, expected >= 2:\n{out[-2000:]!r}")
    check("progress: " not in out, "plain progress lines on a terminal")
    # What stays on the screen of each line (after its last \r) is a log line alone: the
    # progress line is cleared before any line is printed, and never ends a line itself.
    # (The terminal turns each "\n" into "\r\n".)
    lines = [line[:-1] if line.endswith("\r") else line for line in out.split("\n")]
    visible = [line.split("\r")[-1] for line in lines]
    for line, shown in zip(lines, visible):
        check(not re.search(r"step \d+/500 ", shown), f"a progress line left in the log: {line!r}")
    check(any(re.match(r"\s+(100|200|300|400|500)\s", v) for v in visible), "no thermo line")
    log = check_log(out_dir, "lj_small", 1)
    check(not re.search(r"step \d+/500 ", log), "the log file holds the terminal's progress lines")
    print(f"tty: {len(redraws)} redraws, last at step {redraws[-1]}")


def scenario_quiet(r):
    out_dir = fresh(r.work / "quiet")
    p = r.run(["run", str(HERE / "decks" / "tiny.toml"), "--output-dir", str(out_dir), "--restart",
               "none", "--quiet", "--progress-every", "0.001s"])
    check(p.stdout == "", f"--quiet printed on stdout:\n{p.stdout}")
    check(p.stderr == "", f"--quiet printed on stderr without a warning:\n{p.stderr}")
    s = load_summary(out_dir, "tiny")
    check(s["status"] == "finished" and s["cost"] is None, "summary of the quiet run")
    check_log(out_dir, "tiny", 1)
    # Run again from step 0: deleting the old checkpoint is a warning, printed even when quiet,
    # counted and repeated in the summary.
    old = checkpoint_files(out_dir, "tiny")
    p = r.run(["run", str(HERE / "decks" / "tiny.toml"), "--output-dir", str(out_dir), "--restart",
               "none", "--quiet"])
    check(p.stdout == "", f"--quiet printed on stdout:\n{p.stdout}")
    check(p.stderr.count("warning: checkpoint: removed") == len(old) >= 1,
          f"{len(old)} old checkpoint(s), stderr:\n{p.stderr}")
    s = load_summary(out_dir, "tiny")
    w = s["warnings"]
    check(w["count"] == len(old) and len(w["first"]) == len(old)
          and all("checkpoint: removed" in x["text"] and x["count"] == 1 for x in w["first"]),
          f"warnings in summary.json: {w}")
    log = check_log(out_dir, "tiny", 2)
    summary_part = log.split("Run summary: ")[-1]
    check(f"warnings     {len(old)}" in summary_part and "checkpoint: removed" in summary_part,
          "the printed summary does not repeat the warning")
    print(f"quiet: nothing printed; log file and summary.json written; {len(old)} warning(s) "
          "counted and repeated")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--preflags", default="")
    ap.add_argument("scenario")
    args = ap.parse_args()
    r = Runner(args)
    r.work.mkdir(parents=True, exist_ok=True)
    try:
        if args.scenario.startswith("solver-"):
            scenario_solver(r, args.scenario[len("solver-"):])
        elif args.scenario == "md-2ranks":
            scenario_solver(r, "md", ranks=2)
        else:
            {"walltime": scenario_walltime, "sigterm": scenario_sigterm, "tty": scenario_tty,
             "quiet": scenario_quiet}[args.scenario](r)
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
