#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The proctimes Python binding against psutil, in one run on this machine.

Per query (cost per call: CPU time of the calling thread, and wall time;
medians of interleaved rounds):
  * another process, idle   -- Process(pid).times() vs psutil cpu_times() + create_time()
                               (and the psutil-shaped cpu_times() vs cpu_times())
  * another process, busy   -- the same on a child spinning on sched_yield()
  * a thread of another process -- Thread(tid, pid).times() vs psutil's only way,
                               Process(pid).threads() filtered by id (the target has 2 threads)
Whole system, with N extra idle threads started first in a helper process:
  * proctimes.snapshot(threads=True) vs psutil's warm process_iter() walk with
    create_time(), cpu_times() and threads() per process (what
    bench/snapshot_compare.py times), and a reusing Snapshotter; with
    --snapshot-bench, also the C++ snapshot and the minimal C walk that opens,
    reads and closes each stat file and does nothing else: the floor of any
    complete /proc walk.
Prints Markdown tables with ratios (psutil / proctimes) and whether the 3x
target holds. Run through bench/run.sh, or:
  PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--threads 2000] [--rounds 11]
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

import proctimes
# The same psutil baseline and snapshot_bench reader as the C++ snapshot comparison.
from snapshot_compare import cpu_model, library_samples, psutil_walk

try:
    import psutil
except ImportError:
    sys.exit("psutil is not installed (apt-get install python3-psutil)")

TARGET = 3.0

HELPER = r"""
import sys, threading
threading.stack_size(64 * 1024)
ev = threading.Event()
ts = [threading.Thread(target=ev.wait, daemon=True) for _ in range(int(sys.argv[1]))]
for t in ts: t.start()
print("ready", flush=True)
sys.stdin.read()
"""

SPINNER = "import os\nwhile True: os.sched_yield()\n"


