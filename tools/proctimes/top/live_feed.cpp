// SPDX-License-Identifier: MIT
// The live frame feed of `proctimes top`: each frame is a `ps --interval`
// frame (the same snapshotter, exit stream, ledger and records: ps/internal.hpp)
// turned into rows, with what top shows beside CPU read through the public
// library: read_process_resources for memory, I/O, context switches and the
// command line, read_machine_status for the load, memory and each CPU.
//
// Cost: the snapshot reads every process's CPU; the resources are read again
// only for a process that ran in the interval or is new, the command line
// and the cgroup once per process (by pid and start tick: a process moved to
// another cgroup keeps the one it was first seen in).
#include "top/live_feed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "frames/frames.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/machine.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;

// The command line as one string: its arguments joined by one space.
std::string joined_command(const std::string& raw) {
    std::string s = raw;
    while (!s.empty() && s.back() == '\0') s.pop_back();
    std::replace(s.begin(), s.end(), '\0', ' ');
    return s;
}

// The cgroup v2 path of a process; else the v1 hierarchy that has the cpu
// controller; "" when unknown.
std::string cgroup_of(const process_resources& r) {
    if (!r.cgroups) return {};
    for (const auto& c : *r.cgroups)
        if (c.hierarchy == "0" && c.controllers.empty()) return c.path;
    for (const auto& c : *r.cgroups)
        for (std::size_t at = 0; at <= c.controllers.size();) {
            const std::size_t end = std::min(c.controllers.find(',', at), c.controllers.size());
            if (c.controllers.compare(at, end - at, "cpu") == 0) return c.path;
            at = end + 1;
        }
    return {};
}

double share(nanoseconds part, nanoseconds whole) {
    return whole.count() > 0
               ? std::clamp(static_cast<double>(part.count()) / static_cast<double>(whole.count()), 0.0, 1.0)
               : 0.0;
}

// What is kept of one live process between frames.
struct kept_process {
    std::uint64_t start_ticks = 0;
    std::optional<process_resources> last;  // the last read of its resources
    std::string command;
    std::string cgroup;  // read with the command line
    std::string name;    // the name it had when its command line was read
    instant creation{};  // as the walk that listed it gave it
    instant listed{};    // when the last walk that listed it was taken
    bool command_read = false;
    std::uint64_t seen = 0;  // the frame that last listed it
};

class live_feed final : public frame_feed {
public:
    live_feed(const live_options& lo, std::string proc_root, snapshotter taker)
        : lo_(lo), proc_root_(std::move(proc_root)), taker_(std::move(taker)) {
        sources_.open(proc_root_);
    }

    result<top_frame> next(nanoseconds interval) override {
        top_frame f;
        f.number = ++number_;
        if (!started_) {
            if (auto r = taker_.take(prev_); !r) return r.error();
            sources_.read_stat(proc_root_);
            machine_prev_ = read_machine();
            started_ = true;
            auto records = frames::build_records(prev_, nullptr, lo_.threads, lo_.only_uid, users_);
            fill(f, prev_, records, nullptr);
            if (machine_prev_) apply_machine(f, *machine_prev_);
            return f;
        }
        sources_.sleep_until(prev_.since_boot + interval);
        if (auto r = taker_.take(cur_); !r) return r.error();
        sources_.read_stat(proc_root_);
        auto machine = read_machine();
        auto delta = compute_delta(prev_, cur_);
        if (!delta) return delta.error();
        const auto ledger = sources_.ledger(prev_, cur_);
        auto records = frames::build_records(cur_, &*delta, lo_.threads, lo_.only_uid, users_);
        if (ledger) {
            frames::add_ledger_records(records, *ledger, sources_, cur_, lo_.threads, lo_.only_uid, users_);
            f.ledger = *ledger;
        } else {
            f.ledger_error = ledger.error().message();
        }
        f.interval = delta->interval;
        fill(f, cur_, records, ledger ? &*ledger : nullptr);
        // Busy: the ledger's (from the aggregate line of /proc/stat), per CPU
        // from each CPU's line.
        if (ledger) f.busy = share(ledger->busy, ledger->stat_interval * std::max(ledger->cpus, 1));
        if (machine && machine_prev_) {
            for (const auto& c : machine->per_cpu) {
                const auto it = std::find_if(machine_prev_->per_cpu.begin(), machine_prev_->per_cpu.end(),
                                             [&](const cpu_times_of& p) { return p.cpu == c.cpu; });
                if (it == machine_prev_->per_cpu.end()) {
                    f.busy_per_cpu.push_back(0.0);
                    continue;
                }
                const nanoseconds busy = c.times.busy() - it->times.busy();
                const nanoseconds all = busy + (c.times.idle + c.times.iowait) - (it->times.idle + it->times.iowait);
                f.busy_per_cpu.push_back(share(busy, all));
            }
        }
        if (!ledger && !f.busy_per_cpu.empty()) {
            double sum = 0;
            for (double b : f.busy_per_cpu) sum += b;
            f.busy = sum / static_cast<double>(f.busy_per_cpu.size());
        }
        if (machine) apply_machine(f, *machine);
        machine_prev_ = std::move(machine);
        sources_.forget_until(cur_.since_boot);
        std::swap(prev_, cur_);
        return f;
    }

