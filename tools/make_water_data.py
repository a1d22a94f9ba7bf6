#!/usr/bin/env python3
"""Writes a LAMMPS data file (units real, atom style full) of SPC/E water: N rigid-geometry
molecules on a simple cubic lattice, randomly oriented, in a cubic box sized for a given density.

  python3 tools/make_water_data.py --molecules 512 [--density 0.997] [--seed 1] \\
      --output water_512.data [--gromacs water_512] [--check]

SPC/E (H. J. C. Berendsen, J. R. Grigera, T. P. Straatsma, J. Phys. Chem. 91 (1987) 6269): O-H
1.0 Angstrom, H-O-H 109.47 degrees, charges O -0.8476 e and H +0.4238 e, Lennard-Jones on O-O
only (epsilon 0.1553 kcal/mol, sigma 3.166 Angstrom); masses O 15.9994, H 1.008 g/mol.

Layout: atom type 1 = O, 2 = H; one bond type (O-H) and one angle type (H-O-H). Molecule m
(1-based) has atoms 3m-2 (O), 3m-1 (H1), 3m (H2), bonds O-H1 and O-H2 (O first) and the angle
H1-O-H2. The box is [0, L)^3 with L^3 = N * 18.0154 g/mol / (density * N_A). The lattice is the
smallest n^3 >= N simple cubic lattice of spacing L / n with sites at ((i, j, k) + 1/2) L / n,
taken in the order k fastest, then j, then i; the first N sites hold a molecule (so for N not a
cube the last sites are empty). Each molecule's centre of mass sits on its site and all three
atoms are written in the same periodic image (unwrapped: an H may lie just outside the box).
Orientations are uniform random rotations from unit quaternions (K. Shoemake, "Uniform random
rotations", Graphics Gems III, 1992, pp. 124-132) drawn with Python's random.Random(seed), so a
seed gives the same file on every machine.

The bond and angle coefficients are harmonic (bond 554.1349 kcal/mol/A^2 at 1.0 A, angle
45.7696 kcal/mol/rad^2 at 109.47 degrees, the flexible SPC/E-like constants in common use);
constraints (SHAKE) are expected to hold the geometry rigid. The H rows of Pair Coeffs are
'2 0.0 1.0': epsilon 0 (no Lennard-Jones on H), with a placeholder sigma of 1.0 because the
reader requires sigma > 0. No Velocities section is written.

--check prints the net charge, the box edge and the smallest intermolecular O-O distance
(minimum image), with the smallest intermolecular distance between any two atoms and the
intramolecular geometry as read back from the written coordinates.
"""
import argparse
import math
import random
import shlex
import sys
from fractions import Fraction

AVOGADRO = 6.02214076e23  # 1/mol (SI 2019, exact)
MASS = {"O": 15.9994, "H": 1.008}  # g/mol
CHARGE = {"O": "-0.8476", "H": "0.4238"}  # e, written as these decimals
BOND = 1.0  # Angstrom
ANGLE = 109.47  # degrees
LJ_OO = (0.1553, 3.166)  # kcal/mol, Angstrom
BOND_K = 554.1349  # kcal/mol/A^2 (E = K (r - r0)^2)
ANGLE_K = 45.7696  # kcal/mol/rad^2 (E = K (theta - theta0)^2)
MOLAR_MASS = MASS["O"] + 2 * MASS["H"]  # 18.0154 g/mol


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Write a LAMMPS data file (units real, atom style full) of SPC/E water on a "
        "simple cubic lattice of randomly oriented molecules.")
    p.add_argument("--molecules", type=int, required=True,
                   help="number of molecules N (fills the smallest n^3 >= N lattice)")
    p.add_argument("--density", type=float, default=0.997,
                   help="mass density in g/cm^3 (sets the box edge; default 0.997)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of Python's random for the orientations (default 1)")
    p.add_argument("--output", required=True, help="path of the data file to write")
    p.add_argument("--gromacs", metavar="PREFIX",
                   help="also write the same molecules for GROMACS: PREFIX.gro (positions in nm, "
                   "5 decimals) and PREFIX.top (SPC/E with SETTLE)")
    p.add_argument("--check", action="store_true",
                   help="print the net charge, the box edge and the smallest intermolecular O-O "
                   "distance")
    a = p.parse_args(argv)
    if a.molecules < 1:
        p.error(f"--molecules must be >= 1, found {a.molecules}")
    if not (a.density > 0 and math.isfinite(a.density)):
        p.error(f"--density must be a finite number > 0, found {a.density}")
    return a


