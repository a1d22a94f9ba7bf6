#!/usr/bin/python3
"""tools/h5md_to_data.py against the run that wrote the trajectory: rigid water (SHAKE, PPPM) on
2 ranks, 40 steps, a frame every 20 and a checkpoint every 20 (so the last frame is in a part
file, NAME.part0001.h5md). The data file written from the last frame must hold that frame's box,
positions, images and velocities bit for bit, keep every other line of the original, and start a
new run whose step-0 potential and kinetic energies are the first run's at step 40 (to 1e-12
relative: only the summation order differs). A frame that does not exist exits with status 2 and
says how many there are.

  check_h5md_to_data.py --stratus BIN --mpiexec MPIEXEC --preflags "..." --deck water_small.toml
      --data spce_512.data --tool h5md_to_data.py --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect:
        fail(f"{' '.join(cmd)} exited {p.returncode}, expected {expect}:\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def thermo(path):
    with open(path) as f:
        lines = [line.strip() for line in f if not line.startswith("#")]
    header = lines[0].split(",")
    return {int(r.split(",")[0]): dict(zip(header, map(float, r.split(",")))) for r in lines[1:]}


def sections(path):
    """Section name -> rows (lists of words, comments removed), and the box lines."""
    out, box, current = {}, {}, None
    with open(path) as f:
        next(f)
        for line in f:
            words = line.partition("#")[0].split()
            if not words:
                continue
            if words[0][0].isalpha():
                current = words[0]
                out[current] = []
            elif len(words) == 4 and words[2].endswith("lo"):
                box[words[2][0]] = (float(words[0]), float(words[1]))
            elif current is not None:
                out[current].append(words)
    return out, box


def main():
    p = argparse.ArgumentParser()
    for a in ("--stratus", "--mpiexec", "--deck", "--data", "--tool", "--work"):
        p.add_argument(a, required=True)
    p.add_argument("--preflags", default="")
    args = p.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    launch = [args.mpiexec, "-n", "2"] + args.preflags.split()
    common = [f'--set=md.read_data.file="{os.path.abspath(args.data)}"', "--set=run.steps=40",
              "--set=md.thermo.every=20", "--set=md.trajectory.every=20",
              "--set=checkpoint.every=20", '--set=checkpoint.interval="off"', "--restart=none"]
    first = os.path.join(args.work, "first")
    run(launch + [args.stratus, "run", args.deck, "--output-dir", first] + common)
    name = "water_small"
    h5md = os.path.join(first, f"{name}.h5md")
    parts = sorted(f for f in os.listdir(first) if f.startswith(f"{name}.part"))
    if not parts:
        fail(f"no trajectory parts in {first}: the test needs a frame in a part file")
    written = os.path.join(args.work, "step40.data")
    tool = [sys.executable, args.tool, "--data", args.data, "--h5md", h5md]
    log = run(tool + ["--output", written])
    if "step 40" not in log:
        fail(f"the tool did not take the last frame (step 40): {log}")

    with h5py.File(os.path.join(first, parts[-1]), "r") as f:
        g = f["particles/all"]
        if int(g["position/step"][-1]) != 40:
            fail(f"{parts[-1]}: last frame is step {g['position/step'][-1]}, expected 40")
        x, n, v = (np.asarray(g[e + "/value"][-1]) for e in ("position", "image", "velocity"))
        ids = np.asarray(g["id/value"][-1])
        edges = np.diagonal(np.asarray(g["box/edges/value"][-1]))
    got, box = sections(written)
    orig, orig_box = sections(args.data)
    row = {int(i) + 1: r for r, i in enumerate(ids)}
    for axis, k in zip("xyz", range(3)):
        if box[axis][0] != orig_box[axis][0] or box[axis][1] - box[axis][0] != edges[k]:
            fail(f"box {axis}: {box[axis]}, expected lower {orig_box[axis][0]}, edge {edges[k]}")
    for words in got["Atoms"]:
        r = row[int(words[0])]
        if [float(c) for c in words[4:7]] != list(x[r]) or [int(c) for c in words[7:10]] != list(n[r]):
            fail(f"atom {words[0]}: position/image {words[4:10]} differ from the frame's "
                 f"{list(x[r])} {list(n[r])}")
    for words in got["Velocities"]:
        if [float(c) for c in words[1:4]] != list(v[row[int(words[0])]]):
            fail(f"atom {words[0]}: velocity {words[1:4]} differs from {list(v[row[int(words[0])]])}")
    if len(got["Velocities"]) != len(ids) or len(got["Atoms"]) != len(ids):
        fail(f"{len(got['Atoms'])} atoms and {len(got['Velocities'])} velocities, expected {len(ids)}")
    for s in orig:
        if s not in ("Atoms", "Velocities") and got.get(s) != orig[s]:
            fail(f"section {s} differs from the original's")
    if [w[:4] for w in got["Atoms"]] != [w[:4] for w in orig["Atoms"]]:
        fail("the id, molecule, type and charge columns differ from the original's")

    second = os.path.join(args.work, "second")
    run(launch + [args.stratus, "run", args.deck, "--output-dir", second,
                  f'--set=md.read_data.file="{os.path.abspath(written)}"', "--set=run.steps=0",
                  '--set=checkpoint.interval="off"', "--restart=none"])
    a = thermo(os.path.join(first, f"{name}.thermo.csv"))[40]
    b = thermo(os.path.join(second, f"{name}.thermo.csv"))[0]
    for q in ("potential", "kinetic", "pair", "coul", "kspace"):
        if abs(a[q] - b[q]) > 1e-12 * abs(a[q]):
            fail(f"{q}: {b[q]!r} from the written data file, {a[q]!r} in the run at step 40")
    print(f"step 40 of {parts[-1]} written as a data file: box, positions, images, velocities "
          f"bitwise; restarted from it: potential {b['potential']!r} vs {a['potential']!r}, "
          f"kinetic {b['kinetic']!r} vs {a['kinetic']!r}")

    p = subprocess.run(tool + ["--frame", "3", "--output", os.path.join(args.work, "x.data")],
                       capture_output=True, text=True)
    if p.returncode != 2 or "frame 3 requested, the trajectory holds 3 frame(s)" not in p.stderr:
        fail(f"a missing frame: exit {p.returncode}, {p.stderr!r}")
    print("a missing frame: exit 2, " + p.stderr.strip())


if __name__ == "__main__":
    main()