    [[nodiscard]] int wait_handle() const noexcept override { return sources_.exit_handle(); }
    void pump() override { sources_.pump(); }

private:
    std::optional<machine_status> read_machine() {
        auto m = read_machine_status(machine_part::all, proc_root_);
        if (!m) {
            machine_error_ = m.error().message();
            return std::nullopt;
        }
        machine_error_.clear();
        return std::move(*m);
    }

    static void apply_machine(top_frame& f, const machine_status& m) {
        if (m.load) f.load = *m.load;
        f.memory_total = m.memory_total_bytes.value_or(0);
        f.memory_available = m.memory_available_bytes.value_or(0);
    }

    bool wanted(proctimes::pid_t pid) const {
        return lo_.pids.empty() || std::find(lo_.pids.begin(), lo_.pids.end(), pid) != lo_.pids.end();
    }

    // The row's resources: read again when the process ran or is new, else
    // the last read (nothing of it moved: no I/O, no switches in the interval).
    // `taken`: when the walk that listed it was taken.
    void add_resources(const snapshot_process& p, instant taken, bool ran, top_row& row) {
        auto [it, fresh] = kept_.try_emplace(p.pid());
        kept_process& k = it->second;
        if (!fresh && k.start_ticks != p.identity.start_ticks) {
            k = kept_process{};
            fresh = true;
        }
        k.start_ticks = p.identity.start_ticks;
        k.seen = number_;
        k.creation = p.times.creation;
        k.listed = taken;
        // A new name is a new program (an exec, most often: the command line
        // read between fork and exec was the parent's): read it again.
        if (k.command_read && p.name.str() != k.name) k.command_read = false;
        const std::optional<process_resources> before = k.last;
        if (fresh || ran || !k.last || !k.command_read) {
            resource_options o;
            o.families = resource_family::memory | resource_family::switches | resource_family::io;
            if (!k.command_read) o.families |= resource_family::command_line | resource_family::cgroups;
            o.proc_root = proc_root_;
            o.start_ticks = p.identity.start_ticks;
            o.previous = ran || !k.last ? nullptr : &*k.last;
            auto r = read_process_resources(p.pid(), o);
            if (r) {
                if (!k.command_read) {
                    k.command = r->command_line ? joined_command(*r->command_line) : std::string();
                    k.cgroup = cgroup_of(*r);
                }
                k.last = std::move(*r);
            }
            if (!k.command_read) k.name = p.name.str();
            k.command_read = true;  // read, or gone or refused: not asked again while its name stays
        }
        row.command = k.command;
        row.cgroup = k.cgroup;
        if (!k.last) return;
        const process_resources& now = *k.last;
        if (now.memory) row.rss_bytes = now.memory->resident_bytes;
        // The interval's I/O and switches: what grew since the last read
        // (none on the first frame that lists the process).
        const auto grew = [](std::uint64_t a, std::uint64_t b) { return a - std::min(a, b); };
        if (!before) return;
        if (now.io && before->io) {
            row.read_bytes = grew(now.io->read_bytes, before->io->read_bytes);
            row.write_bytes = grew(now.io->write_bytes, before->io->write_bytes);
        }
        if (now.switches && before->switches) {
            row.voluntary_switches = grew(now.switches->voluntary, before->switches->voluntary);
            row.involuntary_switches = grew(now.switches->involuntary, before->switches->involuntary);
        }
    }

