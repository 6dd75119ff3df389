// SPDX-License-Identifier: MIT
#include "linux/exit/recent.hpp"

#include <cerrno>
#include <new>

#include "exit/failures.hpp"
#include "fd.hpp"

namespace proctimes::inline v1::detail {

result<std::unique_ptr<bpf_recent_exits>> bpf_recent_exits::start(std::size_t capacity) noexcept {
    std::unique_ptr<bpf_recent_exits> r(new (std::nothrow) bpf_recent_exits);
    if (!r || capacity == 0) return errno_code(r ? EINVAL : ENOMEM);
    r->capacity_ = capacity;
    auto* self = r.get();
    auto s = bpf_exit_stream::start(
        [self](const bpf_task_end& e) {
            try {
                self->add(e);
            } catch (...) {  // out of memory: this end is not kept; find() misses it
                count_exit_failure(exit_failure::ends_not_kept);
            }
        },
        [self](const bpf_lost_task& t) {
            try {
                self->add_lost(t);
            } catch (...) {  // out of memory: a waiter waits out its bound instead
                count_exit_failure(exit_failure::ends_not_kept);
            }
        });
    if (!s) return s.error();
    r->stream_ = std::move(*s);
    return r;
}

void bpf_recent_exits::add(const bpf_task_end& e) {
    std::lock_guard lock(mutex_);
    if (order_.size() == capacity_) {
        const auto [tid, ticks] = order_.front();
        order_.pop_front();
        auto [b, end] = by_tid_.equal_range(tid);
        for (auto it = b; it != end; ++it)
            if (it->second.start_ticks == ticks) {
                by_tid_.erase(it);
                break;
            }
    }
    by_tid_.emplace(e.tid, e);
    order_.emplace_back(e.tid, e.start_ticks);
}

void bpf_recent_exits::add_lost(const bpf_lost_task& t) {
    std::lock_guard lock(mutex_);
    if (lost_order_.size() == capacity_) {
        const auto [tid, ticks] = lost_order_.front();
        lost_order_.pop_front();
        auto [b, end] = lost_.equal_range(tid);
        for (auto it = b; it != end; ++it)
            if (it->second == ticks) {
                lost_.erase(it);
                break;
            }
    }
    lost_.emplace(t.tid, t.start_ticks);
    lost_order_.emplace_back(t.tid, t.start_ticks);
}

bool bpf_recent_exits::lost(pid_t tid, std::uint64_t start_ticks) const {
    std::lock_guard lock(mutex_);
    auto [b, end] = by_tid_.equal_range(tid);
    for (auto it = b; it != end; ++it)
        if (it->second.start_ticks == start_ticks) return false;  // delivered after all
    auto [lb, lend] = lost_.equal_range(tid);
    for (auto it = lb; it != lend; ++it)
        if (it->second == start_ticks) return true;
    return false;
}

std::optional<bpf_task_end> bpf_recent_exits::find(pid_t tid, std::uint64_t start_ticks) const {
    std::lock_guard lock(mutex_);
    auto [b, end] = by_tid_.equal_range(tid);
    for (auto it = b; it != end; ++it)
        if (it->second.start_ticks == start_ticks) return it->second;
    return std::nullopt;
}

}  // namespace proctimes::inline v1::detail
