// SPDX-License-Identifier: MIT
// run_tree's eBPF source: the reader of tree.bpf.c's events (tree_source.hpp).
//
// Instants are the kernel's: a process's creation is its start_boottime, an
// exec or an exit the boottime stamped by the program, each turned into
// CLOCK_REALTIME with this process's boot anchor. A process's CPU is final
// when it was freed (the signal_struct totals after its last switch: 1 ns,
// exit work included) or when it was read from its zombie after the command
// ended (its parent alive and not waiting). Else it is the lower bound
// stamped when its last thread exited (its exit work not in it), not final.
#include "linux/bpf/tree_source.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "backend/backend.hpp"
#include "clock_ns.hpp"
#include "cpu_split.hpp"
#include "linux/bpf/loader.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "linux/tree_trace.hpp"
#include "parse/bpf_records.hpp"
#include "parse/procfs.hpp"
#include "proctimes/linux.hpp"
#include "tree.skel.h"

namespace proctimes::inline v1::detail {

using std::chrono::nanoseconds;

struct bpf_tree_recorder::impl {
    // What the recorder knows of one process besides its tree_process.
    struct member {
        std::uint64_t start_boottime = 0;
        bool exit_seen = false;
        bool free_seen = false;    // freed after its last switch: final to the last ns
        bool zombie_read = false;  // final values read from its zombie
    };
    // A process is its pid and its start: a pid is reused once released.
    struct key_hash {
        std::size_t operator()(const std::pair<pid_t, std::uint64_t>& k) const noexcept {
            return std::hash<std::uint64_t>{}(k.second * 1'000'003u + static_cast<std::uint64_t>(k.first));
        }
    };

    proctimes_tree* skel = nullptr;
    ring_buffer* ring = nullptr;
    boot_anchor anchor{};
    std::uint64_t tick_ns = 10'000'000;
    pid_t self = 0;
    pid_t command_pid = 0;
    process_tree* tree = nullptr;
    const tree_options* options = nullptr;
    std::vector<member> members;  // by index in tree->processes
    std::unordered_map<std::pair<pid_t, std::uint64_t>, std::size_t, key_hash> by_key;
    std::unordered_map<pid_t, std::size_t> live;         // the member each pid names until it is reaped
    std::vector<std::pair<pid_t, std::size_t>> orphans;  // ended as this process's children: to reap (pid, member)
    nanoseconds orphans_rusage{};
    bool failed = false;  // out of memory in a callback

    ~impl() {
        ring_buffer__free(ring);
        proctimes_tree__destroy(skel);  // detaches the programs
    }

    instant at(std::uint64_t boottime) const { return anchor.boot + nanoseconds{static_cast<std::int64_t>(boottime)}; }

    std::size_t add(pid_t pid, std::int64_t parent, pid_t parent_pid, std::uint64_t start_boottime) {
        tree_process p;
        p.pid = pid;
        p.parent_index = parent;
        p.parent_pid = parent_pid;
        p.created = at(start_boottime);
        if (parent >= 0) {
            const auto& up = tree->processes[static_cast<std::size_t>(parent)];
            if (!up.programs.empty()) {
                tree_program first = up.programs.back();  // forked as its parent's program
                first.started = p.created;
                p.programs.push_back(std::move(first));
            }
        }
        tree->processes.push_back(std::move(p));
        members.push_back(member{start_boottime});
        const std::size_t i = tree->processes.size() - 1;
        by_key[{pid, start_boottime}] = i;
        live[pid] = i;
        return i;
    }

    // The member an event names (its pid and start); one whose fork event
    // was lost is added, under its real parent when that is a member.
    std::size_t member_of(const pt_tree_event& h) {
        const auto pid = static_cast<pid_t>(h.tgid);
        if (pid == command_pid && members[0].start_boottime == 0) {  // the command's first event
            by_key.erase({pid, 0});
            members[0].start_boottime = h.start_boottime;
            by_key[{pid, h.start_boottime}] = 0;
        }
        if (auto it = by_key.find({pid, h.start_boottime}); it != by_key.end()) return it->second;
        ++tree->unseen_processes;  // its fork was not seen: counted, then recorded from here on
        return add(pid, parent_of(h.ppid), static_cast<pid_t>(h.ppid), h.start_boottime);
    }

