#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks the tree against .clang-format and .clang-tidy without changing it.
#   scripts/lint.sh [format|tidy]...   (default: both)
# format: clang-format --dry-run -Werror on every C/C++ file git knows.
# tidy:   clang-tidy on every translation unit of build/compile_commands.json
#         (configure build/ first: scripts/bootstrap.sh or cmake -S . -B build;
#         CMAKE_EXPORT_COMPILE_COMMANDS is on). Set BUILD_DIR for another build.
# Prints one summary line per tool and exits non-zero when either finds something.
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
      bad=0
      for f in "${files[@]}"; do
        clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "format: $f"; bad=$((bad + 1)); }
      done
      echo "clang-format: $bad of ${#files[@]} files would change"
      ((bad == 0)) || status=1
      ;;
    tidy)
      if [ ! -f "$build/compile_commands.json" ]; then
        echo "lint.sh: no $build/compile_commands.json (configure $build first)" >&2
        exit 2
      fi
      log=$(mktemp)
      # Only the project's own translation units (not CMake's probes or generated files).
      mapfile -t tus < <(python3 -c 'import json,sys; [print(e["file"]) for e in json.load(open(sys.argv[1]))]' \
                           "$build/compile_commands.json" | grep -v "/$build/" | sort -u)
      printf '%s\n' "${tus[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet >"$log" 2>/dev/null
      n=$(grep -cE '^/.*:[0-9]+:[0-9]+: (warning|error):' "$log")
      grep -E '^/.*:[0-9]+:[0-9]+: (warning|error):' "$log" | sort -u | sed "s|^$PWD/||"
      echo "clang-tidy: $n diagnostics in ${#tus[@]} translation units"
      rm -f "$log"
      ((n == 0)) || status=1
      ;;
    *) echo "lint.sh: unknown check '$kind'" >&2; exit 2 ;;
  esac
done
exit $status
