// SPDX-License-Identifier: MIT
// `proctimes --version`: the version and the optional parts of the build.
#include "version_info.hpp"

#include <cstdlib>
#include <string_view>

#include <unistd.h>

#include "proctimes/snapshot.hpp"
#include "proctimes/version.hpp"

#ifndef PROCTIMES_BUILT_EBPF
#error "PROCTIMES_BUILT_EBPF must be defined (0 or 1) by tools/proctimes/CMakeLists.txt"
#endif
#ifndef PROCTIMES_BUILT_PYTHON
#error "PROCTIMES_BUILT_PYTHON must be defined (0 or 1) by tools/proctimes/CMakeLists.txt"
#endif
#ifndef PROCTIMES_BUILT_EXPORTER
#error "PROCTIMES_BUILT_EXPORTER must be defined (0 or 1) by tools/proctimes/CMakeLists.txt"
#endif

namespace proctimes::cli {

namespace {

bool executable_on_path(std::string_view name) {
    const char* path = std::getenv("PATH");
    if (path == nullptr) return false;
    std::string_view rest(path);
    while (true) {
        const auto colon = rest.find(':');
        std::string dir(rest.substr(0, colon));
        if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory
        const std::string file = dir + '/' + std::string(name);
        if (::access(file.c_str(), X_OK) == 0) return true;
        if (colon == std::string_view::npos) return false;
        rest.remove_prefix(colon + 1);
    }
}

}  // namespace

machine_facts read_machine_facts() {
    machine_facts f;
    // The library's own verdict: it tries what the sources need (and loads
    // the program once, about 50 ms, when the prerequisites are there).
    const bpf_source_status st = bpf_snapshot_status();
    f.ebpf = st.usable;
    f.ebpf_why = st.reason;
    f.python3 = executable_on_path("python3");
    return f;
}

std::vector<optional_part> optional_parts(bool ebpf_built, bool python_built, bool exporter_built,
                                          const machine_facts& facts) {
    std::vector<optional_part> parts;

    // The eBPF snapshot and exit sources load CO-RE programs; whether they
    // can is what the library found (machine_facts::ebpf).
    optional_part ebpf{"eBPF sources", ebpf_built, false, {}};
    if (ebpf_built) {
        ebpf.usable = facts.ebpf;
        if (!facts.ebpf) ebpf.why = facts.ebpf_why.empty() ? std::string("cannot be loaded here") : facts.ebpf_why;
    }
    parts.push_back(ebpf);

    // The binding is a Python extension module: it needs an interpreter.
    optional_part python{"Python binding", python_built, false, {}};
    if (python_built) {
        if (facts.python3) {
            python.usable = true;
        } else {
            python.why = "no python3 on PATH";
        }
    }
    parts.push_back(python);

    // The exporter (`proctimes serve`) reads what the library reads and serves
    // it: nothing more is needed than what the command itself needs.
    parts.push_back(optional_part{"exporter", exporter_built, exporter_built, {}});
    return parts;
}

std::vector<optional_part> optional_parts_of_this_build() {
    return optional_parts(PROCTIMES_BUILT_EBPF != 0, PROCTIMES_BUILT_PYTHON != 0, PROCTIMES_BUILT_EXPORTER != 0,
                          read_machine_facts());
}

std::string version_text() {
    std::string text = "proctimes " PROCTIMES_VERSION_STRING "\noptional parts:";
    for (const auto& p : optional_parts_of_this_build()) {
        text += "\n  " + p.name + ": ";
        if (!p.built) {
            text += "not built";
        } else if (p.usable) {
            text += "built, usable here";
        } else {
            text += "built, not usable here: " + p.why;
        }
    }
    return text;
}

}  // namespace proctimes::cli
