#!/usr/bin/python3
"""Reads an H5MD trajectory written by test_h5md (2 ranks) the way users will: with h5py, and
with MDAnalysis when it is installed. Usage: check_h5md.py FILE. Exits non-zero on a failure.

The values checked here are those of tests/io/test_h5md.cpp (997 atoms, 3 frames, box
10.5 x 11.25 x 12 in LJ units); keep both in step.
"""
import math
import sys

import h5py
import numpy as np

NATOMS = 997
FRAMES = 3
BOX = (10.5, 11.25, 12.0)


def pos(f, i, d):
    return math.fmod(0.125 + 0.0137 * i + 0.29 * d + 0.07 * f, BOX[d])


def step_of(f):
    return 10 * f + 5


def check_h5py(path):
    with h5py.File(path, "r") as f:
        assert f.attrs["stratus_format"] == "h5md", f.attrs["stratus_format"]
        version = f["h5md"].attrs["version"]
        assert list(version) == [1, 1], version
        assert version.dtype.kind == "i", version.dtype
        assert f["h5md/author"].attrs["name"] == "Stratus user"
        assert f["h5md/creator"].attrs["name"] == "Stratus"
        assert isinstance(f["h5md/creator"].attrs["version"], str)

        box = f["particles/all/box"]
        assert box.attrs["dimension"] == 3
        assert list(box.attrs["boundary"]) == ["periodic"] * 3, box.attrs["boundary"]
        edges = box["edges/value"]
        assert edges.shape == (FRAMES, 3, 3) and edges.dtype == np.float64, edges
        assert np.array_equal(edges[0], np.diag(BOX)), edges[0]
        assert edges.attrs["reduced_unit"] == "sigma"

        g = f["particles/all"]
        expected = {
            "position": ((FRAMES, NATOMS, 3), np.float64),
            "velocity": ((FRAMES, NATOMS, 3), np.float64),
            "image": ((FRAMES, NATOMS, 3), np.int32),
            "species": ((FRAMES, NATOMS), np.int32),
            "id": ((FRAMES, NATOMS), np.int64),
        }
        for name, (shape, dtype) in expected.items():
            value = g[name]["value"]
            assert value.shape == shape, (name, value.shape)
            assert value.dtype == dtype, (name, value.dtype)
            assert value.maxshape[0] is None, (name, value.maxshape)
            assert value.chunks is not None, name
            assert list(g[name]["step"][()]) == [step_of(k) for k in range(FRAMES)], name
            assert g[name]["step"].dtype == np.int64, name
            assert np.allclose(g[name]["time"][()], [0.005 * step_of(k) for k in range(FRAMES)])
            assert g[name]["time"].dtype == np.float64, name
        # LJ reduced units are dimensionless for H5MD: no `unit` attribute (which readers
        # would try to convert), the names are kept in `reduced_unit`.
        assert g["position/value"].attrs["reduced_unit"] == "sigma"
        assert g["velocity/value"].attrs["reduced_unit"] == "sigma tau-1"
        assert g["position/time"].attrs["reduced_unit"] == "tau"
        assert "unit" not in g["position/value"].attrs
        assert "units" not in f["h5md"].get("modules", {})
        assert np.array_equal(g["id/value"][1], np.arange(NATOMS))
        x = g["position/value"][2]
        want = np.array([[pos(2, i, d) for d in range(3)] for i in range(NATOMS)])
        assert np.array_equal(x, want), np.abs(x - want).max()
        assert f["stratus/deck"].asstr()[()].startswith("[md]")
    print("h5py: shapes, dtypes, version [1, 1], reduced units and values OK")


def check_mdanalysis(path):
    try:
        import MDAnalysis as mda
    except ImportError:
        print("MDAnalysis not installed, skipped")
        return
    u = mda.Universe.empty(NATOMS, trajectory=True)
    u.load_new(path, format="H5MD", convert_units=False)
    assert len(u.trajectory) == FRAMES, len(u.trajectory)
    for ts in u.trajectory:
        want = np.array([[pos(ts.frame, i, d) for d in range(3)] for i in range(NATOMS)])
        # MDAnalysis keeps float32 coordinates.
        assert np.allclose(ts.positions, want, atol=1e-5), ts.frame
        assert np.allclose(ts.dimensions, [*BOX, 90, 90, 90]), ts.dimensions
        assert ts.data["step"] == step_of(ts.frame), ts.data
        assert math.isclose(ts.time, 0.005 * step_of(ts.frame)), ts.time
        assert ts.has_velocities
    print(f"MDAnalysis {mda.__version__}: {FRAMES} frames, positions and box OK")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_h5md.py FILE")
    check_h5py(sys.argv[1])
    check_mdanalysis(sys.argv[1])


if __name__ == "__main__":
    main()
