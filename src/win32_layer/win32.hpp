// SPDX-License-Identifier: MIT
// Internal declarations shared by the Win32 layer (src/win32). The extern "C"
// entry points live in api_*.cpp and stay thin: check arguments, call the C++
// core, convert, set the last error. What logic the layer needs (error
// mapping, command lines, the handle table) is here, in C++, unit-tested.
#pragma once

// Only the prefixed names: the Windows names are macros that would rename
// identifiers of the implementation.
#define PROCTIMES_NO_WIN32_NAMES 1
#include "proctimes/windows.h"

#include <cstdint>
#include <system_error>

namespace proctimes::inline v1::win32 {

/// The calling thread's last error (GetLastError/SetLastError).
DWORD& last_error() noexcept;

/// Records `code` as the last error and returns `result`, for
/// `return fail(FALSE, ERROR_INVALID_HANDLE);`.
template <class T>
T fail(T result, long code) noexcept {
    last_error() = static_cast<DWORD>(code);
    return result;
}

/// What the failing call was doing, which decides how a core error reads in
/// Win32 terms (ESRCH is "invalid parameter" to OpenProcess, but something
/// else on a handle that was valid when opened).
enum class error_context : std::uint8_t {
    open,   ///< OpenProcess / OpenThread / PsLookupProcessByProcessId: the id was looked up
    query,  ///< a query through a handle that was valid when it was opened
    spawn,  ///< CreateProcess
};

/// The Win32 error code for an error of the core (proctimes::errc or errno).
DWORD error_from(std::error_code ec, error_context context) noexcept;

/// The Win32 error for an exception caught at the C boundary.
DWORD error_from_current_exception() noexcept;

}  // namespace proctimes::inline v1::win32
