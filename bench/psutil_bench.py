#!/usr/bin/python3
"""psutil's cost for the same queries as bench/core_bench.cpp, in ns per call.

Usage: psutil_bench.py PID TID   (a target process and one of its threads)
Prints JSON: {"process_self": ns, "process_other": ns, "thread_other": ns}.
"""
import json
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
    other = psutil.Process(pid)
    out = {
        "process_self": per_call(lambda: me.cpu_times()),
        # A handle query in proctimes gives times and creation together.
        "process_other": per_call(lambda: (other.cpu_times(), other.create_time())),
        # psutil has no single-thread query: threads() reads every task.
        "thread_other": per_call(lambda: [t for t in other.threads() if t.id == tid]),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
