#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the library, tools and tests with sanitizers and runs the tests:
#   build-asan: AddressSanitizer + UndefinedBehaviorSanitizer (gcc)
#   build-tsan: ThreadSanitizer (gcc)
# Usage: scripts/sanitize.sh [--build-only|--test-only] [asan|tsan]...   (default: both)
# Without an option, each kind is built, then its tests run, and the next
# kind's build runs beside them (two cores: the compiler keeps them busy,
# which the timing tests allow for). --build-only and --test-only do one half,
# for scripts/test.sh, which schedules the halves beside its other stages.
# A build's output goes to build-<kind>.log and is shown when it fails.
# The builds carry line tables, not full debug information (-g1): sanitizer
# reports name file and line, and the builds are a tenth faster.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=both
case "${1:-}" in
  --build-only) mode=build; shift ;;
  --test-only) mode=test; shift ;;
esac
kinds=("$@")
((${#kinds[@]})) || kinds=(asan tsan)
flags_of() {
  case "$1" in
    asan) echo "address,undefined" ;;
    tsan) echo "thread" ;;
    *) echo "sanitize.sh: unknown kind '$1'" >&2; return 2 ;;
  esac
}
for kind in "${kinds[@]}"; do flags_of "$kind" >/dev/null; done
build() {
  local dir="build-$1" start=$SECONDS
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 \
    -DPROCTIMES_SANITIZE="$(flags_of "$1")" -DPROCTIMES_INSTALL=OFF -DPROCTIMES_UNITY=ON >/dev/null &&
    cmake --build "$dir" -j "$(nproc)" >"$dir.log" 2>&1 || { tail -80 "$dir.log"; echo "sanitize.sh: the $1 build failed" >&2; return 1; }
  echo "sanitize.sh: the $1 build took $((SECONDS - start)) s"
}
run_tests() {
  local start=$SECONDS status=0
  # The tests labelled build (lint and the scratch builds: the stub, the
  # packages, the Windows cross build) configure trees of their own,
  # unsanitized, and the layout checks read sources only: the main run
  # covers them all.
  PROCTIMES_SANITIZER="$1" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "build-$1" --output-on-failure --timeout 900 -LE "build|packaging|bench|stub|layout" || status=1
  echo "sanitize.sh: the $1 tests took $((SECONDS - start)) s"
  return $status
}
case "$mode" in
  build)
    for kind in "${kinds[@]}"; do build "$kind"; done
    exit 0
    ;;
  test)
    status=0
    for kind in "${kinds[@]}"; do run_tests "$kind" || status=1; done
    exit $status
    ;;
esac
build "${kinds[0]}"
status=0
for i in "${!kinds[@]}"; do
  kind=${kinds[$i]}
  next=${kinds[$((i + 1))]:-}
  next_pid=
  if [[ -n "$next" ]]; then
    build "$next" &
    next_pid=$!
  fi
  run_tests "$kind" || status=1
  if [[ -n "$next_pid" ]]; then
    wait "$next_pid" || exit 1
  fi
done
exit $status
