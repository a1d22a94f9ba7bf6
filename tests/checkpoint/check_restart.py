#!/usr/bin/python3
"""End-to-end checkpoint/restart scenarios of the `stratus` command (issue: preemption-proof
checkpoint/restart). Each scenario runs real processes, sends real signals, damages real files,
and fails with a message that says what went wrong.

  check_restart.py SCENARIO --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Scenarios: bitwise-md, bitwise-md-mixed, bitwise-md-molecules, bitwise-md-water, bitwise-md-npt, bitwise-heat, bitwise-spectral, bitwise-euler, elastic, elastic-spectral,
elastic-euler, elastic-md-npt, euler-positivity, torture, damage, signal, walltime, diskfull, legacy
(the run-ownership and launcher scenarios are in check_launch.py).
Run with Debian's /usr/bin/python3 (h5py).
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from stratus_checks import (Failure, check, checkpoints, ckpt_path, resumed_step,  # noqa: E402
                            same_datasets, thermo_rows)

from restart_common import (ENV, EULER_BLOWUP, EULER_DECK, HEAT_DECK, HERE,  # noqa: E402,F401
                            MD_DECK, MOLECULES_DATA, MOLECULES_DECK, RESUMABLE, SPECTRAL_DECK,
                            WATER_DATA, WATER_DECK, WATER_EQ_DATA, Runner)
from restart_damage import scenario_damage  # noqa: E402


def wait_for_step(outdir, name, step, proc, timeout=120):
    """Waits until the checkpoint of `step` exists (a periodic one) or the process ends."""
    end = time.time() + timeout
    while time.time() < end:
        if step in checkpoints(outdir, name):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    raise Failure(f"no checkpoint of step {step} in {outdir} after {timeout} s")


def signal_ranks(outdir, sig, only_last=False):
    """Signals the stratus processes of the run writing to `outdir` (as Slurm signals tasks)."""
    out = subprocess.run(["pgrep", "-f", f"stratus run .* --output-dir {outdir}( |$)"],
                         capture_output=True, text=True).stdout.split()
    pids = sorted(int(p) for p in out)
    pids = [p for p in pids if open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")[0].endswith(b"stratus")]
    check(pids, f"no stratus process for {outdir}")
    for p in (pids[-1:] if only_last else pids):
        os.kill(p, sig)
    return pids


# ---------------------------------------------------------------------------------------------

def stop_after_checkpoint(r, ranks, deck, out, name, step, extra, log_path):
    """Starts a run and sends SIGTERM to its ranks once the checkpoint of `step` exists; the
    run must stop with exit 75. Returns the step it stopped at and its log."""
    log = open(log_path, "w")
    p = r.start(ranks, deck, out, extra, log=log)
    check(wait_for_step(out, name, step, p), f"the run ended before its checkpoint of step {step}")
    signal_ranks(out, signal.SIGTERM)
    rc = p.wait(timeout=120)
    log.close()
    text = open(log_path).read()
    check(rc == RESUMABLE, f"SIGTERM: exit {rc}, expected {RESUMABLE}:\n{text[-3000:]}")
    m = re.search(r"signal \(SIGTERM\) at step (\d+)", text)
    check(m, "no 'signal (SIGTERM) at step N' line:\n" + text[-3000:])
    return int(m.group(1)), text


def bitwise(r, deck, name, ranks, steps, stop_after, compare_group, extra=(), tag=""):
    """Straight run of `steps` vs a run stopped by SIGTERM near `stop_after` and resumed."""
    base = os.path.join(r.work, f"bitwise-{name}{tag}-np{ranks}")
    shutil.rmtree(base, ignore_errors=True)
    straight, split = os.path.join(base, "straight"), os.path.join(base, "split")
    common = [f"--set=run.steps={steps}", "--set=checkpoint.interval=off",
              f"--set=checkpoint.every={stop_after}"] + list(extra)
    r.run(ranks, deck, straight, common + ["--restart=none"])
    # SIGTERM right after the periodic checkpoint of `stop_after`: the stop lands a few
    # steps later, at a step that has no checkpoint yet.
    stopped, _ = stop_after_checkpoint(r, ranks, deck, split, name, stop_after, common,
                                       os.path.join(base, "split-1.log"))
    check(stopped < steps, f"stopped at step {stopped}, the run has only {steps}")
    _, text2 = r.run(ranks, deck, split, common)
    check(resumed_step(text2) == stopped, f"resumed at {resumed_step(text2)}, stopped at {stopped}")
    a, b = ckpt_path(straight, name, steps), ckpt_path(split, name, steps)
    names = same_datasets(a, b, compare_group)
    print(f"{name} np{ranks}: stopped at step {stopped} by SIGTERM, resumed, final state at step "
          f"{steps} bitwise identical to the straight run ({', '.join(names)})")
    return straight, split


def scenario_bitwise_md(r, ranks, extra=(), tag="", deck=MD_DECK, name="lj_small"):
    straight, split = bitwise(r, deck, name, ranks, 300, 100, "/particles", extra, tag)
    a, b = (thermo_rows(os.path.join(d, f"{name}.thermo.csv")) for d in (straight, split))
    check(a == b, "thermo CSV differs between the straight and the resumed run")
    steps = [int(x.split(",")[0]) for x in b]
    check(len(steps) == len(set(steps)), "a thermo step appears twice after the restart")
    # Trajectory: every frame exactly once over the parts, positions bitwise.
    def frames_of(d):
        frames = {}
        for f in sorted(os.listdir(d)):
            if f.endswith(".h5md"):
                with h5py.File(os.path.join(d, f), "r") as h:
                    pos = h["particles/all/position"]
                    for k, s in enumerate(pos["step"][()]):
                        check(int(s) not in frames, f"frame of step {s} appears twice ({f})")
                        frames[int(s)] = pos["value"][k]
        return frames
    ref, frames = frames_of(straight), frames_of(split)
    check(sorted(frames) == list(range(0, 301, 20)), f"trajectory steps {sorted(frames)}")
    check(sorted(frames) == sorted(ref), f"trajectory steps {sorted(frames)} vs {sorted(ref)}")
    for s in ref:
        check(np.array_equal(ref[s], frames[s]), f"trajectory frame {s} differs")
    print(f"thermo CSV identical ({len(b)} rows, each step once); trajectory: {len(frames)} frames "
          f"over the parts, each once, bitwise identical")


def scenario_bitwise_md_npt(r, ranks):
    extra = [f'--set=md.read_data.file="{os.path.abspath(WATER_DATA)}"',
             '--set=md.integrator.style="nvt"', "--set=md.integrator.temperature=300",
             "--set=md.integrator.damping=100", '--set=md.barostat.style="aniso"',
             "--set=md.barostat.pressure=1", "--set=md.barostat.damping=1000"]
    scenario_bitwise_md(r, ranks, extra, "-npt", WATER_DECK, "water_small")
    base = os.path.join(r.work, f"bitwise-water_small-npt-np{ranks}")
    a, b = (ckpt_path(os.path.join(base, d), "water_small", 300) for d in ("straight", "split"))
    names = same_datasets(a, b, "/state")
    with h5py.File(a, "r") as h:
        lo, hi = h["state/box_lo"][()], h["state/box_hi"][()]
    with open(WATER_DATA) as f:
        start = [float(line.split()[1]) - float(line.split()[0])
                 for line in f if line.split()[2:3] in (["xlo"], ["ylo"], ["zlo"])]
    check(all(abs(x - x0) > 1e-3 * x0 for x, x0 in zip(hi - lo, start)),
          f"the barostat did not move every edge: {hi - lo} from {start}")
    print(f"NPT state bitwise identical ({', '.join(names)}); box at step 300: "
          f"{' x '.join(f'{x:.6f}' for x in hi - lo)}")


def scenario_bitwise_heat(r, ranks):
    bitwise(r, HEAT_DECK, "heat_small", ranks, 3000, 100, "/fields")


def scenario_bitwise_spectral(r, ranks, decomposition):
    extra = [f"--set=spectral.fft.decomposition=\"{decomposition}\""]
    straight, split = bitwise(r, SPECTRAL_DECK, "spectral_small", ranks, 600, 100, "/fields",
                              extra)
    a, b = (thermo_rows(os.path.join(d, "spectral_small.diag.csv")) for d in (straight, split))
    check(a == b, "diagnostics CSV differs between the straight and the resumed run")
    print(f"diagnostics CSV identical ({len(b)} rows, {decomposition})")


def scenario_elastic_spectral(r):
    """Written at 4 ranks (pencil 2 x 2), resumed at 2 (slab) and 1: the same run to round-off."""
    base = os.path.join(r.work, "elastic-spectral")
    shutil.rmtree(base, ignore_errors=True)
    name = "spectral_small"
    common = ["--set=checkpoint.interval=off", "--set=spectral.output.diag_every=10"]
    ref = os.path.join(base, "ref4")
    pencil = ['--set=spectral.fft.decomposition="pencil"']
    r.run(4, SPECTRAL_DECK, ref, common + pencil + ["--set=run.steps=200", "--restart=none"])
    ref_rows = {int(x.split(",")[0]): [float(v) for v in x.split(",")[1:]]
                for x in thermo_rows(os.path.join(ref, f"{name}.diag.csv"))}
    first = os.path.join(base, "first4")
    r.run(4, SPECTRAL_DECK, first, common + pencil + ["--set=run.steps=100", "--restart=none"])
    src = ckpt_path(first, name, 100)
    for ranks in (2, 1):
        d = os.path.join(base, f"resume{ranks}")
        os.makedirs(os.path.join(d, "checkpoints"), exist_ok=True)
        shutil.copy(src, os.path.join(d, "checkpoints"))
        shutil.copy(os.path.join(first, f"{name}.diag.csv"), d)
        _, log = r.run(ranks, SPECTRAL_DECK, d, common + ["--set=run.steps=200"])
        check(resumed_step(log) == 100, f"np{ranks}: did not resume at step 100")
        rows = thermo_rows(os.path.join(d, f"{name}.diag.csv"))
        worst = 0.0
        for row in rows:
            v = [float(x) for x in row.split(",")]
            s = int(v[0])
            # time, dt, energy, enstrophy, dissipation: round-off grows from 1e-16
            for k in (0, 1, 2, 3, 4):
                e = abs(v[k + 1] - ref_rows[s][k]) / max(abs(ref_rows[s][k]), 1e-300)
                worst = max(worst, e)
        check(len(rows) == 21, f"np{ranks}: {len(rows)} diagnostics rows, expected 21")
        check(worst < 1e-10, f"np{ranks}: diagnostics differ from the uninterrupted 4-rank run by {worst:.2e} (> 1e-10)")
        print(f"elastic spectral: written at 4 ranks (pencil 2 x 2, step 100), resumed at {ranks}: "
              f"time, dt, energy, enstrophy, dissipation within {worst:.2e} relative of the "
              f"uninterrupted run up to step 200")


def xdmf_frames(path):
    """(time, [files]) of every frame of an XDMF index, checked against the HDF5 datasets."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    frames = []
    for grid in root.iter("Grid"):
        if grid.get("GridType") != "Uniform":
            continue
        t = float(grid.find("Time").get("Value"))
        dims = [int(x) for x in grid.find("Topology").get("Dimensions").split()]
        files = []
        for item in grid.iter("DataItem"):
            if item.get("Format") != "HDF":
                continue
            f, dset = item.text.strip().split(":")
            full = os.path.join(os.path.dirname(path), f)
            with h5py.File(full, "r") as h:
                shape = list(h[dset].shape)
            check(shape == [int(x) for x in item.get("Dimensions").split()],
                  f"{path}: {f}:{dset} has shape {shape}, the XDMF says {item.get('Dimensions')}")
            check([d + 1 for d in shape] == dims, f"{path}: topology {dims} vs cells {shape}")
            files.append(f)
        frames.append((t, sorted(set(files))))
    return frames


