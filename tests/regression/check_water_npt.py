#!/usr/bin/env python3
"""Checks the thermo CSV of water_npt.toml: rigid SPC/E water at 298 K and 1 atm.

After 20 ps of equilibration, the 200 ps of production are cut into 10 blocks of 20 ps; the
block means give each average and its standard error. Expected (each a fact from the cited
papers; the tolerances cover the spread of published SPC/E values and our error bars):
  density 0.994 g/cm^3 (Vega and Abascal, Phys. Chem. Chem. Phys. 13 (2011) 19663, Table 2:
    SPC/E at 298 K and 1 bar with Ewald sums and long-range LJ corrections), within 0.01;
  potential energy -46.8 kJ/mol per molecule without the polarization correction (Berendsen,
    Grigera and Straatsma, J. Phys. Chem. 91 (1987) 6269, -41.5 kJ/mol with the 5.22 kJ/mol
    correction; Hummer et al., J. Chem. Phys. 109 (1998) 2791), within 0.6 kJ/mol;
  the mean pressure 1 atm within 4 standard errors (the barostat holds its target);
  the mean temperature 298 K within 2 K.
Prints the averages with their error bars."""
import csv
import math
import sys

KCAL_TO_KJ = 4.184
EQUILIBRATION_FS, BLOCKS = 20000.0, 10


def block_stats(values):
    n = len(values) // BLOCKS
    means = [sum(values[b * n:(b + 1) * n]) / n for b in range(BLOCKS)]
    mean = sum(means) / BLOCKS
    var = sum((m - mean) ** 2 for m in means) / (BLOCKS - 1)
    return mean, math.sqrt(var / BLOCKS)


def main(path):
    with open(path) as f:
        # Complete rows only (a run still writing may leave its last row unfinished).
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                if None not in r.values() and "" not in r.values()]
    prod = [r for r in rows if float(r["time"]) > EQUILIBRATION_FS]
    if len(prod) < 10 * BLOCKS:
        sys.exit(f"{path}: {len(prod)} production rows, expected at least {10 * BLOCKS}")
    density = block_stats([float(r["density"]) for r in prod])
    energy = block_stats([3.0 * KCAL_TO_KJ * float(r["potential"]) for r in prod])
    pressure = block_stats([float(r["pressure"]) for r in prod])
    temperature = block_stats([float(r["temperature"]) for r in prod])
    print(f"SPC/E 298 K, 1 atm, {len(prod)} samples over "
          f"{float(prod[-1]['time']) - float(prod[0]['time']):.0f} fs in {BLOCKS} blocks:")
    print(f"  density {density[0]:.4f} +- {density[1]:.4f} g/cm^3 (literature 0.994)")
    print(f"  potential energy {energy[0]:.2f} +- {energy[1]:.2f} kJ/mol per molecule "
          f"(literature -46.8)")
    print(f"  pressure {pressure[0]:.1f} +- {pressure[1]:.1f} atm (target 1)")
    print(f"  temperature {temperature[0]:.2f} +- {temperature[1]:.2f} K (target 298)")
    failures = []
    if abs(density[0] - 0.994) > 0.01:
        failures.append(f"density {density[0]:.4f} is not within 0.01 of 0.994")
    if abs(energy[0] + 46.8) > 0.6:
        failures.append(f"potential energy {energy[0]:.2f} is not within 0.6 of -46.8 kJ/mol")
    if abs(pressure[0] - 1.0) > 4.0 * pressure[1]:
        failures.append(f"pressure {pressure[0]:.1f} +- {pressure[1]:.1f} atm misses 1 atm")
    if abs(temperature[0] - 298.0) > 2.0:
        failures.append(f"temperature {temperature[0]:.2f} is not within 2 K of 298")
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])
