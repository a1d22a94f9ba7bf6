"""End-to-end checks of `stratus post` (docs/analysis.md): one case per ctest.

    /usr/bin/python3 check_post.py STRATUS WORKDIR CASE

Inputs are written here with h5py in the formats of docs/file-formats.md, or by short runs of the
md and spectral solvers. Each case asserts physics with the tolerance stated next to it."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np

STRATUS, WORK, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(WORK, exist_ok=True)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok:", msg)


def run(args, rc=0):
    p = subprocess.run([STRATUS] + args, capture_output=True, text=True, timeout=600)
    if p.returncode != rc:
        fail(f"stratus {' '.join(args)}: exit {p.returncode}, expected {rc}\n"
             f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def read_csv(path):
    comments, rows, header = [], [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                comments.append(line)
            elif header is None:
                header = line.split(",")
            elif line:
                rows.append([float(v) for v in line.split(",")])
    data = np.array(rows)
    return comments, {h: data[:, i] for i, h in enumerate(header)}


def common_root(f, fmt, deck="[run]\nsolver = \"md\"\n"):
    f.attrs["stratus_format"] = fmt
    f.attrs["stratus_format_version"] = np.int64(1)
    f.attrs["stratus_version"] = "test"
    f.attrs["stratus_git_revision"] = "unknown"
    f.attrs["created_utc"] = "2026-01-01T00:00:00Z"
    f.attrs["mpi_ranks"] = np.int64(1)
    f.create_dataset("stratus/deck", data=np.bytes_(deck))


def write_h5md(path, frames, box, times, images=None, species=None):
    """frames: (F, N, 3) wrapped positions; images: (F, N, 3) or None."""
    frames = np.asarray(frames, dtype=float)
    nf, n, _ = frames.shape
    with h5py.File(path, "w") as f:
        common_root(f, "h5md")
        f.create_group("h5md").attrs["version"] = np.array([1, 1], dtype=np.int32)
        g = f.create_group("particles/all")
        b = g.create_group("box")
        b.attrs["dimension"] = np.int32(3)
        b.attrs["boundary"] = ["periodic"] * 3
        step = np.arange(nf, dtype=np.int64)
        time = np.asarray(times, dtype=float)

        def element(name, value):
            e = g.create_group(name) if name != "box/edges" else b.create_group("edges")
            e.create_dataset("value", data=value)
            e["step"], e["time"] = step, time

        element("box/edges", np.array([np.diag(box)] * nf, dtype=float))
        element("position", frames)
        element("species", np.zeros((nf, n), np.int32) if species is None else species)
        if images is not None:
            element("image", np.asarray(images, dtype=np.int32))


def write_field(path, solver, u, box, step=0, time=0.0, deck="", density=None):
    """u: three (nz, ny, nx) arrays."""
    nz, ny, nx = u[0].shape
    with h5py.File(path, "w") as f:
        common_root(f, "field", deck or f"[run]\nsolver = \"{solver}\"\n")
        g = f.create_group("fields")
        names = ["u", "v", "w"] if solver == "spectral" else ["velocity_x", "velocity_y", "velocity_z"]
        for n, c in zip(names, u):
            g[n] = c
        if density is not None:
            g["density"] = density
        g.attrs["step"] = np.int64(step)
        g.attrs["time"] = float(time)
        g.attrs["box_lo"] = np.zeros(3)
        g.attrs["box_hi"] = np.asarray(box, dtype=float)
        g.attrs["axis_order"] = "z,y,x (x fastest)"


def fcc(a, cells):
    base = np.array([[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]])
    pts = [(np.array([i, j, k]) + b) * a for i in range(cells) for j in range(cells)
           for k in range(cells) for b in base]
    return np.array(pts)


# ---------------------------------------------------------------------------------------------
def case_rdf_fcc():
    # Perfect fcc lattice, a = 1.5, 4^3 cells: 12 neighbours at a / sqrt(2), 6 more at a.
    a, cells = 1.5, 4
    x = fcc(a, cells)
    path = os.path.join(WORK, "fcc.h5md")
    write_h5md(path, [x], [a * cells] * 3, [0.0])
    out = os.path.join(WORK, "fcc_rdf.csv")
    run(["post", "rdf", path, "--bins", "300", "-o", out])
    _, d = read_csv(out)
    r, g, n = d["r"], d["g"], d["n"]
    peak = r[np.argmax(g)]
    dr = r[1] - r[0]
    check(abs(peak - a / math.sqrt(2)) <= dr / 2,
          f"fcc: first peak at r = {peak:.4f}, expected a/sqrt(2) = {a / math.sqrt(2):.4f} (+- half a bin)")
    between = (d["r_hi"] > 1.1) & (d["r_hi"] < 1.45)
    check(np.all(n[between] == 12), f"fcc: n(r) = 12 between the shells (found {set(n[between])})")
    second = (d["r_hi"] > 1.55) & (d["r_hi"] < 1.8)
    check(np.all(n[second] == 18), f"fcc: n(r) = 18 past the second shell at a (found {set(n[second])})")
    check(np.all(g[d["r_hi"] < 1.0] == 0), "fcc: g = 0 below the nearest-neighbour distance")
    # rmax < box / 3: the cell-binned histogram; the same shells.
    run(["post", "rdf", path, "--bins", "190", "--rmax", "1.9", "-o", out])
    _, d = read_csv(out)
    n = d["n"]
    check(np.all(n[(d["r_hi"] > 1.1) & (d["r_hi"] < 1.45)] == 12) and
          np.all(n[(d["r_hi"] > 1.55) & (d["r_hi"] < 1.8)] == 18),
          "fcc, cell-binned (rmax 1.9): n(r) = 12, then 18")


def case_rdf_ideal():
    # Ideal gas: uniform random positions. g(r) = 1 within the counting noise of each bin.
    rng = np.random.default_rng(7)
    n, box, nf = 1500, 10.0, 4
    frames = rng.uniform(0, box, size=(nf, n, 3))
    path = os.path.join(WORK, "ideal.h5md")
    write_h5md(path, frames, [box] * 3, np.arange(nf) * 1.0)
    out = os.path.join(WORK, "ideal_rdf.csv")
    run(["post", "rdf", path, "--bins", "50", "--rmax", "5", "-o", out])
    comments, d = read_csv(out)
    check(any("frames: 4 of 4" in c for c in comments), "ideal: comment lists the frames used")
    r_lo, r_hi, g = d["r_hi"] - 0.1, d["r_hi"], d["g"]
    sel = r_lo >= 1.0
    # Unordered pairs per bin: nf * n (n - 1) / 2 * shell / V; relative noise 1 / sqrt(count).
    expect = nf * n * (n - 1) / 2 * 4 / 3 * np.pi * (r_hi ** 3 - r_lo ** 3) / box ** 3
    sigma = 1 / np.sqrt(expect[sel])
    z = (g[sel] - 1) / sigma
    check(np.all(np.abs(z) < 5), f"ideal: every bin with r >= 1 within 5 sigma of 1 (max |z| {np.max(np.abs(z)):.2f})")
    mean = np.mean(g[sel])
    check(abs(mean - 1) < 3 * np.sqrt(np.mean(sigma ** 2) / sel.sum()),
          f"ideal: mean g over r in [1, 5] = {mean:.5f}, 1 within 3 standard errors")


def md_deck(name, steps, every, epsilon=1.0, temperature=1.44, cells=5, integrator=""):
    deck = f"""[run]
