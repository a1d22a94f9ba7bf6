"""Run by pvpython: ParaView opens a spectral run's XDMF series and gets the grid and the field.

  pvpython check_spectral_paraview.py OUT/tgv.xmf
"""
import sys

import numpy as np
from paraview import servermanager
from paraview.simple import Xdmf3ReaderS
from vtk.numpy_interface import dataset_adapter as dsa

r = Xdmf3ReaderS(FileName=sys.argv[1])
times = list(r.TimestepValues)
r.UpdatePipeline(time=0.0)
g = servermanager.Fetch(r)
o, s, n = g.GetOrigin(), g.GetSpacing(), g.GetDimensions()
problems = []
if not np.allclose(times, [0.0, 0.1, 0.2], atol=1e-12):
    problems.append(f"times {times}")
if tuple(n) != (16, 12, 8):
    problems.append(f"dimensions {n}, expected (16, 12, 8) points along x, y, z")
# ParaView keeps the geometry in single precision
if not np.allclose(o, [-np.pi, -1.0, 0.5], atol=1e-6):
    problems.append(f"origin {o}")
if not np.allclose(s, [2 * np.pi / 16, 2 * np.pi / 12, 2 * np.pi / 8], atol=1e-6):
    problems.append(f"spacing {s}")
d = dsa.WrapDataObject(g)
x = [o[a] + s[a] * np.arange(n[a]) for a in range(3)]
Z, Y, X = np.meshgrid(x[2], x[1], x[0], indexing="ij")
u = np.asarray(d.PointData["u"]).reshape(n[2], n[1], n[0])
err = np.max(np.abs(u - 1.5 * np.sin(X) * np.cos(Y) * np.cos(Z)))
if err > 1e-5:  # coordinates in single precision
    problems.append(f"u differs from the Taylor-Green field by {err:.2e}")
if problems:
    print("FAILED: " + "; ".join(problems))
    sys.exit(1)
print(f"ParaView (Xdmf3 reader): {len(times)} snapshots, grid {n}, origin and spacing right, "
      f"u = exact Taylor-Green field within {err:.1e}")
