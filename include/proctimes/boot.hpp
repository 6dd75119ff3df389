// SPDX-License-Identifier: MIT
// proctimes/boot.hpp — a task's start as the kernel records it (start ticks)
// and the boot anchor that turns start ticks into instants. Every backend
// answers it: Linux from CLOCK_BOOTTIME and /proc (below), Windows with
// creation FILETIMEs as start ticks (src/windows/boot.cpp, docs/WINDOWS.md),
// the stub with errc::not_supported.
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

#include "proctimes/export.h"
#include "proctimes/result.hpp"
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

}  // namespace proctimes::inline v1
