#!/usr/bin/python3
"""A run that blows up stops with exit 1 and says where; it never reports success, never
leaves a NaN in its outputs, and keeps only checkpoints that verify.

  check_blowup.py --stratus PATH --work DIR SCENARIO

Scenarios (issue 17's held-out attack; each ended with exit 0 and NaN rows before):
  md-overlap   md from a LAMMPS data file with two atoms on the same spot: exit 1 at step 0,
               naming the atom; the thermo CSV holds its header only.
  kolmogorov   the shipped inputs/cfd/kolmogorov_2d.toml with dt = 0.05 (five times its stable
               step) and a checkpoint every 20 steps: exit 1 naming the step, the quantity and the
               grid point; no NaN in any CSV; every checkpoint left verifies and is older than
               the failure.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
ENV = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_ess_singleton_isolated="1", OMP_PROC_BIND="false",
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
for launcher in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_STEP_ID"):
    ENV.pop(launcher, None)


def fail(message):
    print("FAILED:", message)
    sys.exit(1)


def run(stratus, args, cwd):
    p = subprocess.run([stratus, *args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300)
    print("$ stratus", " ".join(args), "->", p.returncode)
    print(p.stderr.strip()[-2000:])
    return p


def no_nan_in_outputs(out):
    for f in out.glob("*.csv"):
        text = f.read_text()
        if re.search(r"\bnan\b|\binf\b", text, re.IGNORECASE):
            fail(f"{f} holds a non-finite value")


def md_overlap(stratus, work):
    deck = work / "overlap.toml"
    deck.write_text(f"""[run]
solver = "md"
steps = 10
[md.read_data]
file = "{HERE / 'data' / 'overlapping_atoms.data'}"
[md.pair]
cutoff = 2.0
[[md.pair.coeff]]
types = [1, 1]
epsilon = 1.0
sigma = 1.0
[md.thermo]
every = 1
""")
    p = run(stratus, ["run", str(deck), "--output-dir", str(work / "out"), "--restart", "none"], work)
    if p.returncode != 1:
        fail(f"exit {p.returncode}, expected 1")
    for expected in ("blew up at step 0", "potential energy inf", "atom id 0 (id 1 in a LAMMPS data file)",
                     "force (-nan"):
        if expected not in p.stderr:
            fail(f"the error does not say '{expected}'")
    if "finished" in p.stdout + p.stderr:
        fail("the run says it finished")
    rows = [l for l in (work / "out" / "overlap.thermo.csv").read_text().splitlines() if l[:1].isdigit()]
    if rows:
        fail(f"thermo rows written from a blown-up state: {rows}")


def kolmogorov(stratus, work):
    deck = REPO / "inputs" / "cfd" / "kolmogorov_2d.toml"
    out = work / "kol"
    p = run(stratus, ["run", str(deck), "--output-dir", str(out), "--restart", "none", "--set",
                      "spectral.time.dt=0.05", "--set", "run.steps=400", "--set", "checkpoint.every=20",
                      "--set", "checkpoint.keep=50", "--set", "checkpoint.interval=\"off\"", "--set",
                      "spectral.output.snapshot_every=0"], work)
    if p.returncode != 1:
        fail(f"exit {p.returncode}, expected 1")
    m = re.search(r"blew up at step (\d+)|checkpoint of step (\d+) not written", p.stderr)
    if not m:
        fail("the error names no step")
    failed_at = int(m.group(1) or m.group(2))
    # Found by the diagnostics (blew up: the quantity and the grid point) or by the checkpoint
    # that refuses the state (the dataset and the cell); either way, where.
    if "nan" not in p.stderr.lower() or not re.search(r"at (grid point|cell) \(", p.stderr):
        fail("the error names neither the quantity nor where")
    no_nan_in_outputs(out)
    checkpoints = sorted((out / "checkpoints").glob("*.h5"))
    if not checkpoints:
        fail("no checkpoint kept from before the blow-up")
    for c in checkpoints:
        step = int(re.search(r"step(\d+)", c.name).group(1))
        if step > failed_at:
            fail(f"{c.name} is newer than the failure at step {failed_at}")
        v = subprocess.run([stratus, "info", "--verify", str(c)], env=ENV, capture_output=True, text=True)
        if v.returncode != 0:
            fail(f"{c.name} does not verify: {v.stdout}{v.stderr}")
    print(f"blew up at step {failed_at}; {len(checkpoints)} checkpoint(s) kept, all verified, the newest "
          f"{checkpoints[-1].name}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("scenario", choices=["md-overlap", "kolmogorov"])
    a = ap.parse_args()
    work = pathlib.Path(a.work) / a.scenario
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    {"md-overlap": md_overlap, "kolmogorov": kolmogorov}[a.scenario](a.stratus, work)
    print("ok")


if __name__ == "__main__":
    main()
