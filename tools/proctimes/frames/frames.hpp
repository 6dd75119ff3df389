// SPDX-License-Identifier: MIT
// tools/proctimes/frames/frames.hpp — frames of the live system, shared by
// `ps --interval` and `proctimes top`: the records of a snapshot and of the
// interval before it (records.cpp), and what accounts for every CPU-second
// of an interval — the exit stream opened once per run and read while
// waiting, /proc/stat next to each snapshot, the ledger, the records of what
// ended and the children columns (ledger.cpp, exits.cpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "commands.hpp"
#include "output.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "users.hpp"

namespace proctimes::cli::frames {

/// What a cpu_delta says of the interval, as a record's interval values.
interval_values used_of(const cpu_delta& d, std::chrono::nanoseconds interval);

/// The records of one snapshot (and, with a delta, of the interval before
/// it), filtered by user; with `threads`, each process's threads under it.
std::vector<task_record> build_records(const snapshot& s, const snapshot_delta* delta, bool threads,
                                       std::optional<user_id> only_uid, user_names& users);

/// The ends of one frame, as ledger_sources places them.
struct placed_ends {
    std::vector<ended_task> frame;       ///< this frame's, their arrival moved inside the interval
    std::vector<ended_process> earlier;  ///< ended_earlier(): ends that came too late for their frame
};

/// Which of `records` (in arrival order) are the ends of processes `after`
/// still lists, the life it read (by pid and start: a taskstats end is dated
/// by the earliest start its life's records give), each with its leader's
/// record (taskstats): the process ended after the walk passed it, or is a
/// zombie its parent has not reaped, and the walk read its CPU. Its end
/// belongs to the interval after `after`, whose first walk lists it.
std::vector<bool> still_listed(const std::vector<ended_task>& records, const snapshot& after);

/// Places the ends read so far (`pending`) between the frame of the interval
/// from `before` to `after` and the next ones, by what the two walks saw of
/// each process (docs/CLI.md, "The ledger"); `pending` keeps the ends of
/// later frames: of a process `after` still lists, or begun after `after`
/// was taken. `first_frame`: no frame was written before this one.
placed_ends place_ends(std::vector<ended_task>& pending, const snapshot& before, const snapshot& after,
                       bool first_frame);

/// What --interval keeps between frames to account for every CPU-second: the
/// exit stream (where permitted) and the /proc/stat reading of the last frame.
class ledger_sources {
public:
    /// Opens the exit stream when the snapshots are of the live /proc
    /// (`proc_root` is the library's default).
    void open(const std::string& proc_root);
    /// Sleeps until CLOCK_BOOTTIME reaches `deadline`, reading exit records
    /// as they come (the socket's buffer holds only so many).
    void sleep_until(std::chrono::nanoseconds deadline);
    /// Reads the exit records that have come, without waiting: for a caller
    /// that waits on its own (an event loop polling exit_handle()).
    void pump() { drain(); }
    /// A descriptor readable when exit records have come (the exit stream's
    /// native_handle()); -1 without an exit stream.
    [[nodiscard]] int exit_handle() const noexcept { return stream_ ? stream_->native_handle() : -1; }
    /// Reads /proc/stat; call right after each snapshot.
    void read_stat(const std::string& proc_root);
    /// The ledger of the interval between `before` and `after` (the last
    /// two read_stat calls went with them). Every end read so far is placed
    /// in exactly one frame (docs/CLI.md, "The ledger"): the processes of
    /// `before` gone from `after` are waited for (a bounded time) so that
    /// their ends come in this frame; an end whose process `after` still
    /// lists waits for the next frame; an end that came too late for the
    /// frame it belonged to is listed in this one (ended_earlier()), with
    /// nothing used in this interval.
    result<cpu_ledger> ledger(const snapshot& before, const snapshot& after);
    /// Drops the records of the frame just written.
    void forget_until(std::chrono::nanoseconds after_since_boot);

    /// The records of this frame, their arrival moved inside the interval.
    [[nodiscard]] const std::vector<ended_task>& exits() const noexcept { return frame_; }
    /// Processes that ended before `before` was taken but whose end came only
    /// after the frame they belonged to: listed now, with their final values
    /// and 0 used in this interval (what they used is in that frame's
    /// unattributed).
    [[nodiscard]] const std::vector<ended_process>& ended_earlier() const noexcept { return earlier_; }
    /// The exit stream, or none when no source can name ended tasks.
    [[nodiscard]] ps_ended_source source() const noexcept {
        return stream_ ? ps_ended_source::exit_stream : ps_ended_source::none;
    }
    /// The exit stream is the eBPF one: final values read after the last
    /// switch-out, exact instants.
    [[nodiscard]] bool exact() const noexcept { return stream_ && stream_->source() == exit_stream_source::bpf; }
    /// Why there is no exit stream ("" when there is one).
    [[nodiscard]] const std::string& why_none() const noexcept { return why_none_; }
    /// Records were lost (the socket overflowed) since the last forget_until.
    [[nodiscard]] bool lost() const noexcept { return lost_; }
    /// How many ends were lost between the previous frame's ledger() and
    /// this frame's, where the source counts them exactly (eBPF); empty
    /// otherwise. Read once per frame, so a loss the stream counts while a
    /// frame is being written belongs to the next frame, not to none.
    [[nodiscard]] std::optional<std::uint64_t> lost_count() const noexcept {
        if (!stream_ || !lost_at_ledger_) return std::nullopt;
        return *lost_at_ledger_ - lost_base_;
    }

private:
    void drain();
    void settle(const snapshot& before, const snapshot& after, std::chrono::nanoseconds deadline);
    void await_gone(const snapshot& before, const snapshot& after, std::chrono::nanoseconds deadline);
    void assign(const snapshot& before, const snapshot& after);
    std::optional<exit_stream> stream_;
    std::string why_none_;
    std::vector<ended_task> pending_;  // read, not yet placed in a frame
    std::vector<ended_task> frame_;    // placed in the frame being written
    std::vector<ended_process> earlier_;
    bool first_frame_ = true;
    bool lost_ = false;
    std::uint64_t lost_base_ = 0;                  // lost_at_ledger_ of the frame last written
    std::optional<std::uint64_t> lost_at_ledger_;  // stream_->lost() when this frame's ledger was made
    std::optional<system_cpu_times> stat_prev_, stat_cur_;
    std::error_code stat_error_;
};

/// Adds to the records of `after` what the ledger knows: the children
/// columns of each live process, a record per process that ended in the
/// interval (state "exited", its final times), and with --threads the threads
/// that ended.
void add_ledger_records(std::vector<task_record>& records, const cpu_ledger& l, const ledger_sources& src,
                        const snapshot& after, bool threads, std::optional<user_id> only_uid, user_names& users);

/// One term of a ledger, named as its JSON and CSV fields are (NAME_ns, NAME_percent).
struct ledger_term {
    const char* name;
    std::chrono::nanoseconds value;
};
/// The ledger's terms in the order its JSON and CSV records list them.
std::array<ledger_term, 9> ledger_terms(const cpu_ledger& l);

/// The ledger record of a frame (`--ledger --format json`): the ledger's
/// terms in ns and in % of the capacity, or `error` when `l` is null, then
/// where ended tasks come from. `proctimes top` writes the same object in each frame.
nlohmann::ordered_json ledger_record(const cpu_ledger* l, const std::string& error, bool exit_stream,
                                     const std::string& note, bool lost, std::optional<std::uint64_t> lost_count);

}  // namespace proctimes::cli::frames
