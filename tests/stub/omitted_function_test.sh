#!/bin/sh
# SPDX-License-Identifier: MIT
# A backend that leaves out one function the seam file (src/backend/backend.hpp)
# says it owes fails the build, naming that function. Builds the stub
# backend's library (shared, linked with -Wl,--no-undefined, as
# stub_build_test.sh does) from a scratch tree whose src/stub/ is a copy and
# whose other parts are links to the source tree, three times:
#  1. whole: the library links and tests/layout/backend_contract.py passes;
#  2. without proctimes::hardware_cycle_counter_status, which no portable
#     source calls: the library still links, and the contract check fails
#     naming it;
#  3. without the overload process_cgroup(pid_t, cgroup_hierarchy, const
#     std::string&), beside the other process_cgroup, which it keeps: the
#     library still links, and the contract check, which compares whole
#     signatures, fails naming that overload and not the other;
#  4. without proctimes::detail::core_name, a hook the portable handles
#     call: the link fails naming it.
# Only the library is built; each later build recompiles one file.
# A compiler launcher (ccache) set in the environment is passed through, with
# the scratch directory as its base, so that a rerun hits the cache.
set -eu
src=${1:?usage: omitted_function_test.sh <source dir> <work dir> <cmake> [generator]}
work=${2:?}
cmake=${3:-cmake}
generator=${4:-}

src=$(cd "$src" && pwd)
rm -rf "$work"
mkdir -p "$work/tree/src"
work=$(cd "$work" && pwd)
tree=$work/tree
for entry in "$src"/* "$src"/.clang-tidy; do
    name=$(basename "$entry")
    case "$name" in src | build | build-*) continue ;; esac
    ln -s "$entry" "$tree/$name"
done
for entry in "$src"/src/*; do
    [ "$(basename "$entry")" = stub ] || ln -s "$entry" "$tree/src/$(basename "$entry")"
done
cp -R "$src/src/stub" "$tree/src/stub"

set -- -S "$tree" -B "$work/build" -DCMAKE_BUILD_TYPE= -DPROCTIMES_PLATFORM=stub \
    -DPROCTIMES_BUILD_TOOLS=OFF -DPROCTIMES_BUILD_EXAMPLES=OFF -DPROCTIMES_PYTHON=OFF \
    -DPROCTIMES_BUILD_TESTS=OFF -DPROCTIMES_INSTALL=OFF \
    -DBUILD_SHARED_LIBS=ON "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,--no-undefined"
[ -n "$generator" ] && set -- "$@" -G "$generator"
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && set -- "$@" "-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER"
[ -n "${CMAKE_C_COMPILER_LAUNCHER:-}" ] && set -- "$@" "-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER"
CCACHE_BASEDIR=$work
export CCACHE_BASEDIR
"$cmake" "$@" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
grep -q "platform backend: stub" "$work/configure.log" || { echo "the stub backend was not chosen"; exit 1; }

build() { "$cmake" --build "$work/build" --target proctimes -j2 >"$work/build.log" 2>&1; }
contract() { python3 "$src/tests/layout/backend_contract.py" check "$tree" "$work/build" >"$work/contract.log" 2>&1; }

# Leaves out the one-line definition of `fn` (a line that begins with its
# return type and names "fn(") from the copy of src/stub/`file`; with
# `params`, only the overload whose parameter list begins with them (a
# literal text).
omit() {
    file=$tree/src/stub/$1
    fn=$2
    params=${3:-}
    cp "$src/src/stub/$1" "$file"
    n=$(awk -v fn=" $fn($params" 'index($0, fn) && /^[a-z].*\{.*\}$/ { n++ } END { print n + 0 }' "$file")
    [ -n "$params" ] && [ "$n" -ne 1 ] && { echo "not one one-line definition of $fn($params in src/stub/$1"; exit 1; }
    [ "$n" -ge 1 ] || { echo "no one-line definition of $fn in src/stub/$1"; exit 1; }
    awk -v fn=" $fn($params" '!(index($0, fn) && /^[a-z].*\{.*\}$/)' "$src/src/stub/$1" >"$file"
    ! grep -qF " $fn($params" "$file" || { echo "$fn($params is still defined in src/stub/$1"; exit 1; }
}
restore() { cp "$src/src/stub/$1" "$tree/src/stub/$1"; }

# 1. The whole stub: builds, and the contract holds.
build || { tail -40 "$work/build.log"; echo "the whole stub backend did not build"; exit 1; }
contract || { cat "$work/contract.log"; echo "the whole stub backend does not meet the contract"; exit 1; }

# 2. A public function no portable source calls: links, but the check fails.
omit cycles.cpp hardware_cycle_counter_status
build || { tail -40 "$work/build.log"; echo "the stub without hardware_cycle_counter_status did not link"; exit 1; }
if contract; then
    cat "$work/contract.log"
    echo "the contract check passed a stub backend without hardware_cycle_counter_status"
    exit 1
fi
grep -q "does not define proctimes::hardware_cycle_counter_status" "$work/contract.log" ||
    { cat "$work/contract.log"; echo "the contract check did not name hardware_cycle_counter_status"; exit 1; }
echo "without hardware_cycle_counter_status: $(grep 'does not define' "$work/contract.log")"
restore cycles.cpp

# 3. One overload of two: links, and the check names that overload alone.
omit cgroup.cpp process_cgroup "pid_t, cgroup_hierarchy,"
grep -qF " process_cgroup(pid_t, const std::string&)" "$tree/src/stub/cgroup.cpp" ||
    { echo "the other process_cgroup went with the omitted one"; exit 1; }
build || { tail -40 "$work/build.log"; echo "the stub without one process_cgroup did not link"; exit 1; }
if contract; then
    cat "$work/contract.log"
    echo "the contract check passed a stub backend without process_cgroup(pid_t, cgroup_hierarchy, ...)"
    exit 1
fi
grep -qF "does not define proctimes::process_cgroup(pid_t, cgroup_hierarchy, const std::string&)" "$work/contract.log" ||
    { cat "$work/contract.log"; echo "the contract check did not name the omitted process_cgroup overload"; exit 1; }
[ "$(grep -c 'does not define' "$work/contract.log")" -eq 1 ] ||
    { cat "$work/contract.log"; echo "the contract check named more than the omitted overload"; exit 1; }
echo "without one process_cgroup overload: $(grep 'does not define' "$work/contract.log")"
restore cgroup.cpp

# 4. A hook the portable part calls: the link itself fails.
omit process.cpp core_name
if build; then
    echo "the stub backend without core_name linked"
    exit 1
fi
grep -q "undefined reference to .*detail::core_name" "$work/build.log" ||
    { tail -40 "$work/build.log"; echo "the failed link did not name core_name"; exit 1; }
echo "without core_name: $(grep -m1 -o "undefined reference to .*core_name[^']*'" "$work/build.log")"
restore process.cpp
echo "omitted functions: ok"
