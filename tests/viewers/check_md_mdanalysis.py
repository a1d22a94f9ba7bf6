#!/usr/bin/python3
"""An md run's H5MD trajectory, written in parallel, opens in MDAnalysis with the run's values.

Runs the deck on 2 ranks, then reads the trajectory (OUTPUT/NAME.h5md and the parts
NAME.partNNNN.h5md that checkpoints start) three ways and compares them:
  - MDAnalysis (Debian's python3-mdanalysis), the reader users have: every frame's positions,
    velocities, box, step and time;
  - h5py, the raw datasets of the same file;
  - what the run itself reports: the last checkpoint's /particles (positions, velocities at the
    final step, float64) and the thermo CSV (temperature at each frame's step).
MDAnalysis keeps coordinates in float32: it must agree with the float64 file to float32
round-off (relative 1e-6 of the box); h5py must equal the checkpoint bitwise.

  check_md_mdanalysis.py --stratus EXE --mpiexec MPIEXEC [--preflags "..."] --deck DECK --work DIR
"""
import argparse
import glob
import os
import shlex
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from stratus_checks import (Failure, add_run_arguments, check, checkpoints, ckpt_path,  # noqa: E402
                            csv_columns, run_checks)

import MDAnalysis as mda  # noqa: E402  (mandatory: CMake registers this test only where it imports)


def run(args):
    out = os.path.join(args.work, "out")
    subprocess.run(["rm", "-rf", args.work], check=True)
    os.makedirs(args.work)
    cmd = [args.mpiexec, "-n", "2", *shlex.split(args.preflags), args.stratus, "run", args.deck,
           "--output-dir", out, "--restart", "none"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(args.work, "run.log"), "w") as f:
        f.write(p.stdout)
    check(p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}")
    check("on 2 ranks" in p.stdout or "2 ranks" in p.stdout,
          "the log does not say the run used 2 ranks:\n" + p.stdout[-2000:])
    return out


def main():
    ap = argparse.ArgumentParser()
    add_run_arguments(ap)
    ap.add_argument("--deck", required=True)
    args = ap.parse_args()
    name = os.path.splitext(os.path.basename(args.deck))[0]
    out = run(args)
    parts = [os.path.join(out, name + ".h5md")]
    parts += sorted(glob.glob(os.path.join(out, name + ".part[0-9][0-9][0-9][0-9].h5md")))
    check(len(parts) == 2, f"trajectory files {parts}: expected NAME.h5md and one part")

    # The files, raw (h5py).
    cols = {"position/value": [], "velocity/value": [], "position/step": [],
            "position/time": [], "box/edges/value": []}
    for p in parts:
        with h5py.File(p, "r") as f:
            for k, v in cols.items():
                v.append(f["particles/all/" + k][()])
    x_file, v_file, steps, times, edges = (np.concatenate(v) for v in cols.values())
    frames, natoms = x_file.shape[:2]
    check(list(steps) == [0, 10, 20, 30, 40], f"frame steps {list(steps)}, expected 0..40 by 10")
    check(natoms == 480, f"{natoms} atoms in the file, the deck makes 4 x 6 x 5 x 4 = 480")

    # The run's own final state: the checkpoint written at the end (float64, row = atom id).
    last = checkpoints(out, name)
    check(last and last[-1] == 40, f"checkpoints at steps {last}, expected one at step 40")
    with h5py.File(ckpt_path(out, name, 40), "r") as c:
        x_ckpt = c["particles/position"][()]
        v_ckpt = c["particles/velocity"][()]
        lo, hi = c["state/box_lo"][()], c["state/box_hi"][()]
    check(np.array_equal(x_file[-1], x_ckpt),
          f"last frame vs checkpoint positions: max |diff| {np.abs(x_file[-1] - x_ckpt).max():.3e}")
    check(np.array_equal(v_file[-1], v_ckpt),
          f"last frame vs checkpoint velocities: max |diff| {np.abs(v_file[-1] - v_ckpt).max():.3e}")
    box = hi - lo
    check(np.array_equal(edges[-1], np.diag(box)), f"box edges {edges[-1]} vs checkpoint {box}")
    thermo = csv_columns(os.path.join(out, name + ".thermo.csv"))
    temperature = dict(zip(thermo["step"].astype(int), thermo["temperature"]))

    # The reader users have. MDAnalysis 2.4's Universe(FILE) looks for a particles group named
    # "trajectory" to count atoms; Stratus names it "all" (H5MD lets the writer choose), so the
    # documented way is an empty universe of N atoms and load_new, the parts as a list (one
    # chained trajectory; docs/file-formats.md).
    u = mda.Universe.empty(natoms, trajectory=True)
    u.load_new(parts, format="H5MD", convert_units=False)
    check(len(u.trajectory) == frames, f"MDAnalysis sees {len(u.trajectory)} frames, the file {frames}")
    scale = float(box.max())
    worst_x = worst_v = worst_t = 0.0
    for ts in u.trajectory:
        k = ts.frame
        dx = np.abs(ts.positions.astype(np.float64) - x_file[k]).max()
        dv = np.abs(ts.velocities.astype(np.float64) - v_file[k]).max()
        worst_x, worst_v = max(worst_x, dx), max(worst_v, dv)
        check(dx <= 1e-6 * scale, f"frame {k}: MDAnalysis positions differ by {dx:.3e} (> 1e-6 box)")
        vmax = np.abs(v_file[k]).max()
        check(dv <= 1e-6 * vmax, f"frame {k}: MDAnalysis velocities differ by {dv:.3e} (> 1e-6 max|v|)")
        check(np.allclose(ts.dimensions, [*box, 90, 90, 90], rtol=1e-6, atol=0),
              f"frame {k}: MDAnalysis box {ts.dimensions}, checkpoint box {box}")
        check(int(ts.data["step"]) == steps[k], f"frame {k}: step {ts.data['step']} vs {steps[k]}")
        check(abs(ts.time - times[k]) <= 1e-12, f"frame {k}: time {ts.time} vs {times[k]}")
        check(abs(ts.time - 0.005 * steps[k]) <= 1e-12, f"frame {k}: time {ts.time} != dt * step")
        # Temperature from the velocities MDAnalysis read (mass 1, 3N - 3 degrees of freedom,
        # as the run counts them) against the thermo CSV of the run.
        v = ts.velocities.astype(np.float64)
        t_mda = (v * v).sum() / (3 * natoms - 3)
        t_run = temperature[int(steps[k])]
        worst_t = max(worst_t, abs(t_mda - t_run) / t_run)
        check(abs(t_mda - t_run) <= 1e-5 * t_run,
              f"frame {k}: temperature {t_mda:.8f} from MDAnalysis, {t_run:.8f} in the thermo CSV")
    if k != frames - 1:
        raise Failure("MDAnalysis did not iterate every frame")
    dx_last = np.abs(u.trajectory[-1].positions.astype(np.float64) - x_ckpt).max()
    print(f"MDAnalysis {mda.__version__}: {frames} frames x {natoms} atoms of a 2-rank run in "
          f"{len(parts)} files; "
          f"max |position MDAnalysis - file| {worst_x:.3e} (box {scale:.4g}), last frame vs "
          f"checkpoint {dx_last:.3e}; max |velocity diff| {worst_v:.3e}; temperature vs thermo "
          f"CSV within {worst_t:.2e} relative; h5py last frame == checkpoint bitwise; box, "
          f"step and time exact")


if __name__ == "__main__":
    run_checks(main)
