#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Coverage of the CPU ledger of `proctimes ps --interval` (docs/CLI.md, "The
ledger") under short-lived processes: a shell loop that keeps starting
`sh -c` jobs of about 5 ms of CPU each, for 5 s, beside
`proctimes ps --interval 5 --count 2 --format json --ledger` (the second
frame is measured; the first absorbs the command's start), run as root and
as an unprivileged user (setpriv to nobody). Prints, for each:

  coverage   = attributed / busy (attributed = every named term of the ledger)
  leftover   = what /proc/stat, read by this script as each of the two
               ledgers arrives (the second frame's interval), leaves
               over after the ledger's attributed terms (% of capacity),
               against the ledger's own unattributed term

Targets (issue 14, 2-core VM, one run): coverage >= 99 % as root (exit
records), >= 95 % unprivileged (reaped children), and |leftover -
unattributed| <= 1 % of capacity. The exit status is 0 when every target
held, 1 otherwise, 77 when not run as root (both runs need it: the
unprivileged one is started by setpriv).

  bench/ledger_coverage.py [--proctimes build/bin/proctimes] [--seconds 5]
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def job_script(n):
    return f"i=0; while [ $i -lt {n} ]; do i=$((i+1)); done"


def calibrate(target_ms=5.0):
    """The loop count of a `sh -c` job that uses about target_ms of CPU."""
    n = 2000
    for _ in range(6):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(20):
            subprocess.run(["sh", "-c", job_script(n)], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        ms = ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) * 1000 / 20
        if ms <= 0:
            n *= 4
            continue
        n = max(100, int(n * target_ms / ms))
        if abs(ms - target_ms) / target_ms < 0.2:
            break
    return n


def stat_cpu():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (10 - len(v))
    busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]  # user nice system irq softirq steal
    return busy, time.clock_gettime(time.CLOCK_BOOTTIME)


def run_once(proctimes, seconds, n, unprivileged, source):
    load = subprocess.Popen(["sh", "-c", f"while :; do sh -c '{job_script(n)}'; done"], start_new_session=True)
    try:
        time.sleep(0.5)
        # Two frames: the first absorbs the command's own start (eBPF load,
        # first walk); the second is compared with /proc/stat read by this
        # script as each frame's ledger arrives, so both cover the same
        # interval to within the output's latency.
        cmd = [proctimes, "ps", "--interval", str(seconds), "--count", "2", "--format", "json", "--ledger",
               "--source", source]
        if unprivileged:
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + cmd
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/")
        out, marks, in_ledger = [], [], False
        for line in p.stdout:
            out.append(line)
            if line.strip() == '"record": "ledger",':
                in_ledger = True
            elif in_ledger and line.rstrip() == "}":
                in_ledger = False
                marks.append(stat_cpu())
        err = p.stderr.read()
        p.wait()
    finally:
        os.killpg(load.pid, signal.SIGTERM)
        load.wait()
    if p.returncode not in (0, 1) or len(marks) != 2:
        sys.exit(f"proctimes failed ({p.returncode}): {err.strip()}")
    (b0, t0), (b1, t1) = marks
    r = subprocess.CompletedProcess(cmd, p.returncode, "".join(out), err)
    chunks = [c for c in r.stdout.split("\n\n") if c.strip()]
    ledger = json.loads(chunks[-1])
    assert ledger.get("record") == "ledger", chunks[-1][:200]
    frame = json.loads(chunks[-2])
    hz = os.sysconf("SC_CLK_TCK")
    cpus = ledger["cpus"]
    busy = ledger["busy_ns"]
    attributed = busy - ledger["unattributed_ns"]
    # What /proc/stat says, over the window between the two ledgers' arrival,
    # is left once the ledger's attributed rate is taken away.
    stat_busy_pct = 100.0 * (b1 - b0) / hz / ((t1 - t0) * cpus)
    attributed_pct = 100.0 * attributed / ledger["capacity_ns"]
    return {
        "who": ("nobody" if unprivileged else "root") + " " + source,
        "busy_cpu_per_s": busy / ledger["stat_interval_ns"],
        "coverage": 100.0 * attributed / busy if busy else 0.0,
        "live": ledger["live_percent"],
        "ended": ledger["ended_percent"],
        "children": ledger["reaped_children_percent"],
        "unattributed": ledger["unattributed_percent"],
        "leftover": stat_busy_pct - attributed_pct,
        "ended_rows": sum(1 for p in frame if p.get("state") == "exited"),
        "source": ledger["ended_source"],
        "lost": ledger["records_lost"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proctimes", default=os.path.join(HERE, "..", "build", "bin", "proctimes"))
    ap.add_argument("--seconds", type=float, default=5.0)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("skipped: run as root (the unprivileged run is started through setpriv)")
        return 77
    proctimes = os.path.abspath(a.proctimes)
    n = calibrate()
    print(f"load: sh -c jobs of a {n}-step shell loop (about 5 ms of CPU each), for {a.seconds:g} s")
    print(f"{'user, snapshot':<14} {'busy CPU/s':>10} {'coverage %':>10} {'live %':>7} {'ended %':>8} {'child %':>8} "
          f"{'unattr %':>9} {'leftover %':>10} {'ended rows':>10}  source")
    ok = True
    # As root the snapshot source `auto` is eBPF where permitted, which does
    # not read children times; `proc` does: both are shown.
    for unprivileged, source in ((False, "auto"), (False, "proc"), (True, "auto")):
        m = run_once(proctimes, a.seconds, n, unprivileged, source)
        target = 95.0 if unprivileged else 99.0
        met = m["coverage"] >= target and abs(m["leftover"] - m["unattributed"]) <= 1.0
        ok = ok and met
        print(f"{m['who']:<14} {m['busy_cpu_per_s']:>10.2f} {m['coverage']:>10.1f} {m['live']:>7.1f} "
              f"{m['ended']:>8.1f} {m['children']:>8.1f} {m['unattributed']:>9.2f} {m['leftover']:>10.2f} "
              f"{m['ended_rows']:>10}  {m['source']}{' (records lost)' if m['lost'] else ''}"
              f"  target coverage >= {target:g} %, |leftover - unattr| <= 1: {'met' if met else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
