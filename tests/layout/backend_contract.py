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

An obligation is a function's whole signature: its name with its
namespaces and its parameter types, compared with the parameter types that
the demangled symbols of the objects give, so that a backend that defines
one overload of a name and not another lacks the other. Types are compared
by their outermost name and its const, pointer and reference marks (the
template arguments left out), with the integer types as one and the seam
file's aliases and the standard ones (std::string, the durations) resolved,
since the seam file spells a type as its source does and a symbol as the
compiler resolved it. Members of public classes ("owes:" lines) and
functions whose symbols carry no parameter types are compared by name.

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


# Types the seam file names by an alias that symbols spell resolved; the
# seam file's own "using X = Y;" aliases are read from it.
STD_ALIASES = {
    "string": "basic_string",
    "string_view": "basic_string_view",
    "nanoseconds": "duration",
    "microseconds": "duration",
    "milliseconds": "duration",
    "seconds": "duration",
}
INTEGER_ALIASES = {"pid_t", "size_t", "ssize_t", "intptr_t", "uintptr_t", "ptrdiff_t"} | {
    f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)
}
INTEGER_WORDS = {"int", "long", "short", "unsigned", "signed", "__int128"}
KEYWORDS = INTEGER_WORDS | {"bool", "char", "wchar_t", "char8_t", "char16_t", "char32_t", "float", "double", "void"}
TOKEN = r"@owes [\w:~]+|@\w+|~?[A-Za-z_]\w*|::|\S"


def split_top(tokens, sep=","):
    """The token lists between top-level `sep` tokens (outside (), <>, {}, [])."""
    parts, cur, depth = [], [], 0
    for t in tokens:
        if t in ("(", "<", "{", "["):
            depth += 1
        elif t in (")", ">", "}", "]"):
            depth -= 1
        if t == sep and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur or parts:
        parts.append(cur)
    return parts


def type_key(tokens, aliases):
    """A parameter type as compared: its outermost name without namespaces or
    template arguments, integers as "int", aliases resolved, then " const"
    when what it names (or refers or points to) is const, then its pointer
    and reference marks (const of a by-value parameter is no part of a
    signature)."""
    words, marks, const, depth, qualified = [], [], False, 0, False
    for t in tokens:
        if t == "<":
            depth += 1
        elif t == ">":
            depth -= 1
        elif depth:
            continue
        elif t == "::":
            qualified = True
        elif t in ("const", "volatile"):
            const = const or (t == "const" and not marks)
        elif t in ("*", "&"):
            marks.append(t)
        elif re.fullmatch(r"[A-Za-z_]\w*", t) and t not in ("struct", "class", "enum", "union", "typename"):
            if qualified and words:
                words[-1] = t
            else:
                words.append(t)
            qualified = False
    head = " ".join(words)
    for _ in range(8):  # an alias may name another
        if head in aliases:
            head = aliases[head]
        elif head in STD_ALIASES:
            head = STD_ALIASES[head]
        else:
            break
    if head in INTEGER_ALIASES or (words and all(w in INTEGER_WORDS for w in head.split())):
        head = "int"
    return head + (" const" if const else "") + "".join(marks)


def declared_parameters(tokens):
    """The parameter types of a declaration's parameter list (its names and
    default arguments left out), as token lists."""
    out = []
    for p in split_top(tokens):
        p = split_top(p, "=")[0] if p else p
        if p == ["void"] or not p:
            continue
        if (len(p) > 1 and re.fullmatch(r"[A-Za-z_]\w*", p[-1]) and p[-1] not in KEYWORDS | {"const", "volatile"}
                and p[-2] != "::"):
            p = p[:-1]  # the parameter's name
        out.append(p)
    return out


def spelled(tokens):
    """Tokens as the seam file would spell them."""
    text = " ".join(tokens)
    for a, b in ((" :: ", "::"), (" <", "<"), ("< ", "<"), (" >", ">"), (" *", "*"), (" &", "&"), (" ,", ",")):
        text = text.replace(a, b)
    return text


class Obligation:
    """A function the seam file says a backend owes: `name` with its
    namespaces; `params` the keys of its parameter types, or None (an "owes:"
    name: a member, compared by name); `shown` as messages name it."""

    def __init__(self, name, params=None, shown=None):
        self.name, self.params, self.shown = name, params, shown or name

    def key(self):
        return (self.name, self.params)

    def met_by(self, have):
        return self.name in have["names"] if self.params is None else self.key() in have["signatures"]


def obligations(src):
    """{group: sorted names} of the seam file (see seam_obligations), as
    list prints them."""
    return {g: [o.shown for o in v] for g, v in seam_obligations(src).items()}


