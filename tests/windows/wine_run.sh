#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a cross-built Windows executable under Wine, for CTest
# (CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchains/mingw-w64-x86_64.cmake):
#   wine_run.sh program.exe [arguments...]
# Wine's debug channels are off (WINEDEBUG=-all). The Wine prefix is a
# throwaway one next to the build (PROCTIMES_WINEPREFIX, default
# <directory of the program>/../wineprefix), created once, under a lock, the
# first time a test needs it (wineboot takes about 15 s). The program's exit
# status is Wine's, which is the program's; its output (stdout and stderr
# together) is printed when it has ended.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: $0 program.exe [arguments...]" >&2
  exit 2
fi
program=$1
shift
if [ -z "${PROCTIMES_WINEPREFIX:-}" ]; then
  dir=$(cd "$(dirname "$program")" && pwd)
  PROCTIMES_WINEPREFIX=$(dirname "$dir")/wineprefix
fi
WINEPREFIX=$PROCTIMES_WINEPREFIX
WINEDEBUG=-all
WINEARCH=win64
export WINEPREFIX WINEDEBUG WINEARCH
if [ ! -f "$WINEPREFIX/.proctimes-ready" ]; then
  mkdir -p "$WINEPREFIX"
  (
    flock 9
    if [ ! -f "$WINEPREFIX/.proctimes-ready" ]; then
      # No Mono/Gecko install prompts in a test prefix.
      # (its service processes must not hold the lock: fd 9 closed for them)
      WINEDLLOVERRIDES="mscoree,mshtml=" wineboot --init </dev/null >/dev/null 2>&1 9>&-
      wineserver --wait 2>/dev/null || true
      touch "$WINEPREFIX/.proctimes-ready"
    fi
  ) 9>"$WINEPREFIX.lock"
fi
# Wine starts its service processes (services.exe, winedevice.exe) from the
# first program of a session, and they inherit that program's output: run
# with a pipe as stdout (ctest, a shell pipeline), the pipe would stay open
# until they exit, seconds or minutes later. So the program writes to a file
# that is copied out once it has ended, and reads nothing.
out=$(mktemp "${TMPDIR:-/tmp}/proctimes-wine.XXXXXX")
trap 'rm -f "$out"' EXIT
status=0
wine "$program" "$@" </dev/null >"$out" 2>&1 || status=$?
cat "$out"
exit $status