    void fill(top_frame& f, const snapshot& s, std::vector<task_record>& records, const cpu_ledger* l) {
        f.taken = s.taken;
        f.uptime = s.since_boot;
        f.cpus = l ? static_cast<unsigned>(std::max(l->cpus, 1)) : std::max(1U, std::thread::hardware_concurrency());
        f.exit_stream = sources_.source() == ps_ended_source::exit_stream;
        f.ended_source = !f.exit_stream     ? "children accounting (unprivileged)"
                         : sources_.exact() ? "exit stream (eBPF)"
                                            : "exit stream (taskstats)";
        f.ended_source_note = sources_.why_none();
        f.records_lost = sources_.lost_count();
        f.records_lost_any = sources_.lost();
        for (const auto& p : s.processes) f.tasks += static_cast<std::size_t>(std::max(p.thread_count, 0));
        f.live_processes = s.processes.size();
        if (!machine_error_.empty()) f.warnings.push_back("machine status: " + machine_error_);
        if (!s.failures.empty())
            f.warnings.push_back(fmt::format("{} processes or threads could not be read", s.failures.size()));

        // Exit statuses of the processes that ended, from their last records.
        std::unordered_map<proctimes::pid_t, const ended_task*> end_of;
        for (const auto& t : sources_.exits())
            if (t.process_ended && t.pid != 0) end_of[t.pid] = &t;
        std::unordered_map<proctimes::pid_t, const ended_process*> ended_of;
        std::unordered_map<proctimes::pid_t, const children_account*> children_of;
        if (l) {
            for (const auto& e : l->processes) ended_of[e.pid] = &e;
            for (const auto& c : l->children) children_of[c.pid] = &c;
        }

        f.rows.reserve(records.size());
        for (auto& r : records) {
            if (!wanted(r.pid)) continue;
            top_row row = row_of(r);
            // The children columns: what the ledger counts of the children
            // the process reaped (their CPU inside the interval, less what
            // ended rows already show), split as the kernel's totals are, so
            // that a frame's rows add up to the attributed CPU, each
            // CPU-second once.
            if (!row.ended) {
                row.interval_children_kernel = nanoseconds{0};
                row.interval_children_user = nanoseconds{0};
                if (const auto it = children_of.find(r.pid); it != children_of.end()) {
                    const children_account& c = *it->second;
                    const auto all = c.kernel + c.user;
                    const auto kernel =
                        all.count() > 0 ? nanoseconds{static_cast<std::int64_t>(static_cast<double>(c.counted.count()) *
                                                                                static_cast<double>(c.kernel.count()) /
                                                                                static_cast<double>(all.count()))}
                                        : nanoseconds{0};
                    row.interval_children_kernel = kernel;
                    row.interval_children_user = c.counted - kernel;
                }
            }
            if (row.ended) {
                if (const auto it = end_of.find(r.pid); it != end_of.end() && it->second->status) {
                    const exit_status& st = *it->second->status;
                    if (st.signaled()) {
                        row.exit_signal = st.signal;
                    } else {
                        row.exit_code = st.code;
                    }
                }
                if (const auto it = ended_of.find(r.pid); it != ended_of.end() && it->second->command_line)
                    row.command = joined_command(*it->second->command_line);
                if (const auto k = kept_.find(r.pid); k != kept_.end()) {
                    if (row.command.empty()) row.command = k->second.command;
                    row.cgroup = k->second.cgroup;
                    // Its creation as its live rows gave it (the walk's, to
                    // the ns where it reads start_boottime): one process, one
                    // creation instant. The end's is eBPF's exact one, or
                    // (taskstats) a start tick estimated from a record, never
                    // earlier than the truth: that of its last thread, when
                    // its leader's record came in an earlier interval. An
                    // estimate no later than the walk that listed the pid is
                    // the process that walk saw (another process could take
                    // the pid only after it), and so is one within a tick of
                    // its creation.
                    const auto apart = row.creation - k->second.creation;
                    if (apart >= -tick_ && (apart <= tick_ || row.creation <= k->second.listed))
                        row.creation = k->second.creation;
                }
            } else if (const auto* p = s.find(r.pid)) {
                row.threads = static_cast<std::uint32_t>(std::max(p->thread_count, 0));
                const bool ran = !r.used || r.used->kernel.count() + r.used->user.count() > 0 ||
                                 r.used->basis != interval_basis::both;
                add_resources(*p, s.taken, ran, row);
            }
            f.rows.push_back(std::move(row));
        }
        // Forget the processes no longer listed.
        if (number_ % 16 == 0) std::erase_if(kept_, [&](const auto& e) { return e.second.seen + 2 < number_; });
    }

