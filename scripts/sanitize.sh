#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the library, tools and tests with sanitizers and runs the tests:
#   build-asan: AddressSanitizer + UndefinedBehaviorSanitizer (gcc)
#   build-tsan: ThreadSanitizer (gcc)
# Usage: scripts/sanitize.sh [--beside-last 'COMMAND'] [asan|tsan]...   (default: both)
# Each kind's build runs beside the previous kind's tests (two cores: the
# compiler keeps them busy, which the timing tests allow for); its output goes
# to build-<kind>.log and is shown when the build fails. --beside-last runs
# COMMAND (a build: scripts/test.sh gives the fuzzers' one) beside the last
# kind's tests, its output in beside-last.log; its failure fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
beside_last=
if [[ "${1:-}" == "--beside-last" ]]; then
  beside_last=${2:?--beside-last needs a command}
  shift 2
fi
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
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DPROCTIMES_SANITIZE="$(flags_of "$1")" -DPROCTIMES_INSTALL=OFF >/dev/null &&
    cmake --build "$dir" -j "$(nproc)" >"$dir.log" 2>&1 || { tail -80 "$dir.log"; return 1; }
  echo "sanitize.sh: the $1 build took $((SECONDS - start)) s"
}
build "${kinds[0]}"
status=0
for i in "${!kinds[@]}"; do
  kind=${kinds[$i]}
  next=${kinds[$((i + 1))]:-}
  next_pid=
  if [[ -n "$next" ]]; then
    build "$next" &
    next_pid=$!
  elif [[ -n "$beside_last" ]]; then
    bash -c "$beside_last" >beside-last.log 2>&1 &
    next_pid=$!
  fi
  # The tests labelled build (lint and the scratch builds: the stub, the
  # packages, the Windows cross build) configure trees of their own,
  # unsanitized, and the layout checks read sources only: the main run
  # covers them all.
  tests_start=$SECONDS
  PROCTIMES_SANITIZER="$kind" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "build-$kind" --output-on-failure --timeout 900 -LE "build|packaging|bench|stub|layout" || status=1
  echo "sanitize.sh: the $kind tests took $((SECONDS - tests_start)) s"
  if [[ -n "$next_pid" && -n "$next" ]]; then
    wait "$next_pid" || { echo "sanitize.sh: the $next build failed" >&2; exit 1; }
  elif [[ -n "$next_pid" ]]; then
    wait "$next_pid" || { tail -80 beside-last.log; echo "sanitize.sh: '$beside_last' failed" >&2; exit 1; }
  fi
done
exit $status
