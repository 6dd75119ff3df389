#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a cross-built Windows executable under Wine, for CTest
# (CMAKE_CROSSCOMPILING_EMULATOR of cmake/toolchains/mingw-w64-x86_64.cmake):
#   wine_run.sh program.exe [arguments...]
# Wine's debug channels are off (WINEDEBUG=-all). The Wine prefix is a
# throwaway one next to the build (PROCTIMES_WINEPREFIX, default
# <directory of the program>/../wineprefix), created once, under a lock, the
# first time a test needs it (wineboot takes about 15 s). The program's exit
# status is Wine's, which is the program's.
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
      WINEDLLOVERRIDES="mscoree,mshtml=" wineboot --init >/dev/null 2>&1
      wineserver --wait 2>/dev/null || true
      touch "$WINEPREFIX/.proctimes-ready"
    fi
  ) 9>"$WINEPREFIX.lock"
fi
exec wine "$program" "$@"
