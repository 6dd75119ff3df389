#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the snapshot benchmark and compares, on this machine and in one run, a
# full-thread proctimes snapshot with a minimal /proc walk, `ps -eLo
# pid,tid,lstart,time` and psutil, with 2,000 extra idle threads started first.
# Prints a Markdown table of times and ratios (see docs/PERFORMANCE.md).
#
#   bench/run_snapshot.sh [build-dir]        (default: build-bench)
# Environment: PROCTIMES_BENCH_THREADS (default 2000), PROCTIMES_BENCH_ROUNDS (21).
# Needs: libbenchmark-dev, procps, python3-psutil (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROCTIMES_BUILD_BENCH=ON -DPROCTIMES_BUILD_TESTS=OFF >/dev/null
targets=(snapshot_bench)
cli_args=()
if grep -q '^PROCTIMES_BUILD_TOOLS:BOOL=ON' "$build/CMakeCache.txt" && [ -f tools/proctimes/ps/ps.cpp ]; then
  targets+=(proctimes_tool)
  cli_args=(--cli "$build/bin/proctimes")
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >/dev/null

exec /usr/bin/python3 bench/snapshot_compare.py --bench "$build/bin/snapshot_bench" "${cli_args[@]}" \
  --threads "${PROCTIMES_BENCH_THREADS:-2000}" --rounds "${PROCTIMES_BENCH_ROUNDS:-21}"
