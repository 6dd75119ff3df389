#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the library, tools and tests with sanitizers and runs the tests:
#   build-asan: AddressSanitizer + UndefinedBehaviorSanitizer (gcc)
#   build-tsan: ThreadSanitizer (gcc)
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
kinds=("$@")
((${#kinds[@]})) || kinds=(asan tsan)
for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) flags="address,undefined" ;;
    tsan) flags="thread" ;;
    *) echo "sanitize.sh: unknown kind '$kind'" >&2; exit 2 ;;
  esac
  dir="build-$kind"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DPROCTIMES_SANITIZE="$flags" -DPROCTIMES_INSTALL=OFF >/dev/null
  cmake --build "$dir" -j "$(nproc)"
  # Packaging and the stub build configure trees of their own, unsanitized;
  # the layout check reads sources only: all are covered by the main run.
  PROCTIMES_SANITIZER="$kind" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir "$dir" --output-on-failure --timeout 900 -LE "packaging|bench|stub|layout"
done
