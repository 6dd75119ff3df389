// SPDX-License-Identifier: MIT
// The windows backend's cycle counts (cycles.hpp). The rate: the TSC measured
// against QueryPerformanceCounter over 20 ms (x86-64), once. The calling
// thread's count: QueryThreadCycleTime (the TSC cycles the thread ran, kept
// by the kernel at each context switch); the process's:
// QueryProcessCycleTime. Where those fail (Wine answers
// ERROR_CALL_NOT_IMPLEMENTED), the count is the thread's (process's) CPU
// time × the rate, as on Linux; hardware_cycle_counter_status() then says
// not_supported.
#include <intrin.h>

#include "proctimes/cycles.hpp"
#include "windows/win.hpp"

namespace proctimes::inline v1 {

namespace {

tsc_rate calibrate() noexcept {
    tsc_rate r;
    LARGE_INTEGER freq{}, q0{}, q1{};
    if (!::QueryPerformanceFrequency(&freq) || freq.QuadPart <= 0) return r;
    ::QueryPerformanceCounter(&q0);
    const std::uint64_t t0 = __rdtsc();
    ::Sleep(20);
    ::QueryPerformanceCounter(&q1);
    const std::uint64_t t1 = __rdtsc();
    const auto dq = static_cast<std::uint64_t>(q1.QuadPart - q0.QuadPart);
    if (dq == 0 || t1 <= t0) return r;
    __extension__ typedef unsigned __int128 u128;
    const auto hz = static_cast<u128>(t1 - t0) * static_cast<std::uint64_t>(freq.QuadPart) / dq;
    r.hz = static_cast<std::uint64_t>(hz);
    r.source = tsc_rate_source::calibrated;
    int regs[4] = {};
    __cpuid(regs, static_cast<int>(0x80000000u));
    if (static_cast<unsigned>(regs[0]) >= 0x80000007u) {
        __cpuid(regs, static_cast<int>(0x80000007u));
        r.invariant = (regs[3] & (1 << 8)) != 0;
    }
    return r;
}

std::uint64_t from_times(HANDLE h, bool thread) noexcept {
    FILETIME c{}, e{}, k{}, u{};
    const BOOL ok = thread ? ::GetThreadTimes(h, &c, &e, &k, &u) : ::GetProcessTimes(h, &c, &e, &k, &u);
    if (!ok) return 0;
    return cycles_from_cpu_time(detail::win::duration(k) + detail::win::duration(u), get_tsc_rate().hz);
}

}  // namespace

const tsc_rate& get_tsc_rate() noexcept {
    static const tsc_rate rate = calibrate();
    return rate;
}

namespace this_thread {
std::uint64_t cycles() noexcept {
    thread_local cycle_meter meter;
    ULONG64 c = 0;
    if (::QueryThreadCycleTime(::GetCurrentThread(), &c)) return meter.update(c, true);
    return meter.update(from_times(::GetCurrentThread(), true), true);
}
}  // namespace this_thread

namespace this_process {
std::uint64_t cycles() noexcept {
    static cycle_meter meter;
    ULONG64 c = 0;
    if (::QueryProcessCycleTime(::GetCurrentProcess(), &c)) return meter.update(c, false);
    return meter.update(from_times(::GetCurrentProcess(), false), false);
}
}  // namespace this_process

result<void> hardware_cycle_counter_status() noexcept {
    ULONG64 c = 0;
    if (::QueryThreadCycleTime(::GetCurrentThread(), &c)) return {};
    return detail::win::last_error();  // Wine: ERROR_CALL_NOT_IMPLEMENTED → not_supported
}

}  // namespace proctimes::inline v1
