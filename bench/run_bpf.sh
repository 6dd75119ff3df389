#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds bpf_bench, snapshot_bench (its thread holder) and the command, then
# runs bench/bpf_compare.py: the eBPF snapshot source against the minimal
# /proc walk, psutil and ps -eLo with 2,000 extra idle threads, and the
# one-shot CLI with --source auto against --source proc (docs/BPF.md).
#   sudo bench/run_bpf.sh [build-dir]         (default: build-bench)
# Environment: PROCTIMES_BENCH_THREADS (2000), PROCTIMES_BENCH_ROUNDS (15).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROCTIMES_BUILD_BENCH=ON -DPROCTIMES_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target bpf_bench snapshot_bench proctimes_tool >/dev/null
exec /usr/bin/python3 bench/bpf_compare.py --bench "$build/bin/bpf_bench" --holder "$build/bin/snapshot_bench" \
  --cli "$build/bin/proctimes" --threads "${PROCTIMES_BENCH_THREADS:-2000}" --rounds "${PROCTIMES_BENCH_ROUNDS:-15}"
