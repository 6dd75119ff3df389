#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""psutil's cost for the same queries as bench/core_bench.cpp, in ns per call.

Usage: psutil_bench.py PID TID   (an idle target process and one of its threads)
Prints JSON: {"process_self": ns, "process_other": ns, "thread_other": ns,
"process_busy": ns, "thread_busy": ns}; the busy ones on a child this script
starts, whose only thread calls sched_yield in a loop (as core_bench's).
"""
import json
import os
import signal
import sys
import timeit

import psutil


def per_call(fn, min_time=0.3):
    n = 10
    while True:
        t = timeit.timeit(fn, number=n)
        if t >= min_time:
            return t / n * 1e9
        n *= 4


def main():
    pid, tid = int(sys.argv[1]), int(sys.argv[2])
    me = psutil.Process()
    out = {"process_self": per_call(lambda: me.cpu_times())}

    def measure(group, pid, tid):
        other = psutil.Process(pid)
        # A handle query in proctimes gives times and creation together.
        out["process_" + group] = per_call(lambda: (other.cpu_times(), other.create_time()))
        # psutil has no single-thread query: threads() reads every task.
        out["thread_" + group] = per_call(lambda: [t for t in other.threads() if t.id == tid])

    measure("other", pid, tid)
    busy = os.fork()
    if busy == 0:
        while True:
            os.sched_yield()
    try:
        measure("busy", busy, busy)
    finally:
        os.kill(busy, signal.SIGKILL)
        os.waitpid(busy, 0)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
