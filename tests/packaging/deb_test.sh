#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, end to end: scripts/package.sh builds them; their
# contents (dpkg-deb -c) and fields are checked; lintian finds no error and
# only the warnings docs/PACKAGING.md explains; then, unpacked into a throwaway
# root (dpkg -x), the command runs (--version), every man page renders
# (man -l), the bash completion loads and completes, and consumers build
# against the -dev package through find_package and pkg-config, and run.
#   deb_test.sh SOURCE_DIR WORK_DIR    (exit 77: a needed tool is absent)
set -euo pipefail
# `producer | grep -q` fails under pipefail when grep exits at the first match
# and the producer dies of SIGPIPE still writing: read all of it instead.
has() { grep "$@" >/dev/null; }
src=$1
work=$2
mkdir -p "$work"
work=$(cd "$work" && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps lintian pandoc man pkg-config cmake c++ cc nm readelf; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/bootstrap.sh installs it)"; exit 77; }
done

# 1. Build. The build directory is kept between runs, so a rerun only
# rebuilds what changed.
rm -rf "$work/dist"
"$src/scripts/package.sh" "$work/build" "$work/dist" > "$work/package.log" 2>&1 || { cat "$work/package.log"; fail "scripts/package.sh"; }
version=$(sed -n 's/^proctimes (\([^)]*\)).*/\1/p;q' "$src/packaging/changelog")
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
runtime="$work/dist/proctimes_${version}_${arch}.deb"
dev="$work/dist/libproctimes-dev_${version}_${arch}.deb"
[ -f "$runtime" ] && [ -f "$dev" ] || fail "expected $runtime and $dev; dist has: $(ls "$work/dist")"
[ "$(ls "$work/dist" | wc -l)" -eq 2 ] || fail "more packages than expected: $(ls "$work/dist")"

# 2. Contents and fields.
contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
contents "$runtime" > "$work/runtime.list"
contents "$dev" > "$work/dev.list"
lib=/usr/lib/$multiarch
soname=$(readelf -d "$work/build/libproctimes.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libproctimes.so.$(cut -d. -f1,2 <<<"$version")" ] || fail "SONAME is '$soname'"
for f in /usr/bin/proctimes "$lib/$soname" "$lib/libproctimes.so.$version" /usr/share/man/man1/proctimes.1.gz \
         /usr/share/bash-completion/completions/proctimes /usr/share/doc/proctimes/copyright \
         /usr/share/doc/proctimes/changelog.gz /usr/lib/systemd/system/proctimes-serve.service \
         /usr/lib/systemd/system/proctimes-record.service; do
  grep -qxF "$f" "$work/runtime.list" || fail "proctimes package lacks $f"
done
for f in /usr/include/proctimes/proctimes.hpp /usr/include/proctimes/version.hpp /usr/include/proctimes/windows.h \
         "$lib/libproctimes.so" "$lib/cmake/proctimes/proctimesConfig.cmake" "$lib/cmake/proctimes/proctimesConfigVersion.cmake" \
         "$lib/cmake/proctimes/proctimesTargets.cmake" "$lib/pkgconfig/proctimes.pc" /usr/share/man/man3/proctimes.3.gz \
         /usr/share/doc/libproctimes-dev/copyright /usr/share/doc/libproctimes-dev/changelog.gz; do
  grep -qxF "$f" "$work/dev.list" || fail "libproctimes-dev package lacks $f"
done
! grep -E '^/usr/include/|\.a$|/cmake/|/pkgconfig/|libproctimes\.so$' "$work/runtime.list" || fail "development files in the runtime package"
! grep -E '^/usr/bin/|libproctimes\.so\.' "$work/dev.list" || fail "runtime files in the -dev package"
[ "$(dpkg-deb -f "$runtime" Version)" = "$version" ] || fail "runtime Version is not $version"
depends=$(dpkg-deb -f "$runtime" Depends)
for d in libc6 libstdc++6; do  # computed by dpkg-shlibdeps from the ELF files
  grep -q "\b$d (>= " <<<"$depends" || fail "runtime Depends lacks $d: $depends"
