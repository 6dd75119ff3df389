// SPDX-License-Identifier: MIT
// proctimes/linux.hpp — what only has a meaning on Linux: the kernel's start
// ticks and the boot anchor that turns them into instants, the pidfds behind
// handles, the taskstats exit records, and the perf_event diagnostic.
//
// Everything in the other headers describes the Windows timing model and is
// meant to be answered by any backend; what is here names Linux mechanisms, and
// a program that uses it is a Linux program. <proctimes/proctimes.hpp> includes
// this header on Linux only.
//
// ---- Start ticks and the boot anchor --------------------------------------------
//
// The kernel records a task's start as CLOCK_BOOTTIME ticks (field 22 of
// /proc/<pid>/stat, 10 ms each). A wall-clock creation instant needs the
// instant of boot on the CLOCK_REALTIME scale: the "boot anchor",
// CLOCK_REALTIME − CLOCK_BOOTTIME. That difference does not drift (NTP slewing
// moves both clocks alike); it changes only when the clock is stepped.
//
// The promise (Windows' PsGetProcessCreateTimeQuadPart): a creation instant
// never changes once reported — not between calls, not between handles, and not
// between processes using the library on this boot. So the anchor is measured
// once per boot and shared:
//
//  1. Measure: the minimum-gap of several BOOTTIME/REALTIME/BOOTTIME samples
//     (≈0.1–0.5 µs uncertainty).
//  2. Share: the first process on this boot publishes it in
//     $PROCTIMES_ANCHOR_DIR (default /dev/shm) as
//     "proctimes-boot-anchor-<boot id>", created atomically (link(2), never
//     replaced). Later processes read it.
//  3. Trust: a file owned by root or by the caller, and writable by nobody else,
//     is used as is. A file owned by another user is used only if it agrees
//     with a fresh measurement within 1 ms (so a hostile file can shift times by
//     less than a tenth of their 10 ms resolution); otherwise the fresh
//     measurement is used and `source` says so.
//
// Clock steps. If the wall clock is stepped after the anchor was fixed
// (settimeofday, NTP step, manual date), creation instants do NOT move — as on
// Windows, where a process's creation time is recorded once. Processes created
// after the step are then reported on the pre-step scale, off by the size of the
// step; boot_anchor::clock_step() reports that offset so callers can see and
// correct it. Identities (task_identity) never depend on the anchor.
#pragma once

#include <chrono>
#include <cstdint>
#include <system_error>

#include "proctimes/exit.hpp"
#include "proctimes/export.h"
#include "proctimes/process.hpp"
#include "proctimes/result.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {

// ---- start ticks and the boot anchor ----------------------------------------------

enum class anchor_source : std::uint8_t {
    shared_trusted,    ///< read from a file of root or of this user
    shared_validated,  ///< read from another user's file, agreed with a fresh measurement
    published,         ///< measured by this process and published for the others
    measured_private,  ///< measured by this process; could not be shared (see docs)
};

struct PROCTIMES_API boot_anchor {
    /// The instant of boot on the CLOCK_REALTIME scale: creation = boot + start ticks.
    instant boot{};
    proctimes::boot_id id{};
    anchor_source source = anchor_source::measured_private;

    /// How far CLOCK_REALTIME has been stepped since the anchor was fixed
    /// (fresh REALTIME−BOOTTIME minus the anchor); about zero (±1 µs) when the
    /// clock was never stepped. Measured on each call.
    [[nodiscard]] std::chrono::nanoseconds clock_step() const noexcept;
};

/// The anchor this process uses. Fixed at the first call (thread-safe); later
/// calls return the same value. Errors: process_table_unavailable when the boot id
/// cannot be read.
PROCTIMES_API result<boot_anchor> get_boot_anchor() noexcept;

/// Converts a start time in clock ticks since boot (field 22 of
/// /proc/<pid>/stat) to an instant with this process's anchor.
PROCTIMES_API result<instant> instant_from_start_ticks(std::uint64_t start_ticks) noexcept;

/// Clock ticks per second of /proc start times and CPU ticks (USER_HZ, 100).
PROCTIMES_API std::int64_t clock_ticks_per_second() noexcept;

// ---- pidfds ------------------------------------------------------------------------

/// The pidfd of a process handle: readable (POLLIN) once the process exits, so
/// an event loop can poll it. -1 for an empty handle, or when the kernel has no
/// pidfd_open (before 5.3). Owned by the handle: do not close it.
PROCTIMES_API int native_pidfd(const process& p) noexcept;
/// A thread handle's PIDFD_THREAD pidfd (Linux ≥ 6.9; readable once the thread
/// exits), or -1. Owned by the handle.
PROCTIMES_API int native_pidfd(const thread& t) noexcept;
/// A spawned child's pidfd (readable once it exits): its handle's, or the
/// child's own when there is no handle (child::handle_error()). -1 for an
/// empty child. Owned by the child.
PROCTIMES_API int native_pidfd(const child& c) noexcept;

// ---- exit records ------------------------------------------------------------------

// set_exit_records_enabled, exit_records_enabled, set_exit_records_default,
// exit_records_status, set_exit_records_bpf and exit_records_use_bpf are
// declared in proctimes/exit.hpp (included above): they are answered by every
// backend.

// ---- cycle counter diagnostic ------------------------------------------------------

/// Whether perf_event_open(2) would give this process a hardware cycle counter
/// for itself: success, or the errno it fails with (ENOENT: no PMU, as in most
/// virtual machines; EACCES/EPERM: perf_event_paranoid). Diagnostic only: see
/// the top of proctimes/cycles.hpp for why counts never come from it.
PROCTIMES_API result<void> hardware_cycle_counter_status() noexcept;

}  // namespace proctimes::inline v1
