"""ParaView opens a grid solver's XDMF index and sees the run's fields, grid and times.

Run by pvpython (Debian's python3-paraview) with --force-offscreen-rendering, after the run:

  pvpython --force-offscreen-rendering check_xdmf_paraview.py OUT/NAME.xdmf SOLVER \\
      --cells NX NY NZ --lo X Y Z --length LX LY LZ [--files GLOB] [--t0 NAME=EXPR ...]

SOLVER (heat, euler or spectral) says how to read the last checkpoint and whether values sit
at cell centres (heat, euler: NX x NY x NZ cells) or at points (spectral: NX x NY x NZ points).
The grid given on the command line is the deck's, in x, y, z order: a non-cubic grid makes an
axis-order mix-up (x <-> z) fail. Checks, for every time step ParaView lists:
  - its time equals the field file's /fields@time (the files are GLOB in the XDMF's folder,
    default NAME.fields.*.h5), and the last equals the newest checkpoint's /state/time;
  - the grid's dimensions, origin and spacing are the deck's (ParaView keeps them in float64);
  - every array ParaView reads equals the file's dataset, read with h5py, bitwise;
  - at the last step the fields equal the newest checkpoint's state (heat: u; euler: the
    conserved variables turned into primitive ones; spectral: the Fourier coefficients
    transformed back with numpy), to round-off;
  - with --t0 NAME=EXPR, at the first step array NAME equals EXPR (numpy, in terms of the
    coordinates X, Y, Z that ParaView gives the values): a check of the axes that does not
    go through the files.
"""
import argparse
import glob
import os
import sys

import h5py
import numpy as np
from paraview import servermanager
from paraview.simple import Xdmf3ReaderS
from vtk.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from stratus_checks import check, checkpoints, ckpt_path, run_checks  # noqa: E402


def newest_checkpoint(outdir, name):
    steps = checkpoints(outdir, name)
    check(steps, f"no checkpoint of {name} in {outdir}/checkpoints")
    return ckpt_path(outdir, name, steps[-1])