done
[ "$(dpkg-deb -f "$dev" Depends)" = "proctimes (= $version)" ] || fail "dev Depends: $(dpkg-deb -f "$dev" Depends)"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./triggers | has -x 'activate-noawait ldconfig' || fail "no ldconfig trigger"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./shlibs | has -x "libproctimes $(cut -d. -f1,2 <<<"$version") proctimes (>= $version)" \
  || fail "shlibs: $(dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./shlibs)"
dpkg-deb --fsys-tarfile "$runtime" | tar -xO ./usr/share/doc/proctimes/copyright | has "^License: MIT$" || fail "copyright has no MIT License field"

# 3. lintian: no error; every warning's tag is explained in docs/PACKAGING.md.
lintian --tag-display-limit 0 "$runtime" "$dev" > "$work/lintian.log" 2>&1 || true
cat "$work/lintian.log"
! grep -E '^E: ' "$work/lintian.log" || fail "lintian reports errors"
for tag in $(awk '/^W: / { print $3 }' "$work/lintian.log" | sort -u); do
  grep -q "\`$tag\`" "$src/docs/PACKAGING.md" || fail "lintian warning $tag is not explained in docs/PACKAGING.md"
done

# 4. A throwaway root.
root="$work/root"
rm -rf "$root"
mkdir -p "$root"
dpkg -x "$runtime" "$root"
dpkg -x "$dev" "$root"
export LD_LIBRARY_PATH="$root$lib"

# The command, with the packaged library.
out=$("$root/usr/bin/proctimes" --version)
[ "$(head -1 <<<"$out")" = "proctimes $version" ] || fail "--version: $out"
grep -qx "  eBPF sources: .*" <<<"$out" && grep -qx "  Python binding: .*" <<<"$out" && grep -qx "  exporter: .*" <<<"$out" \
  || fail "--version does not name every optional part: $out"
ldd "$root/usr/bin/proctimes" | has "$soname => $root$lib/$soname" || fail "proctimes does not use the packaged library: $(ldd "$root/usr/bin/proctimes")"

# The exported symbols: the public API, in the ABI namespace
# (include/proctimes/export.h), and not the internals.
nm -D --defined-only -C "$root$lib/libproctimes.so.$version" > "$work/symbols"
for s in 'proctimes_GetProcessTimes$' 'proctimes_KeQuerySystemTime$' 'proctimes::v1::process::open(int)' \
         'proctimes::v1::filetime_from_duration\|proctimes::v1::this_thread::times()' \
         'proctimes::v1::get_boot_anchor()' 'proctimes::v1::native_pidfd(proctimes::v1::child const&)' \
         'proctimes::v1::exit_records_status()' 'proctimes::v1::snapshotter::take()'; do
  grep -q " T .*$s" "$work/symbols" || fail "libproctimes does not export $s"
done
# Every C++ symbol carries the ABI version: none of proctimes outside v1.
! grep -E ' [TBDVW] ([a-z ]+ for )?proctimes::' "$work/symbols" | grep -v ' proctimes::v1::' \
  || fail "libproctimes exports C++ symbols outside the ABI namespace proctimes::v1"
# Nothing but the marked API: no internal namespace, and not the
# implementation types behind the handles.
! grep -E ' [TBDVW] (proctimes::v1::(parse|win32|detail|linux)::|proctimes::v1::[a-z_]+::impl::)' "$work/symbols" \
  || fail "libproctimes exports internal symbols"

# Man pages render without error and hold their text.
for page in "$root/usr/share/man/man1/proctimes.1.gz" "$root/usr/share/man/man3/proctimes.3.gz"; do
  text=$(MANWIDTH=80 man -l "$page" 2>"$work/man.err") || { cat "$work/man.err"; fail "man -l $page"; }
  grep -q "^NAME" <<<"$text" && grep -q "proctimes - " <<<"$text" || fail "$page has no NAME section"
done
MANWIDTH=80 man -l "$root/usr/share/man/man1/proctimes.1.gz" 2>/dev/null | has "^proctimes show" || fail "proctimes(1) lacks the show section"
MANWIDTH=80 man -l "$root/usr/share/man/man3/proctimes.3.gz" 2>/dev/null | has "process::open(pid)" || fail "proctimes(3) lacks the handles table"

