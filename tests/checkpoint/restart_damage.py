"""The `damage` scenario of check_restart.py: damaged, incomplete, mislabeled, leftover and
incompatible checkpoints are never used, each refusal names the file and the reason, and a
resume falls back to the newest valid checkpoint (in one pass too, as blocks are read)."""
import os
import shutil
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from restart_common import ENV, HEAT_DECK, MD_DECK  # noqa: E402
from stratus_checks import check, checkpoints, ckpt_path, resumed_step  # noqa: E402


def flip_bytes(path, dataset):
    with h5py.File(path, "r") as h:
        offset, size = h[dataset].id.get_offset(), h[dataset].id.get_storage_size()
    with open(path, "r+b") as f:
        f.seek(offset + size // 2)
        b = f.read(4)
        f.seek(offset + size // 2)
        f.write(bytes(x ^ 0x5A for x in b))


def scenario_damage(r):
    base = os.path.join(r.work, "damage")
    shutil.rmtree(base, ignore_errors=True)
    name = "lj_small"
    seed = os.path.join(base, "seed")
    common = ["--set=checkpoint.interval=off", "--set=checkpoint.every=50", "--set=checkpoint.keep=3"]
    r.run(1, MD_DECK, seed, common + ["--set=run.steps=100", "--restart=none"])
    check(checkpoints(seed, name) == [50, 100], f"expected checkpoints 50 and 100, found {checkpoints(seed, name)}")
    newest = ckpt_path(seed, name, 100)

    def fresh(tag):
        d = os.path.join(base, tag)
        shutil.copytree(seed, d)
        return d

    def expect_fallback(tag, damage, why):
        d = fresh(tag)
        damage(ckpt_path(d, name, 100))
        v = subprocess.run([r.stratus, "info", "--verify", ckpt_path(d, name, 100)], env=ENV,
                           capture_output=True, text=True)
        check(v.returncode == 2 and why in v.stderr,
              f"{tag}: stratus info --verify: exit {v.returncode}, stderr {v.stderr!r}, expected 2 and '{why}'")
        _, log = r.run(1, MD_DECK, d, common + ["--set=run.steps=150"])
        check(f"cannot resume from {ckpt_path(d, name, 100)}" in log and why in log,
              f"{tag}: the warning does not name the file and '{why}':\n{log[-3000:]}")
        check(resumed_step(log) == 50, f"{tag}: resumed at {resumed_step(log)}, expected the older 50")
        check(os.path.exists(ckpt_path(d, name, 100) + ".damaged"), f"{tag}: damaged file not set aside")
        print(f"damage {tag}: detected ('{why}'), named, resumed from the older checkpoint (step 50)")

    def truncate(p):
        size = os.path.getsize(p)
        with open(p, "r+b") as f:
            f.truncate(size // 2)

    def no_marker(p):
        with h5py.File(p, "r+") as h:
            del h.attrs["checkpoint_complete"]

    expect_fallback("truncated", truncate, "truncated or damaged")
    expect_fallback("flipped", lambda p: flip_bytes(p, "particles/velocity"),
                    "dataset /particles/velocity is damaged")
    expect_fallback("no-marker", no_marker, "no completion marker")

    # One pass (the layout that wrote it, here 2 ranks): the blocks a restore reads are checked as
    # they are read. A damaged field is found then, and the older checkpoint is taken; a clean
    # one resumes in one pass; another layout (1 rank) verifies first, then restores.
    hseed = os.path.join(base, "heat-seed")
    hcommon = ["--set=checkpoint.interval=off", "--set=checkpoint.every=100", "--set=checkpoint.keep=3"]
    r.run(2, HEAT_DECK, hseed, hcommon + ["--set=run.steps=200", "--restart=none"])
    check(checkpoints(hseed, "heat_small") == [100, 200],
          f"expected heat checkpoints 100 and 200, found {checkpoints(hseed, 'heat_small')}")
    for tag, ranks, flip, step, how in (("heat-flipped", 2, True, 100, None),
                                        ("heat-clean", 2, False, 200, "one pass"),
                                        ("heat-other-layout", 1, False, 200, "two passes")):
        d = os.path.join(base, tag)
        shutil.copytree(hseed, d)
        if flip:
            flip_bytes(ckpt_path(d, "heat_small", 200), "fields/u")
        _, log = r.run(ranks, HEAT_DECK, d, hcommon + ["--set=run.steps=250"])
        check(resumed_step(log) == step, f"{tag}: resumed at {resumed_step(log)}, expected {step}")
        if flip:
            check("dataset /fields/u is damaged" in log and
                  f"cannot resume from {ckpt_path(d, 'heat_small', 200)}" in log,
                  f"{tag}: the damaged field was not named:\n{log[-3000:]}")
        else:
            check(how in log, f"{tag}: the resume line does not say '{how}':\n{log[-2000:]}")
    print("damage one pass: a flipped field found while it was read (2 ranks), the older "
          "checkpoint taken; a clean one resumed in one pass; another layout in two")

    # A checkpoint whose name says step 130 but which holds step 50 (copied by hand, or left by
    # another run): the content decides. Before, it was taken as the newest and the run went back
    # to step 50 over the valid step-100 checkpoint.
    d = fresh("mislabeled")
    shutil.copy(ckpt_path(d, name, 50), ckpt_path(d, name, 130))
    _, log = r.run(1, MD_DECK, d, common + ["--set=run.steps=150"])
    check("holds step 50, but its name says another step: not trusted" in log,
          f"mislabeled: the warning does not say why:\n{log[-3000:]}")
    check(resumed_step(log) == 100, f"mislabeled: resumed at {resumed_step(log)}, expected 100")
    print("damage mislabeled: a file named for step 130 holding step 50 was not trusted; resumed "
          "from step 100")

    # A .partial left behind by a write that never finished: removed, never used.
    d = fresh("partial")
    partial = ckpt_path(d, name, 150) + ".partial"
    with open(partial, "wb") as f:
        f.write(b"\x89HDF\r\n\x1a\n" + b"\0" * 1000)
    _, log = r.run(1, MD_DECK, d, common + ["--set=run.steps=150"])
    check(not os.path.exists(partial), "the .partial file is still there")
    check(f"removed {partial}" in log, "the log does not name the removed .partial")
    check(resumed_step(log) == 100, "did not resume from the newest complete checkpoint")
    print("damage partial: the leftover .partial was removed (named in the log), resumed from step 100")

    # An incompatible deck: refused with the list of keys, unless --allow-deck-change.
    d = fresh("deck")
    rc, log = r.run(1, MD_DECK, d, common + ["--set=md.pair.cutoff=2.2", "--set=md.timestep=0.004"], expect=2)
    check("md.pair.cutoff: 2.5 in the checkpoint, 2.2 now" in log and "md.timestep" in log,
          f"incompatible deck: the refusal does not list the keys:\n{log[-2000:]}")
    check(os.path.exists(ckpt_path(d, name, 100)), "the refused checkpoint was touched")
    _, log = r.run(1, MD_DECK, d, common + ["--set=md.thermo.every=25", "--set=run.steps=150"])
    check(resumed_step(log) == 100, "a change of md.thermo.every must not block the restart")
    d = fresh("deck-allowed")
    _, log = r.run(1, MD_DECK, d, common + ["--set=md.timestep=0.004", "--set=run.steps=150", "--allow-deck-change"])
    check(resumed_step(log) == 100 and "--allow-deck-change" in log, "--allow-deck-change did not resume")
    # A checkpoint of another solver, given explicitly: a clean refusal.
    rc, log = r.run(1, HEAT_DECK, os.path.join(base, "heat"), ["--restart", newest], expect=2)
    check("written by solver 'md'" in log, f"another solver's checkpoint: {log[-1000:]}")
    # An explicit damaged path is never used: exit 2, nothing run.
    d = fresh("explicit")
    truncate(ckpt_path(d, name, 100))
    rc, log = r.run(1, MD_DECK, d, ["--restart", ckpt_path(d, name, 100)], expect=2)
    check("truncated or damaged" in log, "explicit damaged checkpoint: no reason given")
    print("damage deck: physics changes refused with the keys listed (exit 2); output changes "
          "accepted; --allow-deck-change resumes; another solver's or a damaged explicit checkpoint "
          "is refused (exit 2)")
