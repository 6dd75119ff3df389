#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the tree against .clang-format and .clang-tidy without changing it.
#   scripts/lint.sh [format|tidy]...   (default: both)
# format: clang-format --dry-run -Werror on every C/C++ file git knows.
# tidy:   clang-tidy on every translation unit of build/compile_commands.json
#         and on the sources only another configuration builds, skipping units
#         unchanged since they passed (scripts/tidy_check.py). Configure build/
#         first (scripts/bootstrap.sh or cmake -S . -B build;
#         CMAKE_EXPORT_COMPILE_COMMANDS is on). Set BUILD_DIR for another build.
# Prints one summary line per tool and exits non-zero when either finds
# something; 77 when clang-tidy is not installed and nothing else failed.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
kinds=("$@")
((${#kinds[@]})) || kinds=(format tidy)
status=0
for kind in "${kinds[@]}"; do
  case "$kind" in
    format)
      mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.c')
      # Many files per clang-format process, one process per core: it names
      # each file it would change in its diagnostics ("FILE:LINE:COL: error:").
      diags=$(mktemp)
      formatted=0
      printf '%s\0' "${files[@]}" | xargs -0 -n 40 -P "$(nproc)" clang-format --dry-run -Werror 2>"$diags" >/dev/null ||
        formatted=$?
      mapfile -t changed < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*/\1/p' "$diags" | sort -u)
      for f in "${changed[@]}"; do echo "format: $f"; done
      bad=${#changed[@]}
      echo "clang-format: $bad of ${#files[@]} files would change"
      if ((formatted != 0 && bad == 0)); then
        echo "clang-format failed without naming a file to change:"
        head -20 "$diags"
        bad=1
      fi
      rm -f "$diags"
      ((bad == 0)) || status=1
      ;;
    tidy)
      # scripts/tidy_check.py: which units, the cache of passed ones, exit codes.
      python3 scripts/tidy_check.py --build "$build"
      rc=$?
      if ((rc == 77)); then
        ((status != 0)) || status=77  # clang-tidy absent: skipped, unless something else failed
      elif ((rc != 0)); then
        status=1
      fi
      ;;
    *) echo "lint.sh: unknown check '$kind'" >&2; exit 2 ;;
  esac
done
exit $status
