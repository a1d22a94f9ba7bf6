"""ParaView opens the euler solver's XDMF index: every frame's time, the grid's origin, spacing
and dimensions, and every cell value of every field equal what the HDF5 files hold.

  pvpython --force-offscreen-rendering check_euler_xdmf.py RUN.xdmf NX NY NZ LO_X LO_Y LO_Z DX DY DZ
"""
import os
import sys

import h5py
import numpy as np
from paraview import servermanager
from paraview.simple import Xdmf3ReaderS
from vtk.util.numpy_support import vtk_to_numpy

path = sys.argv[1]
cells = [int(x) for x in sys.argv[2:5]]
lo = [float(x) for x in sys.argv[5:8]]
dx = [float(x) for x in sys.argv[8:11]]
fields = ["density", "velocity_x", "velocity_y", "velocity_z", "pressure"]

reader = Xdmf3ReaderS(FileName=[path])
times = list(reader.TimestepValues)
frames = sorted(f for f in os.listdir(os.path.dirname(path)) if ".fields." in f and f.endswith(".h5"))
if len(times) != len(frames) or len(times) < 2:
    sys.exit(f"ParaView sees {len(times)} times, there are {len(frames)} field files")
for t, frame in zip(times, frames):
    reader.UpdatePipeline(time=t)
    data = servermanager.Fetch(reader)
    dims = list(data.GetDimensions())
    if dims != [c + 1 for c in cells]:
        sys.exit(f"{frame}: ParaView dimensions {dims}, expected {[c + 1 for c in cells]} points")
    if not np.allclose(data.GetOrigin(), lo, rtol=0, atol=1e-12) or not np.allclose(
            data.GetSpacing(), dx, rtol=1e-12):
        sys.exit(f"{frame}: origin {data.GetOrigin()} spacing {data.GetSpacing()}, "
                 f"expected {lo} {dx}")
    with h5py.File(os.path.join(os.path.dirname(path), frame), "r") as h:
        if abs(h["fields"].attrs["time"] - t) > 1e-12 * max(1.0, abs(t)):
            sys.exit(f"{frame}: time {h['fields'].attrs['time']} in the file, {t} in ParaView")
        for name in fields:
            want = h["fields"][name][()].reshape(-1)  # (nz, ny, nx): x fastest, as VTK
            got = vtk_to_numpy(data.GetCellData().GetArray(name))
            if not np.array_equal(want, got):
                sys.exit(f"{frame}: {name} differs between ParaView and h5py "
                         f"(max {np.max(np.abs(want - got))})")
print(f"ParaView read {len(times)} frames of {path}: dimensions, origin, spacing, times and "
      f"every cell of {', '.join(fields)} as in the HDF5 files")
