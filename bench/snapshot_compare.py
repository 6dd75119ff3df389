#!/usr/bin/python3
"""Times a full-thread proctimes snapshot against a minimal /proc walk,
`ps -eLo pid,tid,lstart,time` and psutil, on the same system in one run, with
N extra idle threads started first, and prints a ratio table (Markdown).

Run through bench/run_snapshot.sh, which builds what it needs. Needs the Debian
python3-psutil package (this script runs under /usr/bin/python3 for it).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
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
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
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


def time_psutil():
    t0 = time.perf_counter()
    rows = psutil_walk()
    return (time.perf_counter() - t0) * 1e3, rows


def run_benchmarks(bench, min_time):
    """One pass over every benchmark: {name: (ms, tasks)}."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [bench, f"--benchmark_min_time={min_time}", f"--benchmark_out={out.name}",
             "--benchmark_out_format=json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        data = json.load(open(out.name))
    results = {}
    for b in data["benchmarks"]:
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        results[b["name"]] = (b["real_time"] * scale, int(b.get("tasks", 0)), int(b.get("workers", 0)))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of snapshot_bench")
    ap.add_argument("--cli", help="path of the proctimes command (optional)")
    ap.add_argument("--threads", type=int, default=2000, help="extra idle threads to start")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds; each runs every benchmark once, ps and the command 3 times, psutil twice")
    ap.add_argument("--min-time", default="0.1", help="Google Benchmark min time per benchmark and round (s)")
    args = ap.parse_args()

    holder = subprocess.Popen([args.bench, "--hold", str(args.threads)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    gb, ps_ms, cli_ms, psu_ms = {}, [], [], []
    ps_rows = psu_rows = 0
    ps_argv = ["ps", "-eLo", "pid,tid,lstart,time"]
    try:
        ready = holder.stdout.readline().split()
        if not ready or ready[0] != "ready":
            sys.exit("the thread holder did not start")
        load_before = loadavg()
        tasks = task_count()
        ps_rows = len(subprocess.run(ps_argv, capture_output=True, text=True).stdout.splitlines()) - 1
        if psutil:
            psutil_walk()  # warm: a monitor that calls it repeatedly has psutil's caches filled
        # Rounds interleave the tools, so that a change of load on a shared
        # machine affects all of them alike; medians over all samples.
        for _ in range(args.rounds):
            for name, value in run_benchmarks(args.bench, args.min_time).items():
                gb.setdefault(name, []).append(value)
            for _ in range(3):
                ps_ms.append(time_command(ps_argv))
                if args.cli:
                    cli_ms.append(time_command([args.cli, "ps", "--threads", "--format", "csv"]))
            if psutil:
                for _ in range(2):
                    ms, psu_rows = time_psutil()
                    psu_ms.append(ms)
        load_after = loadavg()
    finally:
        holder.stdin.close()
        holder.wait()

    med = statistics.median
    ps_ms = med(ps_ms)
    cli = med(cli_ms) if cli_ms else None
    ps_util = (med(psu_ms), psu_rows) if psu_ms else None

    def gbt(name):
        samples = gb[name + "/real_time"]
        return med([x[0] for x in samples]), samples[-1][1]

    def chosen(name):
        counts = [x[2] for x in gb[name + "/real_time"]]
        return "/".join(str(counts.count(w)) + "×" + str(w) for w in sorted(set(counts)))

    base_ms, base_tasks = gbt("BM_Snapshot/threads:1/cpu:1/workers:0")
    one_ms, _ = gbt("BM_Snapshot/threads:1/cpu:1/workers:1")
    minimal_ms, minimal_tasks = gbt("BM_MinimalWalk/threads:1")

    print(f"Machine: {os.cpu_count()} CPUs ({cpu_model()}), Linux {platform.release()}, "
          f"{tasks} tasks ({args.threads} extra idle threads), load average {load_before} before, "
          f"{load_after} after. Medians of {args.rounds} interleaved rounds.\n")
    print("| walk (every process and thread) | time | tasks | per task | vs proctimes snapshot |")
    print("|---|---:|---:|---:|---:|")

    def row(label, ms, n, note=""):
        per = f"{ms * 1e3 / n:.1f} µs" if n else "—"
        print(f"| {label} | {ms:.2f} ms | {n or '—'} | {per} | {ms / base_ms:.2f}×{note} |")

    row("proctimes snapshot, threads, defaults (library, workers auto: rounds×walkers "
        f"{chosen('BM_Snapshot/threads:1/cpu:1/workers:0')})", base_ms, base_tasks)
    row("proctimes snapshot, threads, one worker (library)", one_ms, base_tasks)
    row("minimal C walk: open+read+close each stat, no parsing (one thread)", minimal_ms, minimal_tasks)
    for label, key in [("proctimes snapshot, threads, `ticks`, one worker", "BM_Snapshot/threads:1/cpu:0/workers:1"),
                       ("proctimes snapshot, threads, `precise` (schedstat), one worker",
                        "BM_Snapshot/threads:1/cpu:2/workers:1"),
                       ("proctimes snapshot, threads, `precise`, two workers", "BM_Snapshot/threads:1/cpu:2/workers:2"),
                       ("proctimes snapshotter (reused), threads, workers auto", "BM_SnapshotterReuse/threads:1/workers:0")]:
        ms, n = gbt(key)
        row(label, ms, n)
    if cli is not None:
        row("`proctimes ps --threads --format csv` (whole command)", cli, base_tasks)
    row("`ps -eLo pid,tid,lstart,time` (whole command)", ps_ms, ps_rows)
    if ps_util:
        row(f"psutil {psutil.__version__}: process_iter + create_time + cpu_times + threads (in-process, warm)", ps_util[0],
            ps_util[1])
    else:
        print("| psutil | not installed (apt-get install python3-psutil) | | | |")

    print("\nProcesses only:\n")
    print("| walk (every process) | time | tasks | per task | vs proctimes snapshot |")
    print("|---|---:|---:|---:|---:|")
    base_ms, base_tasks = gbt("BM_Snapshot/threads:0/cpu:1/workers:1")
    for label, key in [("proctimes snapshot, defaults, one worker", "BM_Snapshot/threads:0/cpu:1/workers:1"),
                       ("proctimes snapshot, `ticks`, one worker", "BM_Snapshot/threads:0/cpu:0/workers:1"),
                       ("proctimes snapshot, defaults, workers auto", "BM_Snapshot/threads:0/cpu:1/workers:0"),
                       ("minimal C walk", "BM_MinimalWalk/threads:0")]:
        ms, n = gbt(key)
        row(label, ms, n)


if __name__ == "__main__":
    main()
