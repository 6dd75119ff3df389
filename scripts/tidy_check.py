#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs clang-tidy (the tree's .clang-tidy) over every translation unit of a
configured build, and over the sources of src/ and tools/ that this build's
configuration does not compile (the stub backend, the eBPF fallback), and
prints each diagnostic once.

    scripts/tidy_check.py [--build DIR] [--jobs N] [--no-cache]

What is checked: the project's own files in DIR/compile_commands.json (src/,
tools/, tests/, examples/, python/src/; not CMake's probes nor anything under
the build directory); plus every git-tracked .cpp of src/ and tools/ absent
from it, checked with the flags of a compiled file of the same part. bench/ and
fuzz/ are built only in their own configurations (Google Benchmark; clang with
libFuzzer) and are not checked; nor the eBPF C programs (src/linux/bpf/*.bpf.c,
compiled for -target bpf against a generated vmlinux.h).

Cache: a translation unit that passed is not checked again while nothing that
decides its result changed. Its key hashes the clang-tidy version, every
.clang-tidy of the tree, its compile command, and the contents of the file and
of every header it includes (from the compiler's dependency file in the build
directory, or from `-M` when there is none), with paths taken relative to the
source and build directories. The keys live in DIR/tidy/passed, or in
$PROCTIMES_TIDY_CACHE/passed (a directory several checkouts or build
directories may share); --no-cache ignores them. A unit with a diagnostic is never
cached, so a failing tree fails every time.

Exit status: 0 clean, 1 diagnostics (or clang-tidy failed on a unit), 2 no
compile_commands.json, 77 clang-tidy not installed (CTest counts it skipped).
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
CHECKED_DIRS = ("src/", "tools/", "tests/", "examples/", "python/src/")
# Sources compiled only in another configuration: checked with a donor's flags.
UNBUILT_DIRS = ("src/", "tools/")
DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): (?P<msg>.*)$")


def find_clang_tidy():
    for name in (os.environ.get("CLANG_TIDY"), "clang-tidy", "clang-tidy-14", "clang-tidy-15", "clang-tidy-16"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def rel(path):
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def command_args(entry):
    return entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])


def select_units(db, build):
    """The entries to check, one per file, plus entries made for unbuilt sources."""
    build = os.path.realpath(build)
    units = {}
    for e in db:
        f = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if f.startswith(build + os.sep) or not f.startswith(ROOT + os.sep):
            continue
        if not rel(f).startswith(CHECKED_DIRS) or f.endswith(".bpf.c"):
            continue
        units.setdefault(f, dict(e, file=f))
    tracked = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--", *UNBUILT_DIRS], capture_output=True,
                             check=False).stdout.decode().split("\0")
    for path in sorted(p for p in tracked if p.endswith(".cpp")):
        f = os.path.join(ROOT, path)
        if f in units or not os.path.exists(f):
            continue
        # The Windows backend and the command's Windows files (*_windows.cpp)
        # need Windows headers, which no donor's flags have:
        # tests/windows/tidy_windows.sh checks them against mingw-w64's.
        if path.startswith("src/windows/") or path.endswith("_windows.cpp"):
            continue
        # The donor: a compiled .cpp of the same top folder (src/ or tools/),
        # preferring the same directory, then the parent's.
        top = path.split("/")[0] + "/"
        donors = [u for u in units if rel(u).startswith(top) and u.endswith(".cpp")]
        if not donors:
            continue
        d = os.path.dirname(f)
        donors.sort(key=lambda u: (0 if os.path.dirname(u) == d else 1 if os.path.dirname(u) == os.path.dirname(d)
                                   else 2, u))
        donor = units[donors[0]]
        args = [a if a != donor["file"] else f for a in command_args(donor)]
        if f not in args:
            args = [a for a in args if os.path.realpath(os.path.join(donor["directory"], a)) != donor["file"]] + [f]
        units[f] = {"directory": donor["directory"], "file": f, "arguments": drop_output(args), "donor": donor["file"]}
    return units


def drop_output(args):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        out.append(a)
    return out


def output_of(args):
    for i, a in enumerate(args):
        if a == "-o" and i + 1 < len(args):
            return args[i + 1]
    return None


def parse_depfile(text):
    text = text.replace("\\\n", " ")
    _, _, deps = text.partition(": ")
    files = []
    for t in re.split(r"(?<!\\) ", deps):
        t = t.strip().replace("\\ ", " ")
        if t:
            files.append(t)
    return files


def dependencies(unit):
    """The files the unit reads: its compiler dependency file, or -M."""
    args = command_args(unit)
    obj = output_of(args)
    if obj and "donor" not in unit:
        depfile = os.path.join(unit["directory"], obj + ".d")
        if os.path.exists(depfile):
            with open(depfile, encoding="utf-8", errors="replace") as fh:
                return [os.path.join(unit["directory"], p) for p in parse_depfile(fh.read())]
    r = subprocess.run(drop_output(args) + ["-M", "-MF", "/dev/stdout"], cwd=unit["directory"], capture_output=True,
                       check=False)
    if r.returncode != 0:
        return None  # not cacheable: clang-tidy will say what is wrong
    return [os.path.join(unit["directory"], p) for p in parse_depfile(r.stdout.decode(errors="replace"))]


class Hasher:
    def __init__(self):
        self.known = {}

    def file(self, path):
        path = os.path.realpath(path)
        if path not in self.known:
            h = hashlib.sha256()
            try:
                with open(path, "rb") as fh:
                    h.update(fh.read())
                self.known[path] = h.hexdigest()
            except OSError:
                self.known[path] = "missing"
        return self.known[path]


def unit_key(unit, common, hasher, build):
    deps = dependencies(unit)
    if deps is None:
        return None

    # Paths in the key are relative to the source and build directories, so
    # that a unit's result holds for another checkout or build directory of
    # the same files (PROCTIMES_TIDY_CACHE shared between them).
    def norm(text):
        return text.replace(build, "<build>").replace(ROOT, "<src>")

    h = hashlib.sha256(common.encode())
    h.update(norm(json.dumps([unit["directory"]] + command_args(unit))).encode())
    for p in sorted({os.path.realpath(p) for p in deps + [unit["file"]]}):
        h.update(f"\0{norm(p)}\0{hasher.file(p)}".encode())
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("BUILD_DIR", "build"))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("PROCTIMES_TIDY_JOBS", os.cpu_count() or 1)))
    ap.add_argument("--no-cache", action="store_true")
    opts = ap.parse_args()
    build = os.path.realpath(os.path.join(ROOT, opts.build))

    tidy = find_clang_tidy()
    if not tidy:
        print("tidy: clang-tidy is not installed (Debian: apt-get install clang-tidy); not checked")
        return 77
    db_path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db_path):
        print(f"tidy: no {db_path} (configure the build first; CMAKE_EXPORT_COMPILE_COMMANDS is on)",
              file=sys.stderr)
        return 2
    with open(db_path, encoding="utf-8") as fh:
        units = select_units(json.load(fh), build)

    version = subprocess.run([tidy, "--version"], capture_output=True, check=False).stdout.decode()
    configs = sorted(subprocess.run(["git", "-C", ROOT, "ls-files", "--", "*.clang-tidy", ".clang-tidy"],
                                    capture_output=True, check=False).stdout.decode().split())
    hasher = Hasher()
    common = version + "".join(f"\0{c}\0{hasher.file(os.path.join(ROOT, c))}" for c in configs)

    work = os.path.join(build, "tidy")
    os.makedirs(work, exist_ok=True)
    cache_dir = os.environ.get("PROCTIMES_TIDY_CACHE") or work
    os.makedirs(cache_dir, exist_ok=True)
    cache_path = os.path.join(cache_dir, "passed")
    passed_before = set()
    if not opts.no_cache and os.path.exists(cache_path):
        with open(cache_path, encoding="utf-8") as fh:
            passed_before = set(fh.read().split())

    keys = {f: unit_key(u, common, hasher, build) for f, u in units.items()}
    # The units only this script compiles first: they are the likeliest to
    # have been missed by anyone's build.
    todo = sorted((f for f in units if keys[f] is None or keys[f] not in passed_before),
                  key=lambda f: ("donor" not in units[f], f))

    # One compile database for this run (the build's entries and the made ones).
    db_dir = tempfile.mkdtemp(prefix="db.", dir=work)
    with open(os.path.join(db_dir, "compile_commands.json"), "w", encoding="utf-8") as fh:
        json.dump([{"directory": u["directory"], "file": u["file"], "arguments": command_args(u)}
                   for u in units.values()], fh)

    def run(f):
        # The generated eBPF skeletons embed the BPF object as one string literal
        # (hundreds of KiB), which -Wpedantic's overlength-strings reports.
        r = subprocess.run([tidy, "-p", db_dir, "--quiet", "--extra-arg=-Wno-overlength-strings", f],
                           capture_output=True, check=False)
        return f, r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    start = time.monotonic()
    diags, failed, passed_now = {}, [], set()
    # Each pass is appended at once, so that a run cut short (a CTest
    # timeout) keeps what it has checked.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool, \
            open(cache_path, "a", encoding="utf-8") as journal:
        for f, rc, out, err in pool.map(run, todo):
            found = False
            for line in out.splitlines():
                m = DIAG.match(line)
                if m:
                    found = True
                    diags.setdefault(f"{rel(m['file'])}:{m['line']}:{m['col']}: {m['kind']}: {m['msg']}", f)
            if rc != 0 and not found:
                failed.append((f, rc, err.strip().splitlines()[-5:]))
            if rc == 0 and not found and keys[f]:
                passed_now.add(keys[f])
                journal.write(keys[f] + "\n")
                journal.flush()
    shutil.rmtree(db_dir, ignore_errors=True)

    # Add the units that passed now. Keys of other trees sharing the cache, and
    # of earlier versions of files, stay until the file grows past a bound.
    clean = passed_before | passed_now
    if len(clean) > 20000:
        clean = {keys[f] for f in units if keys[f] in passed_before} | passed_now
    with tempfile.NamedTemporaryFile("w", dir=cache_dir, prefix="passed.", delete=False, encoding="utf-8") as fh:
        fh.write("\n".join(sorted(clean)) + "\n")
    os.replace(fh.name, cache_path)

    for d in sorted(diags):
        print(d)
    for f, rc, tail in failed:
        print(f"tidy: clang-tidy failed ({rc}) on {rel(f)}: " + " | ".join(tail))
    made = sum(1 for u in units.values() if "donor" in u)
    print(f"clang-tidy: {len(diags)} diagnostics in {len(units)} translation units "
          f"({made} not built here; {len(todo)} checked, {len(units) - len(todo)} unchanged since they passed) "
          f"in {time.monotonic() - start:.0f} s")
    return 1 if diags or failed else 0


if __name__ == "__main__":
    sys.exit(main())
