#!/usr/bin/env python3
"""Writes a LAMMPS data file whose atoms are one frame of a Stratus H5MD trajectory: the
topology, coefficients, charges and molecule ids of the data file the run started from, with the
frame's box, positions, image flags and velocities.

  /usr/bin/python3 tools/h5md_to_data.py --data water.data --h5md out/water.h5md \\
      [--group all] [--frame -1] --output water_eq.data

The frame is counted over the trajectory and the parts Stratus writes after it (water.h5md,
water.part0001.h5md, ...: a part is closed at each checkpoint): -1 is the run's last frame.

Uses: hand an equilibrated Stratus configuration to LAMMPS (or to a new Stratus run through
[md.read_data]); keep a starting point for tests and benchmarks that begins in equilibrium.

What changes, and what does not:
- the header's xlo xhi / ylo yhi / zlo zhi: the frame's box edges, from the data file's lower
  corner (Stratus keeps the lower corner of the box fixed, also under a barostat);
- each row of the Atoms section: the position columns become the frame's position (inside the
  box) and the image flags ix iy iz are written after them (unwrapped = position + image * edge);
  the id, molecule, type and charge columns and any trailing comment are kept;
- a Velocities section (id vx vy vz, in the data file's units, as Stratus writes them) replaces
  the file's own, or is added after the Atoms section;
- the first line (the title) says where the frame came from; every other line is copied.

Numbers are written with 17 significant digits (repr), so Stratus and LAMMPS read back the same
doubles. The frame must hold every atom of the data file, by id: H5MD row r is the atom whose id
is id/value[frame, r], counted from 0 in files Stratus writes (the data file's id minus 1). Errors name the file (and line) and exit with status 2.
"""
import argparse
import sys

# Columns of a row of the Atoms section before the positions, per atom style.
POSITION_COLUMN = {"atomic": 2, "charge": 3, "molecular": 3, "full": 4}


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def section_name(line):
    """The section a line opens ('Atoms', 'Velocities', ...), with its style comment, or None."""
    body, _, comment = line.partition("#")
    words = body.split()
    if not words or any(c.isdigit() for c in words[0][:1]) or words[0].startswith(("-", "+", ".")):
        return None
    name = " ".join(words)
    if name[0].isupper():
        return name, comment.strip()
    return None


def parts_of(path):
    """A Stratus trajectory NAME.h5md and the parts written after it (NAME.part0001.h5md, ...:
    a part is closed at each checkpoint), in order."""
    import glob
    import os
    if not path.endswith(".h5md") or ".part" in os.path.basename(path):
        return [path]
    return [path] + sorted(glob.glob(path[:-len(".h5md")] + ".part[0-9][0-9][0-9][0-9].h5md"))


def read_frame(path, group, frame):
    """Frame `frame` counted over the trajectory and its parts (negative: from the end)."""
    try:
        import h5py
    except ImportError as e:
        fail(f"this tool needs h5py (Debian: apt-get install python3-h5py): {e}")
    counts = []
    for part in parts_of(path):
        try:
            with h5py.File(part, "r") as f:
                counts.append(f[f"particles/{group}/position/value"].shape[0]
                              if f"particles/{group}/position/value" in f else 0)
        except OSError as e:
            fail(f"{part}: cannot open as HDF5: {e}")
    total = sum(counts)
    if not -total <= frame < total:
        fail(f"{path}: frame {frame} requested, the trajectory holds {total} frame(s) in "
             f"{len(counts)} file(s)")
    k = frame % total
    for part, n in zip(parts_of(path), counts):
        if k < n:
            return read_frame_of_file(part, group, k, frame)
        k -= n


def read_frame_of_file(path, group, frame, asked):
    try:
        import h5py  # Debian's python3-h5py
        import numpy as np
    except ImportError as e:
        fail(f"this tool needs h5py and numpy (Debian: apt-get install python3-h5py): {e}")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"{path}: cannot open as HDF5: {e}")
    with f:
        root = f"particles/{group}"
        if root not in f:
            fail(f"{path}: no particle group /{root} (groups: {', '.join(f['particles'])})")
        g = f[root]
        for element in ("position", "image", "id", "box/edges"):
            if element not in g:
                fail(f"{path}: /{root}/{element} is missing (a Stratus trajectory writes it)")
        out = {
            "file": path,
            "position": np.asarray(g["position/value"][frame], dtype=float),
            "image": np.asarray(g["image/value"][frame], dtype=np.int64),
            "id": np.asarray(g["id/value"][frame], dtype=np.int64),
            "edges": np.asarray(g["box/edges/value"][frame], dtype=float),
            "step": int(g["position/step"][frame]),
        }
        out["velocity"] = (np.asarray(g["velocity/value"][frame], dtype=float)
                           if "velocity" in g else None)
    edges = out["edges"]
    if edges.shape == (3, 3):
        if any(edges[a][b] != 0 for a in range(3) for b in range(3) if a != b):
            fail(f"{path}: frame {asked} has a triclinic box; this tool writes orthogonal boxes")
        out["edges"] = [float(edges[a][a]) for a in range(3)]
    else:
        out["edges"] = [float(e) for e in edges]
    return out


