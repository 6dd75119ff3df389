// SPDX-License-Identifier: MIT
// tools/proctimes/version_info.hpp — what `proctimes --version` prints: the
// version, and each optional part of the build with whether it can be used on
// this machine now.
//
// Which parts were built is decided at configure time (PROCTIMES_EBPF,
// PROCTIMES_PYTHON; the exporter is in every build of the command) and passed
// to this code as the macros PROCTIMES_BUILT_EBPF, PROCTIMES_BUILT_PYTHON and
// PROCTIMES_BUILT_EXPORTER (0 or 1, see CMakeLists.txt).
#pragma once

#include <string>
#include <vector>

namespace proctimes::cli {

/// What `--version` needs to know about the machine, read once by
/// read_machine_facts() so that the decisions below are pure and testable.
struct machine_facts {
    /// The eBPF programs can be loaded and attached here: the verdict of
    /// bpf_snapshot_status(), the check `doctor` and `ps --source` use (kernel
    /// BTF, the initial pid namespace, CAP_BPF + CAP_PERFMON or root, a load
    /// that succeeds).
    bool ebpf = false;
    std::string ebpf_why;  ///< when not: the library's reason
    bool python3 = false;  ///< an executable python3 is on PATH
};

/// Reads the facts above for the calling process. Never fails: what cannot be
/// read counts as absent.
machine_facts read_machine_facts();

struct optional_part {
    std::string name;     ///< e.g. "eBPF sources"
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
