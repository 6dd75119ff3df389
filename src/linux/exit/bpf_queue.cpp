// SPDX-License-Identifier: MIT
#include "linux/exit/bpf_queue.hpp"

#include <cerrno>
#include <new>

#include <sys/eventfd.h>
#include <unistd.h>

namespace proctimes::inline v1::detail {

ended_task to_ended_task(const bpf_task_end& e) {
    ended_task t;
    t.tid = e.tid;
    t.pid = e.pid;
    t.parent_pid = e.parent_pid;
    t.uid = e.uid;
    t.name = e.name;
    t.kernel = e.kernel;
    t.user = e.user;
    // Dated by its release, so that received − elapsed is its exact start
    // and the leader's record (released last) follows its threads'.
    t.received_since_boot = e.released_since_boot;
    t.elapsed = e.released - e.creation;
    t.process_ended = e.is_process();
    // One thread all its life: its own values are the process's. Unknown
    // (a kernel without taskstats' group data) counts as not.
    t.whole_process = e.is_process() && e.threads_known && !e.had_threads;
    t.exact = true;
    t.forked_no_exec = e.forked_no_exec;
    t.exit = e.exit;
    t.creation = e.creation;
    t.start_ticks = e.start_ticks;
    t.status = e.status;
    if (e.is_process()) {
        t.process_kernel = e.group_kernel;
        t.process_user = e.group_user;
    }
    t.command_line = e.command_line;
    return t;
}

result<std::unique_ptr<bpf_exit_queue>> bpf_exit_queue::open(bool on_read) noexcept {
    std::unique_ptr<bpf_exit_queue> q(new (std::nothrow) bpf_exit_queue);
    if (!q) return errno_code(ENOMEM);
    q->efd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!q->efd_) return errno_code(errno);
    auto* self = q.get();
    auto s =
        bpf_exit_stream::start([self](const bpf_task_end& e) { self->add(e); }, {}, /*command_lines=*/true, on_read);
    if (!s) return s.error();
    q->stream_ = std::move(*s);
    return q;
}

void bpf_exit_queue::add(const bpf_task_end& e) noexcept {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= capacity) {
        ++overflow_;
        return;
    }
    try {
        queue_.push_back(to_ended_task(e));
    } catch (...) {  // out of memory: this end is lost, and counted
        ++overflow_;
        return;
    }
    if (queue_.size() == 1) {
        const std::uint64_t one = 1;
        (void)!::write(efd_.get(), &one, sizeof one);
    }
}

result<bool> bpf_exit_queue::drain(std::vector<ended_task>& out) noexcept {
    stream_->take_waiting();  // on_read: what the kernel holds (add() queues it)
    const std::uint64_t now_lost = lost();
    std::lock_guard lock(mutex_);
    try {
        out.reserve(out.size() + queue_.size());
    } catch (const std::bad_alloc&) {
        return errno_code(ENOMEM);
    }
    out.insert(out.end(), queue_.begin(), queue_.end());
    queue_.clear();
    std::uint64_t n;
    (void)!::read(efd_.get(), &n, sizeof n);  // empty now: no longer readable
    const bool complete = now_lost == lost_seen_;
    lost_seen_ = now_lost;
    return complete;
}

std::uint64_t bpf_exit_queue::lost() const noexcept {
    std::uint64_t over;
    {
        std::lock_guard lock(mutex_);
        over = overflow_;
    }
    return stream_->dropped() + over;
}

}  // namespace proctimes::inline v1::detail