def scenario_bitwise_euler(r, ranks):
    straight, split = bitwise(r, EULER_DECK, "euler_small", ranks, 600, 100, "/fields")
    a, b = (thermo_rows(os.path.join(d, "euler_small.series.csv")) for d in (straight, split))
    check(a == b, "series CSV differs between the straight and the resumed run")
    fa = xdmf_frames(os.path.join(straight, "euler_small.xdmf"))
    fb = xdmf_frames(os.path.join(split, "euler_small.xdmf"))
    check(fa == fb, f"XDMF frames differ: {fa} vs {fb}")
    check(len(fa) >= 3, f"only {len(fa)} frames in the XDMF index")
    for (_, files) in fa:
        names = same_datasets(os.path.join(straight, files[0]), os.path.join(split, files[0]),
                              "/fields")
    print(f"series CSV identical ({len(b)} rows); XDMF index: {len(fa)} frames, each file bitwise "
          f"identical to the straight run's ({', '.join(names)})")


def scenario_elastic_euler(r):
    """Written at 4 ranks, resumed at 2 and 1: the euler solver is decomposition-invariant, so
    the final state equals the uninterrupted 4-rank run bit for bit."""
    base = os.path.join(r.work, "elastic-euler")
    shutil.rmtree(base, ignore_errors=True)
    common = ["--set=checkpoint.interval=off"]
    ref = os.path.join(base, "ref4")
    r.run(4, EULER_DECK, ref, common + ["--set=run.steps=200", "--restart=none"])
    first = os.path.join(base, "first4")
    r.run(4, EULER_DECK, first, common + ["--set=run.steps=100", "--restart=none"])
    src = ckpt_path(first, "euler_small", 100)
    for ranks in (2, 1):
        d = os.path.join(base, f"resume{ranks}")
        os.makedirs(os.path.join(d, "checkpoints"), exist_ok=True)
        shutil.copy(src, os.path.join(d, "checkpoints"))
        _, log = r.run(ranks, EULER_DECK, d, common + ["--set=run.steps=200"])
        check(resumed_step(log) == 100, f"np{ranks}: did not resume at step 100")
        names = same_datasets(ckpt_path(ref, "euler_small", 200), ckpt_path(d, "euler_small", 200),
                              "/fields")
        print(f"elastic euler: written at 4 ranks (step 100), resumed at {ranks}: step 200 bitwise "
              f"identical to the uninterrupted 4-rank run ({', '.join(names)})")


