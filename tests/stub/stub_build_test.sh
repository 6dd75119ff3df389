#!/bin/sh
# SPDX-License-Identifier: MIT
# Configures the project with the stub backend (-DPROCTIMES_PLATFORM=stub)
# into a scratch directory, builds the library and the portable unit tests,
# and runs them: the portable part must build and pass without src/linux/.
# The library is a shared one linked with -Wl,--no-undefined, so that every
# symbol its portable part (the Win32 layer included) uses must be defined by
# the stub: a seam function the stub lacks fails the link, instead of hiding
# in an archive member no test pulls in. Also checks that no source of
# src/linux/ went into that library, that the Win32 layer did (its exported
# proctimes_* functions), and that the stub's own tests (StubBackend.*:
# hooks answer not_supported) ran, and that the functions the stub defines
# are the ones the seam file, src/backend/backend.hpp, declares as what a
# backend owes (tests/layout/backend_contract.py check), no fewer, no more.
# A compiler launcher (ccache) set in the environment is passed through.
set -eu
src=${1:?usage: stub_build_test.sh <source dir> <work dir> <cmake> <ctest> [generator]}
work=${2:?}
cmake=${3:-cmake}
ctest=${4:-ctest}
generator=${5:-}

rm -rf "$work"
mkdir -p "$work"
# No optimisation and no debug information: the build shows that every seam
# function is defined and the unit tests check behaviour, so neither adds
# anything, and they would double the build's time.
set -- -S "$src" -B "$work" -DCMAKE_BUILD_TYPE= -DPROCTIMES_PLATFORM=stub \
    -DPROCTIMES_BUILD_TOOLS=OFF -DPROCTIMES_BUILD_EXAMPLES=OFF -DPROCTIMES_PYTHON=OFF \
    -DPROCTIMES_BUILD_TESTS=ON -DPROCTIMES_INSTALL=OFF \
    -DBUILD_SHARED_LIBS=ON "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--no-undefined"
[ -n "$generator" ] && set -- "$@" -G "$generator"
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && set -- "$@" "-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER"
[ -n "${CMAKE_C_COMPILER_LAUNCHER:-}" ] && set -- "$@" "-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER"
"$cmake" "$@" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
grep -q "platform backend: stub" "$work/configure.log" || { echo "the stub backend was not chosen"; exit 1; }

"$cmake" --build "$work" -j2 > "$work/build.log" 2>&1 || { tail -60 "$work/build.log"; exit 1; }

# The library must hold no object built from src/linux/ (nor the netlink parser).
if find "$work/CMakeFiles/proctimes.dir" -name '*.o' | grep -E '/src/linux/|netlink'; then
    echo "a Linux backend source was built into the stub library"
    exit 1
fi
find "$work/CMakeFiles/proctimes.dir/src/stub" -name 'process.cpp.o' | grep -q . || { echo "src/stub/process.cpp not built"; exit 1; }

# One shared library, linked without undefined symbols, with the Win32 layer in it.
lib=$(find "$work" -name 'libproctimes.so.*' -type f | head -n 1)
[ -n "$lib" ] || { echo "no shared libproctimes was built"; exit 1; }
grep -qs -e '-Wl,--no-undefined' "$work/CMakeFiles/proctimes.dir/link.txt" "$work/build.ninja" ||
    { echo "the library was not linked with --no-undefined"; exit 1; }
for f in api_process api_times child handles; do
    [ -f "$work/CMakeFiles/proctimes.dir/src/win32_layer/$f.cpp.o" ] || { echo "src/win32_layer/$f.cpp not built into the library"; exit 1; }
done
for sym in proctimes_GetProcessTimes proctimes_WaitForSingleObject proctimes_TerminateProcess proctimes_CreateProcessA; do
    nm -D --defined-only "$lib" | grep -q " T $sym\$" || { echo "$sym is not exported by $lib"; exit 1; }
done

# The stub defines every function the seam file says a backend owes, and
# nothing it does not declare (src/backend/backend.hpp).
python3 "$src/tests/layout/backend_contract.py" check "$src" "$work"

"$ctest" --test-dir "$work" --output-on-failure -j2 > "$work/test.log" 2>&1 || { cat "$work/test.log"; exit 1; }
cat "$work/test.log" | tail -3
for t in StubBackend.OpeningATaskIsNotSupported StubBackend.RunTreeIsNotSupported StubBackend.SpawnWaitsBootAndCountersAreNotSupported StubBackend.CallingProcessTimesAreNotSupported StubBackend.ExitSwitchesStreamAndSystemTimes TaskState.ZombieSampleExitsAndTheFirstObserverStamps; do
    grep -q "$t .*Passed" "$work/test.log" || { echo "$t did not run and pass in the stub build"; exit 1; }
done
echo "stub build: ok"
