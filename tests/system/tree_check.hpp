// SPDX-License-Identifier: MIT
// Checks shared by the process-tree tests (tree_test.cpp, tree_make_test.cpp):
// the rules every recorded tree keeps, as text ("" when all hold), so that
// they can run in a forked child (as nobody) and report through a pipe.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "proctimes/snapshot.hpp"
#include "proctimes/tree.hpp"

namespace tree_check {

using namespace std::chrono;

inline std::string describe(const proctimes::process_tree& t) {
    std::string s = "source " + std::string(to_string(t.source)) + " (" + t.source_note + "), rusage " +
                    std::to_string(t.rusage_cpu.count()) + " ns, unaccounted " +
                    std::to_string(t.unaccounted_cpu.count()) + " ns\n";
    for (std::size_t i = 0; i < t.processes.size(); ++i) {
        const auto& p = t.processes[i];
        s += "  [" + std::to_string(i) + "] pid " + std::to_string(p.pid) + " parent [" +
             std::to_string(p.parent_index) + "] cpu " + std::to_string(p.cpu().count()) +
             (p.final_times ? " final" : " partial") + " threads " + std::to_string(p.threads) +
             (p.outlived_command ? " outlived" : "") +
             (p.status ? " status " + std::to_string(p.status->shell_code()) : " no status");
        for (const auto& prog : p.programs) {
            s += " |";
            for (const auto& a : prog.argv) s += " " + a;
        }
        s += "\n";
    }
    return s;
}

/// The source a recording that preferred `prefer` must have used here, with
/// its note: ptrace as asked; bpf where the eBPF source is usable (root, built,
/// kernel BTF: bpf_snapshot_status), else ptrace with a note that says why
/// not, which is printed.
inline std::string source(const proctimes::process_tree& t, proctimes::tree_source prefer) {
    using proctimes::tree_source;
    if (prefer == tree_source::ptrace)
        return t.source == tree_source::ptrace && t.source_note.empty() ? "" : "not ptrace alone";
    const auto st = proctimes::bpf_snapshot_status();
    if (st.usable)
        return t.source == tree_source::bpf && t.source_note.empty() ? "" : "the eBPF source is usable here, not used";
    if (t.source != tree_source::ptrace || t.source_note.rfind("bpf: ", 0) != 0 ||
        t.source_note.find("; ptrace used") == std::string::npos)
        return "the eBPF source is not usable here (" + st.reason + "), and ptrace did not stand in with a note";
    std::printf("the eBPF source is not usable here (%s): checked ptrace standing in (%s)\n", st.reason.c_str(),
                t.source_note.c_str());
    return "";
}

/// The structural rules: the command first, parents before children and
/// named by both pid and index, programs present, instants ordered; a child
/// its parent waited for (every one but `orphans`) nests in its parent's life.
inline std::string structure(const proctimes::process_tree& t, pid_t command) {
    if (t.processes.empty()) return "no processes";
    if (t.processes[0].pid != command || t.processes[0].parent_index != -1) return "the command is not first";
    for (std::size_t i = 0; i < t.processes.size(); ++i) {
        const auto& p = t.processes[i];
        const std::string at = "process " + std::to_string(p.pid) + ": ";
        if (p.programs.empty()) return at + "no program";
        if (p.exited && *p.exited < p.created) return at + "exited before created";
        for (const auto& prog : p.programs)
            if (prog.started < p.created || (p.exited && prog.started > *p.exited))
                return at + "program outside its life";
        if (i == 0) continue;
        if (p.parent_index < 0 || static_cast<std::size_t>(p.parent_index) >= i) return at + "parent not before it";
        const auto& up = t.processes[static_cast<std::size_t>(p.parent_index)];
        if (up.pid != p.parent_pid) return at + "parent_pid and parent_index disagree";
        if (p.created < up.created) return at + "created before its parent";
        if (up.exited && p.created > *up.exited) return at + "created after its parent ended";
    }
    return "";
}

/// The sum of the final own CPU of every process against the wait rusage:
/// within 1 % and `slack` (each process's rusage is cut to 1 µs, and its
/// zombie read can precede the kernel's last update by a little). A process
/// that ended without final values (bpf: the kernel ran no free program for
/// it) has a lower bound, without its exit work: the shortfall must hold it
/// (reported, not hidden), and the rest stays within the bound plus
/// `exit_work` for each such process.
inline std::string accounting(const proctimes::process_tree& t, nanoseconds slack,
                              nanoseconds exit_work = milliseconds{50}) {
    nanoseconds sum{}, lower{};
    std::int64_t partial = 0;
    for (const auto& p : t.processes) {
        if (p.final_times) {
            sum += p.cpu();
        } else if (p.exited && !p.outlived_command) {
            lower += p.cpu();
            ++partial;
        }
    }
    if (t.unaccounted_cpu != t.rusage_cpu - sum) return "unaccounted_cpu is not rusage_cpu minus the final sum";
    if (partial) {
        std::printf("%lld process(es) ended without final values: %lld ns of lower bounds, unaccounted %lld ns\n",
                    static_cast<long long>(partial), static_cast<long long>(lower.count()),
                    static_cast<long long>(t.unaccounted_cpu.count()));
        if (t.unaccounted_cpu + slack < lower) return "the lower bounds exceed the unaccounted CPU";
        if (t.unaccounted_cpu - lower > t.rusage_cpu / 100 + slack + exit_work * partial)
            return "unaccounted " + std::to_string(t.unaccounted_cpu.count()) + " ns beyond the lower bounds " +
                   std::to_string(lower.count()) + " ns";
        return "";
    }
    const nanoseconds diff = t.rusage_cpu > sum ? t.rusage_cpu - sum : sum - t.rusage_cpu;
    if (diff > t.rusage_cpu / 100 + slack)
        return "final CPU sum " + std::to_string(sum.count()) + " ns vs rusage " +
               std::to_string(t.rusage_cpu.count()) + " ns";
    return "";
}

/// A scratch directory everyone can read (tests run as nobody too).
inline std::string scratch_dir() {
    char tmpl[] = "/tmp/proctimes-tree-XXXXXX";
    if (!::mkdtemp(tmpl)) return "";
    ::chmod(tmpl, 0777);
    return tmpl;
}

}  // namespace tree_check