def checkpoint_fields(path, solver, shape_zyx):
    """The state of a checkpoint as the fields of a field file: name -> (nz, ny, nx) array."""
    with h5py.File(path, "r") as c:
        time = float(c["state/time"][()].ravel()[0])
        f = {k: c["fields"][k][()] for k in c["fields"]}
    zyx = {k: np.ascontiguousarray(v.transpose(2, 1, 0)) for k, v in f.items()}  # (nx,ny,nz) in
    if solver == "heat":
        return time, {"u": zyx["u"]}
    if solver == "euler":
        rho = zyx["density"]
        vel = [zyx["momentum_" + a] / rho for a in "xyz"]
        kinetic = 0.5 * rho * (vel[0] ** 2 + vel[1] ** 2 + vel[2] ** 2)
        return time, {"density": rho, "velocity_x": vel[0], "velocity_y": vel[1],
                      "velocity_z": vel[2], "_internal": zyx["energy"] - kinetic}
    # spectral: uhat_c[kz][ky][kx] as (re, im) pairs, normalised by the number of points.
    nz, ny, nx = shape_zyx
    out = {}
    for comp, name in zip("xyz", "uvw"):
        a = f["uhat_" + comp]
        check(a.shape == (nz // 2 + 1, ny, 2 * nx), f"{path}: uhat_{comp} has shape {a.shape}")
        coef = a[..., 0::2] + 1j * a[..., 1::2]
        out[name] = np.fft.irfftn(coef, s=(nx, ny, nz), axes=(2, 1, 0)) * (nx * ny * nz)
    return time, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xdmf")
    ap.add_argument("solver", choices=["heat", "euler", "spectral"])
    ap.add_argument("--cells", type=int, nargs=3, required=True)
    ap.add_argument("--lo", type=float, nargs=3, required=True)
    ap.add_argument("--length", type=float, nargs=3, required=True)
    ap.add_argument("--files", default=None)
    ap.add_argument("--t0", action="append", default=[])
    args = ap.parse_args()
    outdir = os.path.dirname(os.path.abspath(args.xdmf))
    name = os.path.splitext(os.path.basename(args.xdmf))[0]
    n = args.cells
    cell_centred = args.solver != "spectral"
    points = [c + 1 for c in n] if cell_centred else list(n)
    spacing = [args.length[a] / n[a] for a in range(3)]

    files = sorted(glob.glob(os.path.join(outdir, args.files or name + ".fields.*.h5")))
    check(files, f"no field files {args.files or name + '.fields.*.h5'} in {outdir}")
    file_times = []
    for p in files:
        with h5py.File(p, "r") as h:
            file_times.append(float(h["fields"].attrs["time"]))

    reader = Xdmf3ReaderS(FileName=[args.xdmf])
    tv = reader.TimestepValues
    times = [float(x) for x in tv] if hasattr(tv, "__len__") else [float(tv)]
    check(len(times) == len(files), f"ParaView lists {len(times)} times, there are {len(files)} field files")
    check(np.array_equal(times, file_times), f"ParaView times {times}, files {file_times}")
    ckpt = newest_checkpoint(outdir, name)
    ckpt_time, ckpt_fields = checkpoint_fields(ckpt, args.solver, (n[2], n[1], n[0]))
    check(abs(ckpt_time - times[-1]) <= 1e-14 * max(1.0, abs(ckpt_time)),
          f"last time {times[-1]} in ParaView, {ckpt_time} in {ckpt}")

    arrays_seen = set()
    worst_ckpt = 0.0
    worst_t0 = 0.0
    for k, (t, path) in enumerate(zip(times, files)):
        reader.UpdatePipeline(time=t)
        data = servermanager.Fetch(reader)
        dims = list(data.GetDimensions())
        check(dims == points, f"{path}: ParaView has {dims} points along x, y, z; the deck "
              f"gives {points} ({'cells + 1' if cell_centred else 'points'})")
        check(np.allclose(data.GetOrigin(), args.lo, rtol=0, atol=1e-12),
              f"{path}: ParaView origin {data.GetOrigin()}, deck {args.lo}")
        check(np.allclose(data.GetSpacing(), spacing, rtol=1e-12, atol=0),
              f"{path}: ParaView spacing {data.GetSpacing()}, deck {spacing}")
        values = data.GetCellData() if cell_centred else data.GetPointData()
        check(values.GetNumberOfArrays() > 0, f"{path}: ParaView reads no arrays")
        got = {}
        with h5py.File(path, "r") as h:
            check(abs(float(h["fields"].attrs["time"]) - t) == 0, f"{path}: time")
            for i in range(values.GetNumberOfArrays()):
                a = values.GetArrayName(i)
                got[a] = vtk_to_numpy(values.GetArray(a)).reshape(n[2], n[1], n[0])
                want = h["fields"][a][()]
                check(want.shape == (n[2], n[1], n[0]),
                      f"{path}: /fields/{a} has shape {want.shape}, expected (nz, ny, nx) = "
                      f"{(n[2], n[1], n[0])}")
                check(np.array_equal(got[a], want), f"{path}: {a} differs between ParaView and "
                      f"h5py (max {np.abs(got[a] - want).max():.3e})")
                arrays_seen.add(a)
            gamma = float(h["fields"].attrs["gamma"]) if args.solver == "euler" else None
        if k == 0 and args.t0:
            c = [args.lo[a] + spacing[a] * (np.arange(n[a]) + (0.5 if cell_centred else 0.0))
                 for a in range(3)]
            Z, Y, X = np.meshgrid(c[2], c[1], c[0], indexing="ij")
            env = {"X": X, "Y": Y, "Z": Z, "np": np, "sin": np.sin, "cos": np.cos,
                   "exp": np.exp, "pi": np.pi, "t": t}
            for spec in args.t0:
                a, expr = spec.split("=", 1)
                err = np.abs(got[a] - eval(expr, env)).max()
                worst_t0 = max(worst_t0, err)
                check(err <= 1e-10, f"{path}: {a} at t = {t} differs from {expr} by {err:.3e}")
        if k == len(times) - 1:
            if args.solver == "euler":
                ckpt_fields["pressure"] = (gamma - 1) * ckpt_fields.pop("_internal")
            for a, want in ckpt_fields.items():
                scale = max(1.0, np.abs(want).max())
                err = np.abs(got[a] - want).max() / scale
                worst_ckpt = max(worst_ckpt, err)
                check(err <= 1e-12, f"last step: {a} in ParaView vs {ckpt}: relative {err:.3e}")
    print(f"ParaView {servermanager.vtkSMProxyManager.GetParaViewSourceVersion()}: {args.solver}, "
          f"{len(times)} time step(s) of {args.xdmf}; grid {n} ({'cells' if cell_centred else 'points'})"
          f", origin, spacing and times as in the deck and files; arrays {sorted(arrays_seen)} "
          f"equal h5py bitwise; last step vs checkpoint max relative difference {worst_ckpt:.2e}"
          + (f"; t0 expressions within {worst_t0:.2e}" if args.t0 else ""))


if __name__ == "__main__":
    run_checks(main)
