#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Times a full-thread proctimes snapshot against a minimal /proc walk,
`ps -eLo pid,tid,lstart,time`, `proctimes ps` and psutil, on the same system in
one run, with N extra idle threads started first, and prints a ratio table
(Markdown).

Every sample is ONE walk (or one run of a command). The tools are interleaved
round by round — in each round, one walk of every library configuration
(`snapshot_bench --samples 1`, after a warm-up walk each), one run of each
command and one psutil walk — so that a change of load on a shared machine
touches all of them alike. The table gives the median and the best (minimum)
of the rounds; ratios are against the library's full-thread snapshot with its
default options on one walker.

Run through bench/run_snapshot.sh, which builds what it needs. Needs the Debian
python3-psutil package (this script runs under /usr/bin/python3 for it).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

try:
    import psutil
except ImportError:  # reported in the table
    psutil = None


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def task_count():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def time_command(argv):
    """Wall time of running argv to completion (output discarded), in ms."""
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1e3


def psutil_walk():
    """What `ps -eLo pid,tid,lstart,time` shows, the psutil way: every process
    with its creation time and CPU times, and every thread with its CPU times."""
    rows = 0
    for p in psutil.process_iter():
        try:
            with p.oneshot():
                p.create_time()
                p.cpu_times()
                rows += len(p.threads())
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return rows


