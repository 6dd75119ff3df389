// SPDX-License-Identifier: MIT
// Win32 layer: GetProcessTimes, GetThreadTimes, QueryProcessCycleTime,
// QueryThreadCycleTime.
#include <unistd.h>

#include "backend/backend.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/process.hpp"
#include "win32_layer/handles.hpp"
#include "win32_layer/win32.hpp"

using namespace proctimes;
using namespace proctimes::win32;

namespace {

void store(FILETIME* out, filetime ft) noexcept {
    out->dwLowDateTime = ft.low();
    out->dwHighDateTime = ft.high();
}

// Writes the values asked for (a NULL output is skipped, as Windows callers
// expect: docs/WIN32.md); the exit time is 0 while the task runs.
BOOL write_times(const task_times& t, FILETIME* creation, FILETIME* exit, FILETIME* kernel, FILETIME* user) noexcept {
    const auto c = filetime_from_time(t.creation);
    const auto x = t.exit ? filetime_from_time(*t.exit) : std::optional<filetime>(filetime{0});
    const auto k = filetime_from_duration(t.kernel);
    const auto u = filetime_from_duration(t.user);
    if ((creation && !c) || !x || !k || !u) return fail<BOOL>(FALSE, ERROR_INVALID_DATA);  // cannot happen
    if (creation) store(creation, *c);
    if (exit) store(exit, *x);
    if (kernel) store(kernel, *k);
    if (user) store(user, *u);
    return TRUE;
}

}  // namespace

extern "C" {

BOOL proctimes_GetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime, LPFILETIME lpExitTime,
                               LPFILETIME lpKernelTime, LPFILETIME lpUserTime) {
    process_ref p;
    if (DWORD err = resolve_process(hProcess, PROCESS_QUERY_LIMITED_INFORMATION, p)) return fail<BOOL>(FALSE, err);
    auto t = p.self ? this_process::times() : p.object->times();
    if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
    return write_times(*t, lpCreationTime, lpExitTime, lpKernelTime, lpUserTime);
}

BOOL proctimes_GetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime, LPFILETIME lpExitTime, LPFILETIME lpKernelTime,
                              LPFILETIME lpUserTime) {
    // The calling thread first, without touching the handle table: its CPU
    // clock and one getrusage(RUSAGE_THREAD) (this_thread::times), and the
    // conversions; its creation instant only when asked for (a thread's first
    // one reads /proc, except the main thread's, which is the process's).
    if (reinterpret_cast<std::uintptr_t>(hThread) == current_thread_handle) {
        auto t = detail::self_thread_times(lpCreationTime != nullptr);
        if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
        return write_times(*t, lpCreationTime, lpExitTime, lpKernelTime, lpUserTime);
    }
    thread_ref th;
    if (DWORD err = resolve_thread(hThread, THREAD_QUERY_LIMITED_INFORMATION, th)) return fail<BOOL>(FALSE, err);
    auto t = th.object->times();
    if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
    return write_times(*t, lpCreationTime, lpExitTime, lpKernelTime, lpUserTime);
}

BOOL proctimes_GetExitTimeInfo(HANDLE hObject, LPDWORD lpSource, LPFILETIME lpEarliestExitTime) {
    result<task_times> t = errc::invalid_handle;
    process_ref p;
    DWORD err = resolve_process(hObject, PROCESS_QUERY_LIMITED_INFORMATION, p);
    if (err == ERROR_INVALID_HANDLE) {
        thread_ref th;
        if ((err = resolve_thread(hObject, THREAD_QUERY_LIMITED_INFORMATION, th))) return fail<BOOL>(FALSE, err);
        if (!lpSource || !lpEarliestExitTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
        t = th.self ? this_thread::times() : th.object->times();
    } else if (err) {
        return fail<BOOL>(FALSE, err);
    } else {
        if (!lpSource || !lpEarliestExitTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
        t = p.self ? this_process::times() : p.object->times();
    }
    if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
    DWORD source = PROCTIMES_EXIT_TIME_NONE;
    if (t->exit) {
        // Both record kinds are the kernel's, not a stamp taken when seen.
        const bool recorded =
            t->precision.exit_source == exit_source::exit_record || t->precision.exit_source == exit_source::bpf_exit;
        source = recorded ? PROCTIMES_EXIT_TIME_RECORDED : PROCTIMES_EXIT_TIME_OBSERVED;
    }
    const auto earliest =
        t->exit && t->exit_earliest ? filetime_from_time(*t->exit_earliest) : std::optional<filetime>(filetime{0});
    if (!earliest) return fail<BOOL>(FALSE, ERROR_INVALID_DATA);  // not representable: cannot happen
    *lpSource = source;
    store(lpEarliestExitTime, *earliest);
    return TRUE;
}

BOOL proctimes_QueryProcessCycleTime(HANDLE ProcessHandle, PULONG64 CycleTime) {
    process_ref p;
    if (DWORD err = resolve_process(ProcessHandle, PROCESS_QUERY_LIMITED_INFORMATION, p)) return fail<BOOL>(FALSE, err);
    if (!CycleTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    if (names_caller(p)) {
        *CycleTime = this_process::cycles();
        return TRUE;
    }
    auto t = p.object->times();
    if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
    *CycleTime = p.object->cycles.update(cycles_from_cpu_time(t->cpu(), get_tsc_rate().hz), false);
    return TRUE;
}

BOOL proctimes_QueryThreadCycleTime(HANDLE ThreadHandle, PULONG64 CycleTime) {
    if (reinterpret_cast<std::uintptr_t>(ThreadHandle) == current_thread_handle) {
        if (!CycleTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
        *CycleTime = this_thread::cycles();
        return TRUE;
    }
    thread_ref th;
    if (DWORD err = resolve_thread(ThreadHandle, THREAD_QUERY_LIMITED_INFORMATION, th)) return fail<BOOL>(FALSE, err);
    if (!CycleTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    // A handle to the calling thread counts as the pseudo-handle does (one
    // count, strictly increasing between two calls, as Windows promises).
    if (names_caller(th)) {
        *CycleTime = this_thread::cycles();
        return TRUE;
    }
    auto t = th.object->times();
    if (!t) return fail<BOOL>(FALSE, error_from(t.error(), error_context::query));
    *CycleTime = th.object->cycles.update(cycles_from_cpu_time(t->cpu(), get_tsc_rate().hz), false);
    return TRUE;
}

}  // extern "C"
