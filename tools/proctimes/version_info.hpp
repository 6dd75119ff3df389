// SPDX-License-Identifier: MIT
// tools/proctimes/version_info.hpp — what `proctimes --version` prints: the
// version, and each optional part of the build with whether it can be used on
// this machine now.
//
// Which parts were built is decided at configure time by the CMake options
// PROCTIMES_EBPF, PROCTIMES_PYTHON and PROCTIMES_EXPORTER, passed to this code
// as the macros PROCTIMES_BUILT_EBPF, PROCTIMES_BUILT_PYTHON and
// PROCTIMES_BUILT_EXPORTER (0 or 1, see CMakeLists.txt): adding a part turns
// its option on, and this code follows without an edit.
#pragma once

#include <string>
#include <vector>

namespace proctimes::cli {

/// What `--version` needs to know about the machine, read once by
/// read_machine_facts() so that the decisions below are pure and testable.
struct machine_facts {
    bool kernel_btf = false;     ///< /sys/kernel/btf/vmlinux is readable (CO-RE eBPF programs need it)
    bool cap_bpf = false;        ///< CAP_BPF is in the effective set (Linux 5.8+)
    bool cap_sys_admin = false;  ///< CAP_SYS_ADMIN is in the effective set (loads BPF on older kernels)
    bool python3 = false;        ///< an executable python3 is on PATH
};

/// Reads the facts above for the calling process. Never fails: what cannot be
/// read counts as absent.
machine_facts read_machine_facts();

struct optional_part {
    std::string name;     ///< e.g. "eBPF exit source"
    bool built = false;   ///< compiled into this build (from the macros above)
    bool usable = false;  ///< built, and its prerequisites are met here now
    std::string why;      ///< when built but not usable: what is missing
};

/// Every optional part, in a fixed order, judged against `facts`.
std::vector<optional_part> optional_parts(bool ebpf_built, bool python_built, bool exporter_built,
                                          const machine_facts& facts);

/// The optional parts of this build, judged on this machine.
std::vector<optional_part> optional_parts_of_this_build();

/// The text of `proctimes --version` (without the final newline, which CLI11
/// adds): "proctimes X.Y.Z" then one line per optional part.
std::string version_text();

}  // namespace proctimes::cli