solver = "md"
steps = {steps}
name = "{name}"

[output]
dir = "{WORK}"

[md]
timestep = 0.005
masses = [1.0]

[md.lattice]
style = "fcc"
density = 0.8442
cells = [{cells}, {cells}, {cells}]

[md.velocity]
temperature = {temperature}
seed = 4711

[md.pair]
cutoff = 2.5

[[md.pair.coeff]]
types = [1, 1]
epsilon = {epsilon}
sigma = 1.0

[md.trajectory]
every = {every}

[md.thermo]
every = 100
{integrator}
"""
    path = os.path.join(WORK, name + ".toml")
    with open(path, "w") as f:
        f.write(deck)
    return path


def case_rdf_lj():
    # LJ liquid near the triple point, rho* = 0.8442, T* = 0.722 (Langevin thermostat), 500
    # atoms melted from fcc (started at T* = 1.44), then 1000 steps sampled every 50.
    # Reference: the first peak of g(r) of the LJ liquid near the triple point (rho* ~ 0.84,
    # T* ~ 0.72) lies at r ~ 1.09 sigma with height ~ 3.0 (Verlet, Phys. Rev. 165, 201 (1968);
    # the state point as in Johnson, Zollweg & Gubbins, Mol. Phys. 78, 591 (1993)).
    # Tolerance: position 1.09 +- 0.04 sigma (two bins), height 3.0 +- 0.3 (10%): the cutoff at
    # 2.5 sigma, 500 atoms and 0.021 sigma bins shift the peak by less than that.
    deck = md_deck("lj", 3000, 50, integrator="""