def scenario_euler_positivity(r):
    """A run whose pressure goes negative stops with exit code 1, names the cell, the step and
    the values, and keeps its last checkpoint (which verifies and resumes)."""
    d = os.path.join(r.work, "euler-positivity")
    shutil.rmtree(d, ignore_errors=True)
    rc, log = r.run(2, EULER_BLOWUP, d, ["--set=checkpoint.every=1", "--set=checkpoint.interval=off",
                                         "--restart=none"], expect=1)
    m = re.search(r"non-positive (pressure|density) (\S+) at cell \((\d+), 0, 0\).* after step "
                  r"(\d+) \(t = ", log)
    check(m, "no 'non-positive ... at cell (i, 0, 0) ... after step N' message:\n" + log[-3000:])
    check(float(m.group(2)) <= 0, f"the reported value {m.group(2)} is not <= 0")
    step = int(m.group(4))
    check(log.count("non-positive") == 1, "the message is printed more than once:\n" + log[-3000:])
    kept = checkpoints(d, "euler_blowup")
    check(kept and kept[-1] == step - 1,
          f"checkpoints {kept}: expected the last one at step {step - 1}, before the failure")
    p = subprocess.run([r.stratus, "info", "--verify", ckpt_path(d, "euler_blowup", kept[-1])],
                       env=ENV, capture_output=True, text=True)
    check(p.returncode == 0, f"the kept checkpoint does not verify:\n{p.stdout}{p.stderr}")
    print(f"positivity: {m.group(1)} {m.group(2)} at cell ({m.group(3)}, 0, 0) after step {step}: "
          f"exit 1, checkpoint of step {kept[-1]} kept and verified")


