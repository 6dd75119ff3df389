#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Times a 200-file C build (`make -j2`) plain and under `proctimes run --tree
--format json`, as root (the default source, bpf, and ptrace) and as user
nobody (ptrace), and prints a Markdown table of
median wall times and the ratio (goal: <= 1.05x).

Each sample is one whole build from clean (`make clean` first, not timed),
its output discarded; wall time from this process's monotonic clock. Plain and
recorded builds alternate, the order swapping every round, so that a change of
load on a shared machine touches both alike. The report of `run --tree` is
written to a file and checked to be JSON with the build's processes in it, so
a recorder that saw nothing cannot pass for a fast one.

Run through bench/run_tree_overhead.sh, which builds what it needs.
"""
import argparse
import json
import os
import platform
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "tests", "fixtures", "make_c_project.py")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def as_user(user, argv):
    if user is None:
        return argv
    return ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups"] + argv


def timed(argv):
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=null, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed with status {p.returncode}: {p.stderr.decode(errors='replace')}")
    return wall


def measure(cli, project, user, rounds, source=None):
    report = os.path.join(project, f"tree-{user or 'self'}.json")  # each user writes its own
    make = ["make", "-j2", "-C", project]
    plain = as_user(user, make)
    chosen = ["--tree-source", source] if source else []
    tree = as_user(user, [cli, "run", "--tree", *chosen, "--format", "json", "-o", report, "--"] + make)
    clean = as_user(user, ["make", "-C", project, "clean"])
    walls = {"plain": [], "tree": []}
    seen = 0
    source = "?"
    for i in range(rounds + 1):  # round 0: warm-up (page cache, compiler's files), not counted
        order = ["plain", "tree"] if i % 2 else ["tree", "plain"]
        for k in order:
            subprocess.run(clean, stdout=subprocess.DEVNULL, check=True)
            w = timed(plain if k == "plain" else tree)
            if i > 0:
                walls[k].append(w)
            if k == "tree":
                with open(report) as f:
                    doc = json.load(f)
                seen, source = len(doc["processes"]), doc["source"]
    return walls, seen, source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True, help="path of the proctimes command")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--files", type=int, default=200)
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)

    # (user, source): the default source (bpf as root, ptrace otherwise), and
    # as root ptrace too, so that every recorder is measured in the same run.
    users = [(None, None)]
    if os.geteuid() == 0:
        users.append((None, "ptrace"))
        if shutil.which("setpriv"):
            try:
                pwd.getpwnam("nobody")
                users.append(("nobody", None))
            except KeyError:
                pass
    project = tempfile.mkdtemp(prefix="proctimes-tree-bench-")
    try:
        subprocess.run([sys.executable, GENERATOR, project, str(args.files)], check=True)
        os.chmod(project, 0o777)
        for name in os.listdir(project):
            os.chmod(os.path.join(project, name), 0o666)
        load_before = loadavg()
        rows = []
        for user, chosen in users:
            walls, seen, source = measure(cli, project, user, args.rounds, chosen)
            rows.append((user or pwd.getpwuid(os.geteuid()).pw_name, walls, seen, source))
        load_after = loadavg()
    finally:
        shutil.rmtree(project, ignore_errors=True)

    print(f"Machine: {os.cpu_count()} CPUs, Linux {platform.release()}, load {load_before} -> {load_after}")
    print(f"`make -j2` of {args.files} C files from clean; median of {args.rounds} alternating rounds each")
    print()
    print("| user | tree source | processes | plain s | run --tree s | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    met = True
    for user, walls, seen, source in rows:
        p, t = statistics.median(walls["plain"]), statistics.median(walls["tree"])
        met = met and t <= 1.05 * p
        print(f"| {user} | {source} | {seen} | {p:.2f} | {t:.2f} | {t / p:.3f} |")
    print()
    print(f"goal <= 1.05x: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
