// SPDX-License-Identifier: MIT
// run_tree's eBPF source (tree.hpp, docs/TREE.md): fork, exec, exit and
// release events of the command's descendants alone (tree.bpf.c), read on
// the thread that spawned the command. Without the eBPF source in the build
// (unavailable.cpp), open() says so and run_tree records with ptrace.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <sys/types.h>

#include "proctimes/spawn.hpp"
#include "proctimes/tree.hpp"

namespace proctimes::inline v1::detail {

class bpf_tree_recorder {
public:
    /// Loads and attaches the programs. Empty, with `why` set ("bpf: ..."),
    /// when they cannot be (not built, no BTF, another pid namespace, no
    /// CAP_BPF/CAP_PERFMON). Throws std::bad_alloc when `why` cannot be
    /// written (run_tree turns it into ENOMEM).
    static std::unique_ptr<bpf_tree_recorder> open(std::string& why);
    ~bpf_tree_recorder();
    bpf_tree_recorder(const bpf_tree_recorder&) = delete;
    bpf_tree_recorder& operator=(const bpf_tree_recorder&) = delete;

    /// Makes `pid` (the command, held before its exec) the root of the
    /// tree: from now on everything it forks is recorded. false with errno.
    bool track(pid_t pid) noexcept;

    /// Reads events until the command has ended and been waited for
    /// (`command_exit`), then until every process seen ending has its final
    /// values (at most bpf_record_wait_limit); fills `tree` (the command's
    /// own entry is left for run_tree to complete from command_exit). Orphans
    /// that end as this process's children are reaped, their wait rusage
    /// summed (orphans_rusage). Throws only std::bad_alloc.
    void run(child& command, result<child_exit>& command_exit, process_tree& tree, const tree_options& options);

    [[nodiscard]] std::chrono::nanoseconds orphans_rusage() const noexcept;

private:
    bpf_tree_recorder();
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace proctimes::inline v1::detail
