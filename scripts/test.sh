#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: installs dependencies, builds, runs every
# CTest test (labels unit, system, capi, example, cli, packaging, stress,
# unprivileged, windows, layout), then the same tests under the
# address+undefined and the thread sanitizers, then each fuzzer for a bounded
# time. Ends with one summary line.
#
# The run is CPU-bound on two cores by its builds, while the tests mostly wait
# on real processes and clocks. So one lane of builds runs from the first test
# to the last, one job after the other, and each test stage starts as soon as
# the build it needs is made (the timing tests hold with both cores busy):
#   the lane:        the ASan build, the TSan build, the fuzzers' build, then
#                    the tests labelled build (lint, stub, install, the Windows
#                    cross build, the Debian packages) once the main tests are done
#   the foreground:  the main tests, the ASan tests, the TSan tests, the fuzzers
# A lane fixed to each stage left the CPU idle wherever a stage's tests ended
# before its lane; one lane keeps both cores busy to the end.
# Every stage runs even when an earlier one failed; each says how long it took
# and how long it waited for its build (CI allows 90 minutes; the goal is
# under 60).
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
lane=$(mktemp -d)
lane_pid=
# The trap must not fail: under set -e a failing command in it (kill of a lane
# that has already ended) would replace the run's exit status with 1.
trap 'if [ -n "$lane_pid" ]; then kill "$lane_pid" 2>/dev/null || true; fi; rm -rf "$log" "$lane"' EXIT
took() { echo "test.sh: $1 took $((SECONDS - $2)) s" | tee -a "$log"; }
status=0

start=$SECONDS
# The main build treats warnings as errors (it is warning-free with GCC 12,
# Debian 12's compiler); the sanitizer and fuzzer builds keep them warnings.
# It carries line tables, not full debug information (-g1, as the sanitizer
# builds): the tests need no more, and every file compiles a quarter faster.
# bootstrap builds the product only (proctimes_product); the test programs
# are the rest of the build.
scripts/bootstrap.sh -DPROCTIMES_WERROR=ON "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
cmake --build build -j "$(nproc)"
took "installing and the main build" "$start"

# A lane job: NAME COMMAND... Its output goes to $lane/NAME.log; $lane/NAME.done
# holds its exit status once it has ended.
job() {
  local name=$1 begin=$SECONDS rc=0
  shift
  "$@" >"$lane/$name.log" 2>&1 || rc=$?
  echo "test.sh: in the lane, '$*' took $((SECONDS - begin)) s (exit $rc)" >>"$lane/$name.log"
  echo "$rc" >"$lane/$name.done"
}
# Waits for lane job NAME, shows its output, and fails the run if it failed
# (or if the lane ended without it: a job could not even write its status).
await() {
  while [ ! -e "$lane/$1.done" ] && kill -0 "$lane_pid" 2>/dev/null; do sleep 2; done
  echo "--- the lane's $1 job:"
  [ ! -e "$lane/$1.log" ] || tee -a "$log" <"$lane/$1.log"
  [ "$(cat "$lane/$1.done" 2>/dev/null)" = 0 ] || { status=1; echo "test.sh: the lane's $1 job failed or never ended" | tee -a "$log"; }
}
(
  job asan-build scripts/sanitize.sh --build-only asan
  job tsan-build scripts/sanitize.sh --build-only tsan
  job fuzz-build scripts/fuzz.sh --build-only 15
  # One ctest at a time in build/: these start after the main tests.
  while [ ! -e "$lane/main-tests.done" ]; do sleep 2; done
  job build-tests ctest --test-dir build --output-on-failure --timeout 1500 -L build
) &
lane_pid=$!

# A test stage: NAME, the lane job it needs (or -), COMMAND...
stage() {
  local name=$1 needs=$2 begin=$SECONDS waited
  shift 2
  [ "$needs" = - ] || await "$needs"
  waited=$((SECONDS - begin))
  "$@" 2>&1 | tee -a "$log" || status=1
  echo "test.sh: $name took $((SECONDS - begin - waited)) s after $waited s waiting for its build" | tee -a "$log"
}
stage "the main tests" - ctest --test-dir build --output-on-failure --timeout 900 -LE build
touch "$lane/main-tests.done"
stage "the ASan tests" asan-build scripts/sanitize.sh --test-only asan
stage "the TSan tests" tsan-build scripts/sanitize.sh --test-only tsan
stage "the fuzzers" fuzz-build scripts/fuzz.sh 15
begin=$SECONDS
await build-tests
wait "$lane_pid" || status=1
echo "test.sh: after the fuzzers, the lane's last job took $((SECONDS - begin)) s more" | tee -a "$log"
echo "test.sh: the whole run took $SECONDS s" | tee -a "$log"
# What the failing tests said, at the end where a short view of the output
# shows it: each GoogleTest failure with the lines after it, pytest's E lines,
# CTest's timeouts, sanitizer reports; and for a failed test whose output has
# none of these (a script test: lint, a scratch build), its last lines.
if [ "$status" -ne 0 ]; then
  echo "test.sh: what the failing tests said:"
  grep -a -A8 -E ': Failure$|^E  |\*\*\*Timeout|Exception: |ERROR: [A-Za-z]*Sanitizer|runtime error:' "$log" |
    head -n 120 || true
  python3 scripts/failed_tails.py "$log" || true
fi
# Sum the "N% tests passed, F tests failed out of T" lines of every run.
awk '/tests passed, [0-9]+ tests failed out of/ { f += $4; t += $NF } END { printf "all runs: %d passed, %d failed\n", t - f, f }' "$log"
echo "test.sh: exit status $status"
exit $status