def elastic_md(r, deck, name, extra, written, resumed, tag):
    """Written at `written` ranks (step 100), resumed at each of `resumed`: the thermo up to step
    200 within 1e-9 relative of the uninterrupted run at `written` ranks."""
    base = os.path.join(r.work, f"elastic{tag}")
    shutil.rmtree(base, ignore_errors=True)
    ref = os.path.join(base, f"ref{written}")
    common = ["--set=checkpoint.interval=off", "--set=md.thermo.every=10"] + list(extra)
    r.run(written, deck, ref, common + ["--set=run.steps=200", "--restart=none"])
    ref_rows = {int(x.split(",")[0]): [float(v) for v in x.split(",")[1:]]
                for x in thermo_rows(os.path.join(ref, f"{name}.thermo.csv"))}
    first = os.path.join(base, f"first{written}")
    r.run(written, deck, first, common + ["--set=run.steps=100", "--restart=none"])
    src = ckpt_path(first, name, 100)
    for ranks in resumed:
        d = os.path.join(base, f"resume{ranks}")
        os.makedirs(os.path.join(d, "checkpoints"), exist_ok=True)
        shutil.copy(src, os.path.join(d, "checkpoints"))
        shutil.copy(os.path.join(first, f"{name}.thermo.csv"), d)
        _, log = r.run(ranks, deck, d, common + ["--set=run.steps=200"])
        check(resumed_step(log) == 100, f"np{ranks}: did not resume at step 100")
        check("new layout" in log, f"np{ranks}: the log does not say the layout changed")
        rows = thermo_rows(os.path.join(d, f"{name}.thermo.csv"))
        # Each column's scale: its largest magnitude over the reference run (a pressure that
        # crosses zero is compared with the size of its swings, not with its value at 0).
        ncol = len(next(iter(ref_rows.values())))
        scale = [max(max(abs(row[k]) for row in ref_rows.values()), 1e-12) for k in range(ncol)]
        worst = 0.0
        for row in rows:
            v = [float(x) for x in row.split(",")]
            s = int(v[0])
            # Every column after step and time (temperature, energies, pressure and its tensor,
            # volume, density): round-off grows chaotically from 1e-16 after the restart; 1e-9
            # relative is far below physical variation.
            for k in range(1, len(v) - 1):
                e = abs(v[k + 1] - ref_rows[s][k]) / max(abs(ref_rows[s][k]), scale[k])
                worst = max(worst, e)
        check(len(rows) == 21, f"np{ranks}: {len(rows)} thermo rows, expected 21 (0..200 every 10)")
        check(worst < 1e-9, f"np{ranks}: thermo differs from the uninterrupted {written}-rank run "
              f"by {worst:.2e} (> 1e-9)")
        print(f"elastic{tag}: written at {written} ranks (step 100), resumed at {ranks}: thermo "
              f"within {worst:.2e} relative of the uninterrupted {written}-rank run up to step 200")


