// SPDX-License-Identifier: MIT
// The /proc snapshot source: walks /proc (the pid list, each process through
// src/linux/snapshot_read.cpp) and shares the walk out over one or two
// walkers (src/worker_pool.hpp), then merges their records
// (src/snapshot_merge.cpp). Linux only; implements detail::snapshot_source of
// src/backend/backend.hpp.
//
// Cost model (measured, docs/PERFORMANCE.md): the walk is dominated by the
// kernel generating each stat file. Directories are read with getdents64(2)
// into one large reused buffer per walker. Optionally a second walker (see
// snapshot_options::workers): phase 1 shares out pids a few at a time; phase
// 2 shares out, a few tids at a time, the threads of processes too big for
// one walker (read through their task/ descriptors, kept open from phase 1).
#include <algorithm>
#include <atomic>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/statfs.h>

#include "backend/backend.hpp"
#include "clock_ns.hpp"
#include "linux/bpf/snapshot_source.hpp"
#include "linux/fork_generation.hpp"
#include "linux/snapshot_proc.hpp"
#include "parse/loadavg.hpp"
#include "parse/procfs.hpp"
#include "precision.hpp"
#include "proctimes/boot.hpp"
#include "worker_pool.hpp"

namespace proctimes::inline v1::detail::proc_snapshot {

using std::chrono::nanoseconds;

namespace {

// With fewer tasks than this, a second walker costs more to start than it saves.
constexpr std::size_t parallel_min_tasks = 400;
// Pids a walker takes from the shared list at a time.
constexpr std::size_t pids_per_grab = 4;
// Threads a walker takes from a big process at a time.
constexpr std::size_t tids_per_grab = 16;

// Reads the pids of proc_fd (ascending) into `pids`.
std::error_code list_pids(int proc_fd, char* dents, std::vector<pid_t>& pids) {
    pids.clear();
    if (::lseek(proc_fd, 0, SEEK_SET) < 0) return detail::last_errno();
    for (;;) {
        const ssize_t n = getdents(proc_fd, dents, dents_buffer_size);
        if (n == 0) break;
        if (n < 0) return detail::last_errno();
        std::string_view buf(dents, static_cast<std::size_t>(n));
        while (auto e = parse::next_dirent(buf)) {
            if (e->type != DT_DIR && e->type != DT_UNKNOWN) continue;
            if (auto id = parse::parse_id(e->name); id && *id > 0 && *id <= detail::pid_max_limit)
                pids.push_back(static_cast<pid_t>(*id));
        }
    }
    // procfs lists pids in ascending order; a copied tree need not.
    if (!std::is_sorted(pids.begin(), pids.end())) std::sort(pids.begin(), pids.end());
    return {};
}

// The runnable and total task counts of /proc/loadavg; zeros when unreadable.
parse::task_load system_load(int proc_fd, char* buf, std::size_t cap) noexcept {
    unique_fd fd{detail::open_read(proc_fd, "loadavg")};
    if (!fd) return {};
    const ssize_t n = detail::pread_small(fd.get(), buf, cap);
    if (n <= 0) return {};
    return parse::parse_loadavg_tasks(std::string_view(buf, static_cast<std::size_t>(n))).value_or(parse::task_load{});
}

// CPUs this thread may run on.
std::size_t usable_cpus() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::size_t>(CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

// The most walkers a take starts, whatever snapshot_options::workers asks:
// four per usable CPU, at most 64 (snapshot.hpp).
std::size_t max_walkers() noexcept { return std::min<std::size_t>(4 * usable_cpus(), 64); }

// Whether a procfs mount shows the caller's pid namespace: its "self" names us.
bool is_live_procfs(int proc_fd) noexcept {
    char link[32];
    const ssize_t n = ::readlinkat(proc_fd, "self", link, sizeof link - 1);
    if (n <= 0) return false;
    auto id = parse::parse_id(std::string_view(link, static_cast<std::size_t>(n)));
    return id && *id == ::getpid();
}

cpu_precision make_precision(const walk_config& c, cpu_source s) noexcept {
    return detail::precision_for(s, nanoseconds{c.tick_ns});
}

class proc_source final : public snapshot_source {
public:
    result<void> open(const snapshot_options& options) noexcept;
    result<void> stamp(snapshot& out) noexcept override;
    // With the eBPF source no thread is copied (its read is cheaper than the check).
    bool exact_process_totals() const noexcept override { return !bpf_ && live_ && cpu_ != snapshot_cpu::ticks; }
    result<void> take(snapshot& out, const snapshot* reuse_from) noexcept override;

private:
    result<void> reopen_after_fork() noexcept;

    // The fork generation this source's descriptors and eBPF objects belong to.
    std::uint64_t generation_ = 0;
    bool threads_ = false;
    snapshot_cpu cpu_ = snapshot_cpu::precise_processes;
    unsigned workers_wanted_ = 0;
    unique_fd proc_;
    bool procfs_ = false;
    bool live_ = false;
    std::vector<pid_t> pids_;
    std::vector<std::unique_ptr<worker>> workers_;
    std::vector<walk_output*> outputs_;  // the used workers' outputs, for the merge
    std::int64_t start_ = 0;             // since_boot of the stamp, ns
    snapshot_options options_;
    // The eBPF source, when options.source allows it and it can be used (docs/BPF.md).
    bpf_snapshot_source bpf_;
};

result<void> proc_source::open(const snapshot_options& options) noexcept {
    threads_ = options.threads;
    cpu_ = options.cpu;
    workers_wanted_ = options.workers;
    const std::string& root = options.proc_root;
    proc_.reset(detail::open_read(AT_FDCWD, root.empty() ? "/proc" : root.c_str(), O_DIRECTORY));
    if (!proc_) return errno == ENOENT ? make_error_code(errc::process_table_unavailable) : detail::file_error(errno);
    struct statfs sf {};
    procfs_ = ::fstatfs(proc_.get(), &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
    live_ = procfs_ && is_live_procfs(proc_.get());
    if ((root.empty() || root == detail::proc_root) && !procfs_) return errc::process_table_unavailable;
    options_ = options;
    auto bpf = bpf_snapshot_source::open(options, live_);
    if (!bpf) return bpf.error();
    bpf_ = std::move(*bpf);
    generation_ = fork_generation();
    return {};
}

// In a forked child, the /proc descriptor's file offset (which getdents
// moves) and the eBPF programs, ring buffer and counters are shared with the
// parent: two walks at once would read each other's records. The child opens
// its own before its first walk; the parent's stay untouched.
result<void> proc_source::reopen_after_fork() noexcept {
    try {
        const snapshot_options options = options_;
        bpf_ = bpf_snapshot_source{};
        workers_.clear();
        outputs_.clear();
        return open(options);
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

result<void> proc_source::stamp(snapshot& out) noexcept {
    if (generation_ != fork_generation())
        if (auto r = reopen_after_fork(); !r) return r;
    auto anchor = get_boot_anchor();
    if (!anchor) return anchor.error();
    start_ = detail::now_ns(CLOCK_BOOTTIME);
    out.since_boot = nanoseconds{start_};
    out.taken = anchor->boot + nanoseconds{start_};
    out.boot = anchor->id;
    return {};
}

result<void> proc_source::take(snapshot& out, const snapshot* reuse_from) noexcept {
    if (bpf_) return bpf_.take(out, options_);
    out.source = proctimes::snapshot_source::procfs;
    walk_config c;
    c.proc_fd = proc_.get();
    c.procfs = procfs_;
    c.live = live_;
    c.threads = threads_;
    c.precise_processes = exact_process_totals();
    c.precise_threads = threads_ && cpu_ == snapshot_cpu::precise;
    c.reuse_from = reuse_from;
    c.boot = out.boot;
    c.taken = out.taken;
    c.tick_ns = 1'000'000'000 / clock_ticks_per_second();
    c.ticks = make_precision(c, cpu_source::stat_ticks);
    c.clock = make_precision(c, cpu_source::cpu_clock_and_stat);
    c.sched = make_precision(c, cpu_source::schedstat_and_stat);

    try {
        if (workers_.empty()) workers_.push_back(std::make_unique<worker>());
        worker& first = *workers_.front();
        if (!first.ensure_buffer()) return detail::errno_code(ENOMEM);
        if (auto ec = list_pids(proc_.get(), first.dents.get(), pids_)) return ec;

        // How many walkers. A second one pays off only for a large walk
        // (starting a thread costs ~50 µs) and only if a CPU is idle: on a
        // busy machine the helper is preempted while holding a share of the
        // work, and the walk ends up slower than with one (measured:
        // docs/PERFORMANCE.md).
        std::size_t want = workers_wanted_;
        if (want == 0) {
            want = 1;
            const std::size_t cpus = usable_cpus();
            if (cpus >= 2 && live_) {
                const auto load = system_load(proc_.get(), first.buf, sizeof first.buf);
                const std::size_t tasks = threads_ ? std::max<std::size_t>(pids_.size(), load.total) : pids_.size();
                if (tasks >= parallel_min_tasks && load.running > 0 && load.running < cpus) want = 2;
            }
        }
        // Each walker costs a thread and a 64 KiB buffer kept between takes:
        // a request beyond what the CPUs can run is cut to max_walkers().
        want = std::clamp<std::size_t>(want, 1, max_walkers());
        while (workers_.size() < want) workers_.push_back(std::make_unique<worker>());
        outputs_.clear();
        for (std::size_t i = 0; i < want; ++i) {
            workers_[i]->out.clear();
            if (!workers_[i]->ensure_buffer()) return detail::errno_code(ENOMEM);
            outputs_.push_back(&workers_[i]->out);
        }
        c.defer_big = want > 1;

        // A walker that throws (ENOMEM) stops the others.
        std::atomic<bool> stop{false};
        auto on_failure = [&](std::size_t i) noexcept {
            workers_[i]->out.fatal = detail::errno_code(ENOMEM);
            stop.store(true, std::memory_order_relaxed);
        };

        // Phase 1: processes, pids shared out a few at a time.
        std::atomic<std::size_t> next{0};
        std::atomic<std::size_t> big_count{0};
        out.workers = run_on_workers(
            want,
            [&](std::size_t wi) {
                worker& w = *workers_[wi];
                for (;;) {
                    if (stop.load(std::memory_order_relaxed)) break;
                    const std::size_t i = next.fetch_add(pids_per_grab, std::memory_order_relaxed);
                    if (i >= pids_.size()) break;
                    const std::size_t end = std::min(pids_.size(), i + pids_per_grab);
                    for (std::size_t k = i; k < end; ++k) read_process(w, c, pids_[k], big_count);
                }
            },
            on_failure);
        // A walker that did not start took no pids: fine. One that hit ENOMEM: fail.
        for (std::size_t i = 0; i < want; ++i)
            if (workers_[i]->out.fatal) return workers_[i]->out.fatal;

        // Phase 2: the threads of big processes, a few tids at a time.
        struct chunk {
            big_process* job;
            std::size_t begin, end;
        };
        std::vector<chunk> chunks;
        for (std::size_t i = 0; i < want; ++i)
            for (auto& block : workers_[i]->out.deferred) {
                // Every deferred block of this source is a big_process (read_process).
                auto* job = static_cast<big_process*>(block.get());
                for (std::size_t b = 0; b < job->tids.size(); b += tids_per_grab)
                    chunks.push_back({job, b, std::min(job->tids.size(), b + tids_per_grab)});
            }
        if (!chunks.empty()) {
            next.store(0);
            (void)run_on_workers(
                want,
                [&](std::size_t wi) {
                    worker& w = *workers_[wi];
                    snapshot_thread t;
                    for (;;) {
                        if (stop.load(std::memory_order_relaxed)) break;
                        const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
                        if (i >= chunks.size()) break;
                        const chunk& ch = chunks[i];
                        for (std::size_t k = ch.begin; k < ch.end; ++k) {
                            if (read_thread(w, c, ch.job->task.get(), ch.job->pid, ch.job->tids[k], t) ==
                                read_status::ok) {
                                ch.job->slots[k] = t;
                                ch.job->present[k] = 1;
                            }
                        }
                    }
                },
                on_failure);
            for (std::size_t i = 0; i < want; ++i)
                if (workers_[i]->out.fatal) return workers_[i]->out.fatal;
        }
        out.walk_duration = nanoseconds{detail::now_ns(CLOCK_BOOTTIME) - start_};
        merge_walks(out, outputs_);
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    return {};
}

}  // namespace

}  // namespace proctimes::inline v1::detail::proc_snapshot

namespace proctimes::inline v1::detail {

result<std::unique_ptr<snapshot_source>> open_snapshot_source(const snapshot_options& options) noexcept {
    std::unique_ptr<proc_snapshot::proc_source> s(new (std::nothrow) proc_snapshot::proc_source);
    if (!s) return errno_code(ENOMEM);
    if (auto r = s->open(options); !r) return r.error();
    return std::unique_ptr<snapshot_source>(std::move(s));
}

}  // namespace proctimes::inline v1::detail