[md.integrator]
style = "langevin"
temperature = 0.722
damping = 0.5
""")
    run(["run", deck, "--restart", "none"])
    _, thermo = read_csv(os.path.join(WORK, "lj.thermo.csv"))
    mean_t = np.mean(thermo["temperature"][thermo["step"] >= 2000])
    check(abs(mean_t - 0.722) < 0.03, f"LJ liquid: mean temperature of the sampled frames {mean_t:.4f} (0.722 +- 0.03)")
    traj = os.path.join(WORK, "lj.h5md")
    out = os.path.join(WORK, "lj_rdf.csv")
    p = run(["post", "rdf", traj, "--frames", "40:", "--bins", "200", "-o", out])
    print(p.stdout)
    _, d = read_csv(out)
    i = int(np.argmax(d["g"]))
    peak, height = d["r"][i], d["g"][i]
    print(f"measured: first peak r = {peak:.4f} sigma, g = {height:.4f}")
    check(abs(peak - 1.09) <= 0.04, f"LJ liquid: first peak at r = {peak:.3f} (reference 1.09 +- 0.04)")
    check(abs(height - 3.0) <= 0.3, f"LJ liquid: first peak height {height:.3f} (reference ~3.0)")
    msd = os.path.join(WORK, "lj_msd.csv")
    p = run(["post", "msd", traj, "--frames", "40:", "-o", msd])
    print(p.stdout)
    comments, m = read_csv(msd)
    dline = [c for c in comments if "D = " in c][0]
    dval = float(dline.split("D = ")[1].split()[0])
    # A liquid diffuses: D* ~ 0.03 near the triple point (solid: ~0). Loose bounds.
    check(0.01 < dval < 0.08, f"LJ liquid: D = {dval:.4f} sigma^2/tau (liquid range 0.01-0.08)")


def case_msd_ballistic():
    # Free flight: x(t) = x0 + v t wrapped into the box. MSD(t) = <v^2> t^2 exactly, whether the
    # file stores image data or not (then unwrapped from consecutive frames).
    rng = np.random.default_rng(3)
    n, box, nf, dt = 40, 5.0, 25, 0.1
    x0 = rng.uniform(0, box, (n, 3))
    v = rng.uniform(-4, 4, (n, 3))  # at most 0.4 per frame (< box / 2), crosses the box often
    t = np.arange(nf) * dt
    unwrapped = x0[None] + t[:, None, None] * v[None]
    images = np.floor(unwrapped / box).astype(np.int32)
    wrapped = unwrapped - images * box
    v2 = np.mean(np.sum(v * v, axis=1))
    for label, imgs in (("image", images), ("noimage", None)):
        path = os.path.join(WORK, f"ballistic_{label}.h5md")
        write_h5md(path, wrapped, [box] * 3, t, images=imgs)
        out = os.path.join(WORK, f"ballistic_{label}.csv")
        p = run(["post", "msd", path, "-o", out])
        comments, d = read_csv(out)
        err = np.max(np.abs(d["msd"] - v2 * d["lag_time"] ** 2)) / (v2 * d["lag_time"][-1] ** 2)
        check(err < 1e-12, f"ballistic ({label}): MSD = <v^2> t^2, max relative error {err:.2e}")
        if imgs is None:
            check("no image data" in p.stdout, "ballistic: says it unwrapped without image data")
    # The md solver with epsilon = 0: no forces, its own image data across the boundaries.
    deck = md_deck("free", 400, 20, epsilon=0.0, temperature=2.0, cells=3)
    run(["run", deck, "--restart", "none"])
    traj = os.path.join(WORK, "free.h5md")
    with h5py.File(traj, "r") as f:
        vel = f["particles/all/velocity/value"][0]
        crossings = np.abs(f["particles/all/image/value"][-1]).sum()
    check(crossings > 0, f"md free flight: {crossings} boundary crossings recorded")
    out = os.path.join(WORK, "free_msd.csv")
    run(["post", "msd", traj, "-o", out])
    _, d = read_csv(out)
    v2 = np.mean(np.sum(vel * vel, axis=1))
    err = np.max(np.abs(d["msd"] - v2 * d["lag_time"] ** 2)) / (v2 * d["lag_time"][-1] ** 2)
    check(err < 1e-10, f"md free flight: MSD = <v^2> t^2, max relative error {err:.2e}")


def case_spectrum_mode():
    # One Fourier mode: all energy in its shell, and sum E(k) = 0.5 <|u|^2> (Parseval).
    nx, ny, nz = 16, 12, 20
    box = [2 * np.pi, 2 * np.pi, 2 * np.pi]
    z, y, x = np.meshgrid(*(np.arange(m) * 2 * np.pi / m for m in (nz, ny, nx)), indexing="ij")
    amp = 0.7
    phase = 1 * x + 2 * y + 2 * z  # |k| = 3
    u = [amp * np.cos(phase), -amp * np.cos(phase), np.zeros_like(x)]  # k . u = 1 - 2 = -1 ... any
    for solver in ("spectral", "euler"):
        path = os.path.join(WORK, f"mode_{solver}.h5")
        write_field(path, solver, u, box, density=np.ones_like(x) if solver == "euler" else None)
        out = os.path.join(WORK, f"mode_{solver}.csv")
        p = run(["post", "spectrum", path, "-o", out])
        comments, d = read_csv(out)
        e, k = d["energy"], d["k"]
        total = 0.5 * np.mean(u[0] ** 2 + u[1] ** 2)
        check(abs(e[3] - total) < 1e-13 * total, f"mode ({solver}): E(k = 3) = {e[3]:.15g} = 0.5<u^2> = {total:.15g}")
        check(np.sum(np.abs(np.delete(e, 3))) < 1e-13 * total, f"mode ({solver}): no energy in other shells")
        parseval = abs(np.sum(e) - total) / total
        check(parseval < 1e-13, f"mode ({solver}): Parseval, relative difference {parseval:.2e}")
        print(p.stdout)


def spectral_deck():
    deck = f"""[run]
