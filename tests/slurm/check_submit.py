#!/usr/bin/python3
"""`stratus submit`: the jobscripts it writes (--dry-run), its usage errors, its quoting of
paths and values, and the sbatch calls it makes (a stand-in sbatch records them). No Slurm.

  check_submit.py --stratus BIN --work DIR
"""
import argparse
import os
import re
import shutil
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from stratus_checks import Failure, check  # noqa: E402

DECK = os.path.join(HERE, "..", "checkpoint", "lj_small.toml")
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ODD = "it's a \"deck\" $(touch PWNED) `touch PWNED` ; touch PWNED & $HOME \\ *"


class Submit:
    def __init__(self, stratus, work):
        self.stratus, self.work = stratus, work
        self.env = dict(os.environ, OMPI_MCA_ess_singleton_isolated="1")

    def run(self, args, expect=0, env=None, cwd=None):
        p = subprocess.run([self.stratus, "submit"] + args, cwd=cwd or self.work, env=env or self.env,
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == expect, f"stratus submit {' '.join(args)}: exit {p.returncode}, "
              f"expected {expect}\nstdout:\n{p.stdout[-2000:]}\nstderr:\n{p.stderr}")
        return p.stdout, p.stderr

    def error(self, args, *needles):
        _, err = self.run(args, expect=2)
        for n in needles:
            check(n in err, f"stratus submit {' '.join(args)}: the error lacks {n!r}: {err}")


def sbatch_lines(script):
    return [line[len("#SBATCH "):] for line in script.splitlines() if line.startswith("#SBATCH ")]


def bash_syntax(script):
    p = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    check(p.returncode == 0, f"bash -n: {p.stderr}")


def values_of(script, names):
    """Runs the script's values block in bash and returns what each variable holds."""
    block = re.search(r"# >>> values.*?\n(.*?)# <<< values", script, re.S)
    check(block, "no values block")
    printer = "".join(f'printf "%s\\0" "${{{n}[@]}}"; printf "\\1\\0"\n' for n in names)
    p = subprocess.run(["bash", "-c", block.group(1) + printer], capture_output=True)
    check(p.returncode == 0, f"the values block does not run: {p.stderr}")
    fields = p.stdout.decode().split("\0")[:-1]
    out, cur = {}, []
    it = iter(names)
    for f in fields:
        if f == "\1":
            out[next(it)] = cur
            cur = []
        else:
            cur.append(f)
    return out


def layouts(s):
    one, _ = s.run([DECK, "--dry-run", "--ntasks-per-node", "4", "--time", "2h"])
    bash_syntax(one)
    lines = sbatch_lines(one)
    for want in ("--job-name=lj_small", "--nodes=1", "--ntasks-per-node=4", "--time=2:00:00",
                 "--no-requeue", "--signal=B:USR1@120", "--open-mode=append"):
        check(want in lines, f"one node: no '#SBATCH {want}' in {lines}")
    check("spot='0'" in one, "one node: spot is not off")

    multi, _ = s.run([DECK, "--dry-run", "-N", "4", "--ntasks-per-node", "32", "--cpus-per-task",
                      "2", "-p", "compute", "-A", "proj_1", "-t", "1-12:00:00", "-J", "big.run"])
    lines = sbatch_lines(multi)
    for want in ("--nodes=4", "--ntasks-per-node=32", "--cpus-per-task=2", "--partition=compute",
                 "--account=proj_1", "--time=1-12:00:00", "--job-name=big.run"):
        check(want in lines, f"several nodes: no '#SBATCH {want}' in {lines}")

    gpu, _ = s.run([DECK, "--dry-run", "-N", "2", "--gpus-per-node", "4", "-t", "30"])
    lines = sbatch_lines(gpu)
    for want in ("--gpus-per-node=4", "--ntasks-per-node=4", "--time=30"):
        check(want in lines, f"GPU: no '#SBATCH {want}' in {lines}")
    check("gpus_per_node='4'" in gpu and "--gpu-bind=single:1" in gpu, "GPU: no binding")

    spot, err = s.run([DECK, "--dry-run", "--spot", "--max-restarts", "5", "--signal-lead", "3min",
                       "-p", "spot,ondemand", "--fallback-partition", "ondemand", "--watch", "gcp",
                       "--watch-interval", "2", "--launcher", "mpirun"])
    bash_syntax(spot)
    lines = sbatch_lines(spot)
    for want in ("--requeue", "--signal=B:USR1@180", "--partition=spot,ondemand",
                 "--open-mode=append"):
        check(want in lines, f"spot: no '#SBATCH {want}' in {lines}")
    v = values_of(spot, ["spot", "max_restarts", "fallback_partition", "watch", "watch_interval",
                         "launcher"])
    check(v == {"spot": ["1"], "max_restarts": ["5"], "fallback_partition": ["ondemand"],
                "watch": ["gcp"], "watch_interval": ["2"], "launcher": ["mpirun"]}, f"spot: {v}")
    check("not submitted" in err, f"--dry-run does not say it submitted nothing: {err}")
    print("layouts: one node, several nodes, GPU nodes (one rank per GPU, bound), spot "
          "(requeue, signal lead, fallback, watcher, mpirun): #SBATCH lines and values as asked; "
          "bash -n passes")


