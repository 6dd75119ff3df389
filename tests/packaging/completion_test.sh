#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion (packaging/bash-completion/proctimes) against the built
# command: every word it offers for an option is an option the command accepts
# (a flag's help text such as "--no-exit-records{false}" is not), options
# complete for every subcommand, also after a flag, and the values of top's,
# record's and report's options complete: their formats and group-by words,
# files for --store, user names for --user, pids for --pid.
#   completion_test.sh COMPLETION_FILE PROCTIMES_BINARY
set -euo pipefail
completion=$1
bin=$(readlink -f "$2")
fail() { echo "FAIL: $*" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$bin" "$dir/proctimes"
complete_words() {  # complete_words WORD... : what Tab offers for the last word
  PATH="$dir:$PATH" bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _proctimes proctimes "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' completion "$completion" "$@"
}
subcommands=$("$bin" --help | awk '/^Subcommands:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on && /^  [a-z]/ { print $1 }')
[ -n "$subcommands" ] || fail "no subcommands in --help"
checked=0
for sub in "" $subcommands; do
  words=$(complete_words proctimes $sub -)
  [ -n "$words" ] || fail "proctimes $sub -<Tab> offers nothing"
  while read -r w; do
    [[ $w =~ ^--?[A-Za-z0-9][A-Za-z0-9-]*$ ]] || fail "proctimes $sub -<Tab> offers '$w', not an option"
    checked=$((checked + 1))
  done <<<"$words"
done
[ "$(complete_words proctimes serve --no-exit-r)" = "--no-exit-records" ] \
  || fail "proctimes serve --no-exit-r<Tab> offers: $(complete_words proctimes serve --no-exit-r)"
# A flag that CLI11 annotates ("--tree Excludes: --threads") takes no value:
# the command to run completes after it, and so do the other options.
for flag in --tree --threads; do
  offered=$(complete_words proctimes run "$flag" tru)
  grep -qx true <<<"$offered" || fail "proctimes run $flag tru<Tab> does not offer 'true': $offered"
done
[ "$(complete_words proctimes run --tree --tra)" = "--trace" ] \
  || fail "proctimes run --tree --tra<Tab> offers: $(complete_words proctimes run --tree --tra)"
# A flag's description is no value: the options complete after a flag.
for words in "top -b" "top --replay" "report --all" "record -q" "ps --threads"; do
  offered=$(complete_words proctimes $words --)
  grep -qx -- --help <<<"$offered" || fail "proctimes $words --<Tab> offers: $offered"
done
[ "$(complete_words proctimes top --replay --st)" = "--store" ] \
  || fail "proctimes top --replay --st<Tab> offers: $(complete_words proctimes top --replay --st)"
# top, record, report: the values of their options.
expect_words() {  # expect_words "WORD..." ARGS...: Tab offers exactly these words (any order)
  local want=$1 got
  shift
  got=$(complete_words proctimes "$@" | sort | xargs)
  [ "$got" = "$(printf '%s\n' $want | sort | xargs)" ] || fail "proctimes $*<Tab> offers '$got', not '$want'"
}
expect_words "table json" top --format ""
expect_words "json" top -f j
expect_words "table json csv" report --format ""
expect_words "program user cgroup" report --group-by ""
expect_words "cgroup" report -g c
expect_words "user" report --group-by = u
touch "$dir/store.db" "$dir/store-old.db"
expect_words "$dir/store.db $dir/store-old.db" record --store "$dir/sto"
expect_words "$dir/store.db $dir/store-old.db" record -s "$dir/sto"
expect_words "$dir/store.db" report -s "$dir/store."
expect_words "$dir/store-old.db" top --replay --store "$dir/store-"
expect_words "root" top --user roo
expect_words "root" top -u roo
# A free-form value (a time, a duration, a size) offers nothing, not options.
expect_words "" report --from ""
expect_words "" record --interval ""
expect_words "" record --retain ""
# top --pid: the pids that start with the digits typed, also after PID,PID,
sleep 30 >/dev/null 2>&1 &
sleeper=$!
trap 'kill "$sleeper" 2>/dev/null || true; rm -rf "$dir"' EXIT
offered=$(complete_words proctimes top --pid "$sleeper")
grep -qE "^$sleeper( \(.*\))?$" <<<"$offered" || fail "proctimes top --pid $sleeper<Tab> offers: $offered"
offered=$(complete_words proctimes top -p "1,$sleeper")
grep -qE "^1,$sleeper( \(.*\))?$" <<<"$offered" || fail "proctimes top -p 1,$sleeper<Tab> offers: $offered"
kill "$sleeper"
wait "$sleeper" 2>/dev/null || true
rc=0
"$bin" run --tree --top 3 --trace "$dir/t.json" --svg "$dir/t.svg" -- true 2>/dev/null || rc=$?
[ $rc -ne 2 ] || fail "run --tree --top --trace --svg is refused as a usage error"
# The word offered is accepted by the command.
"$bin" serve --once --no-exit-records --top 0 >/dev/null || fail "serve --no-exit-records is refused"
echo "ok: $checked option words checked"