def scenario_elastic(r):
    elastic_md(r, MD_DECK, "lj_small", [], 4, (2, 1), "")


def scenario_elastic_md_npt(r):
    """Rigid water (SHAKE, PPPM) under anisotropic NPT from the equilibrated start, written at 2
    ranks and resumed at 1 and 4: the barostat's state, the box and the constraint virial travel
    in the checkpoint whatever the rank count."""
    extra = [f'--set=md.read_data.file="{os.path.abspath(WATER_EQ_DATA)}"',
             '--set=md.integrator.style="nvt"', "--set=md.integrator.temperature=298",
             "--set=md.integrator.damping=100", '--set=md.barostat.style="aniso"',
             "--set=md.barostat.pressure=1", "--set=md.barostat.damping=1000"]
    elastic_md(r, WATER_DECK, "water_small", extra, 2, (1, 4), "-md-npt")
    path = os.path.join(r.work, "elastic-md-npt", "ref2", "water_small.thermo.csv")
    with open(path) as f:
        header = next(line for line in f if not line.startswith("#")).strip().split(",")
    volume = [float(row.split(",")[header.index("volume")]) for row in thermo_rows(path)]
    check(abs(volume[-1] - volume[0]) > 1e-4 * volume[0],
          f"the barostat did not move the box: volume {volume[0]} at step 0, {volume[-1]} at 200")
    print(f"volume {volume[0]:.3f} at step 0, {volume[-1]:.3f} at step 200 (Angstrom^3)")


# Checkpoints written by Stratus at commit b593953 (format 1), one per solver, at step 40 on one
# rank (tests/checkpoint/legacy/; how they were made: tests/checkpoint/legacy/README.md). A
# resume from each must continue exactly as today's code continues its own run.
LEGACY = os.path.join(HERE, "legacy")
LEGACY_CASES = [
    # (deck, run name, group compared, extra --set options the checkpoint was written with,
    #  relative tolerance of the comparison: None for bitwise)
    # The half lists list a pair under another of its atoms than in b593953 (local pairs by
    # index parity, ghosts by the side of the subdomain they lie on, since issue 16), so the
    # force sums round differently: to 1e-12 of the largest value, as euler.
    (MD_DECK, "lj_small", "/particles", ["--set=md.lattice.cells=[4,4,4]"], 1e-12),
    (HEAT_DECK, "heat_small", "/fields", [], None),
    # euler.cfl was 0.4 by default then (0.8 since issue 16). The face kernels of today round
    # differently in the last bit (products with reciprocals where b593953 divided, conserved
    # states converted in the frame of the face), so the old steps 0-40 and today's differ at
    # round-off: the resumed run must match today's straight run to 1e-12 of the largest value.
    (EULER_DECK, "euler_small", "/fields", ["--set=euler.cfl=0.4"], 1e-12),
    # Written by 1D transforms and transposes, the only plans of b593953 (one rank now runs
    # whole 3D plans, equal to round-off): the same plans reproduce it bit for bit.
    (SPECTRAL_DECK, "spectral_small", "/fields", ["--set=spectral.fft.plans=\"lines\""], None),
]


def scenario_legacy(r):
    """Old checkpoints still restart: resumed at step 40 and run to 80, each solver's final
    state is bitwise (euler and md: to round-off) the state of a straight 0-80 run of today's
    code."""
    for deck, name, group, extra, rtol in LEGACY_CASES:
        base = os.path.join(r.work, f"legacy-{name}")
        shutil.rmtree(base, ignore_errors=True)
        straight, resumed = os.path.join(base, "straight"), os.path.join(base, "resumed")
        common = ["--set=run.steps=80", "--set=checkpoint.interval=off",
                  "--set=checkpoint.every=80"] + extra
        r.run(1, deck, straight, common + ["--restart=none"])
        old = os.path.join(LEGACY, f"{name}.step{40:012d}.h5")
        os.makedirs(os.path.join(resumed, "checkpoints"))
        shutil.copyfile(old, ckpt_path(resumed, name, 40))
        _, text = r.run(1, deck, resumed, common)
        check(resumed_step(text) == 40, f"{name}: resumed at {resumed_step(text)}, not from the "
              f"old checkpoint of step 40:\n{text[-3000:]}")
        names = same_datasets(ckpt_path(straight, name, 80), ckpt_path(resumed, name, 80), group,
                              rtol)
        how = "bitwise equal to" if rtol is None else f"within {rtol:g} (relative) of"
        print(f"{name}: the checkpoint of b593953 resumed at step 40; step 80 {how} today's "
              f"straight run ({', '.join(names)})")