def quoting(s):
    odd_dir = os.path.join(s.work, ODD)
    os.makedirs(odd_dir, exist_ok=True)
    deck = os.path.join(odd_dir, "lj small.toml")
    shutil.copy(DECK, deck)
    out_dir = os.path.join(odd_dir, "out $(touch PWNED)")
    script, _ = s.run([deck, "--dry-run", "--spot", "--output-dir", out_dir,
                       "--set", "run.name=it's $(touch PWNED)", "--set", "run.steps=7",
                       "--stratus-bin", os.path.join(odd_dir, "stratus"), "--watch", "aws",
                       "--watch-url", "http://127.0.0.1:9/$(touch PWNED)'"])
    bash_syntax(script)
    v = values_of(script, ["deck", "run_args", "stratus_bin", "watch_bin", "watch_url"])
    check(v["deck"] == [deck], f"deck path changed on its way through bash: {v['deck']}")
    check(v["run_args"] == ["--output-dir", out_dir, "--set", "run.name=it's $(touch PWNED)",
                            "--set", "run.steps=7"], f"run arguments changed: {v['run_args']}")
    check(v["stratus_bin"] == [os.path.join(odd_dir, "stratus")], f"stratus_bin: {v['stratus_bin']}")
    check(v["watch_bin"] == [os.path.join(odd_dir, "stratus-preempt-watch")], f"watch_bin: {v['watch_bin']}")
    check(v["watch_url"] == ["http://127.0.0.1:9/$(touch PWNED)'"], f"watch_url: {v['watch_url']}")
    # The job name comes from run.name and reaches an #SBATCH line: letters, digits, _ . - only.
    check("#SBATCH --job-name=it_s___touch_PWNED_" in script, "job name not sanitized")
    pwned = [os.path.join(d, f) for d, _, fs in os.walk(s.work) for f in fs if f == "PWNED"]
    check(not pwned, f"something was executed: {pwned}")
    print(f"quoting: a deck in {ODD!r}, --output-dir, --set, --stratus-bin and --watch-url with "
          f"quotes, $(...) and backquotes come out of bash unchanged; nothing executed; the job "
          f"name is sanitized")


def errors(s):
    s.error(["no-such-deck.toml", "--dry-run"], "no-such-deck.toml")
    s.error([DECK, "--dry-run", "--set", "run.stepz=3"], "run.stepz")
    s.error([DECK, "--gpus-per-node", "4", "--ntasks-per-node", "2"], "--ntasks-per-node 2 with "
            "--gpus-per-node 4", "one rank per GPU")
    s.error([DECK, "--nodes", "0"], "--nodes: expected >= 1, found 0")
    s.error([DECK, "--time", "1:2:3:4"], "--time: expected a Slurm time", "found \"1:2:3:4\"")
    s.error([DECK, "--time", "1", "--signal-lead", "90s"], "--signal-lead 90s is not shorter than "
            "--time 1")
    s.error([DECK, "--signal-lead", "1d"], "--signal-lead: expected", "65535")
    s.error([DECK, "--watch", "aws"], "--watch needs --spot")
    s.error([DECK, "--fallback-partition", "od"], "--fallback-partition needs --spot")
    s.error([DECK, "--spot", "--watch-url", "http://x"], "--watch-url needs --watch")
    s.error([DECK, "--spot", "--watch", "aws", "--watch-url", "ftp://x"], "--watch-url: expected "
            "an http:// or https:// URL")
    s.error([DECK, "--spot", "--watch", "aws", "--watch-interval", "0"], "--watch-interval")
    s.error([DECK, "--partition", "a b"], "--partition: expected letters, digits", "found \"a b\"")
    s.error([DECK, "--partition", "x;rm"], "--partition")
    s.error([DECK, "--job-name", "a$(b)"], "--job-name")
    s.error([DECK, "--account", "a\nb"], "--account")
    s.error([DECK, "--chain", "0"], "--chain: expected >= 1")
    s.error([DECK, "--launcher", "aprun"], "--launcher")
    s.error([DECK, "--watch", "ibm", "--spot"], "--watch")
    s.error([DECK, "--mpi", "pmix v4"], "--mpi")
    print("errors: 20 bad uses rejected with exit 2, each naming the option, what is expected and "
          "what was found")


