// SPDX-License-Identifier: MIT
// Win32 layer: the FILETIME helpers, on top of proctimes/civil.hpp.
#include "proctimes/civil.hpp"
#include "proctimes/filetime.hpp"
#include "win32_layer/win32.hpp"

using namespace proctimes;
using namespace proctimes::win32;

namespace {

filetime load(const FILETIME* ft) noexcept { return filetime::from_parts(ft->dwLowDateTime, ft->dwHighDateTime); }

void store(FILETIME* out, filetime ft) noexcept {
    out->dwLowDateTime = ft.low();
    out->dwHighDateTime = ft.high();
}

// Fills a SYSTEMTIME; false for an instant it cannot hold.
bool to_system_time(filetime ft, SYSTEMTIME* out) noexcept {
    const auto c = civil_from_filetime(ft);
    if (!c) return false;
    out->wYear = static_cast<WORD>(c->year);
    out->wMonth = static_cast<WORD>(c->month);
    out->wDayOfWeek = static_cast<WORD>(c->day_of_week);
    out->wDay = static_cast<WORD>(c->day);
    out->wHour = static_cast<WORD>(c->hour);
    out->wMinute = static_cast<WORD>(c->minute);
    out->wSecond = static_cast<WORD>(c->second);
    out->wMilliseconds = static_cast<WORD>(c->millisecond);
    return true;
}

}  // namespace

extern "C" {

void proctimes_GetSystemTimeAsFileTime(LPFILETIME lpSystemTimeAsFileTime) {
    if (!lpSystemTimeAsFileTime) {
        last_error() = ERROR_NOACCESS;  // no return value to report it with
        return;
    }
    store(lpSystemTimeAsFileTime, system_time_now());
}

void proctimes_GetSystemTime(LPSYSTEMTIME lpSystemTime) {
    if (!lpSystemTime) {
        last_error() = ERROR_NOACCESS;  // no return value to report it with
        return;
    }
    // CLOCK_REALTIME, as GetSystemTimeAsFileTime: milliseconds truncate. A
    // clock set past 30828 cannot be shown; the structure is then zeroed.
    if (!to_system_time(system_time_now(), lpSystemTime)) *lpSystemTime = SYSTEMTIME{};
}

BOOL proctimes_FileTimeToSystemTime(const FILETIME* lpFileTime, LPSYSTEMTIME lpSystemTime) {
    if (!lpFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    SYSTEMTIME st;
    if (!to_system_time(load(lpFileTime), &st)) return fail<BOOL>(FALSE, ERROR_INVALID_PARAMETER);
    if (!lpSystemTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    *lpSystemTime = st;
    return TRUE;
}

BOOL proctimes_SystemTimeToFileTime(const SYSTEMTIME* lpSystemTime, LPFILETIME lpFileTime) {
    if (!lpSystemTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    civil_time c;
    c.year = lpSystemTime->wYear;
    c.month = lpSystemTime->wMonth;
    c.day_of_week = lpSystemTime->wDayOfWeek;
    c.day = lpSystemTime->wDay;
    c.hour = lpSystemTime->wHour;
    c.minute = lpSystemTime->wMinute;
    c.second = lpSystemTime->wSecond;
    c.millisecond = lpSystemTime->wMilliseconds;
    const auto ft = filetime_from_civil(c);
    if (!ft) return fail<BOOL>(FALSE, ERROR_INVALID_PARAMETER);
    if (!lpFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    store(lpFileTime, *ft);
    return TRUE;
}

BOOL proctimes_FileTimeToLocalFileTime(const FILETIME* lpFileTime, LPFILETIME lpLocalFileTime) {
    if (!lpFileTime || !lpLocalFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    const auto offset = current_utc_offset();
    if (!offset) return fail<BOOL>(FALSE, error_from(offset.error(), error_context::query));
    store(lpLocalFileTime, filetime{local_ticks_from_utc(load(lpFileTime).ticks, *offset)});
    return TRUE;
}

BOOL proctimes_LocalFileTimeToFileTime(const FILETIME* lpLocalFileTime, LPFILETIME lpFileTime) {
    if (!lpLocalFileTime || !lpFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    const auto offset = current_utc_offset();
    if (!offset) return fail<BOOL>(FALSE, error_from(offset.error(), error_context::query));
    store(lpFileTime, filetime{utc_ticks_from_local(load(lpLocalFileTime).ticks, *offset)});
    return TRUE;
}

BOOL proctimes_FileTimeToDosDateTime(const FILETIME* lpFileTime, LPWORD lpFatDate, LPWORD lpFatTime) {
    if (!lpFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    const auto d = dos_from_filetime(load(lpFileTime));
    if (!d) return fail<BOOL>(FALSE, ERROR_INVALID_PARAMETER);
    if (!lpFatDate || !lpFatTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    *lpFatDate = d->date;
    *lpFatTime = d->time;
    return TRUE;
}

BOOL proctimes_DosDateTimeToFileTime(WORD wFatDate, WORD wFatTime, LPFILETIME lpFileTime) {
    const auto ft = filetime_from_dos(wFatDate, wFatTime);
    if (!ft) return fail<BOOL>(FALSE, ERROR_INVALID_PARAMETER);
    if (!lpFileTime) return fail<BOOL>(FALSE, ERROR_NOACCESS);
    store(lpFileTime, *ft);
    return TRUE;
}

LONG proctimes_CompareFileTime(const FILETIME* lpFileTime1, const FILETIME* lpFileTime2) {
    if (!lpFileTime1 || !lpFileTime2) return fail<LONG>(0, ERROR_NOACCESS);
    // Unsigned 64-bit comparison, as Windows does (high words, then low words).
    const std::uint64_t a = load(lpFileTime1).ticks;
    const std::uint64_t b = load(lpFileTime2).ticks;
    return a < b ? -1 : (a > b ? 1 : 0);
}

}  // extern "C"
