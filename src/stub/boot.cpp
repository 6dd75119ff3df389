// SPDX-License-Identifier: MIT
// The stub backend's boot anchor (boot.hpp): without a backend there is no
// boot identity or start-tick clock: errc::not_supported. The tick rate is
// POSIX (sysconf(_SC_CLK_TCK)).
#include "proctimes/boot.hpp"

#include <unistd.h>

namespace proctimes::inline v1 {

std::chrono::nanoseconds boot_anchor::clock_step() const noexcept { return std::chrono::nanoseconds{0}; }

result<boot_anchor> get_boot_anchor() noexcept { return errc::not_supported; }

std::int64_t clock_ticks_per_second() noexcept {
    const long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? static_cast<std::int64_t>(v) : 100;
}

result<instant> instant_from_start_ticks(std::uint64_t) noexcept { return errc::not_supported; }

}  // namespace proctimes::inline v1
