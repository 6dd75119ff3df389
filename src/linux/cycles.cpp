// SPDX-License-Identifier: MIT
// TSC-rate cycle counts: see include/proctimes/cycles.hpp for the contract.
#include "proctimes/cycles.hpp"
#include "proctimes/linux.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <string_view>

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "clock_ns.hpp"
#include "linux/fork_generation.hpp"
#include "linux/sys.hpp"
#include "parse/cpuinfo.hpp"

namespace proctimes::inline v1 {
namespace {

// A whole small file as a number (e.g. tsc_freq_khz), or 0.
std::uint64_t read_number(const char* path) noexcept {
    std::string text;
    if (detail::read_file(path, text)) return 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    return end != text.c_str() ? v : 0;
}

// Does the "flags" line of /proc/cpuinfo list both words? An error when the
// file cannot be read or has no such line.
result<bool> cpuinfo_has_flags(const char* a, const char* b) noexcept {
    std::string text;
    try {
        if (auto ec = detail::read_file("/proc/cpuinfo", text)) return ec;
        const auto line = parse::cpuinfo_flags_line(text);
        if (!line) return errc::malformed_data;
        return parse::cpuinfo_has_flag(*line, a) && parse::cpuinfo_has_flag(*line, b);
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
}

#if defined(__x86_64__) || defined(__i386__)

struct sample {
    std::uint64_t tsc;
    std::int64_t ns;
};

// rdtsc bracketed by two CLOCK_MONOTONIC_RAW reads; the tightest of several
// brackets places the tsc read within a few tens of ns of the clock value.
sample bracketed_sample() noexcept {
    sample best{0, 0};
    std::int64_t best_gap = std::numeric_limits<std::int64_t>::max();
    for (int i = 0; i < 15; ++i) {
        const std::int64_t a = detail::now_ns(CLOCK_MONOTONIC_RAW);
        const std::uint64_t c = __rdtsc();
        const std::int64_t b = detail::now_ns(CLOCK_MONOTONIC_RAW);
        if (b - a >= 0 && b - a < best_gap) {
            best_gap = b - a;
            best = {c, a + (b - a) / 2};
        }
    }
    return best;
}

std::uint64_t calibrate_hz() noexcept {
    const sample s0 = bracketed_sample();
    timespec nap{0, 20'000'000};
    while (::nanosleep(&nap, &nap) != 0 && errno == EINTR) {
    }
    const sample s1 = bracketed_sample();
    if (s1.ns <= s0.ns || s1.tsc <= s0.tsc) return 0;
    __extension__ typedef unsigned __int128 u128;
    const u128 hz = static_cast<u128>(s1.tsc - s0.tsc) * 1'000'000'000u / static_cast<std::uint64_t>(s1.ns - s0.ns);
    // Round to whole kHz, the granularity the kernel itself uses for tsc_khz.
    return static_cast<std::uint64_t>((hz + 500) / 1000 * 1000);
}

tsc_rate determine_rate() noexcept {
    tsc_rate r;
    unsigned a = 0, b = 0, c = 0, d = 0;
    const unsigned max_leaf = __get_cpuid_max(0, nullptr);
    const unsigned max_ext = __get_cpuid_max(0x8000'0000u, nullptr);
    // Else CPUID's invariant TSC bit, whatever kept the file from answering.
    if (const auto flags = cpuinfo_has_flags("constant_tsc", "nonstop_tsc")) {
        r.invariant = *flags;
    } else if (max_ext >= 0x8000'0007u) {
        __cpuid(0x8000'0007u, a, b, c, d);
        r.invariant = (d >> 8) & 1;
    }

    if (max_leaf >= 0x15) {
        __cpuid_count(0x15, 0, a, b, c, d);  // eax: denominator, ebx: numerator, ecx: crystal Hz
        if (a != 0 && b != 0 && c != 0) {
            r.hz = static_cast<std::uint64_t>(c) * b / a;
            r.source = tsc_rate_source::cpuid_crystal;
            return r;
        }
        if (a != 0 && b != 0 && max_leaf >= 0x16) {
            unsigned base_mhz = 0, x = 0, y = 0, z = 0;
            __cpuid_count(0x16, 0, base_mhz, x, y, z);
            if (base_mhz != 0) {
                r.hz = static_cast<std::uint64_t>(base_mhz) * 1'000'000;
                r.source = tsc_rate_source::cpuid_base_frequency;
                return r;
            }
        }
    }
    __cpuid(1, a, b, c, d);
    if ((c >> 31) & 1) {  // running under a hypervisor
        unsigned hv_max = 0;
        __cpuid(0x4000'0000u, hv_max, b, c, d);
        if (hv_max >= 0x4000'0010u && hv_max < 0x4001'0000u) {
            __cpuid(0x4000'0010u, a, b, c, d);
            if (a != 0) {
                r.hz = static_cast<std::uint64_t>(a) * 1000;
                r.source = tsc_rate_source::hypervisor;
                return r;
            }
        }
    }
    if (const std::uint64_t khz = read_number("/sys/devices/system/cpu/cpu0/tsc_freq_khz"); khz != 0) {
        r.hz = khz * 1000;
        r.source = tsc_rate_source::sysfs;
        return r;
    }
    if (const std::uint64_t hz = calibrate_hz(); hz != 0) {
        r.hz = hz;
        r.source = tsc_rate_source::calibrated;
    }
    return r;
}

#elif defined(__aarch64__)

tsc_rate determine_rate() noexcept {
    tsc_rate r;
    std::uint64_t f = 0;
    asm volatile("mrs %0, cntfrq_el0" : "=r"(f));
    if (f != 0) {
        r.hz = f;
        r.source = tsc_rate_source::architected_timer;
        r.invariant = true;
    }
    return r;
}

#else

tsc_rate determine_rate() noexcept { return tsc_rate{}; }

#endif

}  // namespace

const tsc_rate& get_tsc_rate() noexcept {
    static const tsc_rate rate = determine_rate();
    return rate;
}

namespace this_thread {
std::uint64_t cycles() noexcept {
    thread_local std::uint64_t last = 0;
    thread_local std::uint64_t generation = 0;
    const std::uint64_t gen = detail::fork_generation();  // the clocks restart in a forked child
    if (generation != gen) {
        last = 0;
        generation = gen;
    }
    const std::uint64_t hz = get_tsc_rate().hz;
    std::uint64_t v = cycles_from_cpu_time(std::chrono::nanoseconds{detail::now_ns(CLOCK_THREAD_CPUTIME_ID)}, hz);
    if (v <= last) v = last + 1;
    last = v;
    return v;
}
}  // namespace this_thread

namespace this_process {
std::uint64_t cycles() noexcept {
    static cycle_meter meter;
    static std::atomic<std::uint64_t> seen_generation{0};
    const std::uint64_t gen = detail::fork_generation();  // the clocks restart in a forked child
    if (seen_generation.load(std::memory_order_acquire) != gen) {
        // First use, or first use in a forked child (then single-threaded):
        // the process CPU clock started over, so does the guard.
        if (seen_generation.exchange(gen, std::memory_order_acq_rel) != gen) meter.reset();
    }
    const std::uint64_t hz = get_tsc_rate().hz;
    return meter.update(cycles_from_cpu_time(std::chrono::nanoseconds{detail::now_ns(CLOCK_PROCESS_CPUTIME_ID)}, hz),
                        false);
}
}  // namespace this_process

result<void> hardware_cycle_counter_status() noexcept {
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return detail::last_errno();
    ::close(static_cast<int>(fd));
    return {};
}

}  // namespace proctimes::inline v1