def box_edge(n_molecules, density):
    """L in Angstrom such that N molecules of MOLAR_MASS fill L^3 at `density` g/cm^3."""
    volume_cm3 = n_molecules * MOLAR_MASS / (density * AVOGADRO)
    return (volume_cm3 * 1e24) ** (1.0 / 3.0)  # 1 cm^3 = 1e24 A^3


def lattice_size(n_molecules):
    """The smallest n with n^3 >= N (integer arithmetic: no rounding of cube roots)."""
    n = max(1, int(round(n_molecules ** (1.0 / 3.0))))
    while n ** 3 < n_molecules:
        n += 1
    while n > 1 and (n - 1) ** 3 >= n_molecules:
        n -= 1
    return n


def molecule_frame():
    """O, H1, H2 in the molecule's own frame, centre of mass at the origin: the molecule in
    the xz plane, the HOH bisector along +z."""
    half = math.radians(ANGLE) / 2
    o = (0.0, 0.0, 0.0)
    h1 = (BOND * math.sin(half), 0.0, BOND * math.cos(half))
    h2 = (-BOND * math.sin(half), 0.0, BOND * math.cos(half))
    com = [(MASS["O"] * o[c] + MASS["H"] * (h1[c] + h2[c])) / MOLAR_MASS for c in range(3)]
    return [tuple(p[c] - com[c] for c in range(3)) for p in (o, h1, h2)]


def random_rotation(rng):
    """A rotation matrix uniform on SO(3): a unit quaternion from three uniform numbers
    (Shoemake 1992), then the usual quaternion-to-matrix formula."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    x, y = a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2)
    z, w = b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ]


def build(n_molecules, density, seed):
    """The box edge and, per molecule, the positions of O, H1, H2 (unwrapped)."""
    length = box_edge(n_molecules, density)
    n = lattice_size(n_molecules)
    spacing = length / n
    frame = molecule_frame()
    rng = random.Random(seed)
    molecules = []
    for site in range(n_molecules):
        i, j, k = site // (n * n), (site // n) % n, site % n
        centre = ((i + 0.5) * spacing, (j + 0.5) * spacing, (k + 0.5) * spacing)
        r = random_rotation(rng)
        molecules.append([
            tuple(centre[row] + sum(r[row][c] * p[c] for c in range(3)) for row in range(3))
            for p in frame
        ])
    return length, molecules


def format_data(length, molecules, title):
    n_mol = len(molecules)
    out = [title, ""]
    out += [f"{3 * n_mol} atoms", f"{2 * n_mol} bonds", f"{n_mol} angles", ""]
    out += ["2 atom types", "1 bond types", "1 angle types", ""]
    for lo, hi in (("xlo", "xhi"), ("ylo", "yhi"), ("zlo", "zhi")):
        out.append(f"0.0 {length:.10f} {lo} {hi}")
    out += ["", "Masses", "", f"1 {MASS['O']}  # O", f"2 {MASS['H']}  # H", ""]
    out += ["Pair Coeffs # lj/cut/coul/long", "",
            f"1 {LJ_OO[0]} {LJ_OO[1]}  # O: SPC/E epsilon (kcal/mol), sigma (Angstrom)",
            "2 0.0 1.0  # H: no Lennard-Jones (epsilon 0); sigma 1.0 is a placeholder (> 0)", ""]
    out += ["Bond Coeffs # harmonic", "", f"1 {BOND_K} {BOND}  # O-H", ""]
    out += ["Angle Coeffs # harmonic", "", f"1 {ANGLE_K} {ANGLE}  # H-O-H", ""]
    out += ["Atoms # full", ""]
    for m, atoms in enumerate(molecules):
        for a, (kind, p) in enumerate(zip(("O", "H", "H"), atoms)):
            atom_id = 3 * m + a + 1
            atom_type = 1 if kind == "O" else 2
            out.append(f"{atom_id} {m + 1} {atom_type} {CHARGE[kind]} "
                       f"{p[0]:.8f} {p[1]:.8f} {p[2]:.8f}")
    out += ["", "Bonds", ""]
    for m in range(n_mol):
        o = 3 * m + 1
        out.append(f"{2 * m + 1} 1 {o} {o + 1}")
        out.append(f"{2 * m + 2} 1 {o} {o + 2}")
    out += ["", "Angles", ""]
    for m in range(n_mol):
        o = 3 * m + 1
        out.append(f"{m + 1} 1 {o + 1} {o} {o + 2}")
    return "\n".join(out) + "\n"


def format_gromacs(length, molecules, title):
    """The same molecules as a GROMACS coordinate file (.gro, nm, 5 decimals: field width 10) and
    topology (.top): SPC/E with its LJ on O only, the charges of the data file, SETTLE holding O-H
    and H-H at the data file's geometry, and the intramolecular pairs excluded (LAMMPS's
    special_bonds lj/coul 0 0 0). kcal/mol to kJ/mol: 4.184."""
    n_mol = len(molecules)
    gro = [title, str(3 * n_mol)]
    for m, atoms in enumerate(molecules):
        for name, p in zip(("OW", "HW1", "HW2"), atoms):
            a = len(gro) - 1
            gro.append("%5d%-5s%5s%5d%10.5f%10.5f%10.5f"
                       % ((m + 1) % 100000, "SOL", name, a % 100000, p[0] / 10, p[1] / 10, p[2] / 10))
    gro.append("%12.7f%12.7f%12.7f" % ((length / 10,) * 3))
    dhh = 2 * BOND * math.sin(math.radians(ANGLE) / 2)
    top = f"""; {title}
