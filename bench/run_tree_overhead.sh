#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the proctimes command and measures, on this machine and in one run,
# what recording a build's process tree costs: a generated C project of 200
# files (tests/fixtures/make_c_project.py) built with `make -j2` plain and
# under `proctimes run --tree --format json`, rounds alternating, as root and
# (when run as root) as user nobody. Prints a Markdown table of median wall
# times and their ratio; the goal is <= 1.05x.
#
#   bench/run_tree_overhead.sh [build-dir]        (default: build-bench)
# Environment: PROCTIMES_BENCH_ROUNDS (default 15), PROCTIMES_BENCH_FILES (200).
# Needs: make, a C compiler, util-linux (setpriv) for the run as nobody.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-bench}
jobs=$(( $(nproc) < 2 ? $(nproc) : 2 ))

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPROCTIMES_BUILD_TESTS=OFF -DPROCTIMES_BUILD_TOOLS=ON >/dev/null
cmake --build "$build" -j "$jobs" --target proctimes_tool >/dev/null

exec /usr/bin/python3 bench/run_tree_overhead.py --cli "$build/bin/proctimes" \
  --rounds "${PROCTIMES_BENCH_ROUNDS:-15}" --files "${PROCTIMES_BENCH_FILES:-200}"
