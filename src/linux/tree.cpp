// SPDX-License-Identifier: MIT
// proctimes::run_tree on Linux (tree.hpp): the recording thread, the child
// subreaper, the choice of source and the tree's accounting. The ptrace
// recorder itself is tree_trace.cpp, the eBPF one bpf/tree_source.cpp.
#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <thread>

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "linux/bpf/tree_source.hpp"
#include "linux/spawn_gate.hpp"
#include "linux/sys.hpp"
#include "linux/tree_trace.hpp"
#include "proctimes/tree.hpp"

namespace proctimes::inline v1 {

namespace {

using std::chrono::nanoseconds;

struct attach_context {
    detail::tree_tracer* tracer = nullptr;
    detail::bpf_tree_recorder* bpf = nullptr;  // tried first when set
    bool attached = false;
    bool by_bpf = false;
    int error = 0;
    int bpf_error = 0;
    int previous_subreaper = 0;
    bool subreaper_set = false;
};

// In the parent, while the command waits before its exec (spawn_gate).
void attach(pid_t pid, void* context) noexcept {
    auto& a = *static_cast<attach_context*>(context);
    if (a.bpf && a.bpf->track(pid)) {
        a.by_bpf = true;
    } else {
        if (a.bpf) a.bpf_error = errno;
        if (!a.tracer->seize(pid)) {
            a.error = errno;
            return;
        }
    }
    a.attached = true;
    // Orphans of the tree come to this process instead of init (still
    // traced, with ptrace), to be recorded and reaped.
    if (::prctl(PR_GET_CHILD_SUBREAPER, &a.previous_subreaper) == 0 && a.previous_subreaper == 0)
        a.subreaper_set = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
}

// Orphans of the tree that outlived the recording are this process's
// children now: each gets a thread that reaps it when it ends, as
// child::release does for a child nobody waited for.
void reap_later(const process_tree& tree) noexcept {
    const pid_t self = ::getpid();
    for (const auto& p : tree.processes) {
        if (!p.outlived_command || p.exited || p.parent_index < 0) continue;
        detail::task_kin kin;
        if (detail::read_task_kin(p.pid, kin) || kin.ppid != self) continue;
        const int fd = detail::pidfd_open(p.pid, 0);
        if (fd < 0) continue;
        detail::reap_when_ended(fd, p.pid);
    }
}

// The command's entry and the tree's accounting, once it has been waited for.
void finish(tree_run& run, const spawn_options& options, nanoseconds orphans_rusage) {
    auto& tree = run.tree;
    if (tree.processes.empty()) tree.processes.emplace_back();
    auto& cmd = tree.processes.front();
    const auto& e = run.command;
    cmd.pid = cmd.pid ? cmd.pid : 0;
    cmd.parent_pid = 0;
    cmd.parent_index = -1;
    cmd.created = e.times.creation;
    cmd.exited = e.times.exit;
    cmd.kernel = e.times.kernel;
    cmd.user = e.times.user;
    cmd.precision = e.times.precision;
    // With times_error the values are the wait rusage, the descendants
    // it waited for included: not its own.
    cmd.final_times = !e.times_error && e.times.state == task_state::exited;
    cmd.status = e.status;
    cmd.outlived_command = false;
    if (cmd.programs.empty()) {
        tree_program p;
        p.executable = options.program.empty() ? options.argv.front() : options.program;
        p.argv = options.argv;
        p.started = cmd.created;
        cmd.programs.push_back(std::move(p));
    }
    for (auto& p : cmd.programs)
        if (p.started < cmd.created) p.started = cmd.created;
    nanoseconds waited = e.times.cpu();
    if (!e.times_error) waited += e.children_kernel + e.children_user;
    tree.orphans_rusage_cpu = orphans_rusage;
    tree.rusage_cpu = waited + orphans_rusage;
    nanoseconds seen{};
    for (const auto& p : tree.processes)
        if (p.final_times) seen += p.cpu();
    tree.unaccounted_cpu = tree.rusage_cpu - seen;
}

result<tree_run> record(const spawn_options& options, const tree_options& topt) noexcept {
    try {
        tree_run run;
        detail::tree_tracer tracer(run.tree, topt);
        attach_context a;
        a.tracer = &tracer;
        // bpf when asked for, or by default as root; else, or when it cannot
        // load, ptrace (the note says why bpf was not used).
        std::string note;
        std::unique_ptr<detail::bpf_tree_recorder> bpf;
        if (topt.prefer == tree_source::bpf || (topt.prefer == tree_source::none && ::geteuid() == 0)) {
            bpf = detail::bpf_tree_recorder::open(note);
            if (!bpf) note += "; ";
            a.bpf = bpf.get();
        }
        detail::spawn_gate gate;
        gate.after_clone = &attach;
        gate.context = &a;
        auto c = detail::spawn_gate::spawn(options, gate);
        if (!c) {
            if (a.subreaper_set) (void)::prctl(PR_SET_CHILD_SUBREAPER, 0);
            return c.error();
        }
        result<child_exit> e = errc::invalid_handle;
        if (a.bpf_error)
            note = "bpf: cannot track the command: " + std::error_code(a.bpf_error, std::generic_category()).message() +
                   "; ";
        if (a.by_bpf) {
            run.tree.source = tree_source::bpf;
            bpf->run(*c, e, run.tree, topt);
        } else if (a.attached) {
            run.tree.source = tree_source::ptrace;
            run.tree.source_note = note.empty() ? note : note + "ptrace used";
            tracer.run(*c, e);
        } else {
            run.tree.source = tree_source::none;
            run.tree.source_note = note + detail::ptrace_refusal_note(a.error);
            tree_process cmd;
            cmd.pid = c->id();
            cmd.programs.push_back(detail::read_program(c->id(), topt.max_argv_bytes, detail::realtime_now()));
            if (cmd.programs.back().argv.empty() && cmd.programs.back().executable.empty()) cmd.programs.clear();
            run.tree.processes.push_back(std::move(cmd));
            e = detail::wait_untraced(*c);
        }
        if (a.subreaper_set) (void)::prctl(PR_SET_CHILD_SUBREAPER, a.previous_subreaper);
        reap_later(run.tree);
        if (!e) return e.error();
        run.command = *e;
        run.tree.processes.front().pid = c->id();
        finish(run, options, a.by_bpf ? bpf->orphans_rusage() : tracer.orphans_rusage());
        return run;
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

}  // namespace

result<tree_run> run_tree(const spawn_options& options, const tree_options& tree) noexcept {
    if (options.argv.empty() || options.argv[0].empty()) return errc::invalid_argument;
    if (tree.max_argv_bytes == 0) return errc::invalid_argument;
    // Its own thread: ptrace answers the thread that attached, and its waits
    // (__WNOTHREAD) see only that thread's tracees and children, never
    // another child of the caller.
    result<tree_run> out = errc::invalid_argument;
    try {
        std::thread t([&] { out = record(options, tree); });
        t.join();
    } catch (...) {
        return detail::errno_code(EAGAIN);
    }
    return out;
}

}  // namespace proctimes::inline v1