# 5. Completion, in a bash without bash-completion loaded.
completion="$root/usr/share/bash-completion/completions/proctimes"
bash --norc --noprofile -c "source '$completion'; complete -p proctimes" | has -x "complete -F _proctimes proctimes" \
  || fail "the completion does not register itself"
complete_words() {  # complete_words WORD... : what Tab offers for the last word
  PATH="$root/usr/bin:$PATH" bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _proctimes proctimes "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' completion "$completion" "$@"
}
subcommands=$("$root/usr/bin/proctimes" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$subcommands" ] && grep -qx show <<<"$subcommands" || fail "no subcommands in --help"
[ "$(complete_words proctimes s | sort)" = "$(grep '^s' <<<"$subcommands" | sort)" ] || fail "proctimes s<Tab> offers: $(complete_words proctimes s)"
complete_words proctimes s | has -x show || fail "proctimes s<Tab> does not offer show"
[ "$(complete_words proctimes '' | sort)" = "$(sort <<<"$subcommands")" ] || fail "proctimes <Tab> does not offer every subcommand"
[ "$(complete_words proctimes show --format '' | tr '\n' ' ')" = "table json csv " ] || fail "--format values"
complete_words proctimes ps --so | has -x -- --sort || fail "ps --so<Tab>"
sleep 30 &
sleeper=$!
trap 'kill $sleeper 2>/dev/null || true' EXIT
# Until it has exec'd, the child is still a copy of this shell, with its name.
for _ in $(seq 100); do
  [ "$(cat "/proc/$sleeper/comm" 2>/dev/null)" = sleep ] && break
  sleep 0.05
done
[ "$(complete_words proctimes watch "$sleeper")" = "$sleeper" ] || fail "watch PID<Tab>: $(complete_words proctimes watch "$sleeper")"
complete_words proctimes show "${sleeper:0:1}" | has -x "$sleeper (sleep)" || fail "show P<Tab> does not list $sleeper (sleep)"
kill $sleeper

# 6. Consumers of the -dev package.
prefix="$root/usr"
rm -rf "$work/c1"
cmake -S "$src/tests/packaging/consumer" -B "$work/c1" -DCONSUME=find_package -DCMAKE_PREFIX_PATH="$prefix" > "$work/c1.log" 2>&1 || { cat "$work/c1.log"; fail "find_package consumer: configure"; }
grep -q "proctimes_DIR:PATH=$root$lib/cmake/proctimes" "$work/c1/CMakeCache.txt" || fail "find_package found another proctimes: $(grep proctimes_DIR "$work/c1/CMakeCache.txt")"
cmake --build "$work/c1" >> "$work/c1.log" 2>&1 || { cat "$work/c1.log"; fail "find_package consumer: build"; }
"$work/c1/consumer" | has "^proctimes $version: created at FILETIME" || fail "find_package consumer output"
ldd "$work/c1/consumer" | has "$soname => $root$lib/$soname" || fail "find_package consumer does not use the packaged shared library"

export PKG_CONFIG_PATH="$root$lib/pkgconfig"
# The .pc file is relocatable: unpacked under $root, it names $root's
# directories with no --define-variable.
flags=$(pkg-config --cflags --libs proctimes)
incdir=$(sed -n 's/^-I\([^ ]*\).*/\1/p' <<<"$flags")
[ -n "$incdir" ] && [ "$(cd "$incdir" && pwd -P)" = "$(cd "$prefix/include" && pwd -P)" ] || fail "pkg-config flags: $flags"
# shellcheck disable=SC2086
c++ -std=c++20 "$src/tests/packaging/consumer/main.cpp" $flags -o "$work/c3" || fail "pkg-config C++ consumer: build"
"$work/c3" | has "^proctimes $version: created at FILETIME" || fail "pkg-config C++ consumer output"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "$src/tests/packaging/consumer/main.c" $flags -o "$work/c4" || fail "pkg-config C consumer: build"
"$work/c4" | has "^proctimes C consumer: created at FILETIME" || fail "pkg-config C consumer output"

echo "packaging.deb: $(basename "$runtime") and $(basename "$dev") built, checked, lintian-clean of errors, installed in $root and used"
