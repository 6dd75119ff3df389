// SPDX-License-Identifier: MIT
// Pure parsers for the /proc text formats proctimes reads. No I/O: each takes
// the bytes of one file and returns the fields, or nullopt when the text does
// not have the documented shape (proc(5)). They are unit-tested on fixtures
// and fuzzed (fuzz/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "proctimes/times.hpp"

namespace proctimes::inline v1::parse {

/// Fields of /proc/<pid>/stat and /proc/<pid>/task/<tid>/stat that proctimes uses
/// (numbering as in proc(5)).
struct stat_record {
    std::int64_t pid = 0;          // (1)
    std::string_view comm;         // (2) without the parentheses; views the input
    char state = '?';              // (3)
    std::int64_t ppid = 0;         // (4)
    std::uint64_t flags = 0;       // (9) PF_* flags
    std::uint64_t minflt = 0;      // (10) minor faults
    std::uint64_t majflt = 0;      // (12) major faults
    std::uint64_t utime = 0;       // (14) clock ticks
    std::uint64_t stime = 0;       // (15) clock ticks
    std::int64_t cutime = 0;       // (16)
    std::int64_t cstime = 0;       // (17)
    std::int64_t num_threads = 0;  // (20)
    std::uint64_t starttime = 0;   // (22) clock ticks since boot
    /// (23) virtual memory size, bytes, and (24) resident set size, pages:
    /// empty when the line ends before them (fields 3..22 are required).
    std::optional<std::uint64_t> vsize;
    std::optional<std::uint64_t> rss_pages;
    /// (52) the task's exit code in wait(2) status form (exit status << 8, or
    /// the terminating signal | 0x80 for a core dump); meaningful once the
    /// task is a zombie. Empty when the kernel prints fewer than 52 fields
    /// (before Linux 3.5). The kernel shows 0 to readers without ptrace access.
    std::optional<std::int64_t> exit_code;
};

/// The task in this record has ended: 'Z' (a zombie; its values are final)
/// or 'X'/'x' (dead, being torn down or reaped). The one definition of "dead"
/// for every reader of stat.
constexpr bool is_dead_state(char state) noexcept { return state == 'Z' || state == 'X' || state == 'x'; }
constexpr bool is_dead(const stat_record& r) noexcept { return is_dead_state(r.state); }

/// A process's stat shows its leader thread. A leader that ended with
/// pthread_exit while other threads run is dead, yet the process runs: the
/// record shows a process that has ended only when no other thread remains.
constexpr bool leader_exited_early(const stat_record& r) noexcept { return is_dead(r) && r.num_threads > 1; }
constexpr bool process_ended(const stat_record& r) noexcept { return is_dead(r) && r.num_threads <= 1; }

/// PF_KTHREAD in stat field 9: the task is a kernel thread.
inline constexpr std::uint64_t pf_kthread = 0x00200000;

/// Parses one stat line. comm may hold spaces, parentheses and newlines, so it
/// spans from the first '(' to the LAST ')' of the text.
std::optional<stat_record> parse_stat(std::string_view text) noexcept;

/// The same parse, field by field, without parse_stat's fast path for the
/// kernel's canonical lines: the reference the fuzzer and tests compare it to.
std::optional<stat_record> parse_stat_general(std::string_view text) noexcept;

/// Decodes a wait(2) status (stat field 52 of a zombie): WEXITSTATUS, or
/// WTERMSIG and WCOREDUMP. nullopt for a value that is neither an exit nor a
/// termination by signal (a stop status, or out of range).
std::optional<exit_status> decode_wait_status(std::int64_t status) noexcept;

/// /proc/<pid>/task/<tid>/schedstat: "run_ns wait_ns timeslices".
struct schedstat_record {
    std::uint64_t run_ns = 0;
    std::uint64_t wait_ns = 0;
    std::uint64_t timeslices = 0;
};
std::optional<schedstat_record> parse_schedstat(std::string_view text) noexcept;

/// Selected lines of /proc/<pid>/status.
struct status_record {
    std::string_view name;            // "Name:" (escaped by the kernel: \n → "\n")
    std::int64_t tgid = -1;           // "Tgid:"
    std::int64_t pid = -1;            // "Pid:"
    std::int64_t ppid = -1;           // "PPid:"
    std::int64_t uid_real = -1;       // "Uid:" first
    std::int64_t uid_effective = -1;  // "Uid:" second
    int nspid_levels = 0;             // "NSpid:" how many ids (1 in the initial pid namespace); 0 if absent
    /// "VmSwap:" in bytes (the file says kB); empty when absent (a kernel thread).
    std::optional<std::uint64_t> vm_swap_bytes;
    /// "voluntary_ctxt_switches:" and "nonvoluntary_ctxt_switches:"; empty when absent.
    std::optional<std::uint64_t> voluntary_switches;
    std::optional<std::uint64_t> nonvoluntary_switches;
};
/// nullopt when Name, Tgid or Pid is missing, or a line it reads is malformed
/// (a VmSwap that is not "N kB" or does not fit 64 bits in bytes included).
std::optional<status_record> parse_status(std::string_view text) noexcept;

/// The "btime" line of /proc/stat (whole seconds since the epoch).
std::optional<std::uint64_t> parse_proc_stat_btime(std::string_view text) noexcept;

/// /proc/sys/kernel/random/boot_id: a UUID in 8-4-4-4-12 hex, then "\n".
std::optional<boot_id> parse_boot_id(std::string_view text) noexcept;

/// The shared boot anchor file: "proctimes-boot-anchor 1 <boot id> <ns>\n".
struct anchor_record {
    boot_id boot{};
    std::int64_t realtime_minus_boottime_ns = 0;
};
std::optional<anchor_record> parse_anchor(std::string_view text) noexcept;

/// One entry of a getdents64(2) buffer (struct linux_dirent64).
struct dirent_record {
    std::string_view name;
    unsigned char type = 0;  // DT_* of <dirent.h>; DT_UNKNOWN (0) where the file system does not say
};

/// Takes the next entry off the front of `buf` (bytes returned by
/// getdents64(2)); nullopt at the end or when the record is malformed (a
/// record length that does not fit the buffer, a name without its NUL).
std::optional<dirent_record> next_dirent(std::string_view& buf) noexcept;

/// Parses a whole decimal number (no sign, no spaces) such as a /proc
/// directory name; nullopt otherwise.
std::optional<std::int64_t> parse_id(std::string_view text) noexcept;

}  // namespace proctimes::inline v1::parse