def timed_reference(r, deck, outdir, extra, timeout=600):
    """Runs `deck` from step 0 and returns (start-up seconds, stepping seconds): the time until
    the log says it starts from step 0, and the time from there to the end."""
    os.makedirs(outdir, exist_ok=True)
    log_path = os.path.join(outdir, "reference.log")
    with open(log_path, "w") as log:
        t0 = time.time()
        p = r.start(1, deck, outdir, extra, log=log)
        t_started = None
        while p.poll() is None and time.time() - t0 < timeout:
            if t_started is None and "starting from step 0" in open(log_path).read():
                t_started = time.time()
            time.sleep(0.002)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise Failure(f"the reference run in {outdir} took more than {timeout} s")
        t_end = time.time()
    text = open(log_path).read()
    check(p.returncode == 0, f"the reference run exited {p.returncode}:\n{text[-2000:]}")
    if t_started is None:
        t_started = t_end
    return t_started - t0, t_end - t_started


def scenario_torture(r, kills):
    # The kill times are scaled to this machine's speed (timed on an uninterrupted run of the same
    # length), so that the run outlives all the kills on a fast idle machine as on a loaded one.
    # If a load swing still lets it finish first, the whole scenario is repeated on a run twice as
    # long: the test never passes with fewer than `kills` kills.
    steps = 3000
    for _ in range(3):
        if torture_once(r, kills, steps):
            return
        print(f"torture: the {steps}-step run finished before {kills} kills; repeating with "
              f"{2 * steps} steps")
        steps *= 2
    raise Failure(f"the run finished before {kills} kills three times, up to {steps // 2} steps")


