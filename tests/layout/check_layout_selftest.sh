#!/bin/sh
# SPDX-License-Identifier: MIT
# check_layout.sh's rule 4 (tools/ opens no system path itself) on a tree
# made here: a file that opens /proc, /sys and /dev paths in the ways C++
# code does, and includes private headers of src/, must fail the check and
# be named line by line; a file that only mentions such paths in comments,
# opens /dev/null, or includes headers of its own must not be named, and a
# tree of it alone passes.
set -u
check=$(cd "$(dirname "$0")" && pwd)/check_layout.sh
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

mkdir -p "$tmp/src/parse" "$tmp/tools/proctimes/serve" "$tmp/include/proctimes"
for h in src/fd.hpp src/parse/procfs.hpp src/local.hpp tools/proctimes/serve/local.hpp tools/proctimes/numbers.hpp \
         include/proctimes/process.hpp; do
    printf '// SPDX-License-Identifier: MIT\n#pragma once\n' > "$tmp/$h"
done

cat > "$tmp/tools/proctimes/serve/bad.cpp" <<'CPP'
// SPDX-License-Identifier: MIT
#include "fd.hpp"
#include "parse/procfs.hpp"
int a = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
std::ifstream in("/sys/fs/cgroup/cpu.max");
constexpr const char* kmsg = "/dev/kmsg";
const char* meminfo = R"(/proc/meminfo)";
FILE* f = std::fopen((std::string("/proc") + "/stat").c_str(), "r");
DIR* d = ::opendir("/proc");  // a comment after the code does not hide it
int b = ::openat(AT_FDCWD, "/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY); /* nor one here */
CPP
cat > "$tmp/tools/proctimes/serve/good.cpp" <<'CPP'
// SPDX-License-Identifier: MIT
// Reads "/proc/self/stat" through the library, never itself.
#include "serve/local.hpp"
#include "local.hpp"
#include "numbers.hpp"
#include "proctimes/process.hpp"
#include <fcntl.h>
/* "/sys/fs/cgroup" is named
   "/dev/kmsg" across lines of a comment */
int n = ::open("/dev/null", O_RDWR | O_CLOEXEC);
int t = ::open("/dev/tty", O_RDONLY | O_NOCTTY);
const char* url = "http://host/proc/x";
const char quote = '"'; const char* word = "/procedure";
int m = ::open(user_path.c_str(), O_RDONLY);  // a path the user gave
CPP

out=$(sh "$check" "$tmp" 2>&1)
rc=$?
if [ "$rc" -ne 1 ]; then
    echo "FAIL: check_layout.sh exited $rc on a tree with offences (expected 1)"
    fail=1
fi
for line in 2 3; do
    printf '%s\n' "$out" | grep -q "tools/proctimes/serve/bad.cpp:$line:#include" ||
        { echo "FAIL: the private include of bad.cpp line $line is not named"; fail=1; }
done
for line in 4 5 6 7 8 9 10; do
    printf '%s\n' "$out" | grep -q "tools/proctimes/serve/bad.cpp:$line: " ||
        { echo "FAIL: the system path of bad.cpp line $line is not named"; fail=1; }
done
if printf '%s\n' "$out" | grep -q 'good.cpp'; then
    echo "FAIL: good.cpp is named:"
    printf '%s\n' "$out" | grep 'good.cpp'
    fail=1
fi

rm "$tmp/tools/proctimes/serve/bad.cpp"
out=$(sh "$check" "$tmp" 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
    echo "FAIL: check_layout.sh exited $rc on a tree without offences (expected 0):"
    printf '%s\n' "$out"
    fail=1
fi

[ "$fail" -eq 0 ] && echo "check_layout self-test: ok"
exit "$fail"
