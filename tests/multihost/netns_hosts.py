"""Test hosts on one machine (issue 17): each host is a network namespace with its own address
on a private bridge, its own hostname (set by netns-agent) and its own node-local directory.
Open MPI launches ranks into them through netns-agent (plm_rsh_agent), so ranks on different
hosts talk over TCP through veth pairs and the bridge, as on a cluster; ranks of one host share
memory. Needs root (ip netns, ip link). Run with Debian's /usr/bin/python3.

    with NetnsHosts(2, work) as hosts:
        subprocess.run(hosts.mpiexec(mpiexec, [2, 2]) + [program, ...])
        hosts.kill(1)      # every process of host 1, at once (a reclaimed instance)
        hosts.freeze(1)    # every process of host 1 stopped (a hung instance)
        hosts.cut(1)       # host 1's link down (a network partition)
"""
import os
import shutil
import signal
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT = os.path.join(HERE, "netns-agent")
PREFIX = "stratus-mh-"


def ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


def usable():
    """'' when this machine can make test hosts, else why not (for a skip message)."""
    if os.geteuid() != 0:
        return "needs root (ip netns, ip link)"
    if shutil.which("ip") is None or shutil.which("unshare") is None:
        return "needs ip (iproute2) and unshare (util-linux)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    r = ip("netns", "add", probe, check=False)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    ip("netns", "del", probe, check=False)
    return ""


def remove_stale():
    """Namespaces and links left by an earlier test process that is gone (a killed test)."""
    for line in ip("netns", "list").stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX) or "-probe-" in name:
            continue
        pid = name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            ip("netns", "del", name, check=False)
            ip("link", "del", f"stv{pid}h{name.rsplit('h', 1)[-1]}", check=False)
    for line in ip("-o", "link", "show", "type", "bridge").stdout.splitlines():
        dev = line.split(":")[1].strip().split("@")[0]
        if dev.startswith("stb") and dev[3:].isdigit() and not os.path.exists(f"/proc/{dev[3:]}"):
            ip("link", "del", dev, check=False)


