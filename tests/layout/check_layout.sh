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
#  4. tools/ names no /proc path: the command reads the system through the
#     library (a --proc-root given to it is passed on as the user gave it).
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

hits=$(grep -rnE '"/proc(/|")' --include='*.cpp' --include='*.hpp' tools 2>/dev/null)
if [ -n "$hits" ]; then
    echo "tools/ names a /proc path (read it through the library):"
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