    std::int64_t parent_of(std::uint32_t ppid) const {
        auto it = live.find(static_cast<pid_t>(ppid));
        return it != live.end() ? static_cast<std::int64_t>(it->second) : -1;
    }

    // The executable behind an exec event: the file exec'd (same inode and
    // device as the kernel's), by its path resolved (realpath: what
    // /proc/PID/exe shows), else by /proc/PID/exe while the process still
    // runs it; else the path given to exec when absolute, else unknown.
    // Events are read in batches, so a short process is often gone by then:
    // the path is resolved once and kept.
    struct resolved {
        std::string path;
        std::uint64_t ino = 0;
        std::uint32_t dev = 0;
    };
    std::unordered_map<std::string, resolved> paths;

    static bool same_file(const struct stat& st, const pt_tree_event& h) noexcept {
        return st.st_ino == h.exe_ino && major(st.st_dev) == (h.exe_dev >> 20) &&
               minor(st.st_dev) == (h.exe_dev & 0xfffff);
    }

    // Whether the process still runs the program of this exec event.
    static bool still_running(const pt_tree_event& h) noexcept {
        char link[64];
        std::snprintf(link, sizeof link, "%s/%u/exe", proc_root, h.tgid);
        struct stat st {};
        return ::stat(link, &st) == 0 && same_file(st, h);
    }

    std::string executable_of(const parse::bpf_tree_event& e) {
        const auto& h = e.head;
        if (!e.path.empty() && e.path.front() == '/') {
            std::string given(e.path);
            if (auto it = paths.find(given);
                it != paths.end() && it->second.ino == h.exe_ino && it->second.dev == h.exe_dev)
                return it->second.path;
            char real[PATH_MAX];
            struct stat st {};
            if (::realpath(given.c_str(), real) && ::stat(real, &st) == 0 && same_file(st, h)) {
                paths[given] = resolved{real, h.exe_ino, h.exe_dev};
                return real;
            }
        }
        if (still_running(h)) {
            // Its path, also when the file has been removed since.
            if (auto exe = executable_path(static_cast<pid_t>(h.tgid)); !exe.empty()) return exe;
        }
        if (!e.path.empty() && e.path.front() == '/') return std::string(e.path);
        return {};
    }

    void on_exec(const parse::bpf_tree_event& e) {
        const std::size_t i = member_of(e.head);
        tree_program prog;
        prog.started = at(e.head.boottime);
        prog.executable = executable_of(e);
        const bool complete = e.head.argv_len == e.head.argv_total;
        prog.argv = parse::split_argv(e.argv, options->max_argv_bytes, complete, prog.argv_truncated);
        // More allowed than the program copied: the rest from /proc, while
        // the process still runs the program it exec'd.
        if (!complete && options->max_argv_bytes > e.head.argv_len && still_running(e.head)) {
            tree_program more = read_program(static_cast<pid_t>(e.head.tgid), options->max_argv_bytes, prog.started);
            if (more.executable == prog.executable && more.argv.size() >= prog.argv.size()) {
                prog.argv = std::move(more.argv);
                prog.argv_truncated = more.argv_truncated;
            }
        }
        tree->processes[i].programs.push_back(std::move(prog));
    }

    void set_cpu(std::size_t i, const pt_tree_event& h, cpu_source source) {
        auto& p = tree->processes[i];
        const auto ku = split_by_ticks(nanoseconds{static_cast<std::int64_t>(h.runtime)}, h.utime, h.stime);
        p.kernel = ku.kernel;
        p.user = ku.user;
        p.precision = precision_of(source);
    }

