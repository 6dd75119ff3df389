// SPDX-License-Identifier: MIT
// proctimes/error.hpp — error codes of the proctimes library.
//
// Every fallible call returns a proctimes::result<T> holding either a value or a
// std::error_code. Two kinds of codes appear:
//
//  * std::system_category() codes carry the native errno exactly as the kernel
//    returned it (ESRCH from a pread on a reaped process, EACCES from open, ...).
//  * proctimes::errc codes (category "proctimes") name conclusions the library
//    drew itself, e.g. "no such process" deduced from ENOENT on /proc/<pid>, or
//    "/proc is not mounted".
//
// Both kinds compare equal to the portable std::errc conditions, so one test
// covers both:   if (r.error() == std::errc::no_such_process) ...
#pragma once

#include <system_error>

#include "proctimes/export.h"

namespace proctimes::inline v1 {

enum class errc : int {
    no_such_process = 1,  ///< The process does not exist, or has exited and been reaped.
    no_such_thread,       ///< The thread does not exist, or has exited.
    access_denied,        ///< It exists, but the system hides it from this caller (hidepid, LSM).
    /// The system's process table cannot be read at all (Linux: /proc is not
    /// mounted, or is not procfs).
    process_table_unavailable,
    not_a_process,     ///< The id names a thread that is not a thread-group leader.
    invalid_argument,  ///< A pid/tid of 0, a negative one, or one above the kernel's range.
    malformed_data,    ///< What the system gave (a /proc file) did not have the documented format.
    not_supported,     ///< The system or its kernel lacks a needed facility.
    out_of_range,      ///< A time value outside what the target type can represent.
    invalid_handle,    ///< The handle is empty (moved from or default constructed).
    /// The process ids at hand belong to another namespace than the one
    /// needed. Linux: /proc shows another pid namespace than the caller's (a process in a new
    /// pid namespace that still sees its parent's /proc, e.g. `unshare -p -f`
    /// without --mount-proc): /proc/<pid> would name another process, so no
    /// handle is opened by pid. Mount a procfs of the namespace on /proc.
    /// Also the answer of exit_stream::open and exit_records_status() outside
    /// the initial pid namespace: exit records name tasks by its ids.
    /// Compares equal to std::errc::no_such_file_or_directory, as
    /// proc_unavailable does: the namespace this caller needs is not there.
    foreign_namespace,
    /// The identity of the current boot cannot be read (Linux:
    /// /proc/sys/kernel/random/boot_id; a /proc mounted with subset=pid has no
    /// /proc/sys): creation instants rest on a boot anchor keyed by the boot
    /// id, and identities contain it, so nothing that needs either can be
    /// answered. Compares equal to std::errc::no_such_file_or_directory.
    boot_identity_unavailable,
    /// A file the library reads is a FIFO, socket, device or directory where
    /// a regular file was expected (something planted in a --proc-root tree or
    /// over /proc). It is never read: the read could block or never end.
    /// Compares equal to std::errc::no_such_device_or_address (ENXIO).
    not_a_regular_file,

    // The Linux names of three codes above, kept for code written against
    // them (the same values).
    proc_unavailable = process_table_unavailable,
    foreign_pid_namespace = foreign_namespace,
    boot_id_unavailable = boot_identity_unavailable,
};

/// The category of proctimes::errc codes; its name() is "proctimes".
PROCTIMES_API const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), error_category()}; }

}  // namespace proctimes::inline v1

template <>
struct std::is_error_code_enum<proctimes::errc> : std::true_type {};
