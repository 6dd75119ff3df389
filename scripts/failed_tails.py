#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The last lines of each failed CTest test whose output has no line that
scripts/test.sh's failure digest already shows (GoogleTest failures, pytest's
E lines, timeouts, sanitizer reports): a script test (lint, a scratch build)
fails with its own words, which would otherwise be found only far above.

    scripts/failed_tails.py LOG [LINES]    (LINES: 25 unless given)
"""
import re
import sys

FAILED = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*\*\*\*(Failed|Exception)")
NEXT = re.compile(r"^\s+Start\s+\d+: |^\s*\d+/\d+ Test\s+#\d+: |^\d+% tests passed")
SHOWN = re.compile(r": Failure$|^E  |\*\*\*Timeout|Exception: |ERROR: [A-Za-z]*Sanitizer|runtime error:")


def blocks(lines):
    """(test name, its output lines) for each failed test, in order."""
    name, body = None, []
    for line in lines:
        if name is not None and NEXT.search(line):
            yield name, body
            name, body = None, []
        m = FAILED.search(line)
        if m:
            name, body = m.group(1), []
        elif name is not None:
            body.append(line)
    if name is not None:
        yield name, body


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    keep = int(argv[2]) if len(argv) == 3 else 25
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for name, body in blocks(lines):
        if any(SHOWN.search(line) for line in body):
            continue
        print(f"--- {name} failed; its last {min(keep, len(body))} lines:")
        for line in body[-keep:]:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
