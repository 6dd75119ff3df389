// SPDX-License-Identifier: MIT
// proctimes/cycles.hpp — CPU cycle counts in the sense of Windows'
// QueryThreadCycleTime / QueryProcessCycleTime.
//
// What Windows counts. Windows charges a thread the time-stamp-counter ticks
// that elapse while it is on a CPU (read with rdtsc at every context switch),
// user and kernel mode together. The TSC runs at a constant rate on every
// CPU of the last fifteen years ("invariant TSC"), independent of the core's
// actual clock, so a Windows "cycle count" is CPU time expressed in TSC ticks.
//
// What proctimes counts. Exactly that quantity, derived: CPU time in
// nanoseconds (the scheduler's own per-task runtime, 1 ns resolution) times the
// TSC rate:   cycles = floor(cpu_ns × tsc_hz / 10^9).
// cycle_source::cpu_time_at_tsc_rate names this derivation.
//
// Why not perf_event_open(PERF_COUNT_HW_CPU_CYCLES)? It was considered and
// is not used for these counts: (1) a hardware counter opened now counts only
// from now, while Windows' counts start at thread creation; (2) it counts core
// clock cycles, which vary with frequency scaling and turbo, not TSC ticks, so
// it would not be the Windows quantity even where it is permitted; (3) it is
// refused in most deployments (perf_event_paranoid ≥ 2 without CAP_PERFMON, and
// virtual machines without a virtual PMU). hardware_cycle_counter_status()
// (proctimes/linux.hpp) reports whether this machine would allow it, for
// diagnostics.
//
// The TSC rate comes from, in order of preference (tsc_rate::source):
//   1. CPUID leaf 0x15 (crystal clock × ratio; exact, Intel since Skylake),
//      or leaf 0x16's base frequency when 0x15 omits the crystal;
//   2. the hypervisor's CPUID leaf 0x40000010 (TSC kHz; VMware, some KVM);
//   3. /sys/devices/system/cpu/cpu0/tsc_freq_khz where the kernel exposes it;
//   4. a calibration against CLOCK_MONOTONIC_RAW over 20 ms at first use
//      (rdtsc bracketed by clock reads, best of several samples; about
//      ±10 ppm; rounded to 1 kHz as the kernel's own tsc_khz is);
//   On AArch64 the architected counter's frequency (CNTFRQ_EL0) is used, on
//   other architectures a nominal 1 GHz (cycles = nanoseconds).
// The rate is determined once per process and then fixed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/words.hpp"

