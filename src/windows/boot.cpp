// SPDX-License-Identifier: MIT
// The windows backend's boot anchor (proctimes/boot.hpp's boot_anchor, used
// by snapshots and identities). Windows has no start ticks since boot:
// creation times are absolute FILETIMEs, the same for every reader. So on
// Windows a start tick is one FILETIME unit (clock_ticks_per_second() is
// 10^7) counted from the Unix epoch (1970-01-01 UTC; the FILETIME epoch, 1601,
// would overflow nanoseconds): start_ticks is the creation FILETIME minus
// filetime_unix_epoch, and a snapshot's since_boot is its instant in
// nanoseconds since 1970, on the same scale (docs/WINDOWS.md).
//
// The boot instant: now minus the biased interrupt time (GetTickCount64,
// milliseconds since boot, sleep and hibernation included; the unbiased
// count leaves them out and would put the boot later after every sleep).
// The boot id: Windows keeps no boot UUID that an unprivileged reader can
// read everywhere; it is derived from the boot instant rounded to 10 s, so
// that processes of one boot agree unless the wall clock was stepped.
#include <atomic>
#include <cstring>
#include <mutex>

#include "proctimes/boot.hpp"
#include "windows/task.hpp"

namespace proctimes::inline v1 {

namespace {

std::chrono::nanoseconds realtime_minus_boot() noexcept {
    const instant now = detail::realtime_now();
    const auto up = std::chrono::milliseconds{static_cast<std::int64_t>(::GetTickCount64())};
    return now.time_since_epoch() - std::chrono::duration_cast<std::chrono::nanoseconds>(up);
}

boot_anchor measure() noexcept {
    boot_anchor a;
    a.boot = instant{realtime_minus_boot()};
    a.source = anchor_source::measured_private;
    const auto rounded = std::chrono::round<std::chrono::seconds>(a.boot.time_since_epoch() / 10).count();
    const char tag[8] = {'w', 'i', 'n', 'b', 'o', 'o', 't', '\0'};
    std::memcpy(a.id.bytes.data(), tag, 8);
    std::memcpy(a.id.bytes.data() + 8, &rounded, 8);
    return a;
}

}  // namespace

std::chrono::nanoseconds boot_anchor::clock_step() const noexcept {
    return realtime_minus_boot() - boot.time_since_epoch();
}

result<boot_anchor> get_boot_anchor() noexcept {
    static const boot_anchor anchor = measure();
    return anchor;
}

std::int64_t clock_ticks_per_second() noexcept { return 10'000'000; }

result<instant> instant_from_start_ticks(std::uint64_t start_ticks) noexcept {
    if (start_ticks > filetime_max - filetime_unix_epoch) return errc::out_of_range;
    const auto t = time_from_filetime(filetime{start_ticks + filetime_unix_epoch});
    if (!t) return errc::out_of_range;
    return *t;
}

}  // namespace proctimes::inline v1
