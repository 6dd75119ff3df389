// SPDX-License-Identifier: MIT
// The library's last resort for a failure it has no caller to answer to: one
// line on stderr, once per kind of failure and process. The library answers
// with error values; this is for the few places that cannot (a destructor that
// leaves a child unreaped, a value computed once per process that falls back,
// a setting that could not be read), so that what was lost is said, not
// swallowed. Portable.
#pragma once

#include <atomic>

namespace proctimes::inline v1::detail {

/// Writes "proctimes: " and the printf-formatted message, and a newline, to
/// stderr in one write, the first time it is called with `once`; later calls
/// with the same flag write nothing. Returns whether it wrote. The message is
/// cut at 400 bytes. Never throws, never allocates.
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
bool report_once(std::atomic<bool>& once, const char* format, ...) noexcept;

}  // namespace proctimes::inline v1::detail