def start_helper(threads):
    p = subprocess.Popen([sys.executable, "-c", HELPER, str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    if p.stdout.readline().strip() != "ready":
        sys.exit("the helper did not start")
    return p


def per_call_ns(fn, min_time):
    """Cost of one call in ns, (CPU time of this thread, wall time): calls
    repeated until they take min_time. CPU time counts what the call itself
    costs (user and kernel, syscalls included) and not the time this thread
    spent preempted by other work on a shared machine; wall time counts both."""
    n = 16
    while True:
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for _ in range(n):
            fn()
        dt, dc = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
        if dt >= min_time * 1e9:
            return dc / n, dt / n
        n *= 4


def one_walk_ms(fn):
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e6


WALK_MS = []  # the library's own walk time (Snapshot.walk_duration_ns) of each timed snapshot


def proctimes_walk():
    snap = proctimes.snapshot(threads=True)
    WALK_MS.append(snap.walk_duration_ns / 1e6)
    return sum(len(p.threads) for p in snap)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def queries(rounds, min_time):
    idle = start_helper(1)  # main thread + 1: a thread of another process
    busy = subprocess.Popen([sys.executable, "-c", SPINNER])
    try:
        time.sleep(0.2)
        tid = max(proctimes.Process(idle.pid).thread_ids())
        ours = {
            "idle": proctimes.Process(idle.pid), "busy": proctimes.Process(busy.pid),
            "thread": proctimes.Thread(tid, pid=idle.pid),
        }
        theirs = {"idle": psutil.Process(idle.pid), "busy": psutil.Process(busy.pid)}
        for p in theirs.values():
            p.create_time()  # psutil caches it: measured warm, as a monitor would use it
        cases = [
            ("another process, idle: `times()` vs `cpu_times()` + `create_time()`",
             ours["idle"].times, lambda: (theirs["idle"].cpu_times(), theirs["idle"].create_time())),
            ("another process, idle: `cpu_times()` vs `cpu_times()`",
             ours["idle"].cpu_times, theirs["idle"].cpu_times),
            ("another process, busy: `times()` vs `cpu_times()` + `create_time()`",
             ours["busy"].times, lambda: (theirs["busy"].cpu_times(), theirs["busy"].create_time())),
            ("another process, busy: `cpu_times()` vs `cpu_times()`",
             ours["busy"].cpu_times, theirs["busy"].cpu_times),
            ("a thread of another process: `Thread.times()` vs `threads()` filtered by id",
             ours["thread"].times, lambda: [t for t in theirs["idle"].threads() if t.id == tid]),
        ]
        samples = {label: ([], []) for label, _, _ in cases}
        for _ in range(rounds):
            for label, a, b in cases:
                samples[label][0].append(per_call_ns(a, min_time))
                samples[label][1].append(per_call_ns(b, min_time))
    finally:
        busy.kill()
        busy.wait()
        idle.stdin.close()
        idle.wait()
    print("| query | proctimes, CPU | psutil, CPU | psutil ÷ proctimes, CPU | ≥ 3× | wall: proctimes, psutil, ratio |")
    print("|---|---:|---:|---:|:---:|---:|")
    ok = True
    for label, _, _ in cases:
        ours, theirs = samples[label]
        a, b = statistics.median(c for c, _ in ours), statistics.median(c for c, _ in theirs)
        wa, wb = statistics.median(w for _, w in ours), statistics.median(w for _, w in theirs)
        ok &= b / a >= TARGET
        print(f"| {label} | {a / 1000:.2f} µs | {b / 1000:.2f} µs | {b / a:.1f}× | {'yes' if b / a >= TARGET else 'NO'} "
              f"| {wa / 1000:.2f} µs, {wb / 1000:.2f} µs, {wb / wa:.1f}× |")
    print()
    return ok


def cpp_walks(bench):
    """One walk of each C++ configuration of snapshot_bench: {name: (ms, tasks)}."""
    return {name: (ms, tasks) for name, (ms, tasks, _walkers, _reused) in library_samples(bench).items()}


def snapshots(threads, rounds, bench):
    holder = start_helper(threads)
    try:
        snapper = proctimes.Snapshotter(threads=True, reuse_idle_threads_for=10.0)
        tasks = {"proctimes": proctimes_walk(), "psutil": psutil_walk(), "snapshotter": 0}  # also warms psutil
        snapper.take()
        WALK_MS.clear()
        samples = {"proctimes": [], "psutil": [], "snapshotter": []}
        reused = []
        for _ in range(rounds):
            samples["proctimes"].append(one_walk_ms(proctimes_walk))
            samples["psutil"].append(one_walk_ms(psutil_walk))
            t0 = time.perf_counter_ns()
            snap = snapper.take()
            samples["snapshotter"].append((time.perf_counter_ns() - t0) / 1e6)
            tasks["snapshotter"] = sum(len(p.threads) for p in snap)
            reused.append(snap.reused_threads / max(tasks["snapshotter"], 1))
            if bench:
                walks = cpp_walks(bench)
                for key, name in (("minimal", "minimal/threads"), ("cpp", "snapshot/threads/defaults/1")):
                    samples.setdefault(key, []).append(walks[name][0])
                    tasks[key] = walks[name][1]
    finally:
        holder.stdin.close()
        holder.wait()
    med = {k: statistics.median(v) for k, v in samples.items()}
    print("| every process and thread | tasks | median | best | psutil ÷ this | ≥ 3× |")
    print("|---|---:|---:|---:|---:|:---:|")
    rows = [
        ("`proctimes.snapshot(threads=True)` (Python list of named tuples)", "proctimes"),
        (f"`proctimes.Snapshotter(reuse_idle_threads_for=10).take()` (copied "
         f"{100 * statistics.median(reused):.0f} % of the thread entries)", "snapshotter"),
        (f"psutil {psutil.__version__}: warm `process_iter()` + `create_time()` + `cpu_times()` + `threads()`",
         "psutil"),
        ("C++ `take_snapshot`, default options, 1 walker (snapshot_bench)", "cpp"),
        ("the floor: minimal C walk, open + read + close each `stat`, nothing else (snapshot_bench)", "minimal"),
    ]
    ok = True
    for label, key in rows:
        if key not in med:
            continue
        r = med["psutil"] / med[key]
        if key in ("proctimes", "snapshotter"):
            ok &= r >= TARGET
        mark = ("yes" if r >= TARGET else "NO") if key in ("proctimes", "snapshotter") else "—"
        print(f"| {label} | {tasks[key]} | {med[key]:.1f} ms | {min(samples[key]):.1f} ms | {r:.1f}× | {mark} |")
    print()
    walk = statistics.median(WALK_MS)
    print(f"Of the one-shot snapshot's {med['proctimes']:.1f} ms, the library's walk of /proc took {walk:.1f} ms "
          f"(Snapshot.walk_duration_ns) and building the Python objects the rest, "
          f"{1000 * (med['proctimes'] - walk) / tasks['proctimes']:.2f} µs per task.\n")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2000, help="extra idle threads for the snapshot case")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per per-query sample")
    ap.add_argument("--snapshot-bench", help="path of snapshot_bench: adds the C++ walk and the minimal walk")
    args = ap.parse_args()
    print(f"Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}, Python "
          f"{platform.python_version()} ({sys.executable}), psutil {psutil.__version__}; load average "
          f"{loadavg()} at the start. {args.rounds} interleaved rounds, medians.\n")
    ok = queries(args.rounds, args.min_time)
    ok &= snapshots(args.threads, args.rounds, args.snapshot_bench)
    print(f"Load average at the end: {loadavg()}. Targets (≥ {TARGET:.0f}× faster than psutil): "
          f"{'all met' if ok else 'NOT all met'}.")


if __name__ == "__main__":
    main()
