// SPDX-License-Identifier: MIT
// The portable snapshotter: proctimes::take_snapshot, proctimes::snapshotter
// and snapshot::find. It drives the backend's snapshot source (declared in
// src/backend/backend.hpp) and owns the policy around it: when a snapshot
// is taken, when an idle process's threads may be copied from the previous
// snapshot, what a failed take leaves behind. See
// include/proctimes/snapshot.hpp for the contract.
#include "proctimes/snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <new>

#include "backend/backend.hpp"

namespace proctimes::inline v1 {

namespace {

std::error_code out_of_memory() noexcept { return {ENOMEM, std::system_category()}; }

}  // namespace

const snapshot_process* snapshot::find(pid_t pid) const noexcept {
    auto it = std::lower_bound(processes.begin(), processes.end(), pid,
                               [](const snapshot_process& p, pid_t v) { return p.pid() < v; });
    return (it != processes.end() && it->pid() == pid) ? &*it : nullptr;
}

struct snapshotter::impl {
    snapshot_options options;
    std::unique_ptr<detail::snapshot_source> source;
    // For snapshot_options::reuse_idle_threads_for: the last snapshot taken,
    // and when (since_boot, ns) the last walk that copied nothing started.
    snapshot previous;
    bool have_previous = false;
    std::int64_t last_full_walk = 0;

    result<void> take(snapshot& out) noexcept;
};

snapshotter::snapshotter() noexcept = default;
snapshotter::snapshotter(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
snapshotter::snapshotter(snapshotter&&) noexcept = default;
snapshotter& snapshotter::operator=(snapshotter&&) noexcept = default;
snapshotter::~snapshotter() = default;

result<snapshotter> snapshotter::open(snapshot_options options) noexcept {
    std::unique_ptr<impl> p(new (std::nothrow) impl);
    if (!p) return out_of_memory();
    try {
        p->options = std::move(options);
    } catch (...) {
        return out_of_memory();
    }
    auto source = detail::open_snapshot_source(p->options);
    if (!source) return source.error();
    p->source = std::move(*source);
    return snapshotter(std::move(p));
}

const snapshot_options& snapshotter::options() const noexcept {
    static const snapshot_options none{};
    return impl_ ? impl_->options : none;
}

result<snapshot> snapshotter::take() noexcept {
    try {
        snapshot s;
        if (auto r = take(s); !r) return r.error();
        return s;
    } catch (...) {
        return out_of_memory();
    }
}

result<void> snapshotter::take(snapshot& out) noexcept {
    if (!impl_) return errc::invalid_handle;
    auto r = impl_->take(out);
    if (!r) {
        out.processes.clear();
        out.threads.clear();
        out.failures.clear();
        out.vanished = 0;
        out.reused_threads = 0;
    }
    return r;
}

result<void> snapshotter::impl::take(snapshot& out) noexcept {
    if (auto r = source->stamp(out); !r) return r;
    out.has_threads = options.threads;
    const std::int64_t start = out.since_boot.count();
    try {
        // Copying threads needs exact process totals: equal tick counts do not
        // prove a process idle.
        const bool reusing =
            options.reuse_idle_threads_for.count() > 0 && options.threads && source->exact_process_totals();
        const snapshot* reuse_from = nullptr;
        if (reusing && have_previous && previous.boot == out.boot && previous.has_threads &&
            start - last_full_walk < options.reuse_idle_threads_for.count())
            reuse_from = &previous;
        if (auto r = source->take(out, reuse_from); !r) return r;
        if (reusing) {
            // Kept for the next take(); the vectors keep their capacity.
            if (!reuse_from) last_full_walk = start;
            previous.boot = out.boot;
            previous.has_threads = out.has_threads;
            previous.processes = out.processes;
            previous.threads = out.threads;
            have_previous = true;
        }
    } catch (...) {
        return out_of_memory();
    }
    return {};
}

result<snapshot> take_snapshot(const snapshot_options& options) noexcept {
    try {
        // One snapshot never pays for loading the eBPF program (docs/BPF.md).
        snapshot_options once = options;
        if (once.source == snapshot_source::automatic) once.source = snapshot_source::procfs;
        auto s = snapshotter::open(std::move(once));
        if (!s) return s.error();
        return s->take();
    } catch (...) {
        return out_of_memory();
    }
}

}  // namespace proctimes::inline v1
