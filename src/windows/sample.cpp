// SPDX-License-Identifier: MIT
// The windows backend's samples (backend/backend.hpp: sample, realtime_now) and the
// helpers of src/windows/win.hpp. GetProcessTimes/GetThreadTimes give
// creation, exit, kernel and user in one call; the handle being signalled
// says the task has ended, and then the values are final.
#include <mutex>

#include "precision.hpp"
#include "windows/task.hpp"

namespace proctimes::inline v1::detail {

namespace win {

std::error_code error(DWORD code) noexcept {
    switch (code) {
        case ERROR_ACCESS_DENIED:
            return make_error_code(errc::access_denied);
        case ERROR_CALL_NOT_IMPLEMENTED:
        case ERROR_NOT_SUPPORTED:
        case ERROR_PROC_NOT_FOUND:
            return make_error_code(errc::not_supported);
        case ERROR_NOT_ENOUGH_MEMORY:
        case ERROR_OUTOFMEMORY:
            return make_error_code(std::errc::not_enough_memory);
        case ERROR_INVALID_HANDLE:
            return make_error_code(errc::invalid_handle);
        default:
            return {static_cast<int>(code), std::system_category()};
    }
}

bool under_wine() noexcept {
    static const bool wine = [] {
        HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
        return ntdll != nullptr && ::GetProcAddress(ntdll, "wine_get_version") != nullptr;
    }();
    return wine;
}

std::chrono::nanoseconds cpu_tick() noexcept {
    static const std::chrono::nanoseconds tick = [] {
        // Wine counts thread and process times in Linux's USER_HZ ticks.
        if (under_wine()) return std::chrono::nanoseconds{10'000'000};
        DWORD adjustment = 0, increment = 0;
        BOOL disabled = TRUE;
        if (::GetSystemTimeAdjustment(&adjustment, &increment, &disabled) && increment > 0)
            return std::chrono::nanoseconds{static_cast<std::int64_t>(increment) * 100};
        return std::chrono::nanoseconds{15'625'000};  // 64 Hz, the documented default
    }();
    return tick;
}

cpu_precision os_precision() noexcept { return precision_for(cpu_source::os_times, cpu_tick()); }

bool signalled(HANDLE h) noexcept { return ::WaitForSingleObject(h, 0) == WAIT_OBJECT_0; }

}  // namespace win

result<task_times> sample(task_core& c, bool& dead) noexcept {
    dead = false;
    // Ended first, then the values: a handle signalled before the read means
    // the values read are the final ones.
    const bool ended = win::signalled(c.handle.get());
    FILETIME cr{}, ex{}, k{}, u{};
    const BOOL ok = c.is_thread ? ::GetThreadTimes(c.handle.get(), &cr, &ex, &k, &u)
                                : ::GetProcessTimes(c.handle.get(), &cr, &ex, &k, &u);
    if (!ok) return win::last_error();
    // An ended process's exit code stays readable with the same access
    // (PROCESS_QUERY_LIMITED_INFORMATION), for process::exit_status().
    DWORD code = 0;
    if (ended && !c.is_thread && ::GetExitCodeProcess(c.handle.get(), &code))
        c.life.note_zombie_status(exit_status{static_cast<int>(code), 0, false});
    task_times t;
    t.creation = win::to_instant(cr);
    t.kernel = win::duration(k);
    t.user = win::duration(u);
    t.precision = win::os_precision();
    t.state = task_state::running;
    // An ended task's values are those of its exit: they are stamped with its
    // exit FILETIME, which the lifecycle takes as the instant its end was seen.
    t.sampled_at = ended && win::ticks(ex) != 0 ? win::to_instant(ex) : realtime_now();
    dead = ended;
    return t;
}

instant realtime_now() noexcept {
    FILETIME f{};
    ::GetSystemTimePreciseAsFileTime(&f);
    return win::to_instant(f);
}

}  // namespace proctimes::inline v1::detail
