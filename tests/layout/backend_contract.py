# SPDX-License-Identifier: MIT
"""What a backend owes, read from the one seam file, src/backend/backend.hpp,
against what a build's object files define.

The seam file marks its obligations in groups ("// contract: <group>"):

  hooks        the proctimes::detail functions the portable sources call;
  public       functions of the public headers whose state is the
               platform's own, re-declared there by name (members of public
               classes, which C++ cannot re-declare, on "// owes: <name>"
               lines);
  win32_layer  what the Win32 layer needs of the platform: owed by the
               backends built with it (linux and stub), not by windows;
  given        not owed (what the portable part gives a backend).

A backend is one of the per-backend source lists of CMakeLists.txt
(PROCTIMES_LINUX_SOURCES, _STUB_, _WINDOWS_), with whatever else of its folder
the build added, and, for linux and stub, the POSIX sources and the Win32
layer they are built with.

  backend_contract.py list    SRC                print the obligations
  backend_contract.py defines SRC BUILD NAME NM  backend NAME's objects define
                                                 every obligation it owes
  backend_contract.py check   SRC BUILD          the stub build: as defines,
                                                 and the stub's own objects
                                                 define nothing the seam file
                                                 does not list

BUILD is a CMake build directory of SRC (CMakeFiles/proctimes.dir holds the
objects, .o or .obj); NM is the nm of its toolchain. Exits 1 naming every
difference, 2 on bad input.
"""
import os
import re
import subprocess
import sys

SEAM = os.path.join("src", "backend", "backend.hpp")
OWED = ("hooks", "public", "win32_layer")
GROUPS = OWED + ("given",)
NOT_DECLARATIONS = {"using", "typedef", "template", "friend", "static_assert", "class", "struct", "enum", "union"}


def fail(msg, code=2):
    print(f"backend_contract: {msg}", file=sys.stderr)
    sys.exit(code)


def obligations(src):
    """{group: sorted names} of the seam file: every function declared (not
    defined) at namespace scope in an owed group, named with its namespaces
    (proctimes::detail::core_name; the inline ABI namespace left out), and
    every name of an "owes:" line."""
    path = os.path.join(src, SEAM)
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    text = re.sub(r"//\s*contract:\s*(\w+).*", r" @group \1 ", text)
    text = re.sub(r"//\s*owes:\s*([\w:~]+).*", r" @owes \1 ", text)
    text = re.sub(r"/\*.*?\*/", " ", re.sub(r"//.*", "", text), flags=re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    tokens = re.findall(r"@owes [\w:~]+|@\w+|~?[A-Za-z_]\w*|::|\S", text)
    groups = {g: set() for g in GROUPS}
    group, scopes, stmt, parens, i = None, [], [], 0, 0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if t == "@group" or t.startswith("@owes "):
            if t == "@group":
                name = tokens[i]
                i += 1
                if name not in groups:
                    fail(f"{SEAM}: unknown group '{name}' (groups: {', '.join(GROUPS)})")
                group = name
            elif group is None:
                fail(f"{SEAM}: owes {t[6:]} before a 'contract:' group")
            else:
                groups[group].add(t[6:])
            continue
        if t == "(":
            parens += 1
        elif t == ")":
            parens -= 1
        if t == "{" and parens == 0:
            if stmt[:1] == ["namespace"]:
                scopes.append([w for w in stmt[1:] if w not in ("::", "inline") and not re.fullmatch(r"v\d+", w)])
                stmt = []
                continue
            depth = 1  # a class, enum or function body: skip it
            while depth and i < len(tokens):
                depth += {"{": 1, "}": -1}.get(tokens[i], 0)
                i += 1
            if stmt[:1] and stmt[0] in ("class", "struct", "enum", "union"):
                stmt.append("{}")  # the declaration ends at its ';'
            else:
                stmt = []  # a definition: nothing owed
            continue
        if t == "}" and parens == 0:
            if not scopes:
                fail(f"{SEAM}: unbalanced braces")
            scopes.pop()
            stmt = []
            continue
        if t == ";" and parens == 0:
            name = declared_function(stmt)
            if name and group in OWED:
                groups[group].add("::".join([w for s in scopes for w in s] + [name]))
            stmt = []
            continue
        stmt.append(t)
    return {g: sorted(v) for g, v in groups.items()}


def declared_function(stmt):
    """The name a declaration statement declares, if it is a function's."""
    if not stmt or stmt[0] in NOT_DECLARATIONS or "(" not in stmt:
        return None
    angle = 0
    for k, t in enumerate(stmt):
        if t == "<":
            angle += 1
        elif t == ">":
            angle -= 1
        elif t == "(" and angle == 0:
            j = k - 1
            while j - 2 >= 0 and stmt[j - 1] == "::":
                j -= 2
            return "".join(stmt[j:k])
    return None


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


def backend_objects(src, build, name):
    """The objects of backend NAME: its list, whatever else of its folder the
    build added (the Linux eBPF sources, chosen at configure time), and for
    linux and stub the POSIX sources and the Win32 layer."""
    own = objects(build, source_list(src, name.upper()))
    folder = os.path.join(build, "CMakeFiles", "proctimes.dir", "src", name)
    for root, _, files in os.walk(folder):
        own += [os.path.join(root, f) for f in files if f.endswith((".o", ".obj")) and os.path.join(root, f) not in own]
    beside = [] if name == "windows" else objects(build, source_list(src, "POSIX") + source_list(src, "WIN32_LAYER"))
    return own, beside


def plain(demangled):
    """proctimes::v1::detail::core_name[abi:cxx11](proctimes::v1::detail::task_core const&)
    -> proctimes::detail::core_name (the seam file's names, without the ABI namespace)"""
    name = demangled.split("(", 1)[0]
    return re.sub(r"^proctimes::v[0-9]+::", "proctimes::", name.replace("[abi:cxx11]", ""))


def defined(nm, objs):
    """Plain names of the functions the objects define (strong, T)."""
    if not objs:
        return set()
    out = subprocess.run([nm, "--defined-only", "-g"] + objs, capture_output=True, text=True, check=True).stdout
    mangled = sorted({f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] == "T"})
    if not mangled:
        return set()
    names = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True, check=True).stdout
    return {plain(n) for n in names.splitlines()}


