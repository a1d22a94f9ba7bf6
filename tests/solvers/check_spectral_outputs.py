#!/usr/bin/python3
"""End-to-end check of the spectral solver's files: snapshots hold the exact Taylor-Green field
and its vorticity on the grid points, the XDMF series points at them with the right geometry,
the spectra (CSV and HDF5) sum to the energy, and a resume from an earlier checkpoint cuts every
series back so that each step appears once.

  check_spectral_outputs.py --stratus BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

DECK = """
[run]
solver = "spectral"
steps = 20
[spectral]
points = [16, 12, 8]
origin = [-3.141592653589793, -1.0, 0.5]
viscosity = 0.05
[spectral.time]
dt = 0.01
[spectral.initial]
type = "taylor_green"
amplitude = 1.5
[spectral.fft]
planner = "estimate"
[spectral.output]
diag_every = 5
spectrum_every = 5
snapshot_every = 10
pressure = true
[checkpoint]
every = 10
interval = "off"
"""


def fail(msg):
    print("FAILED: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    deck = os.path.join(a.work, "tgv.toml")
    open(deck, "w").write(DECK)
    out = os.path.join(a.work, "out")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run([a.stratus, "run", deck, "--output-dir", out, "--restart", "none"], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stdout + p.stderr)

    # 1. the snapshot of step 0: the exact field on the points x_i = origin + i L / N
    n = (16, 12, 8)
    box = 2 * np.pi
    x = [o + np.arange(m) * box / m for o, m in zip((-np.pi, -1.0, 0.5), n)]
    Z, Y, X = np.meshgrid(x[2], x[1], x[0], indexing="ij")  # file order (z, y, x)
    U = 1.5
    exact = {
        "u": U * np.sin(X) * np.cos(Y) * np.cos(Z),
        "v": -U * np.cos(X) * np.sin(Y) * np.cos(Z),
        "w": 0 * X,
        "omega_x": -U * np.cos(X) * np.sin(Y) * np.sin(Z),
        "omega_y": -U * np.sin(X) * np.cos(Y) * np.sin(Z),
        "omega_z": 2 * U * np.sin(X) * np.sin(Y) * np.cos(Z),
    }
    with h5py.File(os.path.join(out, "tgv.fields.000000000000.h5"), "r") as f:
        if f.attrs["stratus_format"] != "field":
            fail("snapshot format attribute")
        for name, ref in exact.items():
            d = f["fields"][name][()]
            if d.shape != (8, 12, 16):
                fail(f"{name}: shape {d.shape}, expected (8, 12, 16) (z, y, x)")
            err = np.max(np.abs(d - ref))
            if err > 1e-13:
                fail(f"snapshot {name} differs from the exact field by {err:.2e}")
        # Pressure of the Taylor-Green vortex: (U^2/16)(cos 2x + cos 2y)(cos 2z + 2), up to a
        # constant.
        p = f["fields"]["p"][()]
        ref = U * U / 16 * (np.cos(2 * X) + np.cos(2 * Y)) * (np.cos(2 * Z) + 2)
        err = np.max(np.abs((p - p.mean()) - (ref - ref.mean())))
        if err > 1e-13:
            fail(f"snapshot pressure differs from the exact one by {err:.2e}")
    # 2. XDMF: geometry in file order, every referenced dataset exists with the stated shape
    root = ET.parse(os.path.join(out, "tgv.xmf")).getroot()
    grids = root.findall("./Domain/Grid/Grid")
    times = [float(g.find("Time").get("Value")) for g in grids]
    if not np.allclose(times, [0.0, 0.1, 0.2], rtol=0, atol=1e-12):
        fail(f"XDMF times {times}")
    g = grids[1]
    if g.find("Topology").get("Dimensions") != "8 12 16":
        fail("XDMF topology dimensions")
    origin, spacing = [list(map(float, d.text.split())) for d in g.find("Geometry")]
    if not np.allclose(origin, [0.5, -1.0, -np.pi]) or not np.allclose(spacing, [box / 8, box / 12, box / 16]):
        fail(f"XDMF geometry {origin} {spacing}")
    for item in g.iter("DataItem"):
        if item.get("Format") == "HDF":
            fname, dset = item.text.strip().split(":")
            with h5py.File(os.path.join(out, fname), "r") as f:
                if f[dset].shape != (8, 12, 16):
                    fail(f"{item.text}: shape {f[dset].shape}")
    # 3. spectra: rows of the CSV and of the HDF5 file agree and sum to the energy
    diag = np.genfromtxt(os.path.join(out, "tgv.diag.csv"), delimiter=",", names=True)
    spec = np.genfromtxt(os.path.join(out, "tgv.spectrum.csv"), delimiter=",", names=True)
    with h5py.File(os.path.join(out, "tgv.spectra.h5"), "r") as f:
        steps, values = f["profiles/step"][()], f["profiles/value"][()]
    if list(steps) != [0, 5, 10, 15, 20]:
        fail(f"spectra steps {list(steps)}")
    for s, row in zip(steps, values):
        csv_rows = spec["energy"][spec["step"] == s]
        if not np.array_equal(csv_rows, row):
            fail(f"step {s}: CSV and HDF5 spectra differ")
        e = diag["energy"][diag["step"] == s][0]
        if abs(row.sum() - e) > 1e-14 * e:
            fail(f"step {s}: spectrum sums to {row.sum()!r}, energy {e!r}")
    # 4. resume from the checkpoint of step 10: later rows, snapshots and spectra are replaced
    before = open(os.path.join(out, "tgv.diag.csv")).read()
    ck = os.path.join(out, "checkpoints", "tgv.step000000000010.h5")
    p = subprocess.run([a.stratus, "run", deck, "--output-dir", out, "--restart", ck], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stdout + p.stderr)
    if open(os.path.join(out, "tgv.diag.csv")).read() != before:
        fail("diagnostics after the resume differ from the straight run")
    with h5py.File(os.path.join(out, "tgv.spectra.h5"), "r") as f:
        if list(f["profiles/step"][()]) != [0, 5, 10, 15, 20]:
            fail(f"spectra steps after the resume {list(f['profiles/step'][()])}")
    grids = ET.parse(os.path.join(out, "tgv.xmf")).getroot().findall("./Domain/Grid/Grid")
    if not np.allclose([float(g.find("Time").get("Value")) for g in grids], [0.0, 0.1, 0.2],
                       rtol=0, atol=1e-12):
        fail("XDMF series after the resume")
    print("spectral outputs: exact TGV snapshot (velocity, vorticity and pressure to 1e-13), XDMF geometry "
          "and datasets, spectra = energy, resume cuts every series back (each step once)")


if __name__ == "__main__":
    main()
