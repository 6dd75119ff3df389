#!/bin/sh
# SPDX-License-Identifier: MIT
# The layout rules of the source tree (docs/DESIGN.md, "Layers"):
#  1. no file outside a backend's folder (src/linux/, src/windows/, src/stub/)
#     includes a header of it: a backend is reached through the seam,
#     src/backend/backend.hpp, only; but for the backends' own white-box
#     tests (tests/bpf/: the eBPF exit stream and its cache; tests/windows/);
#  2. the portable code (src/ outside src/linux/ and src/parse/) includes no
#     kernel header (<linux/...>, <sys/syscall.h>): kernel headers belong to
#     the Linux backend and to the parsers of kernel formats;
#  3. no source file in src/ or tools/ is over 500 lines;
#  4. tools/ opens no system path itself: the command reads the system through
#     the library's public API. No file of tools/ spells a path under /proc,
#     /sys or /dev (as an argument of open, openat, fopen, opendir, readlink,
#     std::ifstream, ... or as a constant or a piece of one: every string
#     literal is checked), but /dev/null and the controlling terminal
#     /dev/tty; a --proc-root or other path the user gives is passed on as
#     given. No file of tools/ includes a private header of the library (a
#     quoted include that names a file of src/, such as "fd.hpp" or
#     "parse/procfs.hpp"): what the command needs of them is public API. One
#     exception, parse/number.hpp: a pure parser of decimal text that reads
#     nothing, shared so that an option and a PROCTIMES_* setting accept the
#     same numbers.
# Prints every offence and exits 1 if there is one.
set -u
root=${1:?usage: check_layout.sh <source dir>}
cd "$root" || exit 2
status=0

# A quoted include of "linux/..." names src/linux/ (the include path is src/),
# and so on for each backend.
for backend in linux:bpf windows:windows stub:-; do
    name=${backend%%:*}
    tests=${backend#*:}
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$name/" \
             --include='*.c' --include='*.cc' --include='*.cpp' --include='*.h' --include='*.hpp' \
             src tools tests bench fuzz examples python 2>/dev/null | grep -vE "^(src/$name|tests/$tests)/")
    if [ -n "$hits" ]; then
        echo "Outside src/$name/, these include a header of src/$name/ (use src/backend/backend.hpp):"
        echo "$hits"
        status=1
    fi
done

hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(linux/|sys/syscall\.h)' \
         --include='*.cpp' --include='*.hpp' --include='*.h' src 2>/dev/null |
       grep -vE '^src/(linux|parse)/')
if [ -n "$hits" ]; then
    echo "Portable code includes a kernel header:"
    echo "$hits"
    status=1
fi

# Comments are left out (// to the end of a line outside a string, and
# /* ... */), so that a comment may say what a file reads.
hits=$(find tools -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) \
         -not -path '*/fixtures/*' -exec awk '
        FNR == 1 { in_block = 0 }
        {
            line = $0; out = ""; i = 1; n = length(line)
            while (i <= n) {
                c = substr(line, i, 1); two = substr(line, i, 2)
                if (in_block) { if (two == "*/") { in_block = 0; i += 2 } else i++; continue }
                if (in_str) {
                    out = out c
                    if (c == "\\") { out = out substr(line, i + 1, 1); i += 2; continue }
                    if (c == "\"") in_str = 0
                    i++; continue
                }
                if (two == "//") break
                if (two == "/*") { in_block = 1; i += 2; continue }
                if (c == "\"") in_str = 1
                if (c == "\047") {  # a character literal: kept whole, never a string
                    j = index(substr(line, i + 1), "\047")
                    if (j > 0 && j <= 3) { out = out substr(line, i, j + 1); i += j + 1; continue }
                }
                out = out c; i++
            }
            in_str = 0
            # A string literal (R"(...)" too) that starts with /proc, /sys or /dev.
            rest = out
            while (match(rest, /"(\(|[A-Za-z_]*\()?\/(proc|sys|dev)([\/"]|$)[^"]*/)) {
                lit = substr(rest, RSTART, RLENGTH)
                path = lit; sub(/^"([A-Za-z_]*\()?/, "", path)
                if (path != "/dev/null" && path != "/dev/tty") { print "  " FILENAME ":" FNR ": " $0; break }
                rest = substr(rest, RSTART + RLENGTH)
            }
        }' {} + 2>/dev/null | sort -t: -k1,1 -k2,2n)
if [ -n "$hits" ]; then
    echo "tools/ names a path under /proc, /sys or /dev (read the system through the library's public API):"
    echo "$hits"
    status=1
fi

# A quoted include is private when it names a file of src/ that is neither
# beside the including file nor a header of tools/proctimes/ (its include root).
hits=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' \
         --include='*.c' --include='*.cc' --include='*.cpp' --include='*.h' --include='*.hpp' tools 2>/dev/null |
       while IFS= read -r hit; do
           f=${hit%%:*}
           inc=$(printf '%s\n' "$hit" | sed -E 's/^[^:]*:[0-9]+:[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/')
           [ -f "src/$inc" ] || continue
           [ -f "$(dirname "$f")/$inc" ] && continue
           [ -f "tools/proctimes/$inc" ] && continue
           [ "$inc" = parse/number.hpp ] && continue
           echo "  $hit"
       done)
if [ -n "$hits" ]; then
    echo "tools/ includes a private header of the library (src/); use the public API (include/proctimes/):"
    echo "$hits"
    status=1
fi

long=$(find src tools -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) \
         -exec wc -l {} + 2>/dev/null | awk '$2 != "total" && $1 > 500 { print "  " $2 ": " $1 " lines" }')
if [ -n "$long" ]; then
    echo "Source files over 500 lines (split them by job):"
    echo "$long"
    status=1
fi

# Every source file names its license (SPDX) in its first lines.
unlicensed=$(find src include tools tests bench fuzz python examples -type f \
               \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.py' -o -name '*.sh' \) \
               -not -path '*/fixtures/*' 2>/dev/null |
             while read -r f; do head -n 3 "$f" | grep -q 'SPDX-License-Identifier:' || echo "  $f"; done)
if [ -n "$unlicensed" ]; then
    echo "Source files without an SPDX-License-Identifier line:"
    echo "$unlicensed"
    status=1
fi

[ "$status" -eq 0 ] && echo "layout: ok"
exit "$status"
