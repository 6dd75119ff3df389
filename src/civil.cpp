// SPDX-License-Identifier: MIT
// The two non-constexpr parts of proctimes/civil.hpp: the current UTC offset
// and the current time as a FILETIME.
#include "proctimes/civil.hpp"

#include <cerrno>
#include <ctime>

#include "clock_ns.hpp"
#include "fd.hpp"

namespace proctimes {

result<std::chrono::seconds> current_utc_offset() noexcept {
    // localtime_r(3) need not re-read TZ (glibc only reads it once); tzset(3)
    // does, so a program that changes TZ sees the new offset, as a Windows
    // program sees a new time zone setting.
    ::tzset();
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    errno = 0;
    if (::localtime_r(&now, &tm) == nullptr) return detail::errno_code(errno != 0 ? errno : EOVERFLOW);
    return std::chrono::seconds{tm.tm_gmtoff};
}

filetime system_time_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);  // cannot fail for CLOCK_REALTIME
    const auto t = std::chrono::sys_time<std::chrono::nanoseconds>{detail::to_ns(ts)};
    return filetime_from_time(t).value_or(filetime{0});
}

}  // namespace proctimes