def library_samples(bench):
    """One walk of each configuration: {name: (ms, tasks, walkers, reused threads)}."""
    out = subprocess.run([bench, "--samples", "1"], capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        name, tasks, walkers, reused, ms = line.split()[:5]
        res[name] = (float(ms), int(tasks), int(walkers), int(reused))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of snapshot_bench")
    ap.add_argument("--cli", help="path of the proctimes command (optional)")
    ap.add_argument("--threads", type=int, default=2000, help="extra idle threads to start")
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args()

    holder = subprocess.Popen([args.bench, "--hold", str(args.threads)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    samples = {}   # label -> [ms]
    tasks = {}     # label -> task count of the last sample
    walkers = []   # walkers the default configuration chose, per round
    copied = []    # share of the tasks a reusing snapshotter copied, per round
    ps_argv = ["ps", "-eLo", "pid,tid,lstart,time"]
    cli_argv = [args.cli, "ps", "--threads", "--format", "csv"] if args.cli else None
    try:
        ready = holder.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("the thread holder did not start")
        load_before = loadavg()
        system_tasks = task_count()
        tasks["ps"] = len(subprocess.run(ps_argv, capture_output=True, text=True).stdout.splitlines()) - 1
        if cli_argv:
            tasks["cli"] = len(subprocess.run(cli_argv, capture_output=True, text=True).stdout.splitlines()) - 1
        if psutil:
            tasks["psutil"] = psutil_walk()  # also warms psutil's caches, as in a monitor that polls
        for _ in range(args.rounds):
            for name, (ms, n, w, r) in library_samples(args.bench).items():
                samples.setdefault(name, []).append(ms)
                tasks[name] = n
                if name.startswith("snapshotter/"):
                    copied.append(r / n if n else 0)
                if name == "snapshot/threads/defaults":
                    walkers.append(w)
            samples.setdefault("ps", []).append(time_command(ps_argv))
            if cli_argv:
                samples.setdefault("cli", []).append(time_command(cli_argv))
            if psutil:
                t0 = time.perf_counter()
                tasks["psutil"] = psutil_walk()
                samples.setdefault("psutil", []).append((time.perf_counter() - t0) * 1e3)
        load_after = loadavg()
    finally:
        holder.stdin.close()
        holder.wait()

    med = {k: statistics.median(v) for k, v in samples.items()}
    best = {k: min(v) for k, v in samples.items()}
    chosen = ", ".join(f"{walkers.count(w)}× {w}" for w in sorted(set(walkers)))

    print(f"Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}, "
          f"{system_tasks} tasks ({args.threads} extra idle threads); load average {load_before} before, "
          f"{load_after} after. {args.rounds} interleaved rounds; one walk or run per sample.\n")

    def table(title, base, rows):
        print(f"| {title} | tasks | median | best | median ratio | best ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, key in rows:
            if key not in samples:
                continue
            print(f"| {label} | {tasks.get(key, '—')} | {med[key]:.2f} ms | {best[key]:.2f} ms | "
                  f"{med[key] / med[base]:.2f}× | {best[key] / best[base]:.2f}× |")
        print()

    # The base is the default snapshot on ONE walker: a fixed amount of work.
    # (With workers = 0 the library picks one or two walkers by the load of
    # the moment, so that row is shown, not used as the yardstick.)
    table("every process and thread", "snapshot/threads/defaults/1", [
        ("**proctimes snapshot**, default options, 1 walker", "snapshot/threads/defaults/1"),
        ("proctimes snapshot, default options, 2 walkers", "snapshot/threads/defaults/2"),
        (f"proctimes snapshot, default options, walkers chosen by the library ({chosen})",
         "snapshot/threads/defaults"),
        ("minimal C walk (1 thread): open+read+close each stat, nothing else", "minimal/threads"),
        ("proctimes snapshot, `ticks`, 1 walker", "snapshot/threads/ticks/1"),
        ("proctimes snapshot, `precise` (schedstat per thread), 1 walker", "snapshot/threads/precise/1"),
        ("proctimes snapshot, `precise`, 2 walkers", "snapshot/threads/precise/2"),
        (f"proctimes snapshotter, default options, 1 walker, `reuse_idle_threads_for` = 10 s, the take after "
         f"a complete walk (it copied {100 * statistics.median(copied) if copied else 0:.0f} % of the entries: "
         "the threads of processes that had not run)", "snapshotter/threads/reuse/1"),
        ("`proctimes ps --threads --format csv` (whole command)", "cli"),
        ("`ps -eLo pid,tid,lstart,time` (whole command)", "ps"),
        (f"psutil {psutil.__version__ if psutil else ''}: process_iter + create_time + cpu_times + threads "
         "(in-process, warm)", "psutil"),
    ])
    # The targets: how many times faster than ps and psutil, by median.
    for peer, peer_key in (("`ps -eLo`", "ps"), ("psutil", "psutil")):
        for label, key in (("default snapshot (walkers chosen by the library)", "snapshot/threads/defaults"),
                           ("default snapshot, 1 walker", "snapshot/threads/defaults/1"),
                           ("reusing snapshotter, 1 walker", "snapshotter/threads/reuse/1")):
            if peer_key in med and key in med:
                print(f"- {peer} ÷ {label}: {med[peer_key] / med[key]:.2f}×")
    print()
    if not psutil:
        print("psutil: not installed (apt-get install python3-psutil)\n")
    table("every process", "snapshot/processes/defaults/1", [
        ("proctimes snapshot, defaults, 1 walker", "snapshot/processes/defaults/1"),
        ("proctimes snapshot, `ticks`, 1 walker", "snapshot/processes/ticks/1"),
        ("minimal C walk", "minimal/processes"),
    ])
    scaling(args.bench)


def scaling(bench):
    """Cost per task of a thread walk as the task count grows: extra idle
    threads 0, 1,000 and 4,000; 7 walks each, median."""
    print("| extra idle threads | tasks | minimal walk | per task | proctimes snapshot, 1 walker | per task |")
    print("|---:|---:|---:|---:|---:|---:|")
    for extra in (0, 1000, 4000):
        holder = subprocess.Popen([bench, "--hold", str(extra)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        try:
            if holder.stdout.readline().split()[:1] != ["ready"]:
                sys.exit("the thread holder did not start")
            out = subprocess.run([bench, "--samples", "7"], capture_output=True, text=True, check=True).stdout
        finally:
            holder.stdin.close()
            holder.wait()
        got = {}
        for line in out.splitlines():
            f = line.split()
            got[f[0]] = (int(f[1]), statistics.median(float(v) for v in f[4:]))
        (n, walk), (_, snap) = got["minimal/threads"], got["snapshot/threads/defaults/1"]
        print(f"| {extra} | {n} | {walk:.2f} ms | {walk * 1000 / n:.2f} µs | {snap:.2f} ms | {snap * 1000 / n:.2f} µs |")
    print()


if __name__ == "__main__":
    main()
