"""Checks shared by the end-to-end test scripts (tests/checkpoint, tests/slurm): checkpoint
files of a run, bitwise comparison of their datasets, what a run's log says.
Run with Debian's /usr/bin/python3 (h5py)."""
import os
import re

import h5py
import numpy as np


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def checkpoints(outdir, name):
    d = os.path.join(outdir, "checkpoints")
    if not os.path.isdir(d):
        return []
    steps = []
    for f in os.listdir(d):
        m = re.fullmatch(re.escape(name) + r"\.step(\d{12})\.h5", f)
        if m:
            steps.append(int(m.group(1)))
    return sorted(steps)


def ckpt_path(outdir, name, step):
    return os.path.join(outdir, "checkpoints", f"{name}.step{step:012d}.h5")


def same_datasets(a, b, group, rtol=None):
    """Every dataset of `group` bitwise equal in the two files (with `rtol`: within rtol times
    the dataset's largest magnitude, for runs whose arithmetic differs in the last bit)."""
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names = sorted(fa[group].keys())
        check(names == sorted(fb[group].keys()), f"{group}: datasets differ: {names}")
        for n in names:
            x, y = fa[group][n][()], fb[group][n][()]
            check(x.shape == y.shape, f"{group}/{n}: shapes {x.shape} vs {y.shape}")
            if not np.array_equal(x.view(np.uint8), y.view(np.uint8)):
                diff = np.max(np.abs(x.astype(float) - y.astype(float)))
                scale = np.max(np.abs(y.astype(float)))
                if rtol is None or not diff <= rtol * scale:
                    raise Failure(f"{a} vs {b}: {group}/{n} differs (max |diff| {diff:.3e}, "
                                  f"largest |value| {scale:.3e})")
        return names


def resumed_step(log):
    m = re.search(r"checkpoint: resumed from \S+(?: \(\+\d+ parts\))? \(step (\d+),", log)
    if m:
        return int(m.group(1))
    check("starting from step 0" in log, "the log says neither 'resumed from' nor 'starting from step 0':\n" + log[-3000:])
    return 0


def thermo_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line[:1].isdigit():
                rows.append(line.rstrip("\n"))
    return rows


def csv_columns(path):
    """A Stratus CSV series (comment lines start with #) as {column: numpy array}."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    names = lines[0].split(",")
    values = np.array([[float(v) for v in line.split(",")] for line in lines[1:]]).reshape(-1, len(names))
    return {n: values[:, i] for i, n in enumerate(names)}


def add_run_arguments(parser):
    """--stratus, --mpiexec, --preflags (give it as --preflags=...) and --work: how a test
    script starts runs."""
    parser.add_argument("--stratus", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--preflags", default="")
    parser.add_argument("--work", required=True)


def run_checks(main):
    """Runs main(); a Failure prints FAILED: and exits 1."""
    import sys

    try:
        main()
    except Failure as e:
        print(f"FAILED: {e}")
        sys.exit(1)
