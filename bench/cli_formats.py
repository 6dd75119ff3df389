#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Times `proctimes ps --threads` in its three output formats against
`ps -eLo pid,tid,lstart,time`, on the same system in one run, with N extra
idle threads started first, and prints a Markdown table of medians and ratios.

Each sample is one run of a whole command, its output sent to /dev/null; wall
time from the parent's monotonic clock, CPU time (user + system) from the
child's rusage (wait4). The commands are interleaved round by round, in an
order that rotates every round, so that a change of load on a shared machine
touches them alike. The goal checked (docs/PERFORMANCE.md): JSON costs no more
than 1.1x CSV.

Run through bench/cli_formats.sh, which builds what it needs.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

from snapshot_compare import cpu_model


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_once(argv):
    """(wall ms, CPU ms) of one run of argv, output discarded."""
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, ru = os.wait4(p.pid, 0)
        wall = (time.perf_counter() - t0) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):  # 1: some task vanished while it was read
        sys.exit(f"{argv[0]} failed with status {p.returncode}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True, help="path of the proctimes command")
    ap.add_argument("--holder", required=True, help="path of snapshot_bench (its --hold N starts idle threads)")
    ap.add_argument("--threads", type=int, default=2000, help="extra idle threads to start")
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()

    commands = {
        "json": [args.cli, "ps", "--threads", "--format", "json"],
        "csv": [args.cli, "ps", "--threads", "--format", "csv"],
        "table": [args.cli, "ps", "--threads", "--format", "table"],
        "ps": ["ps", "-eLo", "pid,tid,lstart,time"],
    }
    holder = subprocess.Popen([args.holder, "--hold", str(args.threads)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    wall = {k: [] for k in commands}
    cpu = {k: [] for k in commands}
    try:
        ready = holder.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("the thread holder did not start")
        load_before = loadavg()
        rows = len(subprocess.run(commands["csv"], capture_output=True, text=True).stdout.splitlines()) - 1
        names = list(commands)
        for _ in range(2):  # warm-up: page cache, dentries
            for k in names:
                run_once(commands[k])
        for i in range(args.rounds):
            for k in names[i % len(names):] + names[:i % len(names)]:
                w, c = run_once(commands[k])
                wall[k].append(w)
                cpu[k].append(c)
        load_after = loadavg()
    finally:
        holder.stdin.close()
        holder.wait()

    mw = {k: statistics.median(v) for k, v in wall.items()}
    mc = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}, "
          f"load {load_before} -> {load_after}")
    print(f"`proctimes ps --threads`: {rows} rows (processes + threads, {args.threads} extra idle threads); "
          f"median of {args.rounds} interleaved runs each")
    print()
    print("| command | wall ms | CPU ms | wall / csv | CPU / csv | ps -eLo wall / this |")
    print("|---|---:|---:|---:|---:|---:|")
    labels = {"json": "`proctimes ps --threads --format json`", "csv": "`proctimes ps --threads --format csv`",
              "table": "`proctimes ps --threads --format table`", "ps": "`ps -eLo pid,tid,lstart,time` (baseline)"}
    for k in commands:
        print(f"| {labels[k]} | {mw[k]:.1f} | {mc[k]:.1f} | {mw[k] / mw['csv']:.2f} | {mc[k] / mc['csv']:.2f} "
              f"| {mw['ps'] / mw[k]:.2f} |")
    print()
    ok = mw["json"] <= 1.1 * mw["csv"]
    print(f"JSON / CSV: {mw['json'] / mw['csv']:.2f}x wall, {mc['json'] / mc['csv']:.2f}x CPU "
          f"(goal <= 1.10x wall: {'met' if ok else 'NOT met'})")


if __name__ == "__main__":
    main()
