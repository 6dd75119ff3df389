#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: installs dependencies, builds, runs every
# CTest test (labels unit, system, capi, example, cli, packaging, stress,
# unprivileged), then the address+undefined and thread sanitizer builds, then
# each fuzzer for a bounded time. Ends with one summary line.
#
# Two jobs overlap to keep the run short on two cores, and each keeps its
# tests one at a time: the CTest tests labelled `build` (lint and the scratch
# builds: CPU-bound, timing nothing) run beside the others; each sanitizer's
# build runs beside the previous sanitizer's tests, and the fuzzers' build
# beside the last one's (scripts/sanitize.sh --beside-last). The timing tests
# hold with both cores busy, so none of this changes what they assert.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
builds=$(mktemp)
trap 'rm -f "$log" "$builds"' EXIT
# The main build treats warnings as errors (it is warning-free with GCC 12,
# Debian 12's compiler); the sanitizer and fuzzer builds keep them warnings.
# Each stage says how long it took (the run's cost is watched: CI allows 90
# minutes, the goal is 60).
took() { echo "test.sh: $1 took $((SECONDS - $2)) s" | tee -a "$log"; }
start=$SECONDS
scripts/bootstrap.sh -DPROCTIMES_WERROR=ON
took "installing and the main build" "$start"
start=$SECONDS
ctest --test-dir build --output-on-failure --timeout 900 -L build >"$builds" 2>&1 &
builds_pid=$!
status=0
ctest --test-dir build --output-on-failure --timeout 900 -LE build | tee -a "$log" || status=1
took "the main tests" "$start"
wait "$builds_pid" || status=1
took "the main tests and, beside them, those labelled build" "$start"
echo "--- tests labelled build (run beside the above):"
tee -a "$log" <"$builds"
((status == 0)) || exit 1
start=$SECONDS
scripts/sanitize.sh --beside-last "scripts/fuzz.sh --build-only 15" asan tsan | tee -a "$log"
took "the sanitizer builds and tests" "$start"
start=$SECONDS
scripts/fuzz.sh 15 | tee -a "$log"
took "the fuzzers" "$start"
echo "test.sh: the whole run took $SECONDS s" | tee -a "$log"
# Sum the "N% tests passed, F tests failed out of T" lines of every run.
awk '/tests passed, [0-9]+ tests failed out of/ { f += $4; t += $NF } END { printf "all runs: %d passed, %d failed\n", t - f, f }' "$log"
