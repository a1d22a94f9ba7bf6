"""What the checkpoint/restart scenarios share (check_restart.py, restart_damage.py): the decks,
the environment of every run, and the Runner that starts `stratus` at a rank count."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from stratus_checks import Failure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MD_DECK = os.path.join(HERE, "lj_small.toml")
MOLECULES_DECK = os.path.join(HERE, "branched_small.toml")
MOLECULES_DATA = os.path.join(HERE, "..", "md", "data", "branched_real.data")
WATER_DECK = os.path.join(HERE, "water_small.toml")
WATER_DATA = os.path.join(HERE, "..", "md", "data", "spce_512.data")
# The same water equilibrated at 298 K, with velocities (tests/md/data/spce_512_eq.toml).
WATER_EQ_DATA = os.path.join(HERE, "..", "md", "data", "spce_512_eq.data")
HEAT_DECK = os.path.join(HERE, "heat_small.toml")
SPECTRAL_DECK = os.path.join(HERE, "spectral_small.toml")
EULER_DECK = os.path.join(HERE, "euler_small.toml")
EULER_BLOWUP = os.path.join(HERE, "euler_blowup.toml")
RESUMABLE = 75

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMP_PROC_BIND="false", OMP_NUM_THREADS="1")


class Runner:
    def __init__(self, args):
        self.stratus = args.stratus
        self.mpiexec = args.mpiexec
        self.preflags = args.preflags.split() if args.preflags else []
        self.work = args.work

    def command(self, ranks, deck, outdir, extra):
        base = [self.stratus, "run", deck, "--output-dir", outdir] + list(extra)
        if ranks == 1:
            return base
        return [self.mpiexec, "-n", str(ranks)] + self.preflags + base

    def run(self, ranks, deck, outdir, extra=(), expect=0, timeout=300, env=None):
        cmd = self.command(ranks, deck, outdir, extra)
        p = subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=timeout)
        out = p.stdout + p.stderr
        if expect is not None and p.returncode != expect:
            raise Failure(f"{' '.join(cmd)}\nexited {p.returncode}, expected {expect}:\n{out[-4000:]}")
        return p.returncode, out

    def start(self, ranks, deck, outdir, extra=(), log=None, env=None):
        cmd = self.command(ranks, deck, outdir, extra)
        return subprocess.Popen(cmd, env=env or ENV, stdout=log or subprocess.DEVNULL,
                                stderr=subprocess.STDOUT, start_new_session=True)