def sbatch_calls(s):
    """A stand-in sbatch on PATH records its arguments and the script; --chain wires afterany."""
    fake = os.path.join(s.work, "fake-bin")
    os.makedirs(fake, exist_ok=True)
    record = os.path.join(s.work, "sbatch-calls.txt")
    if os.path.exists(record):
        os.remove(record)
    sbatch = os.path.join(fake, "sbatch")
    with open(sbatch, "w") as f:
        f.write(f"""#!/bin/bash
n=$(($(cat '{record}' 2>/dev/null | grep -c '^call') + 101))
echo "call $*" >> '{record}'
head -1 "${{@: -1}}" >> '{record}'
echo "sbatch: warning: a warning before the id" >&2
echo "$n;stratustest"
""")
    os.chmod(sbatch, os.stat(sbatch).st_mode | stat.S_IXUSR)
    env = dict(s.env, PATH=fake + ":" + s.env["PATH"])
    script_file = os.path.join(s.work, "job.sbatch")
    out, err = s.run([DECK, "--chain", "3", "--time", "30", "--script", script_file], env=env)
    calls = [l for l in open(record).read().splitlines() if l.startswith("call ")]
    check(len(calls) == 3, f"{len(calls)} sbatch calls, expected 3: {calls}")
    check("--dependency" not in calls[0], f"the first job depends on something: {calls[0]}")
    check("--dependency=afterany:101 " in calls[1] and "--dependency=afterany:102 " in calls[2],
          f"the chain is not wired with afterany: {calls}")
    check(all(c.endswith(" " + script_file) for c in calls), f"sbatch was not given the script: {calls}")
    check(open(script_file).read() == out, "the written jobscript differs from the printed one")
    check(os.stat(script_file).st_mode & stat.S_IXUSR, "the written jobscript is not executable")
    for n, dep in ((101, ""), (102, " (after job 101 ends)"), (103, " (after job 102 ends)")):
        check(f"submitted job {n}{dep}" in err, f"no 'submitted job {n}{dep}' in {err}")
    # sbatch failing (here: not there at all) is a runtime failure, exit 1, with its message.
    _, err = s.run([DECK], expect=1, env=dict(s.env, PATH=os.path.join(s.work, "empty")))
    check("sbatch failed" in err and "not found" in err, f"a missing sbatch: {err}")
    print("sbatch: --chain 3 made 3 calls wired with --dependency=afterany on the previous id; "
          "--script wrote the printed jobscript; a failing sbatch gives exit 1 with its message")


def docs_current(s):
    """The `--dry-run` output pasted in docs/cloud.md is what `stratus submit` prints now."""
    text = open(os.path.join(ROOT, "docs", "cloud.md")).read()

    def block_after(marker, fence="```\n"):
        check(marker in text, f"docs/cloud.md no longer shows {marker!r}")
        start = text.index(fence, text.index(marker)) + len(fence)
        return text[start:text.index("```", start)]

    deck = "inputs/md/lj_liquid.toml"
    for args in ("--ntasks-per-node 16 --time 2:00:00",
                 "--nodes 8 --ntasks-per-node 64 --cpus-per-task 2 --partition compute --time 1-00:00:00",
                 "--nodes 2 --gpus-per-node 4 --partition gpu --time 6h"):
        out, _ = s.run([deck] + args.split() + ["--dry-run"], cwd=ROOT)
        lines = "".join(l + "\n" for l in out.splitlines() if l.startswith("#SBATCH "))
        check(block_after(args) == lines, f"docs/cloud.md: the #SBATCH lines of {args!r} differ "
              f"from what stratus submit prints now:\n{lines}")
    args = ("--spot --nodes 2 --ntasks-per-node 48 --time 4:00:00 --partition spot "
            "--fallback-partition ondemand --max-restarts 5 --watch aws --output-dir runs/lj "
            "--stratus-bin stratus --dry-run")
    out, _ = s.run([deck] + args.split(), cwd=ROOT)
    shown = block_after("prints (lines 1-", "```bash\n")
    m = re.search(r"prints \(lines 1-(\d+) of (\d+); lines (\d+)-\2 are", text)
    lines = out.splitlines(keepends=True)
    check(m and int(m.group(1)) == shown.count("\n") and int(m.group(2)) == len(lines)
          and int(m.group(3)) == int(m.group(1)) + 1,
          f"docs/cloud.md: 'lines 1-N of M' does not match ({len(lines)} lines printed now)")
    check(shown == "".join(lines[:shown.count("\n")]),
          "docs/cloud.md: the spot --dry-run output differs from what stratus submit prints now")
    tmpl = open(os.path.join(ROOT, "jobscripts", "stratus.sbatch")).read().splitlines(keepends=True)
    check(lines[int(m.group(3)) - 1:] == tmpl[-(len(lines) - int(m.group(3)) + 1):],
          "the rest of the spot jobscript is not the template's text")
    print("docs: the --dry-run output in docs/cloud.md (three layouts, the spot jobscript) is what "
          "stratus submit prints now")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stratus", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    s = Submit(os.path.abspath(args.stratus), os.path.abspath(args.work))
    try:
        layouts(s)
        quoting(s)
        errors(s)
        sbatch_calls(s)
        docs_current(s)
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
