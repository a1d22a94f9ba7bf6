#!/usr/bin/python3
"""Plots the dissipation history of a Taylor-Green vortex run of the spectral solver.

  /usr/bin/python3 tools/plot_tgv_dissipation.py RUN.diag.csv [--out docs/tgv_re1600_dissipation.png]

Draws 2 nu <|omega|^2>/2 (the solver's `dissipation` column) and -dE/dt (central differences of
the energy column) against time, with the peak of the fine-grid reference marked: about 0.0127
near t = 9 for Re = 1600 (W. M. van Rees, A. Leonard, D. I. Pullin, P. Koumoutsakos, J. Comput.
Phys. 230 (2011) 2794, pseudo-spectral 512^3; M. E. Brachet et al., J. Fluid Mech. 130 (1983)
411). Needs Debian's matplotlib (/usr/bin/python3).
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REFERENCE_PEAK = (9.0, 0.0127)  # (t, epsilon), fine-grid DNS, read off the published curves


def load(path):
    cols = {}
    with open(path) as f:
        rows = [line for line in f if not line.startswith("#")]
    for row in csv.DictReader(rows):
        for k, v in row.items():
            cols.setdefault(k, []).append(float(v))
    return cols


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--out", default="tgv_dissipation.png")
    ap.add_argument("--title", default="Taylor-Green vortex, Re = 1600, 64^3 modes (Stratus spectral)")
    args = ap.parse_args()
    c = load(args.csv)
    t, e, eps = c["time"], c["energy"], c["dissipation"]
    dedt_t = t[1:-1]
    dedt = [-(e[i + 1] - e[i - 1]) / (t[i + 1] - t[i - 1]) for i in range(1, len(t) - 1)]
    k = max(range(len(eps)), key=lambda i: eps[i])
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    ax.plot(t, eps, label=r"$2\nu\,\langle|\omega|^2\rangle/2$")
    ax.plot(dedt_t, dedt, "--", label=r"$-dE/dt$")
    ax.plot([REFERENCE_PEAK[0]], [REFERENCE_PEAK[1]], "kx", markersize=9,
            label="fine-grid reference peak (van Rees et al. 2011)")
    ax.annotate(f"peak {eps[k]:.4f} at t = {t[k]:.2f}", (t[k], eps[k]), textcoords="offset points",
                xytext=(25, 18), arrowprops=dict(arrowstyle="-", lw=0.5))
    ax.set_xlabel("t")
    ax.set_ylabel("dissipation rate")
    ax.set_title(args.title, fontsize=10)
    ax.set_xlim(0, max(t))
    ax.set_ylim(0, 1.5 * max(eps))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"{args.out}: peak dissipation {eps[k]:.5f} at t = {t[k]:.2f}")


if __name__ == "__main__":
    main()
