#!/usr/bin/python3
"""stratus-preempt-watch against a loopback server that plays each cloud's metadata service:
no notice, then a notice (AWS IMDSv2 spot/instance-action, GCP preempted, Azure Scheduled
Events Preempt); the signal reaching a target process; --until-gone; bad usage. No Slurm.

  check_preempt_watch.py --watcher PATH
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from played_http import Played, serve  # noqa: E402
from stratus_checks import Failure, check  # noqa: E402

TOKEN = "tkn"
# A stand-in for a Stratus rank: installs its SIGUSR1 handler after 1.5 s of "start-up", exits
# 75 when the signal comes.
TARGET = ("import signal, sys, time\ntime.sleep(1.5)\n"
          "signal.signal(signal.SIGUSR1, lambda *a: sys.exit(75))\ntime.sleep(30)\nsys.exit(3)\n")


class Metadata(Played):
    """Answers like the three metadata services, with or without a notice (`notice`)."""
    notice = False
    requests = []

    def do_PUT(self):
        Metadata.requests.append(("PUT", self.path))
        ok = self.path == "/latest/api/token" and "X-aws-ec2-metadata-token-ttl-seconds" in self.headers
        self.answer(200 if ok else 400, TOKEN if ok else "")

    def do_GET(self):
        Metadata.requests.append(("GET", self.path))
        if self.path == "/latest/meta-data/spot/instance-action":
            if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                return self.answer(401, "")
            if not self.notice:
                return self.answer(404, "")
            return self.answer(200, json.dumps({"action": "terminate", "time": "2026-12-03T08:00:00Z"}))
        if self.path == "/computeMetadata/v1/instance/preempted":
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.answer(403, "")
            return self.answer(200, "TRUE" if self.notice else "FALSE")
        if self.path.startswith("/metadata/scheduledevents"):
            if self.headers.get("Metadata") != "true":
                return self.answer(400, "")
            events = [{"EventId": "e1", "EventType": "Freeze", "NotBefore": ""}]
            if self.notice:
                events.append({"EventId": "e2", "EventType": "Preempt",
                               "NotBefore": "Thu, 03 Dec 2026 08:00:00 GMT"})
            return self.answer(200, json.dumps({"DocumentIncarnation": 1, "Events": events}))
        self.answer(404, "")



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--watcher", required=True)
    args = ap.parse_args()
    server, base = serve(Metadata)
    urls = {"aws": base,
            "gcp": base + "/computeMetadata/v1/instance/preempted",
            "azure": base + "/metadata/scheduledevents?api-version=2020-07-01"}
    expected = {"aws": "AWS spot instance-action terminate at 2026-12-03T08:00:00Z",
                "gcp": "GCP instance preempted",
                "azure": "Azure scheduled event Preempt (e2"}

    def watch(*extra, timeout=30):
        return subprocess.run([sys.executable, args.watcher] + list(extra), capture_output=True,
                              text=True, timeout=timeout)
    try:
        for cloud, url in urls.items():
            Metadata.notice = False
            p = watch("--cloud", cloud, "--url", url, "--once")
            check(p.returncode == 1 and "no notice" in p.stdout, f"{cloud} without a notice: "
                  f"exit {p.returncode}, {p.stdout!r} {p.stderr!r}")
            Metadata.notice = True
            p = watch("--cloud", cloud, "--url", url, "--once")
            check(p.returncode == 0 and expected[cloud] in p.stdout, f"{cloud} with a notice: "
                  f"exit {p.returncode}, {p.stdout!r} {p.stderr!r}")
        check(("PUT", "/latest/api/token") in Metadata.requests, "AWS: no IMDSv2 token request")
        print("once: aws (IMDSv2 token, then instance-action with it), gcp (Metadata-Flavor: "
              "Google), azure (Metadata: true, Preempt among other events): no notice -> 1, "
              "notice -> 0 with what it says")

        # The loop: the target gets SIGUSR1 once the notice is there and it has a handler for
        # it (it installs one 1.5 s after it starts, exits 75 on the signal, like Stratus).
        Metadata.notice = False
        target = subprocess.Popen([sys.executable, "-c", TARGET])
        w = subprocess.Popen([sys.executable, args.watcher, "--cloud", "aws", "--url", base,
                              "--interval", "0.1", "--pid", str(target.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(0.3)
        check(target.poll() is None, "the target was signalled without a notice")
        armed = time.time()
        Metadata.notice = True  # before the target has its handler: the watcher must wait
        rc = target.wait(timeout=10)
        delay = time.time() - armed
        out = w.communicate(timeout=10)[0]
        check(rc == 75, f"the target ended with {rc}, not 75 from its SIGUSR1 handler "
              f"(-10: killed by a signal it had no handler for yet)")
        check(w.returncode == 0 and "SIGUSR1 sent to 1 process(es)" in out, f"watcher: {out}")
        check(1.0 < delay < 3.0, f"SIGUSR1 {delay:.2f} s after the notice (handler after 1.5 s)")
        # And at once when the handler is already there.
        target = subprocess.Popen([sys.executable, "-c", TARGET.replace("1.5", "0")])
        time.sleep(0.5)
        armed = time.time()
        p = watch("--cloud", "aws", "--url", base, "--interval", "0.1", "--pid", str(target.pid))
        rc = target.wait(timeout=10)
        fast = time.time() - armed
        check(rc == 75 and fast < 1.5, f"ready target: exit {rc} after {fast:.2f} s")
        print(f"loop: a notice while the target is starting waits for its handler (signal "
              f"{delay:.2f} s after the notice, handler at 1.5 s; exit 75); a ready target is "
              f"signalled {fast:.2f} s after the notice (watcher start and one poll included)")

        # --until-gone: no notice, the target exits, the watcher follows.
        Metadata.notice = False
        target = subprocess.Popen(["sleep", "1"])
        p = watch("--cloud", "gcp", "--url", urls["gcp"], "--interval", "0.1", "--pid",
                  str(target.pid), "--until-gone")
        target.wait()
        check(p.returncode == 0 and "the ranks have exited" in p.stdout, f"--until-gone: {p.stdout}")

        # An unreachable service is reported once and polling goes on; bad usage is exit 2.
        w = subprocess.Popen([sys.executable, args.watcher, "--cloud", "azure", "--url",
                              "http://127.0.0.1:9/none", "--interval", "0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1.0)
        w.send_signal(signal.SIGTERM)
        out = w.communicate(timeout=10)[0]
        check(w.returncode == 0 and out.count("unreachable") == 1, f"unreachable: {out!r}")
        for bad, needle in ((["--cloud", "ibm"], "--cloud"), (["--cloud", "aws", "--interval", "0"],
                            "--interval"), (["--cloud", "aws", "--signal", "BOGUS"], "--signal")):
            p = watch(*bad)
            check(p.returncode == 2 and needle in p.stderr, f"{bad}: exit {p.returncode} {p.stderr!r}")
        print("until-gone, unreachable service (reported once, polling goes on, SIGTERM ends it), "
              "bad usage (exit 2): as documented")
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
