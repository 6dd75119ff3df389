#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the proctimes command (and snapshot_bench, whose --hold N starts the
# idle threads) and compares, on this machine and in one run, the whole
# command `proctimes ps --threads` in JSON, CSV and table format with
# `ps -eLo pid,tid,lstart,time`, with 2,000 extra idle threads started first.
# Prints a Markdown table of median wall and CPU times and their ratios; the
# goal is JSON <= 1.1x CSV (docs/PERFORMANCE.md).
#
#   bench/cli_formats.sh [build-dir]        (default: build-bench)
# Environment: PROCTIMES_BENCH_THREADS (default 2000), PROCTIMES_BENCH_ROUNDS (21).
# Needs: libbenchmark-dev, procps (Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROCTIMES_BUILD_BENCH=ON -DPROCTIMES_BUILD_TESTS=OFF \
  -DPROCTIMES_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j "$jobs" --target snapshot_bench proctimes_tool >/dev/null

exec /usr/bin/python3 bench/cli_formats.py --cli "$build/bin/proctimes" --holder "$build/bin/snapshot_bench" \
  --threads "${PROCTIMES_BENCH_THREADS:-2000}" --rounds "${PROCTIMES_BENCH_ROUNDS:-21}"