    static top_row row_of(const task_record& r) {
        top_row row;
        row.pid = r.pid;
        row.tid = r.tid;
        row.name = r.name;
        if (r.ps) {
            row.ppid = r.ps->ppid;
            row.uid = r.ps->uid;
            row.user_name = r.ps->user_name;
            row.state = r.ps->proc_state;
        }
        if (r.used) {
            row.interval_kernel = r.used->kernel;
            row.interval_user = r.used->user;
            row.interval_children_kernel = r.used->children_kernel.value_or(nanoseconds{0});
            row.interval_children_user = r.used->children_user.value_or(nanoseconds{0});
            row.basis = std::string(to_string(r.used->basis));
            row.ended = r.used->basis == interval_basis::ended || r.used->basis == interval_basis::ended_earlier;
        }
        if (row.ended) row.state = 'X';
        row.kernel = r.kernel;
        row.user = r.user;
        row.resolution = r.resolution;
        row.total_resolution = r.total_resolution;
        row.source = r.source;
        row.sampled_at = r.sampled_at;
        row.creation = r.creation;
        row.exit = r.exit;
        row.exit_source = r.exit_source;
        for (const auto& t : r.threads) row.thread_rows.push_back(row_of(t));
        return row;
    }

    live_options lo_;
    std::string proc_root_;
    /// One clock tick: how far a start tick's instant lies from the ns one.
    std::chrono::nanoseconds tick_{
        proctimes::clock_ticks_per_second() > 0 ? 1'000'000'000 / proctimes::clock_ticks_per_second() : 10'000'000};
    snapshotter taker_;
    frames::ledger_sources sources_;
    user_names users_;
    snapshot prev_, cur_;
    std::optional<machine_status> machine_prev_;
    std::string machine_error_;
    std::unordered_map<proctimes::pid_t, kept_process> kept_;
    std::uint64_t number_ = 0;
    bool started_ = false;
};

}  // namespace

result<std::unique_ptr<frame_feed>> open_live_feed(const live_options& lo) {
    // As `ps --interval` takes its snapshots: the eBPF walk where it can be
    // used (every task in one pass, 1 ns totals), else /proc with nanosecond
    // totals for processes. With threads from /proc, those of a process that
    // did not run are copied from the previous frame, every thread read again
    // at least every 10 s: a third of a whole walk's cost, but still more
    // than twice the eBPF walk's (`ps -i 1 -t` at 2,100 tasks: 9.8 ms a frame
    // with the copy, 4.2 ms through eBPF), and the copy keeps a snapshotter
    // on /proc, so it is asked for only where eBPF is not used.
    snapshot_options so;
    so.threads = lo.threads;
    if (!lo.proc_root.empty()) so.proc_root = lo.proc_root;
    so.cpu = snapshot_cpu::precise_processes;
    auto taker = snapshotter::open(so);
    if (!taker) return taker.error();
    // The snapshotter holds the eBPF program where it loaded it, so asking
    // loads nothing again.
    if (lo.threads && (!is_live_proc_root(so.proc_root) || !bpf_snapshot_status().usable)) {
        so.reuse_idle_threads_for = std::chrono::seconds{10};
        taker = snapshotter::open(so);
        if (!taker) return taker.error();
    }
    std::unique_ptr<frame_feed> feed = std::make_unique<live_feed>(lo, so.proc_root, std::move(*taker));
    return feed;
}

}  // namespace proctimes::cli::top
