#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with clang (+ address/undefined sanitizers) and
# runs each for SECONDS (default 15) on a copy of its seed corpus in fuzz/corpus.
#   scripts/fuzz.sh 600          # ten minutes each
#   scripts/fuzz.sh --build-only # build them (scripts/test.sh does it beside other tests)
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=0
if [[ "${1:-}" == "--build-only" ]]; then
  build_only=1
  shift
fi
seconds="${1:-15}"
[[ "$seconds" =~ ^[1-9][0-9]{0,5}$ ]] || { echo "fuzz.sh: SECONDS must be a whole number of seconds, 1 to 999999 (not '$seconds')" >&2; exit 2; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPROCTIMES_BUILD_FUZZ=ON -DPROCTIMES_BUILD_TESTS=OFF -DPROCTIMES_BUILD_TOOLS=OFF -DPROCTIMES_INSTALL=OFF \
  -DPROCTIMES_SANITIZE=address,undefined -DPROCTIMES_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build-fuzz -j "$(nproc)"
((build_only == 0)) || exit 0
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j "$(nproc)" --timeout $((seconds * 4 + 120))
