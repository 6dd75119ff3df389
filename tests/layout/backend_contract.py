# SPDX-License-Identifier: MIT
"""What a backend implements, read off a build's object files, against the
list in docs/DESIGN.md ("What a backend implements").

A backend is one of the per-backend source lists of CMakeLists.txt
(PROCTIMES_LINUX_SOURCES, _STUB_, _WINDOWS_). Its obligations fall in three
groups, each computed from the stub build, whose backend defines nothing but
its obligations:

  hooks   functions of proctimes::detail that the portable sources
          (PROCTIMES_PORTABLE_SOURCES) call and the backend defines;
  public  functions of the public API (default visibility) that the backend
          defines;
  posix   what the sources a backend may add beside its own (the POSIX part
          and the Win32 layer: PROCTIMES_POSIX_SOURCES, _WIN32_LAYER_) call
          and the backend defines: owed by the backends that carry them
          (linux and stub), not by windows;
  internal what the seam declares for a backend's own code (no portable
          source calls it): the stub defines it so that every declaration
          of the seam has a definition; owed by linux and stub.

  backend_contract.py derive  SRC BUILD          print the groups (stub build)
  backend_contract.py check   SRC BUILD          the stub build's groups equal DESIGN.md's list
  backend_contract.py defines SRC BUILD NAME NM  backend NAME's objects define its groups

BUILD is a CMake build directory of SRC (CMakeFiles/proctimes.dir holds the
objects, .o or .obj); NM is the nm of its toolchain. Exits 1 naming every
difference, 2 on bad input.
"""
import os
import re
import subprocess
import sys

BEGIN = "<!-- backend contract: begin -->"
END = "<!-- backend contract: end -->"
GROUPS = ("hooks", "public", "posix", "internal")


def fail(msg, code=2):
    print(f"backend_contract: {msg}", file=sys.stderr)
    sys.exit(code)


def source_list(src, name):
    text = open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"set\(PROCTIMES_%s_SOURCES\n(.*?)\n\)" % name, text, re.S)
    if not m:
        fail(f"CMakeLists.txt has no PROCTIMES_{name}_SOURCES list")
    return re.findall(r"^\s*(src/\S+\.cpp)", m.group(1), re.M)


def objects(build, sources):
    base = os.path.join(build, "CMakeFiles", "proctimes.dir")
    found = []
    for s in sources:
        for ext in (".o", ".obj"):
            p = os.path.join(base, s + ext)
            if os.path.exists(p):
                found.append(p)
                break
        else:
            fail(f"{s} has no object in {base}")
    return found


def demangle(names):
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return dict(zip(names, out.splitlines()))


def plain(demangled):
    """proctimes::v1::detail::core_name[abi:cxx11](proctimes::v1::detail::task_core const&)
    -> proctimes::detail::core_name (DESIGN.md names them without the ABI namespace)"""
    name = demangled.split("(", 1)[0]
    return re.sub(r"^proctimes::v[0-9]+::", "proctimes::", name.replace("[abi:cxx11]", ""))


def symbols(nm, objs, undefined=False):
    """Mangled names of the strong (T) definitions, or of the undefined references."""
    args = [nm, "-u" if undefined else "--defined-only", "-g"] + objs
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if undefined and len(f) == 2 and f[0] == "U":
            names.add(f[1])
        elif not undefined and len(f) == 3 and f[1] == "T":
            names.add(f[2])
    return names


def default_visibility(objs):
    """Mangled names of the functions defined with default visibility (ELF)."""
    names = set()
    for o in objs:
        out = subprocess.run(["readelf", "-sW", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 8 and f[3] == "FUNC" and f[4] == "GLOBAL" and f[5] == "DEFAULT" and f[6] != "UND":
                names.add(f[7])
    return names


def derive(src, build):
    stub = objects(build, source_list(src, "STUB"))
    portable = objects(build, source_list(src, "PORTABLE"))
    beside = objects(build, source_list(src, "POSIX") + source_list(src, "WIN32_LAYER"))
    defined = symbols("nm", stub)
    d = demangle(sorted(defined))
    names = lambda s: {plain(d[m]) for m in s if d[m].startswith("proctimes::")}
    public = names(default_visibility(stub) & defined)
    hooks = names(symbols("nm", portable, undefined=True) & defined) - public
    posix = names(symbols("nm", beside, undefined=True) & defined) - public - hooks
    internal = names(defined) - public - hooks - posix
    return {g: sorted(v) for g, v in zip(GROUPS, (hooks, public, posix, internal))}


def documented(src):
    text = open(os.path.join(src, "docs", "DESIGN.md"), encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        fail(f"docs/DESIGN.md has no '{BEGIN}' ... '{END}' block")
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    groups, current = {g: [] for g in GROUPS}, None
    for line in block.splitlines():
        m = re.match(r"^\*\*(\w+)\*\*", line.strip())
        if m and m.group(1) in groups:
            current = m.group(1)
        for name in re.findall(r"`(proctimes::[\w:~]+)`", line):
            if current is None:
                fail(f"docs/DESIGN.md names {name} before a **group** heading")
            groups[current].append(name)
    return {g: sorted(set(v)) for g, v in groups.items()}


def main(argv):
    if len(argv) < 3 or argv[0] not in ("derive", "check", "defines"):
        fail(__doc__.strip().split("\n\n")[-2])
    mode, src, build = argv[0], argv[1], argv[2]
    if mode == "derive":
        for g, names in derive(src, build).items():
            print(f"**{g}**")
            for n in names:
                print(f"  `{n}`")
        return 0
    if mode == "check":
        have, doc = derive(src, build), documented(src)
        status = 0
        for g in GROUPS:
            for n in sorted(set(have[g]) - set(doc[g])):
                print(f"backend_contract: {g}: {n} is owed by a backend but docs/DESIGN.md does not list it")
                status = 1
            for n in sorted(set(doc[g]) - set(have[g])):
                print(f"backend_contract: {g}: docs/DESIGN.md lists {n}, which no backend owes")
                status = 1
        if status == 0:
            print(f"backend contract: {sum(len(v) for v in doc.values())} functions, as docs/DESIGN.md lists them")
        return status
    if len(argv) != 5:
        fail("defines needs SRC BUILD NAME NM")
    name, nm = argv[3], argv[4]
    # The backend's list, and whatever else of its folder the build added
    # (the Linux eBPF sources, chosen at configure time).
    own = objects(build, source_list(src, name.upper()))
    folder = os.path.join(build, "CMakeFiles", "proctimes.dir", "src", name)
    for root, _, files in os.walk(folder):
        own += [os.path.join(root, f) for f in files if f.endswith((".o", ".obj")) and os.path.join(root, f) not in own]
    defined = {plain(v) for v in demangle(sorted(symbols(nm, own))).values()}
    owed = documented(src)
    groups = ("hooks", "public") if name == "windows" else GROUPS
    missing = [f"{g}: {n}" for g in groups for n in owed[g] if n not in defined]
    for m in missing:
        print(f"backend_contract: the {name} backend does not define {m}")
    if not missing:
        print(f"backend contract: the {name} backend defines all {sum(len(owed[g]) for g in groups)} functions it owes")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