class NetnsHosts:
    def __init__(self, count, work):
        self.count = count
        self.work = work
        pid = os.getpid()
        self.tag = str(pid)
        self.bridge = f"stb{pid}"
        self.subnet = f"10.{200 + pid % 50}.{(pid // 50) % 250}"
        self.names = [f"{PREFIX}{pid}-h{i}" for i in range(count)]
        self.veths = [f"stv{pid}h{i}" for i in range(count)]
        self.addresses = [f"{self.subnet}.{i + 2}" for i in range(count)]
        self.map = os.path.join(work, "netns-hosts.map")
        self.local = [os.path.join(work, "hosts", n.rsplit("-", 1)[-1], "local") for n in self.names]
        # Each host sees its own `local` directory at this one path (netns-agent mounts it), as
        # each instance of a cluster sees its own NVMe disk at /scratch.
        self.node_local = os.path.join(work, "node-local")
        # A lost host's marker: netns-agent launches nothing into a host while it exists.
        self.down = [os.path.join(work, "hosts", n.rsplit("-", 1)[-1], "down") for n in self.names]

    def __enter__(self):
        remove_stale()
        os.makedirs(self.work, exist_ok=True)
        try:
            ip("link", "add", self.bridge, "type", "bridge")
            ip("addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
            ip("link", "set", self.bridge, "up")
            for name, veth, addr, local in zip(self.names, self.veths, self.addresses, self.local):
                ip("netns", "add", name)
                ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", name)
                ip("link", "set", veth, "master", self.bridge)
                ip("link", "set", veth, "up")
                ip("-n", name, "addr", "add", f"{addr}/24", "dev", "eth0")
                ip("-n", name, "link", "set", "eth0", "up")
                ip("-n", name, "link", "set", "lo", "up")
                os.makedirs(local, exist_ok=True)
            for down in self.down:
                if os.path.exists(down):
                    os.remove(down)
            os.makedirs(self.node_local, exist_ok=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        with open(self.map, "w") as f:
            for name, addr, down, local in zip(self.names, self.addresses, self.down, self.local):
                f.write(f"{addr} {name} {down} {local} {self.node_local}\n")
        return self

    def __exit__(self, *exc):
        for name in self.names:
            self.kill_host_processes(name)
            ip("netns", "del", name, check=False)
        for veth in self.veths:
            ip("link", "del", veth, check=False)
        ip("link", "del", self.bridge, check=False)
        return False

    def env(self, base):
        """The environment for mpiexec: the agent's map and Open MPI's launch and TCP settings."""
        env = dict(base)
        env.update({
            "STRATUS_NETNS_MAP": self.map,
            "OMPI_MCA_plm_rsh_agent": AGENT,
            "OMPI_MCA_plm_rsh_no_tree_spawn": "1",
            # The test hosts share this machine's cores: ranks yield while they wait.
            "OMPI_MCA_mpi_yield_when_idle": "1",
            # mpiexec notices a host whose link is cut only through TCP keepalives on its
            # daemon's connection (default: 300 s idle, then 9 probes 20 s apart). They must
            # fire before run.hang_timeout ends the ranks: once mpiexec has sent the lost
            # daemon an abort order, unacknowledged data disables keepalives and TCP retries
            # for about 15 minutes. The tests use docs/cloud.md's settings, scaled down
            # (about 5 s here, against a hang_timeout of 10 s).
            "OMPI_MCA_oob_tcp_keepalive_time": "2",
            "OMPI_MCA_oob_tcp_keepalive_intvl": "1",
            "OMPI_MCA_oob_tcp_keepalive_probes": "3",
            "OMPI_MCA_btl_tcp_if_include": f"{self.subnet}.0/24",
            "OMPI_MCA_oob_tcp_if_include": f"{self.subnet}.0/24",
        })
        return env

    def mpiexec(self, mpiexec, ranks_per_host, hosts=None):
        """An mpiexec command line placing ranks_per_host[k] ranks on host hosts[k] (default:
        hosts 0, 1, ...), in order: ranks 0.. on the first host, and so on."""
        hosts = list(range(len(ranks_per_host))) if hosts is None else hosts
        spec = ",".join(f"{self.addresses[h]}:{n}" for h, n in zip(hosts, ranks_per_host))
        return [mpiexec, "--host", spec, "-n", str(sum(ranks_per_host)), "--map-by", "slot",
                "-x", "OMP_NUM_THREADS=1"]

    def link_bytes(self, host):
        """Bytes sent and received so far over `host`'s link (its veth on the bridge side)."""
        stats = f"/sys/class/net/{self.veths[host]}/statistics"
        return sum(int(open(f"{stats}/{k}").read()) for k in ("rx_bytes", "tx_bytes"))

    def pids(self, host):
        return [int(p) for p in ip("netns", "pids", self.names[host], check=False).stdout.split()]

    def signal_host_processes(self, name, sig):
        """`sig` to every process in the namespace, listing them again until no new one shows:
        a process may fork between one listing and the signal (Open MPI's daemon daemonizes
        while it starts), and its child must not escape."""
        done = set()
        while True:
            pids = set(ip("netns", "pids", name, check=False).stdout.split()) - done
            if not pids:
                return
            for p in pids:
                try:
                    os.kill(int(p), sig)
                except ProcessLookupError:
                    pass
            done |= pids

    def kill_host_processes(self, name):
        self.signal_host_processes(name, signal.SIGKILL)

    def kill(self, host):
        """Every process of `host` killed, as when its instance is reclaimed, and nothing
        launched there afterwards (the instance is gone). The marker comes first: a launch
        that entered the namespace before it is among the processes killed, one that enters
        after it sees the marker (netns-agent checks it inside the namespace)."""
        open(self.down[host], "w").close()
        # All at once, as an instance vanishes: every process stopped before any is killed, so
        # that none reports another's death (slurmd would report its job's batch script as
        # failed, where Slurm must see a node failure).
        self.signal_host_processes(self.names[host], signal.SIGSTOP)
        self.kill_host_processes(self.names[host])

    def freeze(self, host):
        """Every process of `host` stopped (SIGSTOP): a hung instance whose kernel still answers
        TCP. `replace` or the end of the test kills them."""
        self.signal_host_processes(self.names[host], signal.SIGSTOP)

    def cut(self, host):
        """`host`'s link down: its processes live on but reach no one."""
        ip("link", "set", self.veths[host], "down")

    def replace(self, host):
        """A fresh instance in place of a lost `host`: what lived there is killed, its link is
        up again and its node-local directory is empty."""
        self.kill(host)
        os.remove(self.down[host])
        ip("link", "set", self.veths[host], "up")
        shutil.rmtree(self.local[host], ignore_errors=True)
        os.makedirs(self.local[host], exist_ok=True)
