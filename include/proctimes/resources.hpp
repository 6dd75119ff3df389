// SPDX-License-Identifier: MIT
// proctimes/resources.hpp — what a process holds and has done besides CPU
// time: memory, storage I/O, context switches, open files, its state and its
// threads'. The reads behind `proctimes serve`'s per-process families and
// the live view.
//
//   proctimes::resource_options o;
//   o.families = proctimes::resource_family::memory | proctimes::resource_family::io;
//   auto r = proctimes::read_process_resources(pid, o);
//   if (r && r->memory) use(r->memory->resident_bytes);
//
// One call reads one process, each of its files at most once, and keeps
// nothing: a caller that reads many processes over and over pays only for the
// families it asks for, and may hand the previous read back (`previous`) for
// what cannot have changed while the process did not run.
//
// Sources. Linux: <proc_root>/<pid>/stat (state, threads, faults, ticks,
// virtual and resident size), status (swap, context switches), io, fd (its
// entry count, or the size procfs reports for it since Linux 6.2), the open
// files limit (prlimit(2), else limits), smaps_rollup (proportional set size:
// it walks every mapping, the costliest read here), wchan, and the same per
// thread in task/<tid>/. Every file is read through one descriptor of the
// process's directory, so a file read after the process ended fails instead
// of describing another process. Windows: GetProcessMemoryInfo (working set,
// commit charge, no swap), GetProcessIoCounters (all I/O, not only storage),
// GetProcessHandleCount (handles, not only files); the other families are
// reported missing. Elsewhere: errc::not_supported.
//
// Thread-safe; no state is kept between calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/export.h"
#include "proctimes/result.hpp"
#include "proctimes/snapshot.hpp"  // process_memory
#include "proctimes/times.hpp"     // pid_t, user_id

