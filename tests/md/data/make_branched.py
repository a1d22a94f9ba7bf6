#!/usr/bin/env python3
"""Writes branched_real.data (and, with charges on every site summing to zero per molecule,
branched_charged_real.data): 64 five-site branched molecules (a united-atom 2-methylbutane-like
A-B-C(-E)-D) in LAMMPS units real, atom style full, with every bonded kind Stratus has: 4 bonds,
4 angles, 2 dihedrals (the second type has a phase d = 60 degrees, so the sign of phi matters)
and 1 improper at the branch. Positions are distorted deterministically so that no term sits at
its minimum; velocities follow a fixed pattern. No random numbers: the file is reproducible."""
import math
import sys


def rot(a, b, c):
    ca, sa, cb, sb, cc, sc = (math.cos(a), math.sin(a), math.cos(b), math.sin(b), math.cos(c),
                              math.sin(c))
    rz = [[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]]
    ry = [[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]]
    rx = [[1, 0, 0], [0, cc, -sc], [0, sc, cc]]

    def mul(p, q):
        return [[sum(p[i][k] * q[k][j] for k in range(3)) for j in range(3)] for i in range(3)]

    return mul(rz, mul(ry, rx))


t = math.radians(112.0)
b = 1.54
site_b = [0, 0, 0]
site_c = [b, 0, 0]
site_a = [b * math.cos(t), b * math.sin(t), 0]


def around(phi):
    return [site_c[0] - b * math.cos(t), b * math.sin(t) * math.cos(phi),
            b * math.sin(t) * math.sin(phi)]


local = [site_a, site_b, site_c, around(math.radians(175.0)), around(math.radians(-65.0))]
types = [1, 2, 2, 1, 1]
n, spacing = 4, 7.6
box = n * spacing
atoms, bonds, angles, dihedrals, impropers = [], [], [], [], []
mol = 0
for i in range(n):
    for j in range(n):
        for k in range(n):
            mol += 1
            r = rot(0.7 * mol, 1.3 * mol + 0.2, 0.4 * mol - 0.1)
            base = len(atoms)
            for s, p in enumerate(local):
                q = [sum(r[row][c] * (p[c] - 0.8) for c in range(3)) for row in range(3)]
                q = [q[c] + 0.05 * math.sin(3.1 * (base + s) + 1.7 * c) for c in range(3)]
                atoms.append((base + s + 1, mol, types[s], (i + 0.5) * spacing + q[0],
                              (j + 0.5) * spacing + q[1], (k + 0.5) * spacing + q[2]))
            a, bb, c, d, e = [base + s + 1 for s in range(5)]
            bonds += [(1, a, bb), (1, bb, c), (1, c, d), (1, c, e)]
            angles += [(1, a, bb, c), (1, bb, c, d), (1, bb, c, e), (1, d, c, e)]
            dihedrals += [(1, a, bb, c, d), (2, a, bb, c, e)]
            impropers += [(1, c, bb, d, e)]

charges = [0.30, -0.20, 0.10, -0.35, 0.15]


def write(path, charged):
    with open(path, "w") as f:
        f.write("64 branched five-site molecules, LAMMPS units real, atom style full "
                f"{'with charges ' if charged else ''}(Stratus tests/md/data/make_branched.py)\n\n")
        f.write(f"{len(atoms)} atoms\n{len(bonds)} bonds\n{len(angles)} angles\n"
                f"{len(dihedrals)} dihedrals\n{len(impropers)} impropers\n\n")
        f.write("2 atom types\n1 bond types\n1 angle types\n2 dihedral types\n1 improper types\n\n")
        for ax in "xyz":
            f.write(f"0.0 {box:.6f} {ax}lo {ax}hi\n")
        f.write("\nMasses\n\n1 15.035\n2 14.027\n")
        f.write("\nBond Coeffs # harmonic\n\n1 260.0 1.54\n")
        f.write("\nAngle Coeffs # harmonic\n\n1 62.1 114.0\n")
        f.write("\nDihedral Coeffs # charmm\n\n1 1.4 3 0 0.0\n2 0.5 1 60 0.0\n")
        f.write("\nImproper Coeffs # harmonic\n\n1 20.0 35.0\n")
        f.write("\nAtoms # full\n\n")
        for a in atoms:
            q = charges[(a[0] - 1) % 5] if charged else 0.0
            f.write(f"{a[0]} {a[1]} {a[2]} {q} {a[3]:.8f} {a[4]:.8f} {a[5]:.8f}\n")
        f.write("\nVelocities\n\n")
        for a in atoms:
            m = a[0]
            f.write(f"{m} {0.004 * math.sin(0.37 * m):.8f} {0.004 * math.cos(0.71 * m):.8f} "
                    f"{0.004 * math.sin(1.13 * m + 0.5):.8f}\n")
        for name, rows in (("Bonds", bonds), ("Angles", angles), ("Dihedrals", dihedrals),
                           ("Impropers", impropers)):
            f.write(f"\n{name}\n\n")
            for idx, row in enumerate(rows, 1):
                f.write(f"{idx} " + " ".join(str(v) for v in row) + "\n")


write("branched_real.data", False)
write("branched_charged_real.data", True)
