#!/bin/sh
# SPDX-License-Identifier: MIT
# clang-tidy (the tree's .clang-tidy) over the Windows backend, the command's
# Windows files and the tests, with mingw-w64's headers (the Linux build's
# tidy check, scripts/lint.sh tidy, skips them: no Linux compile command has
# Windows headers).
#   tests/windows/tidy_windows.sh [files...]
#   (default: src/windows, tools/proctimes/**/*windows.cpp and tests/windows)
# The command's libraries (CLI11, nlohmann-json, fmt) are system headers here:
# the build may lie under tests/, which .clang-tidy's header filter names.
# Needs a configured cross build for the generated version header:
# build-windows (cmake --preset windows), or PROCTIMES_WINDOWS_BUILD.
# Exit status: 0 clean, 1 a finding.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
gcc_dir=$(dirname "$(x86_64-w64-mingw32-g++-posix -print-libgcc-file-name)")
tidy=${CLANG_TIDY:-clang-tidy}
if [ $# -eq 0 ]; then
  set -- src/windows/*.cpp tools/proctimes/*windows.cpp tools/proctimes/*/*windows.cpp tools/proctimes/*/*/*windows.cpp tests/windows/*.cpp
fi
# Two files at a time (TIDY_JOBS): each output is kept apart and shown whole.
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
export tidy gcc_dir out_dir
export PROCTIMES_WINDOWS_BUILD="${PROCTIMES_WINDOWS_BUILD:-build-windows}"
printf '%s\n' "$@" | xargs -P "${TIDY_JOBS:-2}" -I{} sh -c '
  f=$1
  out=$("$tidy" --quiet "$f" -- --target=x86_64-w64-mingw32 -std=c++20 -nostdinc++ \
        -isystem "$gcc_dir/include/c++" -isystem "$gcc_dir/include/c++/x86_64-w64-mingw32" \
        -isystem "$gcc_dir/include/c++/backward" -isystem /usr/src/googletest/googletest/include \
        -Iinclude -Isrc -Itests/windows -Itools/proctimes -Itools/proctimes/output \
        -I"$PROCTIMES_WINDOWS_BUILD/generated" -isystem "$PROCTIMES_WINDOWS_BUILD/windows-deps/include" \
        -DFMT_HEADER_ONLY=1 -D_WIN32_WINNT=0x0602 -DWINVER=0x0602 -DUNICODE -D_UNICODE -DNOMINMAX -DWIN32_LEAN_AND_MEAN 2>/dev/null) ||
    out="$out
$f: error: clang-tidy failed"
  printf "%s\n" "$out" >"$out_dir/$(printf "%s" "$f" | tr / _).out"
' sh {}
status=0
for o in "$out_dir"/*.out; do
  [ -e "$o" ] || continue
  if grep -qE '(warning|error):' "$o"; then
    cat "$o"
    status=1
  fi
done
exit $status
