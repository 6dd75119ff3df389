#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No `catch (...)` that swallows a failure.

Usage: check_catch.py SOURCE_DIR   (exit 1 and one line per offender, or 0)
       check_catch.py --self-test  (the rule on handlers it must flag and must pass)

Every `catch (...)` handler in the C and C++ sources of src/, include/,
tools/, python/, examples/, bench/, fuzz/ and tests/ must leave a trace of the
failure it catches. Its block (comments removed, string literals kept as
empty literals) passes when it does at least one of:

  rethrow    `throw` (the same exception, or another one);
  count      an increment: `++`, `--`, `+=`, `-=` or `fetch_add(`;
  log        a stream insertion (`<<`), or a call of fprintf, vfprintf, fputs,
             perror or syslog, or of a function whose name contains log, warn
             or report;
  return an error
             a `return` whose expression names an error: an identifier
             containing err, fail or status, an errno constant (E followed by
             capitals: ENOMEM), a Win32 or NT code (ERROR_..., STATUS_...),
             out_of_memory, unexpected or bad_alloc;
  store an error
             an assignment whose target's name contains err, fail, why,
             reason, status, lost or dropped, or whose value is a string
             literal (a message) or an error as above; or a call of a
             function whose name contains fail (a failure handler such as
             on_failure(i), fail<T>(...)).

Everything else is flagged: an empty block, a block of comments, a `return`
of a default (`return -1;`, `return nullptr;`, `return std::nullopt;`,
`return;`), a block that only cleans up (`close(fd);`, `p.reset();`). At an
API boundary (a noexcept function, a C entry point) the conversion to an
error code or an error value is the rule's "return an error".
"""
import pathlib
import re
import sys

DIRS = ("src", "include", "tools", "python", "examples", "bench", "fuzz", "tests")
SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hpp"}

ERROR_WORDS = r"[A-Za-z_]*(?:err|fail|status)[A-Za-z0-9_]*"
ERROR_EXPR = re.compile(
    r"\b" + ERROR_WORDS + r"\b|\bE[A-Z0-9]{2,}\b|\b(?:ERROR|STATUS)_\w+|\bout_of_memory\b|\bunexpected\b|\bbad_alloc\b",
    re.IGNORECASE)
RETHROW = re.compile(r"\bthrow\b")
COUNT = re.compile(r"\+\+|--(?!>)|\+=|-=|\bfetch_add\s*\(")
LOG = re.compile(r"<<|\b(?:fprintf|vfprintf|fputs|perror|syslog)\s*\(|\b\w*(?:log|warn|report)\w*\s*\(", re.IGNORECASE)
RETURN = re.compile(r"\breturn\b([^;]*);")
ASSIGN = re.compile(r"([A-Za-z_][\w.\->\[\]]*)\s*(?<![=!<>])=(?!=)\s*([^;]*);")
STORE_TARGET = re.compile(r"(?:err|fail|why|reason|status|lost|dropped)", re.IGNORECASE)
FAIL_CALL = re.compile(r"\b\w*fail\w*\s*(?:<[^;>]*>)?\s*\(", re.IGNORECASE)


def strip(text):
    """The text with comments blanked and string/char literals emptied, line breaks kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append('""' + "\n" * text.count("\n", i, end))
                i = end
            else:
                out.append(c)
                i += 1
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1] in "0123456789abcdefABCDEF" and \
               text[i + 1:i + 2] in tuple("0123456789abcdefABCDEF"):  # digit separator: 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1 if j < n and text[j] == c else j  # an unclosed literal ends at its line's end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def handlers(code):
    """(line, block) of every catch (...) handler in stripped code."""
    for m in re.finditer(r"\bcatch\s*\(\s*\.\.\.\s*\)\s*\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        yield code.count("\n", 0, m.start()) + 1, code[m.end():j - 1]


def verdict(block):
    """None when the block leaves a trace, else what it does instead."""
    body = " ".join(block.split())
    if RETHROW.search(body) or COUNT.search(body) or LOG.search(body) or FAIL_CALL.search(body):
        return None
    for m in RETURN.finditer(body):
        if ERROR_EXPR.search(m.group(1)):
            return None
    for m in ASSIGN.finditer(body):
        target, value = m.group(1), m.group(2)
        if STORE_TARGET.search(target.split(".")[-1].split(">")[-1]) or value.strip().startswith('""') or \
           ERROR_EXPR.search(value):
            return None
    if not body:
        return "empty block"
    if RETURN.fullmatch(body.strip()):
        return "returns a default (" + body.strip() + ")"
    return "neither counts, logs, rethrows nor returns or stores an error (" + body.strip()[:60] + ")"


# The rule on handlers it must flag and handlers it must pass (--self-test).
MUST_FLAG = (
    "try { f(); } catch (...) {}",
    "try { f(); } catch (...) {\n    // out of memory: nothing to do\n}",
    "try { f(); } catch (...) { return -1; }",
    "try { f(); } catch (...) { return nullptr; }",
    "try { f(); } catch (...) { return std::nullopt; }",
    "try { f(); } catch (...) { ::close(fd); }",
    "try { f(); } catch (...) { p.reset(); }",
    "try { f(); } catch (...) { done = true; }",
    "try { f(); } catch (...) { /* throw; */ }",
    'try { f(); } catch (...) { x = y; } // "ENOMEM"',
)
MUST_PASS = (
    "try { f(); } catch (...) { cleanup(); throw; }",
    "try { f(); } catch (...) { ++lost_; }",
    "try { f(); } catch (...) { dropped.fetch_add(1); }",
    'try { f(); } catch (...) { std::cerr << "failed"; }',
    'try { f(); } catch (...) { report_once(flag, "no thread"); }',
    "try { f(); } catch (...) { return errno_code(ENOMEM); }",
    "try { f(); } catch (...) { return make_error_code(std::errc::not_enough_memory); }",
    "try { f(); } catch (...) { return ERROR_NOT_ENOUGH_MEMORY; }",
    "try { f(); } catch (...) { return -ENOMEM; }",
    'try { f(); } catch (...) { why = "bpf: out of memory"; return nullptr; }',
    "try { f(); } catch (...) { st.error = errno_code(ENOMEM); }",
    "try { f(); } catch (...) { on_failure(i); }",
    "try { f(); } catch (...) { return fail<BOOL>(FALSE, error_from_current_exception()); }",
)


def self_test():
    bad = 0
    for code, want_flag in [(c, True) for c in MUST_FLAG] + [(c, False) for c in MUST_PASS]:
        found = [verdict(block) for _, block in handlers(strip(code))]
        if len(found) != 1 or (found[0] is not None) != want_flag:
            bad += 1
            print(f"check_catch self-test: {'not flagged' if want_flag else 'flagged'}: {code!r} ({found})")
    print(f"check_catch self-test: {len(MUST_FLAG)} flagged, {len(MUST_PASS)} passed, {bad} wrong")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = pathlib.Path(sys.argv[1])
    found = 0
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            code = strip(path.read_text(encoding="utf-8", errors="replace"))
            for line, block in handlers(code):
                why = verdict(block)
                if why:
                    found += 1
                    print(f"{path.relative_to(root)}:{line}: catch (...) that swallows the failure: {why}")
    if found:
        print(f"check_catch: {found} catch (...) handler(s) leave no count, log or error "
              "(the rule: tests/layout/check_catch.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
