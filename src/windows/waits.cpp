// SPDX-License-Identifier: MIT
// The windows backend's waits (exit.hpp): a process or thread handle is
// signalled when it ends. WaitForMultipleObjects takes at most 64 handles
// (MAXIMUM_WAIT_OBJECTS), so wait_for_any over more checks every chunk of 64
// without blocking, then blocks on one chunk at a time for at most 10 ms
// (a later chunk's end is seen within that). A wait that sees the end stamps
// it with the task's own exit time (GetProcessTimes' ExitTime).
#include <algorithm>
#include <chrono>
#include <vector>

#include "proctimes/exit.hpp"
#include "windows/task.hpp"
#include "windows/waits.hpp"

namespace proctimes::inline v1 {

namespace detail::win {

instant exit_time(task_core& c) noexcept {
    FILETIME cr{}, ex{}, k{}, u{};
    const BOOL ok = c.is_thread ? ::GetThreadTimes(c.handle.get(), &cr, &ex, &k, &u)
                                : ::GetProcessTimes(c.handle.get(), &cr, &ex, &k, &u);
    return ok && ticks(ex) != 0 ? to_instant(ex) : realtime_now();
}

void stamp_end(task_core& c) noexcept { record_exit(c, exit_time(c)); }

DWORD wait_ms(std::optional<std::chrono::steady_clock::time_point> deadline) noexcept {
    if (!deadline) return INFINITE;
    const auto left = *deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return 0;
    // Rounded up, so that a wait never ends before its timeout; capped below INFINITE.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<DWORD>(std::min<std::int64_t>(ms, 0x7FFFFFFF));
}

std::optional<std::chrono::steady_clock::time_point> deadline_of(
    std::optional<std::chrono::nanoseconds> timeout) noexcept {
    if (!timeout) return std::nullopt;
    const auto now = std::chrono::steady_clock::now();
    const auto room = std::chrono::steady_clock::time_point::max() - now;
    const auto t = std::max(*timeout, std::chrono::nanoseconds{0});
    if (t >= room) return std::nullopt;
    return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(t);
}

result<bool> wait_one(task_core& c, std::optional<std::chrono::nanoseconds> timeout) noexcept {
    const auto deadline = deadline_of(timeout);
    for (;;) {
        const DWORD ms = wait_ms(deadline);
        const DWORD r = ::WaitForSingleObject(c.handle.get(), ms);
        if (r == WAIT_OBJECT_0) {
            stamp_end(c);
            return true;
        }
        if (r == WAIT_FAILED) return last_error();
        if (ms == 0 || (deadline && std::chrono::steady_clock::now() >= *deadline)) return false;
        // Timed out on a capped interval: wait again until the deadline.
    }
}

}  // namespace detail::win

result<bool> wait_for_exit(const process& p, std::optional<std::chrono::nanoseconds> timeout) noexcept {
    detail::task_core* c = detail::handle_access::core(p);
    if (!c) return errc::invalid_handle;
    return detail::win::wait_one(*c, timeout);
}

result<bool> wait_for_exit(const thread& t, std::optional<std::chrono::nanoseconds> timeout) noexcept {
    detail::task_core* c = detail::handle_access::core(t);
    if (!c) return errc::invalid_handle;
    return detail::win::wait_one(*c, timeout);
}

result<std::optional<std::size_t>> wait_for_any(std::span<const process* const> ps,
                                                std::optional<std::chrono::nanoseconds> timeout) noexcept {
    using namespace detail;
    if (ps.empty()) return errc::invalid_argument;
    std::vector<HANDLE> hs;
    std::vector<task_core*> cores;
    try {
        hs.reserve(ps.size());
        cores.reserve(ps.size());
    } catch (...) {
        return make_error_code(std::errc::not_enough_memory);
    }
    for (const process* p : ps) {
        task_core* c = p ? handle_access::core(*p) : nullptr;
        if (!c) return errc::invalid_handle;
        cores.push_back(c);
        hs.push_back(c->handle.get());
    }
    constexpr std::size_t chunk = MAXIMUM_WAIT_OBJECTS;
    const std::size_t chunks = (hs.size() + chunk - 1) / chunk;
    const auto deadline = win::deadline_of(timeout);
    // Waits on chunk `i` for `ms`: the lowest signalled index, nothing, or an error.
    auto wait_chunk = [&](std::size_t i, DWORD ms) -> result<std::optional<std::size_t>> {
        const std::size_t first = i * chunk;
        const auto n = static_cast<DWORD>(std::min(chunk, hs.size() - first));
        const DWORD r = ::WaitForMultipleObjects(n, hs.data() + first, FALSE, ms);
        if (r < WAIT_OBJECT_0 + n) return std::optional<std::size_t>(first + (r - WAIT_OBJECT_0));
        if (r == WAIT_FAILED) return win::last_error();
        return std::optional<std::size_t>{};
    };
    for (std::size_t round = 0;; ++round) {
        std::optional<std::size_t> hit;
        if (chunks == 1) {
            auto r = wait_chunk(0, win::wait_ms(deadline));
            if (!r) return r.error();
            hit = *r;
        } else {
            for (std::size_t i = 0; i < chunks && !hit; ++i) {  // lowest index first
                auto r = wait_chunk(i, 0);
                if (!r) return r.error();
                hit = *r;
            }
            if (!hit) {
                auto r = wait_chunk(round % chunks, std::min<DWORD>(win::wait_ms(deadline), 10));
                if (!r) return r.error();
                if (*r) continue;  // rescan from the first chunk for the lowest index
            }
        }
        if (hit) {
            win::stamp_end(*cores[*hit]);
            return hit;
        }
        if (deadline && std::chrono::steady_clock::now() >= *deadline) return std::optional<std::size_t>{};
    }
}

}  // namespace proctimes::inline v1
