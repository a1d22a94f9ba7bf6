#!/usr/bin/env python3
"""Writes lj_fcc_864.data: 864 Lennard-Jones atoms (LAMMPS units lj, atom style atomic) on a
6 x 6 x 6 fcc lattice of reduced density 0.8442, each displaced by up to 0.05 sigma per axis,
with velocities at T = 1.5 (zero total momentum, scaled exactly with 3N - 3 degrees of freedom).
The NPT tests start from it in Stratus and in LAMMPS. Displacements and velocities come from a
fixed linear congruential sequence: the file is reproducible without random-number libraries."""
import math

CELLS, DENSITY, TEMPERATURE = 6, 0.8442, 1.5
a = (4.0 / DENSITY) ** (1.0 / 3.0)
length = CELLS * a
state = 2463534242


def uniform():
    """A number in [0, 1) from a 64-bit linear congruential generator (Knuth's MMIX constants)."""
    global state
    state = (6364136223846793005 * state + 1442695040888963407) % 2**64
    return (state >> 11) / float(2**53)


basis = [(0, 0, 0), (0.5, 0.5, 0), (0.5, 0, 0.5), (0, 0.5, 0.5)]
x = []
for i in range(CELLS):
    for j in range(CELLS):
        for k in range(CELLS):
            for b in basis:
                p = [(c + o) * a + 0.1 * (uniform() - 0.5) for c, o in zip((i, j, k), b)]
                x.append([q % length for q in p])
n = len(x)
# Gaussian velocities (Box-Muller), zero momentum, then exactly T with 3N - 3 dof.
v = []
for _ in range(n):
    row = []
    for _ in range(3):
        u1, u2 = 1.0 - uniform(), uniform()
        row.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    v.append(row)
mean = [sum(r[d] for r in v) / n for d in range(3)]
v = [[r[d] - mean[d] for d in range(3)] for r in v]
ke2 = sum(r[d] ** 2 for r in v for d in range(3))
scale = math.sqrt((3 * n - 3) * TEMPERATURE / ke2)
v = [[c * scale for c in r] for r in v]

with open("lj_fcc_864.data", "w") as f:
    f.write("fcc Lennard-Jones atoms, density 0.8442, T 1.5 (tests/md/data/make_lj_fcc.py)\n\n")
    f.write(f"{n} atoms\n1 atom types\n\n")
    for ax in "xyz":
        f.write(f"0 {length!r} {ax}lo {ax}hi\n")
    f.write("\nMasses\n\n1 1.0\n\nAtoms # atomic\n\n")
    for i, p in enumerate(x):
        f.write(f"{i + 1} 1 {p[0]!r} {p[1]!r} {p[2]!r}\n")
    f.write("\nVelocities\n\n")
    for i, r in enumerate(v):
        f.write(f"{i + 1} {r[0]!r} {r[1]!r} {r[2]!r}\n")
