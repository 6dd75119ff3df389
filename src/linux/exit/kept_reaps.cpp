// SPDX-License-Identifier: MIT
// Closed children's reap requests kept for the exit monitor (kept_reaps.hpp).
#include "linux/exit/kept_reaps.hpp"

#include <array>
#include <atomic>
#include <mutex>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exit/failures.hpp"

namespace proctimes::inline v1::detail {
namespace {

std::mutex g_kept_mutex;
std::array<std::shared_ptr<task_core>, kept_reaps_max> g_kept;
std::atomic<bool> g_kept_any{false};

}  // namespace

bool reap_if_ended(const task_core& c) noexcept {
    siginfo_t si{};
    return ::syscall(SYS_waitid, P_PIDFD, c.pidfd.get(), &si, WEXITED | WNOHANG, nullptr) == 0 && si.si_pid != 0;
}

reap_fallback reap_later(const std::shared_ptr<task_core>& c) noexcept {
    if (reap_if_ended(*c)) {
        count_exit_failure(exit_failure::reap_deferred);
        return reap_fallback::reaped_now;
    }
    {
        std::lock_guard lock(g_kept_mutex);
        for (auto& slot : g_kept)
            if (!slot) {
                slot = c;
                g_kept_any.store(true, std::memory_order_release);
                count_exit_failure(exit_failure::reap_deferred);
                return reap_fallback::kept;
            }
    }
    count_exit_failure(exit_failure::reap_lost);
    return reap_fallback::lost;
}

bool kept_reaps_waiting() noexcept { return g_kept_any.load(std::memory_order_acquire); }

void retry_kept_reaps(const std::function<bool(const std::shared_ptr<task_core>&)>& add) noexcept {
    if (!kept_reaps_waiting()) return;
    std::lock_guard lock(g_kept_mutex);
    bool left = false;
    for (auto& c : g_kept) {
        if (!c) continue;
        if (add(c) || reap_if_ended(*c))
            c.reset();
        else
            left = true;
    }
    g_kept_any.store(left, std::memory_order_release);
}

}  // namespace proctimes::inline v1::detail
