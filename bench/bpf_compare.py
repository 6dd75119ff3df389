#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The eBPF snapshot source (docs/BPF.md) against the /proc readers, in one run
with N extra idle threads started first, and the one-shot CLI with
`--source auto` against `--source proc` at the machine's own task count and
with the extra threads. Prints a Markdown table of medians and ratios.

Rounds interleave every reader (one bpf snapshot + one minimal walk from
`bpf_bench --samples 1`, one psutil warm walk, one `ps -eLo`, one CLI run of
each source), so that load changes on a shared machine touch all alike. The
BPF load (open + load + attach) is reported apart: it is paid once per
process, not per snapshot.

Run through bench/run_bpf.sh (root: loading BPF needs CAP_BPF + CAP_PERFMON).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snapshot_compare import psutil, psutil_walk, task_count, time_command, loadavg, cpu_model  # noqa: E402


def bpf_samples(bench):
    r = subprocess.run([bench, "--samples", "1"], capture_output=True, text=True)
    if r.returncode == 77:
        sys.exit("skipped: " + r.stderr.strip())
    r.check_returncode()
    out = {}
    for line in r.stdout.splitlines():
        name, tasks, ms = line.split()
        out[name] = (int(tasks), float(ms))
    return out


def cli_rounds(cli, rounds, samples, suffix):
    # The order alternates: the second command of a pair finds the caches the
    # first one warmed, which would favour whichever always ran second.
    for i in range(rounds):
        for src in (("auto", "proc") if i % 2 == 0 else ("proc", "auto")):
            samples.setdefault(f"cli {src} {suffix}", []).append(
                time_command([cli, "ps", "--threads", "--format", "csv", "--source", src]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of bpf_bench")
    ap.add_argument("--holder", required=True, help="path of snapshot_bench (its --hold starts idle threads)")
    ap.add_argument("--cli", required=True, help="path of the proctimes command")
    ap.add_argument("--threads", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()

    samples, tasks = {}, {}
    small_tasks = task_count()
    cli_rounds(args.cli, 2 * args.rounds, samples, "small")

    holder = subprocess.Popen([args.holder, "--hold", str(args.threads)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    ps_argv = ["ps", "-eLo", "pid,tid,lstart,time"]
    try:
        if holder.stdout.readline().split()[:1] != ["ready"]:
            sys.exit("the thread holder did not start")
        big_tasks = task_count()
        load = loadavg()
        if psutil:
            psutil_walk()  # warm, as a monitor that polls
        for _ in range(args.rounds):
            for name, (n, ms) in bpf_samples(args.bench).items():
                samples.setdefault(name, []).append(ms)
                tasks[name] = n
            samples.setdefault("ps -eLo", []).append(time_command(ps_argv))
            if psutil:
                t0 = time.perf_counter()
                psutil_walk()
                samples.setdefault("psutil", []).append((time.perf_counter() - t0) * 1e3)
        cli_rounds(args.cli, 2 * args.rounds, samples, "big")
    finally:
        holder.stdin.close()
        holder.wait()

    med = {k: statistics.median(v) for k, v in samples.items()}
    bpf = med["bpf"]
    print(f"CPU: {cpu_model()}, {os.cpu_count()} CPUs; load average {load}; kernel {os.uname().release}")
    print(f"{args.rounds} rounds; {big_tasks} tasks with {args.threads} extra idle threads "
          f"(bpf snapshot saw {tasks.get('bpf')}, minimal walk {tasks.get('minimal')})\n")
    print("| reader (full-thread walk) | median ms | best ms | ratio to bpf snapshot |")
    print("|---|---:|---:|---:|")
    for name in ("bpf", "minimal", "psutil", "ps -eLo"):
        if name in med:
            print(f"| {name} | {med[name]:.3f} | {min(samples[name]):.3f} | {med[name] / bpf:.1f}x |")
    print(f"\nBPF open + load + attach, once per process: median {med['load']:.1f} ms "
          f"(best {min(samples['load']):.1f} ms)\n")
    print("| one-shot `proctimes ps --threads` | tasks | --source auto ms | --source proc ms | auto / proc |")
    print("|---|---:|---:|---:|---:|")
    for suffix, n in (("small", small_tasks), ("big", big_tasks)):
        a, p = med[f"cli auto {suffix}"], med[f"cli proc {suffix}"]
        print(f"| {suffix} | {n} | {a:.2f} | {p:.2f} | {a / p:.2f} |")


if __name__ == "__main__":
    main()
