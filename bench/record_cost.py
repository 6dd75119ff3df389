#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What `proctimes record` costs beside atop writing its raw log, in one run.

Starts enough sleeping tasks to bring the machine to --tasks tasks (threads of
every process; top_test_child processes with sleeping threads), then runs
`proctimes record --interval I` and `atop -w FILE I` side by side for
--seconds, and prints for each:

  - its own CPU (kernel + user, from the rusage wait4 gives at its end), in
    all and per interval after the first (the start loads eBPF programs and
    reads every identity once; atop reads its first sample since boot);
  - the bytes its file grew per interval after the first, and so per day at
    that interval (the store: the pages its data takes, read through SQLite
    while it writes, the WAL's frames included; atop's raw file), beside the
    file's size at the end (the store: database, WAL and shared memory after
    the recorder closed it).

    sudo bench/record_cost.py --cli build/bin/proctimes --child build/bin/top_test_child
    sudo bench/record_cost.py --quick ...      # 1 s intervals for 20 s
    sudo bench/record_cost.py --build 300 ...  # a busy build host: make -j2 of
                                               # 300 generated files, over and over

With --build N, a shell cleans and builds a generated C project of N files
(tests/fixtures/make_c_project.py) with `make -j2` in a loop for the whole
run: thousands of short compiler processes, each a new identity in the
store and an exited process in atop's log.

Root: the recorder's exit stream and atop's process accounting need it.
"""
import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def machine_tasks():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


def cpu_ticks(pid):
    """utime + stime of a live process and its reaped children, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICK


def files_size(paths):
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p))


def store_bytes(path):
    """The pages the store's data takes, as a reader sees it (the WAL's
    frames included, its overwritten and free pages not): its size once the
    WAL is checkpointed, without waiting for it."""
    if not os.path.exists(path):
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            count = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            size = db.execute("PRAGMA page_size").fetchone()[0]
            return (count - free) * size
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def fill_tasks(child, want):
    """Sleeping processes of 5 tasks each (one main thread, four more) until the machine has `want` tasks."""
    procs = []
    missing = want - machine_tasks()
    seconds = "3600"
    while missing > 0:
        threads = min(4, missing - 1)
        procs.append(subprocess.Popen([child, "--name", "ptbenchidle", "--threads", str(threads), "--seconds", seconds]))
        missing -= threads + 1
    time.sleep(1.0)
    return procs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default="build/bin/proctimes")
    ap.add_argument("--child", default="build/bin/top_test_child")
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--interval", type=float, default=10.0)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--quick", action="store_true", help="1 s intervals for 20 s")
    ap.add_argument("--build", type=int, default=0, metavar="N",
                    help="make -j2 of N generated C files in a loop during the run")
    args = ap.parse_args()
    if args.quick:
        args.interval, args.seconds = 1.0, 20.0
    if os.geteuid() != 0:
        print("record_cost.py: run as root (the exit stream, atop's process accounting)", file=sys.stderr)
        return 2
    if shutil.which("atop") is None:
        print("record_cost.py: atop is not installed (Debian: apt-get install atop)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="pt-record-cost-")
    store = os.path.join(work, "record.db")
    store_files = [store, store + "-wal", store + "-shm"]
    raw = os.path.join(work, "atop.raw")
    idle = fill_tasks(args.child, args.tasks)
    build = None
    if args.build:
        if shutil.which("make") is None or shutil.which("cc") is None:
            print("record_cost.py: --build needs make and cc", file=sys.stderr)
            return 2
        project = os.path.join(work, "project")
        generator = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                                 "make_c_project.py")
        subprocess.run([sys.executable, generator, project, str(args.build)], check=True, stdout=subprocess.DEVNULL)
        build = subprocess.Popen(["sh", "-c", f"while :; do make -s -C {project} clean; make -s -j2 -C {project}; done"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    tasks = machine_tasks()
    interval = f"{args.interval:g}"
    rec = atop = None
    try:
        rec = subprocess.Popen([args.cli, "record", "--quiet", "--interval", f"{interval}s", "--store", store],
                               stderr=subprocess.PIPE, text=True)
        atop = subprocess.Popen(["atop", "-w", raw, str(max(1, round(args.interval)))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # The first interval of each: wait for both files to have one, then
        # take the baseline of CPU and size.
        t_start = time.monotonic()
        while True:
            time.sleep(0.05)
            rec_base = store_bytes(store)
            atop_base = files_size([raw])
            if time.monotonic() - t_start > args.interval * 1.5 + 5:
                break
            if time.monotonic() - t_start > args.interval * 1.2 and rec_base > 0 and atop_base > 0:
                break
        t_base = time.monotonic()
        rec_cpu_base, atop_cpu_base = cpu_ticks(rec.pid), cpu_ticks(atop.pid)
        rec_base, atop_base = store_bytes(store), files_size([raw])
        time.sleep(max(args.seconds - (t_base - t_start), args.interval))
        rec_cpu_end, atop_cpu_end = cpu_ticks(rec.pid), cpu_ticks(atop.pid)
        rec_end, atop_end = store_bytes(store), files_size([raw])
        t_end = time.monotonic()
        rec.send_signal(signal.SIGTERM)
        atop.send_signal(signal.SIGTERM)
        _, _, rec_ru = os.wait4(rec.pid, 0)
        _, _, atop_ru = os.wait4(atop.pid, 0)
        rec.returncode = atop.returncode = 0
        rec_final = files_size(store_files)
    finally:
        if build is not None:
            os.killpg(build.pid, signal.SIGKILL)
            build.wait()
        for p in (rec, atop):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        for p in idle:
            p.kill()
        for p in idle:
            p.wait()
    span = t_end - t_base
    per_day = 86400.0 / span
    intervals = span / args.interval
    rows = [
        ("proctimes record", rec_ru.ru_utime + rec_ru.ru_stime, rec_cpu_end - rec_cpu_base, rec_end - rec_base,
         rec_final),
        ("atop -w", atop_ru.ru_utime + atop_ru.ru_stime, atop_cpu_end - atop_cpu_base, atop_end - atop_base, atop_end),
    ]
    if args.build:
        print(f"load: make -j2 of {args.build} generated C files, cleaned and rebuilt in a loop")
    print(f"{tasks} tasks on the machine, {os.cpu_count()} CPUs; interval {interval} s; "
          f"steady state measured over {span:.1f} s ({intervals:.1f} intervals) after the first")
    print(f"{'':18} {'CPU all':>9} {'CPU/intvl':>10} {'% of 1 CPU':>10} {'bytes/intvl':>12} {'MiB/day':>9} "
          f"{'file at end':>12}")
    for name, total, steady, grew, final in rows:
        print(f"{name:18} {total:8.3f}s {steady / intervals * 1000:8.1f}ms {100 * steady / span:9.2f}% "
              f"{grew / intervals:12.0f} {grew * per_day / 2**20:9.1f} {final:12d}")
    print("(CPU per interval from /proc ticks, 10 ms; 'CPU all' includes the start; bytes per day extrapolated "
          "from the steady-state growth)")
    try:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        n_int = db.execute("SELECT count(*) FROM interval").fetchone()[0]
        n_smp = db.execute("SELECT count(*) FROM sample").fetchone()[0]
        n_pro = db.execute("SELECT count(*) FROM process").fetchone()[0]
        db.close()
        print(f"the store: {n_int} intervals, {n_smp} samples ({n_smp / max(n_int, 1):.0f} processes with CPU "
              f"an interval), {n_pro} identities")
    except sqlite3.Error as e:
        print(f"the store could not be read: {e}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
