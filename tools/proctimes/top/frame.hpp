// SPDX-License-Identifier: MIT
// tools/proctimes/top/frame.hpp — what `proctimes top` shows: one frame per
// refresh (the machine's busy CPU, the ledger line, every live process and
// every process that ended in the interval), and the feed that makes frames.
// The live feed (live_feed.cpp) reads them from the library; the full-screen
// view (screen.cpp) and the batch writer (batch.cpp) only read frames, so a
// recorded history can feed the same screen.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/result.hpp"
#include "proctimes/times.hpp"

namespace proctimes::cli::top {

/// One process (or, inside a process, one thread) of a frame.
struct top_row {
    proctimes::pid_t pid = 0;
    std::optional<proctimes::pid_t> tid;  ///< set for a thread row
    proctimes::pid_t ppid = 0;
    std::string name;     ///< comm: raw bytes, any byte but NUL; sanitised only when drawn
    std::string command;  ///< the command line, arguments joined by one space; "" when unreadable
    std::optional<std::uint32_t> uid;
    std::string user_name;  ///< the user's name, or the uid in decimal (ps's user_name)
    /// One letter as in /proc (R S D Z T t I X); 'X' for a row that ended in the interval.
    char state = '?';
    bool ended = false;              ///< ended in the interval (or its end was first seen in it)
    std::optional<int> exit_code;    ///< exit status, where the end was recorded
    std::optional<int> exit_signal;  ///< the signal that ended it, where known
    std::chrono::nanoseconds interval_kernel{}, interval_user{};  ///< used in the interval
    /// CPU of the children it reaped in the interval that no row shows: the
    /// ledger's counted part (children_account::counted), so that a frame's
    /// rows add up to the ledger's attributed CPU.
    std::chrono::nanoseconds interval_children_kernel{}, interval_children_user{};
    std::chrono::nanoseconds kernel{}, user{};    ///< since creation
    std::chrono::nanoseconds resolution{};        ///< of kernel and of user, each
    std::chrono::nanoseconds total_resolution{};  ///< of kernel + user
    std::optional<proctimes::cpu_source> source;  ///< where kernel and user came from
    std::optional<instant> sampled_at;            ///< when kernel and user were read
    /// How the interval's values were found, as `ps --interval`'s basis field
    /// says it: "both", "created", "unseen", "ended", "ended_earlier"; "" on
    /// the first frame.
    std::string basis;
    instant creation{};
    std::optional<instant> exit;
    proctimes::exit_source exit_source = proctimes::exit_source::none;
    std::uint32_t threads = 0;
    std::optional<std::uint64_t> rss_bytes;                                 ///< resident memory
    std::optional<std::uint64_t> read_bytes, write_bytes;                   ///< I/O in the interval (storage)
    std::optional<std::uint64_t> voluntary_switches, involuntary_switches;  ///< in the interval
    std::string cgroup;                                                     ///< the cgroup v2 path ("" when unknown)
    std::vector<top_row> thread_rows;                                       ///< filled when threads are asked for

    [[nodiscard]] std::chrono::nanoseconds interval_cpu() const { return interval_kernel + interval_user; }
    [[nodiscard]] std::chrono::nanoseconds interval_children_cpu() const {
        return interval_children_kernel + interval_children_user;
    }
};

/// One refresh.
struct top_frame {
    std::uint64_t number = 0;  ///< 1 for the first frame of a run
    instant taken{};
    std::chrono::nanoseconds uptime{};    ///< since boot (CLOCK_BOOTTIME) when it was taken
    std::chrono::nanoseconds interval{};  ///< since the previous frame; 0 for the first
    unsigned cpus = 0;
    /// Busy share of each CPU and of all of them over the interval, 0..1, from the system's counters.
    std::vector<double> busy_per_cpu;
    double busy = 0.0;
    /// The ledger of the interval (proctimes/ledger.hpp); empty for the first frame or where it failed.
    std::optional<cpu_ledger> ledger;
    std::string ledger_error;  ///< why there is no ledger, when there is none after the first frame
    /// How ended processes are known: "exit stream (eBPF)", "exit stream (taskstats)",
    /// or "children accounting (unprivileged)" — said in the header.
    std::string ended_source;
    std::optional<std::uint64_t> records_lost;
    /// The exit stream names ended tasks (`ps --interval`'s ended_source
    /// "exit_stream"; else "none" and ended_source_note says why).
    bool exit_stream = false;
    std::string ended_source_note;
    bool records_lost_any = false;  ///< some exit records were lost in the interval (count or not)
    std::array<double, 3> load{};
    std::uint64_t memory_total = 0, memory_available = 0;  ///< bytes
    std::size_t tasks = 0;                                 ///< threads of every live process
    std::size_t live_processes = 0;                        ///< every live process of the machine, filters aside
    std::vector<top_row> rows;                             ///< live and ended processes, unsorted
    std::vector<std::string> warnings;                     ///< said once in the status line
};

/// What makes frames. next() returns the frame at the end of the current
/// interval, waiting for it; with `wait` false, the live feed returns at once
/// whatever frame an interrupted wait can give (for a key press).
class frame_feed {
public:
    frame_feed() = default;
    frame_feed(const frame_feed&) = delete;
    frame_feed& operator=(const frame_feed&) = delete;
    virtual ~frame_feed() = default;
    /// The next frame, `interval` after the previous one.
    virtual result<top_frame> next(std::chrono::nanoseconds interval) = 0;
    /// A descriptor readable while the feed waits (-1: none); the screen
    /// polls it beside the terminal.
    [[nodiscard]] virtual int wait_handle() const noexcept { return -1; }
    /// Reads what the feed must read while it waits (the exit stream's
    /// records), without making a frame: call it when wait_handle() is
    /// readable, for a caller that waits on its own and then asks next() for
    /// a frame whose interval is already over.
    virtual void pump() {}
    /// Whether frames are of the live machine (false: a recording).
    [[nodiscard]] virtual bool live() const noexcept { return true; }
    /// A recording moves through its intervals (top --replay): the frame
    /// `by` intervals from the one given last (-1 the one before, 1 the one
    /// after), or the one covering `t`; next() then goes on from there.
    /// Empty for a feed that cannot move (the live machine).
    virtual std::optional<result<top_frame>> step(int by) {
        (void)by;
        return std::nullopt;
    }
    virtual std::optional<result<top_frame>> seek(instant t) {
        (void)t;
        return std::nullopt;
    }
    /// The message of the last failure of next(), step() or seek(), where the
    /// feed has one in better words than its error code ("": none).
    [[nodiscard]] virtual std::string failure_text() const { return {}; }
};

}  // namespace proctimes::cli::top