def owed_by(name):
    return ("hooks", "public") if name == "windows" else OWED


def missing(src, build, name, nm):
    own, beside = backend_objects(src, build, name)
    have = defined(nm, own + beside)
    owed = obligations(src)
    lacks = [(g, n) for g in owed_by(name) for n in owed[g] if n not in have]
    for g, n in lacks:
        print(f"backend_contract: the {name} backend does not define {n} ({g}, {SEAM})")
    return lacks, sum(len(owed[g]) for g in owed_by(name)), own


def main(argv):
    if len(argv) < 2 or argv[0] not in ("list", "defines", "check"):
        fail(__doc__.strip().split("\n\n")[-2])
    mode, src = argv[0], argv[1]
    if mode == "list":
        for g, names in obligations(src).items():
            if g in OWED:
                print(f"{g}:")
                for n in names:
                    print(f"  {n}")
        return 0
    if mode == "defines":
        if len(argv) != 5:
            fail("defines needs SRC BUILD NAME NM")
        lacks, total, _ = missing(src, argv[2], argv[3], argv[4])
        if not lacks:
            print(f"backend contract: the {argv[3]} backend defines all {total} functions it owes")
        return 1 if lacks else 0
    if len(argv) != 3:
        fail("check needs SRC BUILD")
    lacks, total, own = missing(src, argv[2], "stub", "nm")
    # The stub defines nothing but what it owes: a function it defines that
    # the seam file does not list is an obligation missing from the list.
    listed = {n for g in GROUPS for n in obligations(src)[g]}
    extra = sorted(n for n in defined("nm", own) if n.startswith("proctimes::") and n not in listed)
    for n in extra:
        print(f"backend_contract: the stub backend defines {n}, which {SEAM} does not declare")
    if not lacks and not extra:
        print(f"backend contract: the stub backend defines the {total} functions {SEAM} lists, and no other")
    return 1 if lacks or extra else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
