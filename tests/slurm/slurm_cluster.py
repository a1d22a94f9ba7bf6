"""A one-machine Slurm cluster for tests: munged, slurmctld and slurmd from Debian's slurm-wlm
and munge packages, with a generated configuration, key, state and logs in a scratch directory.

    with SlurmCluster(work_dir) as cluster:
        job = cluster.sbatch(...)

The daemons run as root on free loopback ports with their own munge socket, so they touch no
system-wide Slurm or munge. They are stopped (by their pid files) when the block ends, however it
ends; daemons left by an earlier run that was killed are stopped when the next one starts.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

SBIN_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
DAEMONS = ("slurmd", "slurmctld", "munged")

# Requeued jobs wait `cred_expire` + 1 s (at least about 10 s) before they may start again:
# Slurm's default is 120 s. The scheduler's main loop runs every sched_interval s (default 60).
# Both are shortened here so that a requeue costs about 12 s instead of about 3 min.
CRED_EXPIRE = 5
SCHED_INTERVAL = 1


class SlurmError(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def which(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":" + SBIN_PATH)


class SlurmCluster:
    def __init__(self, work, cpus=2):
        self.work = os.path.abspath(work)
        self.cpus = max(cpus, os.cpu_count() or 1)
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(self.work, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.env["PATH"] = self.env.get("PATH", "") + ":" + SBIN_PATH
        self.started = []

    # -- paths -----------------------------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def pid_file(self, daemon):
        return self.path("run", daemon + ".pid")

    def log_tail(self, daemon, lines=15):
        try:
            with open(self.path("log", daemon + ".log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- start / stop ----------------------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        missing = [d for d in DAEMONS + ("sbatch", "scontrol", "squeue", "srun") if not which(d)]
        if missing:
            raise SlurmError(f"not installed: {', '.join(missing)} (tools/setup.sh installs the "
                             f"Debian packages slurm-wlm and munge)")
        if os.geteuid() != 0:
            raise SlurmError("the daemons run as root here (SlurmUser=root): run the test as root")
        self.stop_leftovers()
        shutil.rmtree(self.work, ignore_errors=True)
        for d in ("munge", "state", "spool", "log", "run"):
            os.makedirs(self.path(d))
        os.chmod(self.path("munge"), 0o700)
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = self.path("munge", "socket")
        self._run([which("munged"), "--force", f"--key-file={key}", f"--socket={self.socket}",
                   f"--pid-file={self.pid_file('munged')}", f"--log-file={self.path('log', 'munged.log')}",
                   f"--seed-file={self.path('munge', 'seed')}"], "munged")
        self.write_conf()
        self._run([which("slurmctld"), "-f", self.conf], "slurmctld")
        self._run([which("slurmd"), "-f", self.conf], "slurmd")
        end = time.time() + 60
        state = ""
        while time.time() < end:
            p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], env=self.env,
                               capture_output=True, text=True)
            state = (p.stdout + p.stderr).strip()
            if p.returncode == 0 and set(state.split()) == {"idle"}:
                return
            time.sleep(0.5)
        raise SlurmError(f"the node is not idle after 60 s (sinfo: {state!r})\nslurmctld.log:\n"
                         f"{self.log_tail('slurmctld')}\nslurmd.log:\n{self.log_tail('slurmd')}")

    def _run(self, argv, daemon):
        p = subprocess.run(argv, env=self.env, capture_output=True, text=True)
        self.started.append(daemon)
        if p.returncode != 0:
            raise SlurmError(f"{daemon} did not start (exit {p.returncode}): {p.stderr.strip()}\n"
                             f"{self.log_tail(daemon)}")
        end = time.time() + 20
        while not os.path.exists(self.pid_file(daemon)):
            if time.time() > end:
                raise SlurmError(f"{daemon}: no pid file after 20 s\n{self.log_tail(daemon)}")
            time.sleep(0.05)

    def common_conf(self, ctld_port, slurmd_port):
        """The lines of slurm.conf every test cluster shares: root daemons on the given ports,
        this directory's munge socket, state and logs, no cgroups, fast requeues."""
        return f"""SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket},cred_expire={CRED_EXPIRE}
StateSaveLocation={self.path('state')}
SlurmctldLogFile={self.path('log', 'slurmctld.log')}
SlurmctldPidFile={self.pid_file('slurmctld')}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval={SCHED_INTERVAL}
JobRequeue=1
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
"""

    def write_conf(self):
        conf = f"""# Generated by tests/slurm/slurm_cluster.py: a one-node cluster for tests.
ClusterName=stratustest
SlurmctldHost={self.host}(127.0.0.1)
{self.common_conf(free_port(), free_port())}SlurmdSpoolDir={self.path('spool')}
SlurmdLogFile={self.path('log', 'slurmd.log')}
SlurmdPidFile={self.pid_file('slurmd')}
KillWait=10
NodeName={self.host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
PartitionName=fallback Nodes={self.host} Default=NO MaxTime=INFINITE State=UP
"""
        with open(self.conf, "w") as f:
            f.write(conf)

    @staticmethod
    def _kill_pid_file(pid_file, name):
        try:
            pid = int(open(pid_file).read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != name:
                    return None  # the pid was reused by something else
            os.kill(pid, signal.SIGTERM)
        except OSError:
            return None
        return pid

    @staticmethod
    def _wait_gone(pids, timeout=20):
        end = time.time() + timeout
        for pid in pids:
            while os.path.exists(f"/proc/{pid}") and time.time() < end:
                time.sleep(0.05)
            if os.path.exists(f"/proc/{pid}"):
                os.kill(pid, signal.SIGKILL)

    def daemons(self):
        """(pid file name, process name) of every daemon of this cluster."""
        return [(d, d) for d in DAEMONS]

    def stop_leftovers(self):
        """Daemons of an earlier run in the same directory (killed before it could stop them)."""
        pids = [self._kill_pid_file(self.pid_file(key), name) for key, name in self.daemons()]
        self._wait_gone([p for p in pids if p])

    def stop(self):
        """Stops the daemons this object started, jobs first; returns the pids stopped."""
        if not self.started:
            return []
        if "slurmctld" in self.started:
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env, capture_output=True)
        pids = [self._kill_pid_file(self.pid_file(key), name) for key, name in self.daemons()
                if key in self.started]
        pids = [p for p in pids if p]
        self._wait_gone(pids)
        self.started = []
        return pids

    # -- jobs ------------------------------------------------------------------------------
    def job(self, job_id):
        """`scontrol show job` as a dict (empty once the job is forgotten)."""
        p = subprocess.run(["scontrol", "-o", "show", "job", str(job_id)], env=self.env,
                           capture_output=True, text=True)
        return dict(re.findall(r"(\w+)=(\S*)", p.stdout)) if p.returncode == 0 else {}

    def wait_job(self, job_id, timeout, done=("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                              "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL")):
        end = time.time() + timeout
        info = {}
        while time.time() < end:
            info = self.job(job_id)
            if info.get("JobState") in done:
                return info
            time.sleep(0.2)
        raise SlurmError(f"job {job_id} not done after {timeout} s: {info.get('JobState')} "
                         f"({info.get('Reason')})")
