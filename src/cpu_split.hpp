// SPDX-License-Identifier: MIT
// Dividing an exact CPU total into kernel and user time by the tick-sampled
// ratio, without ever letting either side go backwards between two queries of
// the same handle — the rule the kernel's own cputime_adjust() applies to
// /proc/<pid>/stat and getrusage(2).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace proctimes::inline v1::detail {

__extension__ typedef unsigned __int128 uint128;

struct kernel_user {
    std::chrono::nanoseconds kernel{};
    std::chrono::nanoseconds user{};
};

/// Splits `total` by utime:stime. When stime is 0 everything is user time, and
/// when utime is 0 everything is kernel time (as cputime_adjust() does); when
/// both are 0 (less than one tick sampled) the total is reported as user time,
/// the kernel's choice for the same case — except for kernel threads, which
/// never run in user mode: their time is all kernel time. (Their stat line
/// can show user time: cputime_adjust() gives a task's runtime to utime while
/// no system tick was sampled for it, and keeps it; the tick samples
/// themselves, taskstats' ac_utime, are 0 for every kernel thread.) For other
/// tasks each side differs from stat's by at most what the exact total exceeds
/// stat's truncated utime + stime: under two ticks (docs/PYTHON.md).
constexpr kernel_user split_by_ticks(std::chrono::nanoseconds total, std::uint64_t utime, std::uint64_t stime,
                                     bool kernel_thread = false) noexcept {
    if (total.count() <= 0) return {};
    if (kernel_thread) return {total, std::chrono::nanoseconds{0}};
    if (stime == 0) return {std::chrono::nanoseconds{0}, total};
    if (utime == 0) return {total, std::chrono::nanoseconds{0}};
    // total * stime / (utime + stime), exact. In 64 bits when nothing
    // overflows (the common case: a 128-bit division is a library call).
    const auto t = static_cast<std::uint64_t>(total.count());
    std::uint64_t product = 0, sum = 0;
    std::int64_t k = 0;
    if (!__builtin_mul_overflow(t, stime, &product) && !__builtin_add_overflow(utime, stime, &sum)) {
        k = static_cast<std::int64_t>(product / sum);
    } else {
        k = static_cast<std::int64_t>(static_cast<uint128>(t) * stime / (static_cast<uint128>(utime) + stime));
    }
    return {std::chrono::nanoseconds{k}, total - std::chrono::nanoseconds{k}};
}

/// The rule that keeps both sides monotonic, for state only one thread uses
/// (the calling thread's own times keep one per thread): kernel time never
/// below its last value, user time the rest; if that would shrink user time,
/// the other way round. A total below the last one returns the last values.
class split_guard {
public:
    kernel_user apply(std::chrono::nanoseconds total, std::uint64_t utime, std::uint64_t stime,
                      bool kernel_thread = false) noexcept {
        kernel_user s = split_by_ticks(total, utime, stime, kernel_thread);
        const auto prev_total = prev_.kernel + prev_.user;
        if (total < prev_total) return prev_;  // a concurrent, later reader already reported more
        if (s.kernel < prev_.kernel) s.kernel = prev_.kernel;
        s.user = total - s.kernel;
        if (s.user < prev_.user) {
            s.user = prev_.user;
            s.kernel = total - s.user;
        }
        prev_ = s;
        return s;
    }

private:
    kernel_user prev_{};
};

/// Per-handle state that keeps both sides monotonic, shared by any thread.
class monotonic_split {
public:
    kernel_user apply(std::chrono::nanoseconds total, std::uint64_t utime, std::uint64_t stime,
                      bool kernel_thread = false) noexcept {
        std::lock_guard lock(mutex_);
        return guard_.apply(total, utime, stime, kernel_thread);
    }

private:
    std::mutex mutex_;
    split_guard guard_;
};

}  // namespace proctimes::inline v1::detail