    void on_event(const parse::bpf_tree_event& e) {
        const auto& h = e.head;
        switch (h.kind) {
            case PT_TREE_FORK:
                add(static_cast<pid_t>(h.tgid), parent_of(h.ppid), static_cast<pid_t>(h.ppid), h.start_boottime);
                return;
            case PT_TREE_THREAD:
                ++tree->processes[member_of(h)].threads;
                return;
            case PT_TREE_EXEC:
                on_exec(e);
                return;
            case PT_TREE_EXIT: {
                const std::size_t i = member_of(h);
                auto& m = members[i];
                auto& p = tree->processes[i];
                m.exit_seen = true;
                p.exited = at(h.boottime);
                if (!m.free_seen) {
                    set_cpu(i, h, cpu_source::bpf_task);  // a lower bound until its release
                    p.status = parse::decode_wait_status(h.exit_code);
                }
                // An orphan of the tree, now this process's child: reaped here.
                if (static_cast<pid_t>(h.ppid) == self && p.pid != command_pid) orphans.emplace_back(p.pid, i);
                return;
            }
            case PT_TREE_FREE: {
                const std::size_t i = member_of(h);
                auto& m = members[i];
                auto& p = tree->processes[i];
                m.free_seen = true;
                if (!m.exit_seen) p.exited = at(h.boottime);  // its exit event lost: no later than this
                set_cpu(i, h, cpu_source::bpf_exit);
                p.final_times = true;
                p.status = parse::decode_wait_status(h.exit_code);
                if (auto it = live.find(p.pid); it != live.end() && it->second == i)
                    live.erase(it);  // reaped: the pid may name another process now
                return;
            }
            default:
                return;
        }
    }

    static int on_sample(void* ctx, void* data, std::size_t size) {
        auto* self = static_cast<impl*>(ctx);
        const auto e = parse::parse_tree_event({static_cast<const std::byte*>(data), size});
        if (!e) return 0;
        try {
            self->on_event(*e);
        } catch (...) {
            self->failed = true;
            return -ENOMEM;  // stops this consume; run() rethrows
        }
        return 0;
    }

    void consume() {
        if (ring_buffer__consume(ring) == -ENOMEM || failed) throw std::bad_alloc();
    }

    // Orphans that ended: reaped (they are zombies, or about to be, once
    // their exit event has come), their rusage summed as a parent's wait would.
    // Before the reap, the zombie's final values are read for one whose free
    // event has not come: the kernel does not run the free tracepoint for
    // every task (docs/BPF.md, "Losses"), and once reaped here nothing else
    // holds them. A free event that comes after still gives the exact values.
    void reap_orphans() noexcept {
        for (const auto& [pid, i] : orphans) {
            siginfo_t si{};
            rusage ru{};
            if (!members[i].free_seen && waitid_retrying(P_PID, pid, si, WEXITED | WNOWAIT, nullptr) == 0 &&
                si.si_pid == pid)
                read_zombie(i);
            if (waitid_retrying(P_PID, pid, si, WEXITED, &ru) == 0 && si.si_pid == pid)
                orphans_rusage += to_ns(ru.ru_utime) + to_ns(ru.ru_stime);
        }
        orphans.clear();
    }

    // The CPU of member i as /proc shows it now, when its pid still names it
    // (same start) and, with `ended`, it is a zombie with all its threads
    // gone, whose values are final. false, with nothing set, otherwise.
    bool read_now(std::size_t i, bool ended) {
        auto& p = tree->processes[i];
        tree_process cpu;
        parse::stat_record st;
        if (read_process_cpu(p.pid, cpu, nullptr, &st) || st.starttime != members[i].start_boottime / tick_ns ||
            (ended && !parse::process_ended(st)))
            return false;
        p.kernel = cpu.kernel;
        p.user = cpu.user;
        p.precision = cpu.precision;
        return true;
    }

    // A process that ended before the command but is not released yet (its
    // parent has not waited): its zombie holds its final CPU.
    void read_zombie(std::size_t i) {
        if (!read_now(i, true)) return;
        tree->processes[i].final_times = true;
        members[i].zombie_read = true;
    }