namespace proctimes::inline v1 {

/// The families read_process_resources can read, as bits of a set. The
/// process's state, thread count, faults and CPU ticks come with every read
/// (they are read to check the process's identity anyway).
enum class resource_family : std::uint32_t {
    none = 0,
    memory = 1U << 0,        ///< resident and virtual size, swap
    switches = 1U << 1,      ///< voluntary and involuntary context switches
    io = 1U << 2,            ///< bytes and calls of reads and writes
    files = 1U << 3,         ///< open descriptors and their limit
    proportional = 1U << 4,  ///< proportional set size (Linux smaps_rollup; costly)
    wait_channel = 1U << 5,  ///< the kernel function it waits in
    threads = 1U << 6,       ///< each thread's state, ticks, faults and switches
    thread_io = 1U << 7,     ///< with `threads`: each thread's io and wait channel
    command_line = 1U << 8,  ///< its arguments as the kernel shows them
    executable = 1U << 9,    ///< the path of its executable
    cgroups = 1U << 10,      ///< its cgroups, one per hierarchy (Linux)
    owner = 1U << 11,        ///< its real and effective user ids (Linux status "Uid:")
};
constexpr resource_family operator|(resource_family a, resource_family b) noexcept {
    return static_cast<resource_family>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr resource_family operator&(resource_family a, resource_family b) noexcept {
    return static_cast<resource_family>(static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(b));
}
constexpr resource_family& operator|=(resource_family& a, resource_family b) noexcept { return a = a | b; }
/// Whether every family of `b` is in `a`.
constexpr bool has(resource_family a, resource_family b) noexcept { return (a & b) == b; }

/// Memory of a process, in bytes (proctimes/snapshot.hpp).
using resource_memory = process_memory;

/// Storage I/O of a task. Linux's read_bytes and write_bytes count what went
/// to or came from storage; Windows counts every read and write.
struct resource_io {
    std::uint64_t read_bytes = 0;
    std::uint64_t write_bytes = 0;
    /// Bytes passed to read and write calls (cache hits included) and the
    /// calls; empty where the system does not say.
    std::optional<std::uint64_t> read_chars, write_chars, read_calls, write_calls;
};

/// Context switches of a task since it started.
struct resource_switches {
    std::uint64_t voluntary = 0;    ///< it waited (I/O, a lock, sleep)
    std::uint64_t involuntary = 0;  ///< it was preempted
};

/// Who a process runs as (resource_family::owner).
struct resource_owner {
    user_id real = 0;       ///< the user who started it (psutil's uid, watch --user)
    user_id effective = 0;  ///< the user whose rights it has (ps's USER)
};

/// Proportional memory (Linux smaps_rollup), in bytes: each shared page
/// divided among the processes that map it.
struct resource_proportional {
    std::uint64_t pss_bytes = 0;
    std::uint64_t swap_pss_bytes = 0;
};

/// One line of /proc/<pid>/cgroup: "ID:CONTROLLERS:PATH" (cgroups(7)).
struct resource_cgroup {
    std::string hierarchy;    ///< "0" for the v2 (unified) hierarchy
    std::string controllers;  ///< "" for v2; "cpu,cpuacct" and the like for v1
    std::string path;         ///< inside the hierarchy, as the kernel shows it
};

/// What every read gives, of a process or a thread.
struct resource_task {
    pid_t id = 0;                    ///< pid, or tid
    std::uint64_t start_ticks = 0;   ///< when it started (Linux: clock ticks since boot; with id, which task)
    std::string name;                ///< its name as stat shows it (Linux comm)
    char state = '?';                ///< Linux's state letter (R, S, D, Z, T, t, X, I, ...); '?' where unknown
    std::uint64_t user_ticks = 0;    ///< CPU in user mode, clock ticks (USER_HZ)
    std::uint64_t system_ticks = 0;  ///< CPU in the kernel, clock ticks
    std::uint64_t minor_faults = 0;  ///< page faults served without I/O
    std::uint64_t major_faults = 0;  ///< page faults that read storage
    std::optional<resource_switches> switches;
    std::optional<resource_io> io;
    /// The kernel function it waits in ("" while it runs, or when hidden).
    std::optional<std::string> wait_channel;
};

/// One thread of a process (resource_family::threads).
struct resource_thread : resource_task {};

/// One read of one process. A family asked for and not read (refused: io
/// and fd of another user's process need CAP_SYS_PTRACE; ended mid-read;
/// not given by the system) is empty and named in `missing`.
struct process_resources : resource_task {
    std::int64_t thread_count = 0;
    std::optional<resource_memory> memory;
    std::optional<std::uint64_t> open_files;        ///< open descriptors (Windows: handles)
    std::optional<std::uint64_t> open_files_limit;  ///< soft limit; UINT64_MAX when unlimited
    std::optional<resource_proportional> proportional;
    std::optional<resource_owner> owner;
    /// With resource_family::threads: its threads, sorted by id (those that
    /// ended during the read are left out).
    std::vector<resource_thread> threads;
    /// Its arguments, each followed by a NUL, as the kernel shows them (a
    /// program may rewrite them; empty for a kernel thread or a zombie); at
    /// most 64 KiB are read.
    std::optional<std::string> command_line;
    std::optional<std::string> executable;                ///< absolute path (Linux: the exe link)
    std::optional<std::vector<resource_cgroup>> cgroups;  ///< in the file's order
    /// Families asked for that could not be read in full (files: the count or
    /// the limit; threads: the list, or a thread's files).
    resource_family missing = resource_family::none;
};

/// What a caller read of a process just before a read_process_resources
/// (Linux; ignored elsewhere), taken instead of the file that says it. Each
/// is as the process's own file states it: switches of its main thread
/// (status), storage I/O of all its threads, ended ones included (io), swap
/// (status VmSwap). snapshot_process::counters has the first two; the swap
/// is known to be 0 on a machine with no swap space.
struct resource_known {
    std::optional<resource_switches> switches;
    /// Its character and call counts are not taken: a read that takes it
    /// leaves them empty.
    std::optional<resource_io> io;
    std::optional<std::uint64_t> swap_bytes;
    std::optional<std::uint64_t> open_files_limit;
};

/// What read_process_resources reads, and what it may take from an earlier read.
struct resource_options {
    resource_family families =
        resource_family::memory | resource_family::switches | resource_family::io | resource_family::files;
    /// Where procfs is mounted (Linux; ignored elsewhere).
    std::string proc_root = "/proc";
    /// The process's start ticks when the caller knows which process it
    /// means: a pid that now names another process answers
    /// errc::no_such_process.
    std::optional<std::uint64_t> start_ticks;
    /// The caller's previous read of this process, when it knows that the
    /// process has not run since (its CPU total, to the ns, has not moved).
    /// Checked against the ticks, faults and thread count read now; when they
    /// agree, what only running changes (io, open files, wait channel; swap
    /// and switches while its resident and virtual sizes stand) is taken from
    /// it, and with `keep_proportional` its proportional memory too (which
    /// also moves when other processes map pages it shares: the caller says
    /// how old it may be). Threads are not taken from it (see idle_threads).
    const process_resources* previous = nullptr;
    bool keep_proportional = false;
    /// Threads, sorted by id, that the caller knows have not run since they
    /// were read into this list (it has checked their start ticks and CPU
    /// totals): a thread of the read with the same id is taken from it as it
    /// is, without a read.
    const std::vector<resource_thread>* idle_threads = nullptr;
    /// Threads, sorted by id, whose start, name, state, ticks, faults,
    /// switches and I/O the caller read just before (a snapshot's
    /// snapshot_thread::counters): a thread of the read with the same id is
    /// taken from it, and only its wait channel is read (with thread_io).
    /// Threads in neither list are read whole.
    const std::vector<resource_thread>* known_threads = nullptr;
    /// The process's values the caller knows (resource_known): with its
    /// switches and swap known, status is not read unless the owner is
    /// asked; with its I/O known, io is not read; with its open files'
    /// limit known, neither prlimit(2) nor limits is asked.
    const resource_known* known = nullptr;
};

/// Reads the families `options.families` of process `pid`.
/// Errors: errc::invalid_argument for pid <= 0; errc::no_such_process when it
/// is gone, ends before its state and switches are read, or is not the
/// process `options.start_ticks` names; errc::access_denied; errc::malformed_data
/// when stat or status does not have the documented format;
/// errc::not_supported where the system has no such reads (the stub backend);
/// the native errno of an unexpected failure.
PROCTIMES_API result<process_resources> read_process_resources(pid_t pid,
                                                               const resource_options& options = {}) noexcept;

/// The boot instant in whole seconds since the epoch, as procfs states it
/// (the "btime" line of <proc_root>/stat): what ps and process-exporter add a
/// process's start ticks to. Errors: the native errno of the read,
/// errc::malformed_data without a valid btime line, errc::not_supported
/// where the system has no such figure.
PROCTIMES_API result<std::int64_t> read_boot_time_seconds(const std::string& proc_root = "/proc") noexcept;

}  // namespace proctimes::inline v1