def seam_obligations(src):
    """{group: Obligations sorted} of the seam file: every function declared
    (not defined) at namespace scope in an owed group, named with its
    namespaces (proctimes::detail::core_name; the inline ABI namespace left
    out) and its parameter types, and every name of an "owes:" line."""
    path = os.path.join(src, SEAM)
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    text = re.sub(r"//\s*contract:\s*(\w+).*", r" @group \1 ", text)
    text = re.sub(r"//\s*owes:\s*([\w:~]+).*", r" @owes \1 ", text)
    text = re.sub(r"/\*.*?\*/", " ", re.sub(r"//.*", "", text), flags=re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    tokens = re.findall(TOKEN, text)
    aliases = {}
    for m in re.finditer(r"\busing\s+(\w+)\s*=\s*([^;]+);", text):
        aliases[m.group(1)] = type_key(re.findall(TOKEN, m.group(2)), aliases)
    groups = {g: {} for g in GROUPS}
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
                groups[group][(t[6:], None)] = Obligation(t[6:])
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
            declared = declared_function(stmt)
            if declared and group in OWED:
                name, params = declared
                name = "::".join([w for s in scopes for w in s] + [name])
                types = declared_parameters(params)
                o = Obligation(name, tuple(type_key(p, aliases) for p in types),
                               f"{name}({', '.join(spelled(p) for p in types)})")
                groups[group][o.key()] = o
            stmt = []
            continue
        stmt.append(t)
    return {g: sorted(v.values(), key=lambda o: o.shown) for g, v in groups.items()}


def declared_function(stmt):
    """(name, parameter-list tokens) of a declaration statement, if it
    declares a function."""
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
            depth, end = 0, k
            for end in range(k, len(stmt)):
                depth += {"(": 1, ")": -1}.get(stmt[end], 0)
                if depth == 0:
                    break
            return "".join(stmt[j:k]), stmt[k + 1:end]
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


def plain(name):
    """proctimes::v1::detail::core_name[abi:cxx11] -> proctimes::detail::core_name
    (the seam file's names, without the ABI namespace)"""
    return re.sub(r"^proctimes::v[0-9]+::", "proctimes::", re.sub(r"\[abi:\w+\]", "", name))


def signature(demangled):
    """proctimes::v1::detail::core_name[abi:cxx11](proctimes::v1::detail::task_core const&)
    -> ("proctimes::detail::core_name", ("task_core const&",)); the parameter
    types None when the symbol has none (a C function)."""
    text = re.sub(r"\[abi:\w+\]", "", demangled.strip())
    text = re.sub(r"(\s*(const|volatile|&|&&))+$", "", text)  # a member function's qualifiers
    if not text.endswith(")"):
        return plain(text), None
    depth = 0
    for k in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[k], 0)
        if depth == 0:
            break
    tokens = re.findall(TOKEN, text[k + 1:-1])
    return plain(text[:k]), tuple(type_key(p, {}) for p in split_top(tokens) if p and p != ["void"])


def defined(nm, objs):
    """What the objects define (strong, T): {"names": plain names,
    "signatures": (plain name, parameter type keys)}."""
    if not objs:
        return {"names": set(), "signatures": set()}
    out = subprocess.run([nm, "--defined-only", "-g"] + objs, capture_output=True, text=True, check=True).stdout
    mangled = sorted({f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] == "T"})
    if not mangled:
        return {"names": set(), "signatures": set()}
    names = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True, check=True).stdout
    sigs = {signature(n) for n in names.splitlines()}
    return {"names": {n for n, _ in sigs}, "signatures": sigs}


def owed_by(name):
    return ("hooks", "public") if name == "windows" else OWED


def missing(src, build, name, nm):
    own, beside = backend_objects(src, build, name)
    have = defined(nm, own + beside)
    owed = seam_obligations(src)
    lacks = [(g, o) for g in owed_by(name) for o in owed[g] if not o.met_by(have)]
    for g, o in lacks:
        print(f"backend_contract: the {name} backend does not define {o.shown} ({g}, {SEAM})")
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
    seam = seam_obligations(src)
    members = {o.name for g in GROUPS for o in seam[g] if o.params is None}
    listed = {o.key() for g in GROUPS for o in seam[g]}
    extra = sorted(
        f"{n}({', '.join(p)})" if p is not None else n
        for n, p in defined("nm", own)["signatures"]
        if n.startswith("proctimes::") and n not in members and (n, p) not in listed
    )
    for n in extra:
        print(f"backend_contract: the stub backend defines {n}, which {SEAM} does not declare")
    if not lacks and not extra:
        print(f"backend contract: the stub backend defines the {total} functions {SEAM} lists, and no other")
    return 1 if lacks or extra else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