    // Whether member i, whose exit event has not been read, is a zombie or
    // dying (a signal that ends it pending: a Ctrl-C that reached the whole
    // process group): its exit event is on its way.
    bool ending(std::size_t i) {
        const auto& p = tree->processes[i];
        tree_process cpu;
        parse::stat_record st;
        if (read_process_cpu(p.pid, cpu, nullptr, &st) || st.starttime != members[i].start_boottime / tick_ns)
            return false;
        return parse::process_ended(st) || ending_signal_pending(p.pid);
    }

    // What still runs when the recording ends: its CPU as read now. One that
    // is gone (its exit and free events lost) keeps no values: none claimed.
    void read_outlived(std::size_t i) {
        if (read_now(i, false)) tree->processes[i].outlived_command = true;
    }
};

bpf_tree_recorder::bpf_tree_recorder() : impl_(std::make_unique<impl>()) {}
bpf_tree_recorder::~bpf_tree_recorder() = default;

std::unique_ptr<bpf_tree_recorder> bpf_tree_recorder::open(std::string& why) {
    try {
        auto anchor = get_boot_anchor();
        if (!anchor) {
            why = "bpf: " + anchor.error().message();
            return nullptr;
        }
        if (auto reason = bpf::precheck(); !reason.empty()) {
            why = "bpf: " + reason;
            return nullptr;
        }
        bpf::quiet_libbpf();
        std::unique_ptr<bpf_tree_recorder> r(new bpf_tree_recorder);
        impl& m = *r->impl_;
        m.anchor = *anchor;
        m.tick_ns = static_cast<std::uint64_t>(1'000'000'000 / clock_ticks_per_second());
        m.self = ::getpid();
        m.skel = proctimes_tree__open();
        if (!m.skel) {
            why = bpf::load_failure("bpf: open", errno);
            return nullptr;
        }
        if (proctimes_tree__load(m.skel) != 0) {
            why = bpf::load_failure("bpf: load", errno);
            return nullptr;
        }
        if (proctimes_tree__attach(m.skel) != 0) {
            why = bpf::load_failure("bpf: attach", errno);
            return nullptr;
        }
        m.ring = ring_buffer__new(bpf_map__fd(m.skel->maps.proctimes_tree_ring), &impl::on_sample, &m, nullptr);
        if (!m.ring) {
            why = bpf::load_failure("bpf: ring buffer", errno);
            return nullptr;
        }
        return r;
    } catch (...) {
        why = "bpf: out of memory";
        return nullptr;
    }
}

bool bpf_tree_recorder::track(pid_t pid) noexcept {
    const auto key = static_cast<std::uint32_t>(pid);
    const std::uint64_t start = 0;  // filled in by the command's first event (tree.bpf.c)
    if (bpf_map_update_elem(bpf_map__fd(impl_->skel->maps.proctimes_tree_tracked), &key, &start, BPF_ANY) != 0)
        return false;
    impl_->command_pid = pid;
    return true;
}

nanoseconds bpf_tree_recorder::orphans_rusage() const noexcept { return impl_->orphans_rusage; }

void bpf_tree_recorder::run(child& command, result<child_exit>& command_exit, process_tree& tree,
                            const tree_options& options) {
    impl& m = *impl_;
    m.tree = &tree;
    m.options = &options;
    tree.processes.clear();
    m.members.clear();
    m.by_key.clear();
    m.live.clear();
    // The command: its entry is completed by run_tree from child::wait.
    m.add(m.command_pid, -1, 0, 0);

    // Until the command has ended: events as they come, and the command's
    // end from its pidfd (readable once it is a zombie).
    // The programs wake this thread only when the ring fills up (tree.bpf.c):
    // it looks every `batch`.
    constexpr int batch_ms = 100;
    pollfd fds[2] = {{ring_buffer__epoll_fd(m.ring), POLLIN, 0}, {native_pidfd(command), POLLIN, 0}};
    while (true) {
        const int n = ::poll(fds, 2, batch_ms);
        m.consume();
        m.reap_orphans();
        if (n > 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) break;
        if (fds[1].fd < 0) break;
        // A command that made itself this thread's tracee (PTRACE_TRACEME)
        // would stay in its trace-stop for ever: let go.
        (void)release_trace_stop(m.command_pid);
    }
    command_exit = command.wait();
    m.consume();
    m.reap_orphans();

    // Then every process seen ending until it is freed (within an RCU grace
    // period of its reaping, some ms) or, if nobody reaps it, its zombie:
    // while frees keep coming, for at most bpf_record_wait_limit, but no
    // longer than free_quiet_limit after the last one came. The kernel does
    // not run the free tracepoint for every task (about 1 process in 700 of
    // a build, and not 15 s later either: docs/BPF.md, "Losses"), so waiting
    // longer would only delay the report; such a process keeps the lower
    // bound its exit gave, not final, and the tree's unaccounted CPU shows
    // the rest.
    // A process found a zombie or dying with its exit event not read yet
    // (ended with the command, by the same Ctrl-C) is waited for too, up to
    // ending_quiet_limit: it has not outlived the command.
    constexpr std::chrono::milliseconds free_quiet_limit{50};
    constexpr std::chrono::milliseconds ending_quiet_limit{1000};
    const auto deadline = std::chrono::steady_clock::now() + bpf_record_wait_limit;
    auto quiet_since = std::chrono::steady_clock::now();
    std::size_t pending_before = m.members.size() + 1;
    while (true) {
        std::size_t pending = 0;
        std::size_t ending = 0;
        for (std::size_t i = 1; i < m.members.size(); ++i) {
            auto& mb = m.members[i];
            if (!mb.exit_seen && !mb.free_seen) {
                ending += m.ending(i) ? 1 : 0;
                continue;
            }
            if (!mb.exit_seen || mb.free_seen || mb.zombie_read) continue;
            m.read_zombie(i);
            pending += mb.zombie_read ? 0 : 1;
        }
        pending += ending;
        const auto now = std::chrono::steady_clock::now();
        if (pending < pending_before) quiet_since = now;
        pending_before = pending;
        if (pending == 0 || now >= deadline ||
            now - quiet_since >= (ending > 0 ? ending_quiet_limit : free_quiet_limit))
            break;
        pollfd ring{ring_buffer__epoll_fd(m.ring), POLLIN, 0};
        (void)::poll(&ring, 1, 10);
        m.consume();
        m.reap_orphans();
    }
    // What never ended: still running (let go), or ended unseen.
    for (std::size_t i = 1; i < m.members.size(); ++i)
        if (!m.members[i].exit_seen && !m.members[i].free_seen) m.read_outlived(i);
    // The instants are the kernel's: a creation is its start time, an exit
    // the exit tracepoint's clock, each to the ns. An exit known only from
    // the free (its exit event lost) is no later than that: observed, and
    // no earlier than its creation. The command's come from child::wait.
    for (std::size_t i = 1; i < m.members.size(); ++i) {
        auto& p = tree.processes[i];
        p.precision.creation_resolution = nanoseconds{1};
        if (!p.exited) {
            p.precision.exit_source = exit_source::none;
            p.precision.exit_resolution = {};
        } else if (m.members[i].exit_seen) {
            p.precision.exit_source = exit_source::bpf_exit;
            p.precision.exit_resolution = nanoseconds{1};
        } else {
            p.precision.exit_source = exit_source::observed;
            p.precision.exit_resolution = std::max(*p.exited - p.created, nanoseconds{0});
        }
    }
    const auto* bss = m.skel->bss;
    tree.unseen_processes += __atomic_load_n(&bss->tree_untracked, __ATOMIC_RELAXED);
    // Events that did not fit: which process each belonged to is unknown.
    if (const auto dropped = __atomic_load_n(&bss->tree_dropped, __ATOMIC_RELAXED)) tree.unseen_processes += dropped;
}

}  // namespace proctimes::inline v1::detail
