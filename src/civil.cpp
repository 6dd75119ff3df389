// SPDX-License-Identifier: MIT
// The two non-constexpr parts of proctimes/civil.hpp: the current UTC offset
// and the current time as a FILETIME.
#include "proctimes/civil.hpp"

#include <cerrno>
#include <cstdint>
#include <ctime>

#include "clock_ns.hpp"
#include "fd.hpp"

namespace proctimes::inline v1 {

result<std::chrono::seconds> current_utc_offset() noexcept {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
#if defined(_WIN32)
    // The C runtime of Windows has no tm_gmtoff: the offset is the local
    // broken-down time read back as if it were UTC, minus now. _tzset() makes
    // a changed TZ (or time zone setting) count, as tzset(3) does below.
    ::_tzset();
    if (::localtime_s(&tm, &now) != 0) return detail::errno_code(EOVERFLOW);
    const std::time_t local_as_utc = ::_mkgmtime(&tm);
    if (local_as_utc == static_cast<std::time_t>(-1)) return detail::errno_code(EOVERFLOW);
    return std::chrono::seconds{static_cast<std::int64_t>(local_as_utc - now)};
#else
    // localtime_r(3) need not re-read TZ (glibc only reads it once); tzset(3)
    // does, so a program that changes TZ sees the new offset, as a Windows
    // program sees a new time zone setting.
    ::tzset();
    errno = 0;
    if (::localtime_r(&now, &tm) == nullptr) return detail::errno_code(errno != 0 ? errno : EOVERFLOW);
    return std::chrono::seconds{tm.tm_gmtoff};
#endif
}

filetime system_time_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);  // cannot fail for CLOCK_REALTIME
    const auto t = std::chrono::sys_time<std::chrono::nanoseconds>{detail::to_ns(ts)};
    return filetime_from_time(t).value_or(filetime{0});
}

}  // namespace proctimes::inline v1
