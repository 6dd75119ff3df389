#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion (packaging/bash-completion/proctimes) against the built
# command: every word it offers for an option is an option the command accepts
# (a flag's help text such as "--no-exit-records{false}" is not), and options
# complete for every subcommand.
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
rc=0
"$bin" run --tree --top 3 --trace "$dir/t.json" --svg "$dir/t.svg" -- true 2>/dev/null || rc=$?
[ $rc -ne 2 ] || fail "run --tree --top --trace --svg is refused as a usage error"
# The word offered is accepted by the command.
"$bin" serve --once --no-exit-records --top 0 >/dev/null || fail "serve --no-exit-records is refused"
echo "ok: $checked option words checked"
