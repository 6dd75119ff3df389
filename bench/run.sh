#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the whole performance comparison on this machine, in one go, and prints
# ratio tables (absolute times vary between machines; ratios measured in the
# same run hold):
#   1. per-query costs (bench/core_bench.cpp) against their syscall baselines,
#      Boost.Chrono / Boost.Timer / times(), and psutil;
#   2. whole-system snapshots against a minimal walk, ps and psutil
#      (bench/run_snapshot.sh);
#   3. `proctimes ps --threads` in JSON, CSV and table format against ps
#      (bench/cli_formats.sh);
#   4. the Python binding against psutil, per query and per snapshot
#      (bench/python_bench.py), when the module is built (PROCTIMES_PYTHON).
# Usage: bench/run.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
min_time=0.2
[ "${1:-}" = "--quick" ] && min_time=0.05
scripts/bootstrap.sh >/dev/null
DEBIAN_FRONTEND=noninteractive
for p in python3-psutil libboost-chrono-dev libboost-timer-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="${missing:-} $p"
done
if [ -n "${missing:-}" ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y -qq $missing >/dev/null
fi
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DPROCTIMES_BUILD_BENCH=ON -DPROCTIMES_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j "$(nproc)" --target core_bench >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"; kill "${target:-0}" 2>/dev/null || true' EXIT
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
# Five repetitions of each query; the table uses their median.
build-bench/bin/core_bench --benchmark_min_time="$min_time" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$out/core.json" 2>/dev/null
sleep 300 & target=$!
/usr/bin/python3 bench/psutil_bench.py "$target" "$target" >"$out/psutil.json"
echo
echo "## Per-query cost"
python3 bench/ratios.py "$out/core.json" "$out/psutil.json"
if [ -x bench/run_snapshot.sh ]; then
  echo
  echo "## Snapshots"
  bench/run_snapshot.sh
fi
if [ -x bench/cli_formats.sh ]; then
  echo
  echo "## Output formats of the proctimes command"
  bench/cli_formats.sh
fi
if grep -q '^PROCTIMES_PYTHON:BOOL=ON' build-bench/CMakeCache.txt; then
  echo
  echo "## Python binding against psutil"
  cmake --build build-bench -j "$(nproc)" --target proctimes_python >/dev/null
  extra=()
  [ -x build-bench/bin/snapshot_bench ] && extra=(--snapshot-bench build-bench/bin/snapshot_bench)
  PYTHONPATH=build-bench/python /usr/bin/python3 bench/python_bench.py "${extra[@]}"
fi
