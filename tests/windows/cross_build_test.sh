#!/bin/sh
# SPDX-License-Identifier: MIT
# The windows backend from the Linux build's test run: cross-builds the
# library and tests/windows/ with mingw-w64 into a scratch directory (the
# configuration of `cmake --preset windows`, without optimisation or debug
# information: the tests check behaviour, and it halves the build), runs the
# `windows` tests under Wine there, then clang-tidy over src/windows and
# tests/windows with mingw's headers (tidy_windows.sh).
#   cross_build_test.sh <source dir> <work dir> <cmake> <ctest>
# Exit 77 (skipped) when the cross compiler or Wine is not installed
# (scripts/bootstrap.sh installs both).
set -eu
src=${1:?usage: cross_build_test.sh <source dir> <work dir> <cmake> <ctest>}
work=${2:?}
cmake=${3:-cmake}
ctest=${4:-ctest}
for tool in x86_64-w64-mingw32-g++-posix wine wineboot; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (Debian packages g++-mingw-w64-x86-64-posix, wine64, wine)"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work"
"$cmake" -S "$src" -B "$work" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/mingw-w64-x86_64.cmake" \
  -DCMAKE_BUILD_TYPE= -DPROCTIMES_PLATFORM=windows -DPROCTIMES_WERROR=ON -DPROCTIMES_UNITY=ON >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; exit 1; }
grep -q "platform backend: windows" "$work/configure.log" || { echo "the windows backend was not chosen"; exit 1; }
"$cmake" --build "$work" -j2 >"$work/build.log" 2>&1 || { tail -60 "$work/build.log"; exit 1; }
# The windows backend defines every hook and public function a backend owes
# (the groups hooks and public of src/backend/backend.hpp).
python3 "$src/tests/layout/backend_contract.py" defines "$src" "$work" windows x86_64-w64-mingw32-nm
"$ctest" --test-dir "$work" -L windows --output-on-failure --timeout 300 >"$work/test.log" 2>&1 || { cat "$work/test.log"; exit 1; }
tail -3 "$work/test.log"
for t in windows.unit windows.system; do
  grep -q "$t .*Passed" "$work/test.log" || { echo "$t did not run and pass"; exit 1; }
done
if command -v clang-tidy >/dev/null; then
  PROCTIMES_WINDOWS_BUILD="$work" "$src/tests/windows/tidy_windows.sh" || { echo "clang-tidy found something in the windows sources"; exit 1; }
else
  echo "clang-tidy is not installed: the windows sources were not checked by it"
fi
echo "windows cross build: ok"
