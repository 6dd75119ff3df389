// SPDX-License-Identifier: MIT
// Library errors → Python exceptions, in one place (errors.cpp):
//   no such process / thread (errc or ESRCH)   → proctimes.NoSuchProcess (ProcessLookupError)
//   access denied (errc, EACCES or EPERM)      → proctimes.AccessDenied (PermissionError)
//   invalid_argument, not_a_process            → ValueError
//   invalid_handle (a closed handle)           → ValueError
//   out_of_range                               → OverflowError
//   anything else                              → proctimes.Error (an OSError), errno kept
#pragma once

#include <pybind11/pybind11.h>

#include <sys/types.h>

#include <system_error>
#include <utility>

#include "proctimes/result.hpp"

namespace pyproctimes {

/// Sets the Python exception for `ec` and throws pybind11::error_already_set.
[[noreturn]] void raise_error(std::error_code ec, pid_t pid, pid_t tid = 0);

/// The value of `r`, or the Python exception for its error. By value: a
/// handle's result is moved in, a result of plain values copied.
template <class T>
T unwrap(proctimes::result<T> r, pid_t pid, pid_t tid = 0) {
    if (!r) raise_error(r.error(), pid, tid);
    return std::move(*r);
}
inline void unwrap(proctimes::result<void> r, pid_t pid, pid_t tid = 0) {
    if (!r) raise_error(r.error(), pid, tid);
}

/// The errno closest to `ec` (its own for system codes; the portable
/// condition's for the library's errc codes).
int errno_of(std::error_code ec) noexcept;

}  // namespace pyproctimes
