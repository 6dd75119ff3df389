#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Which stage of scripts/test.sh each failed CTest test ran in (the same
test runs in the main, ASan and TSan stages), then the last lines of each
failed test whose output has no line that the failure digest already shows
(GoogleTest failures, pytest's E lines, timeouts, sanitizer reports): a
script test (lint, a scratch build) fails with its own words, which would
otherwise be found only far above.

    scripts/failed_tails.py LOG [LINES]    (LINES: 25 unless given)
"""
import re
import sys

FAILED = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*\*\*\*(Failed|Exception)")
NEXT = re.compile(r"^\s+Start\s+\d+: |^\s*\d+/\d+ Test\s+#\d+: |^\d+% tests passed")
STAGE_END = re.compile(r"^test\.sh: (.+?) took \d+ s")
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


def by_stage(lines):
    """(stage, [failed test names]) for each stage with a failed test; a
    stage's tests come before the line that says how long it took."""
    failed = []
    for line in lines:
        m = FAILED.search(line)
        if m:
            failed.append(m.group(1))
            continue
        m = STAGE_END.search(line)
        if m and failed:
            yield m.group(1), failed
            failed = []
    if failed:
        yield "an unfinished stage", failed


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    keep = int(argv[2]) if len(argv) == 3 else 25
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for stage, names in by_stage(lines):
        print(f"--- failed in {stage}: {', '.join(names)}")
    for name, body in blocks(lines):
        if any(SHOWN.search(line) for line in body):
            continue
        print(f"--- {name} failed; its last {min(keep, len(body))} lines:")
        for line in body[-keep:]:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
