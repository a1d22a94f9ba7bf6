#!/usr/bin/python3
"""The tutorial decks of docs/user-guide.md (inputs/tutorials/*.toml) run, and what the guide
says about them holds. For each deck, with run.steps reduced so that the test stays short:

  1. start it the way the guide does (2 ranks under mpiexec; heat as one process);
  2. interrupt it once it has logged a step, the way the guide shows (SIGUSR1 to mpiexec:
     exit 75; Ctrl-C, i.e. SIGINT, to mpiexec: Open MPI forwards it, the ranks write their
     checkpoint, mpiexec exits 1; Ctrl-C to a single process: exit 75);
  3. check that the log says a checkpoint was written, and resume with the same command: exit
     0, "resumed from", the last step reached;
  4. check the files the guide tells the reader to open and the physics it quotes.

  check_tutorials.py --stratus EXE --mpiexec MPIEXEC [--preflags=...] --decks DIR --work DIR [NAME...]
"""
import argparse
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from stratus_checks import add_run_arguments, check, checkpoints, csv_columns, run_checks  # noqa: E402

ROW = re.compile(r"^\s*([1-9]\d*)\s+[-+\d.]", re.M)  # a diagnostics row after step 0


def check_md(out, steps):
    t = csv_columns(os.path.join(out, "md.thermo.csv"))
    check(list(t["step"]) == list(range(0, steps + 1, 100)), "md: thermo rows are not every 100 steps")
    # The guide: the fcc lattice melts (T falls from 1.5 towards 0.7-0.8) and, with the shifted
    # potential, the total energy per atom stays constant to about 1e-3.
    check(abs(t["temperature"][0] - 1.5) < 1e-9, f"md: T(0) = {t['temperature'][0]}, the deck sets 1.5")
    check(0.6 < t["temperature"][-1] < 0.95, f"md: final T {t['temperature'][-1]}, guide says ~0.75")
    drift = np.abs(t["total"] - t["total"][0]).max()
    check(drift < 2e-3, f"md: total energy per atom drifts by {drift:.2e} (guide: < 2e-3)")
    parts = [os.path.join(out, "md.h5md")] + sorted(glob.glob(os.path.join(out, "md.part*.h5md")))
    frames = 0
    for p in parts:
        with h5py.File(p, "r") as f:
            frames += f["particles/all/position/value"].shape[0]
    check(frames == steps // 200 + 1, f"md: {frames} trajectory frames in {len(parts)} files")
    return f"T {t['temperature'][0]:.3f} -> {t['temperature'][-1]:.3f}, E drift {drift:.1e}, {frames} frames in {len(parts)} files"


def check_heat(out, steps):
    d = csv_columns(os.path.join(out, "heat.diag.csv"))
    check(d["step"][-1] == steps, "heat: the last diagnostics row is not the last step")
    # The guide: total heat stays 2 (offset 1 x volume 2), the RMS error against the exact decay
    # stays below 1e-3 of the mode's RMS (3e-4 at the end of the full run).
    heat_drift = np.abs(d["total_heat"] - 2.0).max()
    check(heat_drift < 1e-10, f"heat: total heat differs from 2 by {heat_drift:.2e}")
    err = (d["l2_error"] / d["l2_exact"]).max()
    check(err < 1e-3, f"heat: relative l2 error {err:.2e} (guide: < 1e-3)")
    with h5py.File(os.path.join(out, "heat.h5"), "r") as f:
        u = f["fields/u"][()]
        check(u.shape == (80, 80, 160), f"heat: field shape {u.shape}, guide says (nz, ny, nx) = (80, 80, 160)")
        check(f["fields"].attrs["step"] == steps, "heat: the field file is not the last step")
    check(os.path.exists(os.path.join(out, "heat.xdmf")), "heat: no heat.xdmf")
    return f"total heat 2 within {heat_drift:.1e}, relative l2 error <= {err:.1e}"


def check_spectral(out, steps):
    d = csv_columns(os.path.join(out, "spectral.diag.csv"))
    check(d["step"][-1] == steps, "spectral: the last diagnostics row is not the last step")
    # The guide: E(0) = 1/8 for the unit Taylor-Green vortex, decaying.
    check(abs(d["energy"][0] - 0.125) < 1e-12, f"spectral: E(0) = {d['energy'][0]}, guide says 0.125")
    check(np.all(np.diff(d["energy"]) < 0), "spectral: the kinetic energy does not decay monotonically")
    snaps = sorted(glob.glob(os.path.join(out, "spectral.fields.*.h5")))
    check(len(snaps) == steps // 100 + 1, f"spectral: {len(snaps)} snapshots")
    for name in ("spectral.xmf", "spectral.spectra.h5", "spectral.spectrum.csv"):
        check(os.path.exists(os.path.join(out, name)), f"spectral: no {name}")
    return f"E {d['energy'][0]:.6f} -> {d['energy'][-1]:.6f}, {len(snaps)} snapshots"


def check_euler(out, steps):
    d = csv_columns(os.path.join(out, "euler.series.csv"))
    check(d["step"][-1] == steps, "euler: the last row is not the last step")
    # The guide: mass (1.5) and total energy are conserved to round-off (periodic box).
    dm = np.abs(d["mass"] - 1.5).max()
    de = np.abs(d["energy"] - d["energy"][0]).max() / d["energy"][0]
    check(dm < 1e-12 and de < 1e-12, f"euler: mass off by {dm:.1e}, energy by {de:.1e}")
    files = sorted(glob.glob(os.path.join(out, "euler.fields.*.h5")))
    check(len(files) >= 2 and os.path.exists(os.path.join(out, "euler.xdmf")), "euler: no field files / xdmf")
    return f"mass 1.5 within {dm:.1e}, energy within {de:.1e} relative, {len(files)} field files"


# name: (reduced steps, ranks, signal, expected exit codes of the interrupted run, checks)
CASES = {
    "md": (600, 2, signal.SIGUSR1, (75,), check_md),
    "heat": (500, 1, signal.SIGINT, (75,), check_heat),
    "spectral": (100, 2, signal.SIGINT, (1, 75), check_spectral),
    "euler": (200, 2, signal.SIGUSR1, (75,), check_euler),
}


def command(args, deck, out, ranks, steps):
    run = [args.stratus, "run", deck, "--output-dir", out, "--set", f"run.steps={steps}"]
    if ranks == 1:
        return run
    return [args.mpiexec, "-n", str(ranks), *shlex.split(args.preflags), *run]


def tutorial(args, name):
    steps, ranks, sig, codes, physics = CASES[name]
    deck = os.path.join(args.decks, name + ".toml")
    work = os.path.join(args.work, name)
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    cmd = command(args, deck, out, ranks, steps)
    env = dict(os.environ, OMP_NUM_THREADS="2" if ranks == 1 else "1")
    log1 = os.path.join(work, "interrupted.log")
    with open(log1, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    start = time.time()
    while p.poll() is None and time.time() - start < 120:
        with open(log1) as f:
            if ROW.search(f.read()):
                break
        time.sleep(0.05)
    check(p.poll() is None, f"{name}: the run ended before it could be interrupted (raise its "
          f"reduced steps):\n" + open(log1).read()[-2000:])
    p.send_signal(sig)
    rc = p.wait(timeout=120)
    log = open(log1).read()
    check(rc in codes, f"{name}: exit {rc} after {sig.name}, expected {codes}:\n{log[-2000:]}")
    m = re.search(r"stopped: signal \((\w+)\) at step (\d+): checkpoint (\S+) written", log)
    check(m, f"{name}: the log does not say a checkpoint was written:\n{log[-2000:]}")
    stopped = int(m.group(2))
    check(0 < stopped < steps, f"{name}: stopped at step {stopped} of {steps}")
    check(checkpoints(out, name)[-1] == stopped, f"{name}: newest checkpoint is not step {stopped}")

    p2 = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                        timeout=300)
    with open(os.path.join(work, "resumed.log"), "w") as f:
        f.write(p2.stdout)
    check(p2.returncode == 0, f"{name}: resume exited {p2.returncode}:\n{p2.stdout[-2000:]}")
    check(re.search(rf"resumed from \S+ \(step {stopped},", p2.stdout),
          f"{name}: the second run did not resume from step {stopped}:\n{p2.stdout[-2000:]}")
    check(checkpoints(out, name)[-1] == steps, f"{name}: no checkpoint at the last step {steps}")
    what = physics(out, steps)
    print(f"{name}: {sig.name} at step {stopped} -> exit {rc}, resumed to step {steps} -> exit 0; {what}")


def main():
    ap = argparse.ArgumentParser()
    add_run_arguments(ap)
    ap.add_argument("--decks", required=True)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    decks = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(args.decks, "*.toml")))
    check(decks == sorted(CASES), f"tutorial decks {decks}: every deck needs a case here, and back")
    for name in args.names or decks:
        tutorial(args, name)


if __name__ == "__main__":
    run_checks(main)
