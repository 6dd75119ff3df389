// SPDX-License-Identifier: MIT
// The per-process /proc files behind process-exporter's memory, I/O, fault,
// context-switch, file-descriptor and state families (`serve --namedprocess`):
// pure parsers of each file, and a reader that opens /proc/<pid> once and
// reads each file of it at most once. Nothing here keeps a descriptor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace proctimes::cli::serve {

/// Fields of /proc/<pid>/stat (proc(5) numbering) that the exporter needs.
struct stat_fields {
    char state = '?';               ///< 3
    std::uint64_t minflt = 0;       ///< 10
    std::uint64_t majflt = 0;       ///< 12
    std::uint64_t utime = 0;        ///< 14, ticks (USER_HZ)
    std::uint64_t stime = 0;        ///< 15, ticks
    std::int64_t num_threads = 0;   ///< 20
    std::uint64_t start_ticks = 0;  ///< 22
    std::uint64_t vsize = 0;        ///< 23, bytes
    std::uint64_t rss_pages = 0;    ///< 24, pages
};
/// Parses a stat line: the name is whatever lies between the first '(' and
/// the LAST ')' (a name may hold spaces and parentheses). nullopt when a field
/// up to 24 is missing, is not a whole decimal number, or does not fit 64 bits.
std::optional<stat_fields> parse_stat(std::string_view text);

/// Lines of /proc/<pid>/status the exporter needs.
struct status_fields {
    std::uint64_t vm_swap_bytes = 0;  ///< VmSwap (kB in the file); 0 when absent (a kernel thread)
    std::uint64_t voluntary_switches = 0;
    std::uint64_t nonvoluntary_switches = 0;
};
/// nullopt when either context-switch line is missing or malformed, or a
/// VmSwap line is malformed (a number too large for 64 bits once in bytes included).
std::optional<status_fields> parse_status(std::string_view text);

/// /proc/<pid>/io: the bytes that went to or came from storage.
struct io_fields {
    std::uint64_t read_bytes = 0;
    std::uint64_t write_bytes = 0;
};
/// nullopt when read_bytes or write_bytes is missing or malformed.
std::optional<io_fields> parse_io(std::string_view text);

/// The soft limit of "Max open files" in /proc/<pid>/limits; UINT64_MAX for
/// "unlimited"; nullopt when the line is missing or malformed.
std::optional<std::uint64_t> parse_open_files_limit(std::string_view text);

/// Pss and SwapPss of /proc/<pid>/smaps_rollup, in bytes.
struct smaps_fields {
    std::uint64_t pss_bytes = 0;
    std::uint64_t swap_pss_bytes = 0;
};
/// nullopt when the Pss line is missing or a value is malformed (SwapPss is
/// 0 when absent: kernels without swap accounting).
std::optional<smaps_fields> parse_smaps_rollup(std::string_view text);

/// What one collection read of one process.
struct proc_files {
    enum class outcome {
        ok,        ///< stat and status were read (the others may still have failed: `partial`)
        vanished,  ///< it ended (or its pid was reused) while being read
        failed,    ///< stat or status unreadable (access refused, malformed) while it lives
    };
    outcome result = outcome::failed;
    /// Something beyond stat and status could not be read (io for another
    /// user's process without privilege, fd, limits, smaps_rollup), or the
    /// thread list of a multi-threaded process.
    bool partial = false;
    stat_fields stat;
    status_fields status;
    std::optional<io_fields> io;
    std::optional<std::uint64_t> open_fds;
    std::optional<std::uint64_t> fd_limit;
    std::optional<smaps_fields> smaps;
    std::string wchan;  ///< the kernel function it waits in ("": running, or not shown)
};

/// The text of a wchan file as process-exporter counts it: "" for "0" (running).
std::string parse_wchan(std::string_view text);

/// The counters one thread of a multi-threaded process has (its task files).
struct thread_files {
    pid_t tid = 0;
    std::uint64_t start_ticks = 0;       ///< stat field 22: with tid, which thread this is
    std::string name;                    ///< its comm (stat field 2)
    std::uint64_t utime = 0, stime = 0;  ///< ticks (USER_HZ)
    std::uint64_t minflt = 0, majflt = 0;
    std::uint64_t voluntary_switches = 0, nonvoluntary_switches = 0;
    std::optional<io_fields> io;
    std::string wchan;  ///< task/<tid>/wchan, read with `thread_io`
    /// Not read here: the caller's record of the thread's exact CPU total (ns)
    /// when these were read, -1 when unknown (read_hints::idle_threads).
    std::int64_t cpu_ns = -1;
};

/// What a collection knows of a process beyond its pid and start tick, so that
/// it need not read again what cannot have changed.
struct read_hints {
    /// proc_root is the procfs of this pid namespace: the open-files limit is
    /// asked of the kernel (prlimit(2), no text to generate; the limits file
    /// when that is refused), never of a process the pid does not name (the
    /// stat read after it, through the directory opened before, proves that).
    bool live = false;
    /// The previous read of the process, when its CPU total (to the ns) has
    /// not moved since it was taken: it ran no thread, so status (while its
    /// resident pages are unchanged: VmSwap moves only with them), io, its
    /// descriptors and wchan are as they were, and are taken from it. stat is
    /// read every time (resident and virtual size, state); if a fault count
    /// or tick moved there (it ran after all), everything is read.
    const proc_files* idle_since = nullptr;
    /// With idle_since: its smaps_rollup is recent enough to stand too.
    bool keep_smaps = false;
    /// Threads with these tids whose CPU total (to the ns) has not moved
    /// since they were read into this list (sorted by tid, with their start
    /// tick): their entries are taken as they were, with the name given here.
    const std::vector<thread_files>* idle_threads = nullptr;
};

/// Reads <proc_root>/<pid>: stat first (its start tick must be
/// `start_ticks`, else the pid was reused: vanished), then status, io, the fd
/// count, limits and, with `smaps`, smaps_rollup, each once, all through one
/// descriptor of the process's directory, so a file read after the process
/// ended fails instead of describing another process. With `threads`, also
/// each thread's stat, status and (with `thread_io`) io and wchan, into `out_threads`
/// (threads that end meanwhile are left out).
proc_files read_proc_files(const std::string& proc_root, pid_t pid, std::uint64_t start_ticks, bool smaps, bool threads,
                           bool thread_io, std::vector<thread_files>* out_threads, const read_hints& hints = {});

}  // namespace proctimes::cli::serve