def torture_once(r, kills, steps):
    base = os.path.join(r.work, "torture")
    shutil.rmtree(base, ignore_errors=True)
    ref, d = os.path.join(base, "ref"), os.path.join(base, "tortured")
    every = 10
    common = [f"--set=run.steps={steps}", "--set=checkpoint.interval=off",
              f"--set=checkpoint.every={every}", "--set=md.thermo.every=100",
              "--set=md.lattice.cells=[6,6,6]"]
    startup, stepping = timed_reference(r, MD_DECK, ref, common + ["--restart=none"])
    # A random kill lands between 3/4 of the start-up time (some kills hit the start-up) and the
    # start-up plus 1/kills of the stepping time: the `kills` // 2 random kills use at most half
    # of the run, the kills aimed at checkpoint writes at most `every` steps each.
    window = (0.75 * startup, startup + stepping / kills)
    rng = random.Random(20261202)
    done = False
    during_write = 0
    attempts = 0
    log_path = os.path.join(base, "attempt.log")
    newest_at_kill = None
    early = checked = 0
    for k in range(kills):
        attempts += 1
        with open(log_path, "w") as log:
            p = r.start(1, MD_DECK, d, common, log=log)
            if k % 2 == 0:
                time.sleep(rng.uniform(*window))
            else:
                # Aim at a write: once the run has resumed (and removed any leftover .partial),
                # wait for a new .partial file, then kill at once.
                t_end = time.time() + 30
                cdir = os.path.join(d, "checkpoints")
                while time.time() < t_end and p.poll() is None:
                    text = open(log_path).read()
                    if "resumed from" in text or "starting from step 0" in text:
                        break
                    time.sleep(0.005)
                while time.time() < t_end and p.poll() is None:
                    if os.path.isdir(cdir) and any(f.endswith(".partial") for f in os.listdir(cdir)):
                        break
                    time.sleep(0.0005)
            if p.poll() is not None:
                done = True
            else:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        text = open(log_path).read()
        started = "resumed from" in text or "starting from step 0" in text
        if not started:
            early += 1  # killed during start-up, before it chose a checkpoint
        elif newest_at_kill is not None:
            got = resumed_step(text)
            check(got == newest_at_kill,
                  f"kill {k}: resumed from step {got}, the newest complete checkpoint was {newest_at_kill}")
            checked += 1
        if done:
            check(p.returncode == 0, f"attempt {k} ended by itself with {p.returncode}:\n{text[-2000:]}")
            break
        cdir = os.path.join(d, "checkpoints")
        if os.path.isdir(cdir) and any(f.endswith(".partial") for f in os.listdir(cdir)):
            during_write += 1
        have = checkpoints(d, "lj_small")
        newest_at_kill = have[-1] if have else 0
    if done:
        return False
    check(during_write >= 3, f"only {during_write} of {kills} kills landed during a checkpoint write")
    _, text = r.run(1, MD_DECK, d, common)
    check(resumed_step(text) == newest_at_kill, "the final run did not resume from the newest checkpoint")
    same_datasets(ckpt_path(ref, "lj_small", steps), ckpt_path(d, "lj_small", steps), "/particles")
    check(checked >= kills // 2, f"only {checked} resumes could be checked")
    print(f"torture: {kills} kill -9 at random moments ({during_write} during a checkpoint write, "
          f"{early} during start-up); {checked} resumes checked, each from the newest complete "
          f"checkpoint (at most {every} steps repeated); "
          f"final state at step {steps} bitwise identical to the uninterrupted run "
          f"(start-up {startup:.2f} s, {steps} steps in {stepping:.2f} s; random kills after "
          f"{window[0]:.2f}-{window[1]:.2f} s)")
    return True


def scenario_signal(r, deadline):
    for ranks, sig, only_last in ((1, signal.SIGTERM, False), (2, signal.SIGTERM, False),
                                  (2, signal.SIGUSR1, True)):
        d = os.path.join(r.work, f"signal-np{ranks}-{sig.name}")
        shutil.rmtree(d, ignore_errors=True)
        log = open(d + ".log", "w")
        p = r.start(ranks, MD_DECK, d, ["--set=run.steps=1000000", "--set=checkpoint.interval=off",
                                        "--set=checkpoint.every=50", "--set=md.lattice.cells=[10,10,10]"],
                    log=log)
        check(wait_for_step(d, "lj_small", 50, p), "the run ended early")
        sent = time.time()
        signal_ranks(d, sig, only_last=only_last)
        rc = p.wait(timeout=60)
        elapsed = time.time() - sent
        log.close()
        text = open(d + ".log").read()
        check(rc == RESUMABLE, f"{sig.name} np{ranks}: exit {rc}, expected {RESUMABLE}:\n{text[-2000:]}")
        m = re.search(r"at step (\d+): checkpoint (\S+) written", text)
        check(m and os.path.exists(m.group(2)), "no checkpoint named in the stop message")
        check(elapsed < deadline, f"{sig.name} np{ranks}: exit after {elapsed:.2f} s (deadline {deadline} s)")
        v = subprocess.run([r.stratus, "info", "--verify", m.group(2)], env=ENV, capture_output=True, text=True)
        check(v.returncode == 0 and "Verified:" in v.stdout, f"the stop checkpoint does not verify: {v.stderr}")
        who = "one rank" if only_last else "every rank"
        print(f"signal: {sig.name} to {who} of {ranks}: checkpoint at step {m.group(1)} (verified) "
              f"and exit 75 after {elapsed:.2f} s (deadline {deadline} s)")


def scenario_walltime(r):
    """--walltime: the run stops with a checkpoint (exit 75) before the limit, and resumes."""
    d = os.path.join(r.work, "walltime")
    shutil.rmtree(d, ignore_errors=True)
    limit = 4.0
    args = ["--set=run.steps=1000000", "--set=checkpoint.interval=off", f"--walltime={limit:g}s"]
    start = time.time()
    rc, log = r.run(1, MD_DECK, d, args, expect=RESUMABLE)
    elapsed = time.time() - start
    m = re.search(r"wall-time limit \(.*\) at step (\d+): checkpoint (\S+) written", log)
    check(m, f"no wall-time stop message:\n{log[-2000:]}")
    check(elapsed < limit + 3.0, f"stopped after {elapsed:.2f} s, limit {limit} s (+ start-up)")
    v = subprocess.run([r.stratus, "info", "--verify", m.group(2)], env=ENV, capture_output=True, text=True)
    check(v.returncode == 0, f"the wall-time checkpoint does not verify: {v.stderr}")
    rc, log = r.run(1, MD_DECK, d, args, expect=RESUMABLE)
    check(resumed_step(log) == int(m.group(1)), "the second slice did not resume from the first")
    print(f"walltime: --walltime {limit:g}s stopped at step {m.group(1)} after {elapsed:.2f} s "
          f"(process start included) with a verified checkpoint, exit 75; the next slice resumed")


def scenario_diskfull(r):
    base = os.path.join(r.work, "diskfull")
    mnt = os.path.join(base, "tmpfs")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(mnt)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1200k", "tmpfs", mnt], capture_output=True, text=True)
    check(m.returncode == 0, f"cannot mount a small tmpfs at {mnt} (root and mount rights needed): {m.stderr}")
    try:
        d = os.path.join(base, "out")
        # 6^3 cells: 864 atoms, checkpoints of about 150 kB. keep = 20 fills 1.2 MB.
        rc, log = r.run(1, MD_DECK, d, ["--set=run.steps=400", "--set=checkpoint.interval=off",
                                        "--set=checkpoint.every=20", "--set=checkpoint.keep=20",
                                        "--set=md.lattice.cells=[6,6,6]", f"--set=checkpoint.dir={mnt}"],
                        expect=1)
        check("not written" in log and "MB free in" in log and "is intact" in log,
              f"disk full: the error does not say so:\n{log[-2000:]}")
        have = sorted(f for f in os.listdir(mnt))
        check(not any(f.endswith(".partial") for f in have), f"a .partial was left: {have}")
        complete = [f for f in have if f.endswith(".h5")]
        check(complete, "no checkpoint survived")
        for f in complete:
            v = subprocess.run([r.stratus, "info", "--verify", os.path.join(mnt, f)], env=ENV,
                               capture_output=True, text=True)
            check(v.returncode == 0, f"{f} does not verify after the disk filled: {v.stderr}")
        msg = [l for l in log.splitlines() if "not written" in l][0]
        print(f"disk full: exit 1 with '{msg.strip()[:160]}...'; {len(complete)} earlier checkpoints intact and verified, no .partial left")
    finally:
        subprocess.run(["umount", mnt])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--deadline", type=float, default=10.0)
    ap.add_argument("--decomposition", default="auto")
    args = ap.parse_args()
    r = Runner(args)
    os.makedirs(args.work, exist_ok=True)
    scenarios = {
        "bitwise-md": lambda: scenario_bitwise_md(r, args.ranks),
        # Cluster-pair lists in mixed precision: the clusters are rebuilt from the checkpointed
        # build-time positions, so the float sums run in the same order after the restart.
        "bitwise-md-mixed": lambda: scenario_bitwise_md(
            r, args.ranks, ['--set=md.precision="mixed"'], "-mixed"),
        # Molecules: the topology columns (terms, special partners, molecule ids) travel through
        # the checkpoint; the bonded lists and exclusions are rebuilt from them.
        "bitwise-md-molecules": lambda: scenario_bitwise_md(
            r, args.ranks, [f'--set=md.read_data.file="{os.path.abspath(MOLECULES_DATA)}"'], "",
            MOLECULES_DECK, "branched_small"),
        # Rigid water: SHAKE's constraint forces and virials are checkpointed with the atoms,
        # PPPM is recomputed from the restored positions.
        "bitwise-md-water": lambda: scenario_bitwise_md(
            r, args.ranks, [f'--set=md.read_data.file="{os.path.abspath(WATER_DATA)}"'], "",
            WATER_DECK, "water_small"),
        # NPT on the rigid water (anisotropic MTK barostat, SHAKE, PPPM): the box, the box of
        # the last list build and the barostat's state travel in /state; the ghosts and lists
        # are rebuilt in the build's box, then the current box is taken.
        "bitwise-md-npt": lambda: scenario_bitwise_md_npt(r, args.ranks),
        "bitwise-heat": lambda: scenario_bitwise_heat(r, args.ranks),
        "bitwise-spectral": lambda: scenario_bitwise_spectral(r, args.ranks, args.decomposition),
        "elastic": lambda: scenario_elastic(r),
        "elastic-spectral": lambda: scenario_elastic_spectral(r),
        "bitwise-euler": lambda: scenario_bitwise_euler(r, args.ranks),
        "elastic-euler": lambda: scenario_elastic_euler(r),
        "elastic-md-npt": lambda: scenario_elastic_md_npt(r),
        "euler-positivity": lambda: scenario_euler_positivity(r),
        "torture": lambda: scenario_torture(r, args.kills),
        "damage": lambda: scenario_damage(r),
        "signal": lambda: scenario_signal(r, args.deadline),
        "walltime": lambda: scenario_walltime(r),
        "diskfull": lambda: scenario_diskfull(r),
        "legacy": lambda: scenario_legacy(r),
    }
    if args.scenario not in scenarios:
        sys.exit(f"unknown scenario {args.scenario}; one of {', '.join(scenarios)}")
    try:
        scenarios[args.scenario]()
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
