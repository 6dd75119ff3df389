#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: installs dependencies, builds, runs every
# CTest test (labels unit, system, capi, example, cli, packaging, stress,
# unprivileged, windows, layout), then the same tests under the
# address+undefined and the thread sanitizers, then each fuzzer for a bounded
# time. Ends with one summary line.
#
# The run is CPU-bound on two cores by its builds, while the tests mostly wait
# on real processes and clocks: so each test stage runs one test at a time
# with a lane of builds beside it, and the timing tests (which hold with both
# cores busy) assert the same either way:
#   main tests       beside  the AddressSanitizer build
#   ASan tests       beside  the ThreadSanitizer build, then the tests labelled
#                            build that compile (stub, install, Windows cross build)
#   TSan tests       beside  the fuzzers' build, then the lint tests (format, tidy)
#   the fuzzers      beside  the Debian package build (each fuzzer runs 15 s
#                            whatever the load: the lane costs iterations, not time)
# Every stage runs even when an earlier one failed; each says how long it took
# (CI allows 90 minutes; the goal is under 60).
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
lane_log=$(mktemp)
trap 'rm -f "$log" "$lane_log"' EXIT
took() { echo "test.sh: $1 took $((SECONDS - $2)) s" | tee -a "$log"; }
status=0

# A stage: COMMAND in the foreground, LANE (a shell command) beside it; the
# lane's output is shown after the stage. Either failing fails the run.
stage() {
  local name=$1 lane=$2 start=$SECONDS lane_pid
  shift 2
  bash -c "$lane" >"$lane_log" 2>&1 &
  lane_pid=$!
  "$@" 2>&1 | tee -a "$log" || status=1
  took "$name" "$start"
  wait "$lane_pid" || { status=1; echo "test.sh: beside $name, '$lane' failed" | tee -a "$log"; }
  echo "--- beside $name: $lane"
  tee -a "$log" <"$lane_log"
  took "$name and its lane" "$start"
}

start=$SECONDS
# The main build treats warnings as errors (it is warning-free with GCC 12,
# Debian 12's compiler); the sanitizer and fuzzer builds keep them warnings.
scripts/bootstrap.sh -DPROCTIMES_WERROR=ON
took "installing and the main build" "$start"

ctest_build() { echo "ctest --test-dir build --output-on-failure --timeout 1500 -L build -R '$1'"; }
stage "the main tests" "scripts/sanitize.sh --build-only asan" \
  ctest --test-dir build --output-on-failure --timeout 900 -LE build
stage "the ASan tests" "scripts/sanitize.sh --build-only tsan && $(ctest_build '^(stub|windows)\.|^packaging\.install')" \
  scripts/sanitize.sh --test-only asan
stage "the TSan tests" "scripts/fuzz.sh --build-only 15 && $(ctest_build '^layout\.')" \
  scripts/sanitize.sh --test-only tsan
stage "the fuzzers" "$(ctest_build '^packaging\.deb$')" scripts/fuzz.sh 15
echo "test.sh: the whole run took $SECONDS s" | tee -a "$log"
# What the failing tests said, at the end where a short view of the output
# shows it: each GoogleTest failure with the lines after it, pytest's E lines,
# CTest's timeouts (the whole output of each is above).
if [ "$status" -ne 0 ]; then
  echo "test.sh: what the failing tests said:"
  grep -a -A8 -E ': Failure$|^E  |\*\*\*Timeout|Exception: |ERROR: [A-Za-z]*Sanitizer|runtime error:' "$log" |
    head -n 120 || true
fi
# Sum the "N% tests passed, F tests failed out of T" lines of every run.
awk '/tests passed, [0-9]+ tests failed out of/ { f += $4; t += $NF } END { printf "all runs: %d passed, %d failed\n", t - f, f }' "$log"
exit $status
