"""tools/stratus-plot on small runs of each solver kind (docs/analysis.md).

    /usr/bin/python3 check_plot.py STRATUS SOURCE_DIR WORKDIR CASE

CASE is md, spectral, euler, heat or errors. Each run case checks that every expected PNG is
written, is non-empty and starts with the PNG signature."""
import os
import shutil
import subprocess
import sys

STRATUS, SRC, WORK, CASE = sys.argv[1:5]
PLOT = os.path.join(SRC, "tools", "stratus-plot")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(cmd, rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != rc:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {rc}\nstdout:\n{p.stdout[-3000:]}\n"
             f"stderr:\n{p.stderr[-3000:]}")
    return p


def stratus_run(deck, name, sets):
    args = [STRATUS, "run", os.path.join(SRC, deck), "--output-dir", WORK, "--restart", "none",
            "--set", f"run.name=\"{name}\""]
    for s in sets:
        args += ["--set", s]
    run(args)


def plots(expected, extra=()):
    plotdir = os.path.join(WORK, "plots")
    p = run(["/usr/bin/python3", PLOT, WORK, "-o", plotdir] + list(extra))
    print(p.stdout)
    for name in expected:
        path = os.path.join(plotdir, name)
        if not os.path.isfile(path):
            fail(f"{name} not written (found: {sorted(os.listdir(plotdir))})")
        with open(path, "rb") as f:
            head = f.read(8)
        size = os.path.getsize(path)
        if head != PNG_SIGNATURE or size < 1000:
            fail(f"{name}: not a valid PNG ({size} bytes, header {head!r})")
        print(f"ok: {name} ({size} bytes)")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
if CASE == "md":
    stratus_run("inputs/md/lj_liquid.toml", "lj", ["md.lattice.cells=[3,3,3]", "run.steps=100",
                                                   "md.trajectory.every=20", "md.thermo.every=20"])
    run([STRATUS, "post", "msd", os.path.join(WORK, "lj.h5md"), "-o", os.path.join(WORK, "lj.msd.csv")])
    plots(["lj.thermo.png", "lj.rdf.png", "lj.msd.png"], ["--stratus", STRATUS])
elif CASE == "spectral":
    stratus_run("inputs/cfd/taylor_green_re1600.toml", "tg",
                ["spectral.points=[16,16,16]", "run.steps=20", "spectral.output.diag_every=5",
                 "spectral.output.spectrum_every=10", "spectral.output.snapshot_every=10"])
    snaps = sorted(os.path.join(WORK, f) for f in os.listdir(WORK) if f.startswith("tg.fields."))
    run([STRATUS, "post", "spectrum"] + snaps + ["-o", os.path.join(WORK, "tg.post_spectrum.csv")])
    run([STRATUS, "post", "dissipation"] + snaps + ["-o", os.path.join(WORK, "tg.dissipation.csv")])
    plots(["tg.diag.png", "tg.spectrum.png", "tg.post_spectrum.png", "tg.dissipation.png",
           "tg.fields.000000000020.slice.png"])
elif CASE == "euler":
    stratus_run("inputs/cfd/taylor_green.toml", "tge",
                ["euler.cells=[12,12,12]", "euler.t_end=0.4", "euler.field_interval=0.2",
                 "euler.log_every=2"])
    fields = sorted(f for f in os.listdir(WORK) if f.startswith("tge.fields."))
    # stratus post dissipation on euler files: nu = mu / mean density from the stored deck
    # (mu = 6.25e-4), and the Taylor-Green energy 1/8 at t = 0 (cell averages: within 10%).
    out = os.path.join(WORK, "tge.dissipation.csv")
    run([STRATUS, "post", "dissipation"] + [os.path.join(WORK, f) for f in fields] + ["-o", out])
    import h5py
    import numpy as np
    with h5py.File(os.path.join(WORK, fields[0]), "r") as f:
        nu = 6.25e-4 / np.mean(f["fields/density"][...])
    rows = [l.split(",") for l in open(out) if l[0].isdigit()]
    if abs(float(rows[0][4]) - nu) > 1e-12 * nu or abs(float(rows[0][2]) - 0.125) > 0.0125:
        fail(f"euler dissipation: row {rows[0]}, expected nu {nu} and energy ~0.125")
    print(f"ok: euler: nu = {float(rows[0][4]):.6g} = mu / mean density, energy {float(rows[0][2]):.5f}")
    plots(["tge.series.png", fields[-1][:-3] + ".slice.png", "tge.dissipation.png"])
elif CASE == "heat":
    stratus_run("inputs/examples/heat_decay.toml", "hd",
                ["heat.cells=[12,12,12]", "run.steps=20", "heat.log_every=5"])
    plots(["hd.diag.png", "hd.slice.png"])
elif CASE == "errors":
    p = run(["/usr/bin/python3", PLOT, WORK], rc=2)
    if "nothing to plot" not in p.stderr:
        fail("empty directory: no 'nothing to plot' message:\n" + p.stderr)
    p = run(["/usr/bin/python3", PLOT, os.path.join(WORK, "missing")], rc=2)
    if "no such directory" not in p.stderr:
        fail("missing directory: no 'no such directory' message:\n" + p.stderr)
    if os.path.exists(os.path.join(WORK, "plots")):
        fail("an empty plot directory was left behind")
    print("ok: exit 2 with a message for an empty and a missing directory")
else:
    fail(f"unknown case {CASE}")
print("PASS", CASE)