namespace proctimes::inline v1 {

enum class tsc_rate_source : std::uint8_t {
    cpuid_crystal,         ///< CPUID 0x15: crystal frequency × TSC/crystal ratio
    cpuid_base_frequency,  ///< CPUID 0x16 base frequency (0x15 gave the ratio, not the crystal)
    hypervisor,            ///< CPUID 0x40000010, the hypervisor's TSC frequency
    sysfs,                 ///< /sys/devices/system/cpu/cpu0/tsc_freq_khz
    calibrated,            ///< measured against CLOCK_MONOTONIC_RAW
    architected_timer,     ///< AArch64 CNTFRQ_EL0
    nominal,               ///< no counter known: 1 GHz, so cycles equal nanoseconds
};

/// The words of tsc_rate_source (proctimes/words.hpp).
inline constexpr auto tsc_rate_source_words = std::to_array<word_row<tsc_rate_source>>({
    {tsc_rate_source::cpuid_crystal, "cpuid-0x15", "CPUID 0x15: crystal frequency times the TSC/crystal ratio"},
    {tsc_rate_source::cpuid_base_frequency, "cpuid-0x16", "CPUID 0x16's base frequency"},
    {tsc_rate_source::hypervisor, "hypervisor-cpuid", "CPUID 0x40000010, the hypervisor's TSC frequency"},
    {tsc_rate_source::sysfs, "sysfs", "the kernel's tsc_freq_khz"},
    {tsc_rate_source::calibrated, "calibrated", "measured against CLOCK_MONOTONIC_RAW"},
    {tsc_rate_source::architected_timer, "cntfrq", "AArch64 CNTFRQ_EL0"},
    {tsc_rate_source::nominal, "nominal", "no counter known: 1 GHz, cycles equal nanoseconds"},
});
constexpr const auto& word_rows(tsc_rate_source) noexcept { return tsc_rate_source_words; }
static_assert(words_in_order(tsc_rate_source_words));

/// A short stable name: "cpuid-0x15", "calibrated", ...
PROCTIMES_API std::string_view to_string(tsc_rate_source s) noexcept;

struct tsc_rate {
    std::uint64_t hz = 1'000'000'000;
    tsc_rate_source source = tsc_rate_source::nominal;
    /// The counter ticks at a constant rate through frequency changes and deep
    /// idle states (x86: /proc/cpuinfo lists constant_tsc and nonstop_tsc, or
    /// CPUID 0x80000007 EDX bit 8). When false, the derived counts still use the
    /// fixed `hz`, which is then only nominal.
    bool invariant = false;
};

/// The rate used for every cycle count of this process, determined at the first
/// call (which may take 20 ms when it has to calibrate); thread-safe.
PROCTIMES_API const tsc_rate& get_tsc_rate() noexcept;

/// How a cycle count was obtained.
enum class cycle_source : std::uint8_t {
    /// CPU time (1 ns) × the TSC rate: see the top of this header.
    cpu_time_at_tsc_rate,
};

/// floor(cpu × hz / 10^9), saturating at UINT64_MAX; 0 for negative cpu.
constexpr std::uint64_t cycles_from_cpu_time(std::chrono::nanoseconds cpu, std::uint64_t hz) noexcept {
    if (cpu.count() <= 0) return 0;
    __extension__ typedef unsigned __int128 u128;
    const u128 c = static_cast<u128>(cpu.count()) * hz / 1'000'000'000u;
    return c > ~std::uint64_t{0} ? ~std::uint64_t{0} : static_cast<std::uint64_t>(c);
}

/// Keeps the counts reported for one task from ever decreasing, and, on
/// request, strictly increasing. Lock-free; safe to share between threads.
class cycle_meter {
public:
    /// Returns max(raw, last) — or, with `strictly`, a value greater than the
    /// last one returned (last + 1 when raw has not moved past it) — and
    /// remembers it.
    std::uint64_t update(std::uint64_t raw, bool strictly) noexcept {
        std::uint64_t last = last_.load(std::memory_order_relaxed);
        for (;;) {
            std::uint64_t v = raw;
            if (v <= last && (strictly || v < last)) v = strictly ? last + 1 : last;
            if (last_.compare_exchange_weak(last, v, std::memory_order_relaxed)) return v;
        }
    }
    [[nodiscard]] std::uint64_t last() const noexcept { return last_.load(std::memory_order_relaxed); }
    /// Forgets the last value (for a counter that legitimately restarts).
    void reset() noexcept { last_.store(0, std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> last_{0};
};

namespace this_thread {
/// TSC-rate cycles of the calling thread since it started
/// (CLOCK_THREAD_CPUTIME_ID × rate). Strictly increasing between two calls on
/// the same thread: a running thread's CPU clock always advances, and the
/// count is additionally forced to move by at least one. Restarts for the new
/// thread of a forked child.
PROCTIMES_API std::uint64_t cycles() noexcept;
}  // namespace this_thread

namespace this_process {
/// TSC-rate cycles of all threads of the calling process, exited ones included
/// (CLOCK_PROCESS_CPUTIME_ID × rate). Never decreases.
PROCTIMES_API std::uint64_t cycles() noexcept;
}  // namespace this_process

/// Whether a hardware cycle counter for this process could be opened: on
/// Linux, whether perf_event_open(2) would give one (success, or the errno it
/// fails with: ENOENT, no PMU, as in most virtual machines; EACCES/EPERM:
/// perf_event_paranoid). Diagnostic only: see the top of this header for why
/// counts never come from it. Backends without one answer not_supported.
PROCTIMES_API result<void> hardware_cycle_counter_status() noexcept;

}  // namespace proctimes::inline v1
