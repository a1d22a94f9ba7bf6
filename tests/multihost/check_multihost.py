#!/usr/bin/python3
"""Runs across several hosts (issue 17), with the test hosts of netns_hosts.py: network
namespaces on this machine, each with its own address, hostname and node-local directory, Open
MPI launching ranks into them over TCP through netns-agent.

  check_multihost.py SCENARIO --stratus BIN --mpiexec MPIEXEC --work DIR [--preflags "..."]

Scenarios:
  same-results  md, euler and spectral on 2 hosts x 2 ranks give bitwise the results of 4
                ranks on one host (the final checkpoint's state and the CSV series).
Exit 77 (a skip ctest shows) when this machine cannot make test hosts (not root).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "checkpoint"))
from check_restart import ENV, EULER_DECK, MD_DECK, SPECTRAL_DECK  # noqa: E402
from netns_hosts import NetnsHosts, usable  # noqa: E402
from stratus_checks import Failure, check, ckpt_path, same_datasets, thermo_rows  # noqa: E402

SKIP = 77

# (deck, run name, final step, checkpoint group, CSV series compared, extra settings)
CASES = {
    "md": (MD_DECK, "lj_small", 200, "/particles", "thermo.csv", []),
    "euler": (EULER_DECK, "euler_small", 200, "/fields", "series.csv", []),
    "spectral": (SPECTRAL_DECK, "spectral_small", 200, "/fields", "diag.csv", []),
}


def run(cmd, env, log, timeout=600):
    with open(log, "w") as f:
        p = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    text = open(log).read()
    check(p.returncode == 0, f"{' '.join(cmd)}\nexited {p.returncode}:\n{text[-3000:]}")
    return text


def scenario_same_results(args, hosts):
    for solver, (deck, name, steps, group, series, extra) in CASES.items():
        common = [args.stratus, "run", deck, f"--set=run.steps={steps}",
                  f"--set=checkpoint.every={steps}", "--set=checkpoint.interval=off",
                  "--restart=none"] + extra
        base = os.path.join(args.work, "same-results", solver)
        os.makedirs(base, exist_ok=True)
        one, two = os.path.join(base, "one-host"), os.path.join(base, "two-hosts")
        t0 = time.time()
        run([args.mpiexec, "-n", "4"] + args.preflags + common + ["--output-dir", one], ENV,
            os.path.join(base + "-one-host.log"))
        t1 = time.time()
        before = hosts.link_bytes(0)
        text = run(hosts.mpiexec(args.mpiexec, [2, 2]) + args.preflags + common +
                   ["--output-dir", two], hosts.env(ENV), os.path.join(base + "-two-hosts.log"))
        t2 = time.time()
        traffic = hosts.link_bytes(0) - before
        check(traffic > 100_000, f"{solver}: only {traffic} bytes crossed host 0's link: the ranks "
              "did not talk over the network")
        check("2 of 4 rank(s)" in text, "the run does not say 2 of its 4 ranks share a host")
        check("4 rank(s) on 2 node(s)" in text,
              f"the run summary does not count 2 nodes:\n{text[-2000:]}")
        names = same_datasets(ckpt_path(one, name, steps), ckpt_path(two, name, steps), group)
        a = thermo_rows(os.path.join(one, f"{name}.{series}"))
        b = thermo_rows(os.path.join(two, f"{name}.{series}"))
        check(a == b, f"{solver}: {series} differs between 4 ranks on one host and 2 x 2")
        print(f"{solver}: 2 hosts x 2 ranks = 4 ranks on one host, bitwise: step {steps} "
              f"{group} ({', '.join(names)}) and {len(b)} {series} rows; {traffic / 1e6:.1f} MB "
              f"over host 0's link ({t1 - t0:.1f} s one host, {t2 - t1:.1f} s two hosts)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["same-results"])
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--preflags", default="")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    args.preflags = args.preflags.split() if args.preflags else []
    why = usable()
    if why:
        print(f"SKIPPED: the multi-host tests {why}", file=sys.stderr)
        sys.exit(SKIP)
    os.makedirs(args.work, exist_ok=True)
    try:
        with NetnsHosts(2, os.path.join(args.work, f"hosts-{args.scenario}")) as hosts:
            {"same-results": scenario_same_results}[args.scenario](args, hosts)
    except Failure as e:
        print(f"FAILED ({args.scenario}): {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