[ defaults ]
; nbfunc comb-rule gen-pairs fudgeLJ fudgeQQ
1 2 no 1.0 1.0

[ atomtypes ]
; name mass charge ptype sigma(nm) epsilon(kJ/mol)
OW {MASS['O']} 0.0 A {LJ_OO[1] / 10:.6f} {LJ_OO[0] * 4.184:.7f}
HW {MASS['H']} 0.0 A 0.0 0.0

[ moleculetype ]
SOL 2

[ atoms ]
1 OW 1 SOL OW 1 {CHARGE['O']} {MASS['O']}
2 HW 1 SOL HW1 1 {CHARGE['H']} {MASS['H']}
3 HW 1 SOL HW2 1 {CHARGE['H']} {MASS['H']}

[ settles ]
; OW funct d_OH(nm) d_HH(nm)
1 1 {BOND / 10:.6f} {dhh / 10:.8f}

[ exclusions ]
1 2 3
2 1 3
3 1 2

[ system ]
SPC/E water

[ molecules ]
SOL {n_mol}
"""
    return "\n".join(gro) + "\n", top


def read_back_positions(text):
    """Positions per atom id from the written Atoms section (so that --check sees the rounded
    coordinates that the file holds)."""
    lines = text.splitlines()
    start = lines.index("Atoms # full") + 2
    pos = {}
    for line in lines[start:]:
        if not line.strip():
            break
        w = line.split()
        pos[int(w[0])] = (float(w[4]), float(w[5]), float(w[6]))
    return pos


def min_image_distance(p, q, length):
    s = 0.0
    for c in range(3):
        d = p[c] - q[c]
        d -= length * round(d / length)
        s += d * d
    return math.sqrt(s)


def smallest_intermolecular(points, owner, length, cell_edge):
    """The smallest minimum-image distance between points of different molecules, with the
    pair's indices: a cell list with cells of edge >= cell_edge (27 neighbouring cells), exact
    when the answer is below the cell edge; otherwise (or with fewer than 3 cells a side) all
    pairs."""
    n_cells = int(length // cell_edge) if cell_edge > 0 else 0
    best = (math.inf, -1, -1)
    if n_cells >= 3:
        cells = {}
        for idx, p in enumerate(points):
            key = tuple(int((p[c] % length) / length * n_cells) % n_cells for c in range(3))
            cells.setdefault(key, []).append(idx)
        for (ci, cj, ck), members in cells.items():
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    for dk in (-1, 0, 1):
                        other = cells.get(((ci + di) % n_cells, (cj + dj) % n_cells,
                                           (ck + dk) % n_cells), [])
                        for a in members:
                            for b in other:
                                if b > a and owner[a] != owner[b]:
                                    d = min_image_distance(points[a], points[b], length)
                                    best = min(best, (d, a, b))
        if best[0] < length / n_cells:
            return best
        best = (math.inf, -1, -1)
    for a in range(len(points)):
        for b in range(a + 1, len(points)):
            if owner[a] != owner[b]:
                best = min(best, (min_image_distance(points[a], points[b], length), a, b))
    return best


def check(text, length, n_molecules):
    pos = read_back_positions(text)
    net = Fraction(CHARGE["O"]) * n_molecules + 2 * Fraction(CHARGE["H"]) * n_molecules
    print(f"molecules {n_molecules}, atoms {3 * n_molecules}")
    print(f"net charge {float(net):.6g} e (exact sum of the written charges)")
    print(f"box edge {length:.6f} Angstrom (volume {length ** 3:.3f} A^3)")
    mass = n_molecules * MOLAR_MASS / AVOGADRO
    print(f"density {mass / (length ** 3 * 1e-24):.6f} g/cm^3")
    oxygens = [pos[3 * m + 1] for m in range(n_molecules)]
    spacing = length / lattice_size(n_molecules)
    if n_molecules > 1:
        d_oo, _, _ = smallest_intermolecular(oxygens, list(range(n_molecules)), length, spacing)
        print(f"smallest intermolecular O-O distance {d_oo:.6f} Angstrom "
              f"(lattice spacing {spacing:.6f})")
        everything = [pos[i] for i in range(1, 3 * n_molecules + 1)]
        owner = [i // 3 for i in range(3 * n_molecules)]
        d_any, a, b = smallest_intermolecular(everything, owner, length, min(spacing, 3.0))
        kinds = "-".join("O" if i % 3 == 0 else "H" for i in (a, b))
        print(f"smallest intermolecular distance, any atoms {d_any:.6f} Angstrom ({kinds}, "
              f"atoms {a + 1} and {b + 1})")
    else:
        print("smallest intermolecular O-O distance: none (one molecule)")
    worst_bond, worst_angle = 0.0, 0.0
    for m in range(n_molecules):
        o, h1, h2 = pos[3 * m + 1], pos[3 * m + 2], pos[3 * m + 3]
        v1 = [h1[c] - o[c] for c in range(3)]
        v2 = [h2[c] - o[c] for c in range(3)]
        r1, r2 = math.sqrt(sum(x * x for x in v1)), math.sqrt(sum(x * x for x in v2))
        cos = sum(v1[c] * v2[c] for c in range(3)) / (r1 * r2)
        theta = math.degrees(math.acos(max(-1.0, min(1.0, cos))))
        worst_bond = max(worst_bond, abs(r1 - BOND), abs(r2 - BOND))
        worst_angle = max(worst_angle, abs(theta - ANGLE))
    print(f"largest |O-H - {BOND}| {worst_bond:.2e} Angstrom, largest |H-O-H - {ANGLE}| "
          f"{worst_angle:.2e} degrees")


def main(argv):
    args = parse_args(argv[1:])
    length, molecules = build(args.molecules, args.density, args.seed)
    command = "python3 " + shlex.join(argv)
    title = (f"SPC/E water, {args.molecules} molecules on a simple cubic lattice, random "
             f"orientations (seed {args.seed}), {args.density} g/cm^3, LAMMPS units real, atom "
             f"style full; H Pair Coeffs '2 0.0 1.0': epsilon 0 (no LJ on H), sigma 1.0 only a "
             f"placeholder since the reader requires sigma > 0; made by: {command}")
    text = format_data(length, molecules, title)
    with open(args.output, "w") as f:
        f.write(text)
    if args.gromacs:
        gro, top = format_gromacs(length, molecules, title)
        with open(args.gromacs + ".gro", "w") as f:
            f.write(gro)
        with open(args.gromacs + ".top", "w") as f:
            f.write(top)
    if args.check:
        check(text, length, args.molecules)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
