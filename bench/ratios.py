#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns core_bench's JSON and psutil_bench.py's JSON into the ratio table.

Usage: ratios.py CORE_JSON PSUTIL_JSON
Each row: a query, its cost in ns, and the ratio to the baseline of its group
measured in the same run (and, for proctimes rows, how many times faster than
psutil). Targets: own process <= 1.3x baseline; own thread <= 1.3x its two
sources (thread CPU clock + getrusage); handle queries <= 1.3x baseline and
>= 8x faster than psutil.
"""
import json
import sys

BASELINES = {
    "thread_self": "baseline_thread_clock",
    "process_self": "baseline_getrusage",
    "process_other": "baseline_pread_clock",
    "thread_other": "baseline_pread",
    "process_busy": "baseline_pread_clock",
    "thread_busy": "baseline_pread",
}
TARGET = 1.3
# The calling thread needs two syscalls: its CPU clock for a current total
# (the baseline) and getrusage for the split. Its target is 1.3x their sum.
SECOND_SOURCE = {"thread_self": "getrusage"}


def main():
    core = json.load(open(sys.argv[1]))
    psutil_ns = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
    rows = {}
    # With --benchmark_repetitions the medians are used; otherwise the runs.
    medians = any(b.get("aggregate_name") == "median" for b in core["benchmarks"])
    for b in core["benchmarks"]:
        if medians:
            if b.get("aggregate_name") != "median":
                continue
        elif b.get("run_type", "iteration") != "iteration":
            continue
        parts = b.get("run_name", b["name"]).split("/")
        group_what = parts[0]
        n = parts[1] if len(parts) > 1 else "-"
        group = next(g for g in BASELINES if group_what.startswith(g + "_"))
        what = group_what[len(group) + 1:]
        rows[(group, n, what)] = b["cpu_time"] if b["time_unit"] == "ns" else b["cpu_time"] * 1000
    print("| query | target threads | ns/call | × baseline | × faster than psutil | target met |")
    print("|---|---|---|---|---|---|")
    failed = 0
    for (group, n, what), ns in sorted(rows.items(), key=lambda kv: (list(BASELINES).index(kv[0][0]), kv[0][1].zfill(5), kv[0][2])):
        base = rows.get((group, n, BASELINES[group]))
        ratio = ns / base if base else float("nan")
        ps = psutil_ns.get(group) if n in ("1", "-") else None
        faster = f"{ps / ns:.1f}" if ps and what.startswith("proctimes") else ""
        met = ""
        if what in ("proctimes", "win32_GetThreadTimes", "win32_GetProcessTimes"):
            second = rows.get((group, n, SECOND_SOURCE[group])) if group in SECOND_SOURCE else 0
            ok = base is not None and ns <= TARGET * (base + (second or 0))
            if faster:
                ok = ok and ps / ns >= 8
            met = "yes" if ok else "**no**"
            failed += 0 if ok else 1
        print(f"| {group} {what} | {n} | {ns:.0f} | {ratio:.2f} | {faster} | {met} |")
    for g, v in psutil_ns.items():
        print(f"| {g} psutil | 1 | {v:.0f} | {v / rows.get((g, '1' if g != 'thread_self' else '-', BASELINES[g]), v):.1f} |  |  |")
    print(f"\n{failed} target(s) missed")


if __name__ == "__main__":
    main()