def convert(args):
    try:
        with open(args.data) as f:
            lines = f.read().split("\n")
    except OSError as e:
        fail(f"{args.data}: {e}")
    frame = read_frame(args.h5md, args.group, args.frame)
    # Stratus counts atoms from 0 (H5MD id i is the data file's atom i + 1; --index-base 1 for
    # files that count from 1).
    row_of = {int(i) + 1 - args.index_base: r for r, i in enumerate(frame["id"])}

    out = [f"{lines[0].strip()} | positions, images and velocities: step {frame['step']} of "
           f"{frame['file']} (frame {args.frame}, group {args.group}), by tools/h5md_to_data.py"]
    lo = {}
    i = 1
    section = None
    style = None
    seen = set()
    velocities_written = False

    def velocity_section():
        if frame["velocity"] is None:
            return []
        v = frame["velocity"]
        rows = ["Velocities", ""]
        for atom in sorted(seen):
            r = row_of[atom]
            rows.append(f"{atom} {v[r][0]!r} {v[r][1]!r} {v[r][2]!r}")
        rows.append("")
        return rows

    while i < len(lines):
        line = lines[i]
        words = line.partition("#")[0].split()
        opened = section_name(line)
        if opened is not None:
            if section == "Atoms" and opened[0] != "Velocities" and not velocities_written:
                out.extend(velocity_section())
                velocities_written = True
            section = opened[0]
            if section == "Atoms":
                style = opened[1].split()[0] if opened[1] else None
                if style not in POSITION_COLUMN:
                    fail(f"{args.data}:{i + 1}: expected 'Atoms # <style>' with style one of "
                         f"{', '.join(POSITION_COLUMN)}; found {line.strip()!r}")
            if section == "Velocities":
                # Replaced: skip its rows (up to the next section).
                out.extend(velocity_section())
                velocities_written = True
                i += 1
                while i < len(lines) and section_name(lines[i]) is None:
                    i += 1
                section = None
                continue
            out.append(line)
            i += 1
            continue
        if section is None and len(words) == 4 and words[2][1:] == "lo" and words[3][1:] == "hi":
            axis = "xyz".index(words[2][0])
            lo[axis] = float(words[0])
            hi = lo[axis] + frame["edges"][axis]
            out.append(f"{lo[axis]!r} {hi!r} {words[2]} {words[3]}")
            i += 1
            continue
        if section == "Atoms" and words:
            p = POSITION_COLUMN[style]
            if len(words) not in (p + 3, p + 6):
                fail(f"{args.data}:{i + 1}: expected {p + 3} or {p + 6} columns for atom style "
                     f"{style}, found {len(words)}")
            atom = int(words[0])
            if atom not in row_of:
                fail(f"{args.h5md}: atom {atom} ({args.data}:{i + 1}) is not in the frame")
            if len(lo) != 3:
                fail(f"{args.data}:{i + 1}: the Atoms section comes before the box lines")
            r = row_of[atom]
            x = frame["position"][r]
            n = frame["image"][r]
            comment = line.partition("#")[2]
            row = " ".join(words[:p] + [repr(float(c)) for c in x] + [str(int(c)) for c in n])
            out.append(row + (f"  #{comment}" if comment else ""))
            seen.add(atom)
            i += 1
            continue
        out.append(line)
        i += 1
    if section == "Atoms" and not velocities_written:
        out.extend(["", *velocity_section()])
    if len(seen) != len(row_of):
        fail(f"{args.data}: the Atoms section has {len(seen)} atoms, the frame {len(row_of)}")
    text = "\n".join(out)
    if not text.endswith("\n"):
        text += "\n"
    with open(args.output, "w") as f:
        f.write(text)
    print(f"{args.output}: {len(seen)} atoms, step {frame['step']}, box "
          f"{' x '.join(f'{e:.6f}' for e in frame['edges'])}")


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Write a LAMMPS data file from a data file's topology and one frame of a "
        "Stratus H5MD trajectory (box, positions, images, velocities).")
    p.add_argument("--data", required=True, help="the data file the run started from")
    p.add_argument("--h5md", required=True, help="the run's H5MD trajectory")
    p.add_argument("--group", default="all", help="particle group (default all)")
    p.add_argument("--frame", type=int, default=-1,
                   help="frame: 0 the first, -1 the last (default), -2 the one before, ...")
    p.add_argument("--index-base", type=int, choices=(0, 1), default=0,
                   help="the H5MD file's first id: 0 in files Stratus writes (default), 1 in "
                   "files that count atoms from 1")
    p.add_argument("--output", required=True, help="the data file to write")
    convert(p.parse_args(argv))


if __name__ == "__main__":
    main()
