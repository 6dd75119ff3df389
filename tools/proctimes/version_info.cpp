// SPDX-License-Identifier: MIT
// `proctimes --version`: the version and the optional parts of the build.
#include "version_info.hpp"

#include <cstdlib>
#include <string_view>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// Capability numbers of capability(7); CAP_BPF is missing from older headers.
constexpr unsigned cap_sys_admin_bit = 21;
constexpr unsigned cap_bpf_bit = 39;

bool has_effective_capability(const __user_cap_data_struct (&data)[2], unsigned bit) {
    return (data[bit / 32].effective >> (bit % 32)) & 1u;
}

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
    f.kernel_btf = ::access("/sys/kernel/btf/vmlinux", R_OK) == 0;
    // capget(2) directly, so that the command needs no libcap.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (::syscall(SYS_capget, &header, data) == 0) {
        f.cap_bpf = has_effective_capability(data, cap_bpf_bit);
        f.cap_sys_admin = has_effective_capability(data, cap_sys_admin_bit);
    }
    f.python3 = executable_on_path("python3");
    return f;
}

std::vector<optional_part> optional_parts(bool ebpf_built, bool python_built, bool exporter_built,
                                          const machine_facts& facts) {
    std::vector<optional_part> parts;

    // The eBPF source loads a CO-RE program: it needs the kernel's BTF and the
    // right to load BPF programs (CAP_BPF, or CAP_SYS_ADMIN before Linux 5.8).
    optional_part ebpf{"eBPF exit source", ebpf_built, false, {}};
    if (ebpf_built) {
        if (!facts.kernel_btf) {
            ebpf.why = "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
        } else if (!facts.cap_bpf && !facts.cap_sys_admin) {
            ebpf.why = "needs CAP_BPF or CAP_SYS_ADMIN";
        } else {
            ebpf.usable = true;
        }
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

    // The exporter reads what the library reads and serves it: nothing more
    // is needed than what the command itself needs.
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