solver = "spectral"
steps = 60
name = "tgv"

[output]
dir = "{WORK}"

[spectral]
points = [24, 24, 24]
viscosity = 0.01

[spectral.time]
scheme = "rk4"
dt = 0.02

[spectral.initial]
type = "taylor_green"
amplitude = 1.0
modes = [1, 1, 1]

[spectral.output]
diag_every = 20
spectrum_every = 20
snapshot_every = 20
"""
    path = os.path.join(WORK, "tgv.toml")
    with open(path, "w") as f:
        f.write(deck)
    return path


def case_spectral_tgv():
    # Taylor-Green run of the spectral solver: the energy and dissipation 2 nu sum k^2 E of its
    # snapshots agree with the solver's own diag.csv (same modes: relative 1e-9), and the
    # spectrum of the last snapshot with the solver's spectrum.csv.
    run(["run", spectral_deck(), "--restart", "none"])
    snaps = sorted(os.path.join(WORK, f) for f in os.listdir(WORK) if f.startswith("tgv.fields."))
    check(len(snaps) == 4, f"spectral: 4 snapshots written ({len(snaps)})")
    out = os.path.join(WORK, "tgv_dissipation.csv")
    p = run(["post", "dissipation"] + snaps + ["-o", out])
    print(p.stdout)
    comments, d = read_csv(out)
    _, diag = read_csv(os.path.join(WORK, "tgv.diag.csv"))
    worst = 0.0
    for s, e, eps in zip(d["step"], d["energy"], d["dissipation"]):
        i = int(np.where(diag["step"] == s)[0][0])
        worst = max(worst, abs(eps - diag["dissipation"][i]) / diag["dissipation"][i],
                    abs(e - diag["energy"][i]) / diag["energy"][i])
    print(f"measured: dissipation and energy vs diag.csv, max relative difference {worst:.2e}")
    check(worst < 1e-9, f"spectral: post dissipation = solver's (max relative difference {worst:.2e})")
    check(abs(d["nu"][0] - 0.01) < 1e-15, "spectral: nu read from the stored deck")
    out = os.path.join(WORK, "tgv_spectrum.csv")
    run(["post", "spectrum"] + snaps + ["-o", out])
    _, e = read_csv(out)
    _, sp = read_csv(os.path.join(WORK, "tgv.spectrum.csv"))
    last = sp["step"] == 60
    n = min(len(e["energy"]), int(last.sum()))
    diff = np.max(np.abs(e["energy"][:n] - sp["energy"][last][:n])) / np.max(sp["energy"][last])
    check(diff < 1e-9, f"spectral: post spectrum = solver's spectrum.csv at step 60 ({diff:.2e})")


def expect_error(args, *needles):
    p = run(args, rc=2)
    for s in needles:
        check(s in p.stderr, f"`stratus {' '.join(args[:2])} ...` says '{s}'")


def case_bad_input():
    write_h5md(os.path.join(WORK, "small.h5md"), [fcc(1.5, 2)], [3.0] * 3, [0.0])
    u = [np.zeros((4, 4, 4))] * 3
    write_field(os.path.join(WORK, "field.h5"), "spectral", u, [1, 1, 1])
    small, field = os.path.join(WORK, "small.h5md"), os.path.join(WORK, "field.h5")
    expect_error(["post", "rdf", os.path.join(WORK, "missing.h5md")], "missing.h5md: no such file")
    expect_error(["post", "rdf", field], "expected an H5MD trajectory", 'found stratus_format "field"')
    expect_error(["post", "spectrum", small], "expected a field snapshot", 'found stratus_format "h5md"')
    expect_error(["post", "rdf", small, "--rmax", "2"], "--rmax 2: expected at most half the shortest box edge, 1.5")
    expect_error(["post", "rdf", small, "--frames", "a:b"], "--frames a:b: expected a frame slice")
    expect_error(["post", "rdf", small, "--frames", "5:"], "selects no frame")
    expect_error(["post", "rdf", small, "--bins", "0"], "--bins 0: expected an integer >= 1")
    expect_error(["post", "rdf", small, "--types", "1,x"], "--types 1,x: expected two atom types")
    expect_error(["post", "rdf", small, "--types", "1,2"], "--types 1,2:", "0 of type 2")
    expect_error(["post", "msd", small], "the MSD needs at least 3")
    expect_error(["post", "spectrum", field, "--snapshot", "3"], "--snapshot 3: expected 0 .. 0")
    with h5py.File(os.path.join(WORK, "plain.h5"), "w") as f:
        f["x"] = np.zeros(3)
    expect_error(["post", "msd", os.path.join(WORK, "plain.h5")], "not written by Stratus")
    with open(os.path.join(WORK, "text.h5"), "w") as f:
        f.write("hello")
    expect_error(["post", "dissipation", os.path.join(WORK, "text.h5")], "text.h5: not an HDF5 file")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail(f"unknown case {CASE}; known: {', '.join(CASES)}")
CASES[CASE]()
print("PASS", CASE)
