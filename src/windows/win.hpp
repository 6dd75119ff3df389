// SPDX-License-Identifier: MIT
// The windows backend's shared helpers: FILETIME conversions, the mapping of
// Windows error codes to proctimes errors, the clock-interrupt tick that CPU
// times are counted in, and whether the process runs under Wine. Included by
// src/windows/*.cpp only.
#pragma once

#include <windows.h>

#include <chrono>
#include <cstdint>
#include <system_error>

#include "proctimes/error.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1::detail::win {

/// A FILETIME as its 64-bit count of 100 ns units.
constexpr std::uint64_t ticks(const FILETIME& f) noexcept {
    return (static_cast<std::uint64_t>(f.dwHighDateTime) << 32) | f.dwLowDateTime;
}
/// A duration FILETIME (GetProcessTimes' kernel and user) in nanoseconds.
constexpr std::chrono::nanoseconds duration(const FILETIME& f) noexcept {
    return std::chrono::nanoseconds{static_cast<std::int64_t>(ticks(f)) * 100};
}
/// An absolute FILETIME (100 ns since 1601-01-01 UTC) as an instant.
inline instant to_instant(const FILETIME& f) noexcept {
    return time_from_filetime(filetime{ticks(f)}).value_or(instant{});
}

/// The error of a Windows call: its GetLastError() value in the system
/// category (message: FormatMessage's), or the proctimes code it stands for.
std::error_code error(DWORD code) noexcept;
inline std::error_code last_error() noexcept { return error(::GetLastError()); }

/// An owned HANDLE, closed on destruction.
class unique_handle {
public:
    unique_handle() noexcept = default;
    explicit unique_handle(HANDLE h) noexcept : h_(h == INVALID_HANDLE_VALUE ? nullptr : h) {}
    unique_handle(unique_handle&& o) noexcept : h_(o.release()) {}
    unique_handle& operator=(unique_handle&& o) noexcept {
        if (this != &o) reset(o.release());
        return *this;
    }
    unique_handle(const unique_handle&) = delete;
    unique_handle& operator=(const unique_handle&) = delete;
    ~unique_handle() { reset(); }
    void reset(HANDLE h = nullptr) noexcept {
        if (h_) ::CloseHandle(h_);
        h_ = h;
    }
    [[nodiscard]] HANDLE get() const noexcept { return h_; }
    HANDLE release() noexcept {
        HANDLE h = h_;
        h_ = nullptr;
        return h;
    }
    explicit operator bool() const noexcept { return h_ != nullptr; }

private:
    HANDLE h_ = nullptr;
};

/// Now on the scale start ticks count on Windows (src/windows/boot.cpp): the
/// system time in nanoseconds since the Unix epoch.
inline std::chrono::nanoseconds since_boot_now() noexcept {
    FILETIME f{};
    ::GetSystemTimePreciseAsFileTime(&f);
    return to_instant(f).time_since_epoch();
}

/// Whether this process runs under Wine (ntdll exports wine_get_version).
bool under_wine() noexcept;

/// The granularity of the CPU times GetProcessTimes and GetThreadTimes give:
/// Windows charges CPU time at each clock interrupt, one tick at a time
/// (GetSystemTimeAdjustment's time increment, typically 15.625 ms); Wine
/// reads Linux's tick counts (10 ms).
std::chrono::nanoseconds cpu_tick() noexcept;

/// The resolution labels of a GetProcessTimes/GetThreadTimes reading.
cpu_precision os_precision() noexcept;

/// Whether an opened process or thread has ended: its handle is signalled.
bool signalled(HANDLE h) noexcept;

}  // namespace proctimes::inline v1::detail::win
