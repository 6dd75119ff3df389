// SPDX-License-Identifier: MIT
// Which frame (of `ps --interval`, of `proctimes top`) each end read from the exit stream belongs
// to (docs/CLI.md, "The ledger"). An end's record can come after the walk
// that no longer listed its task (the eBPF record comes an RCU grace period
// after the task left the task list, and the reader thread may be late), so a
// record is placed by what the two snapshots saw of its process, not by when
// it arrived: every end read is listed in exactly one frame, and the ledger's
// terms stay those of the snapshots.
#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <vector>

#include "frames/frames.hpp"
#include "proctimes/boot.hpp"
#include "system.hpp"

namespace proctimes::cli::frames {

namespace {

using std::chrono::nanoseconds;

// How long a frame waits for the ends of the processes its first walk listed
// and its second did not (they come a few ms after; this bounds a lost one).
constexpr nanoseconds gone_wait = std::chrono::milliseconds{250};

nanoseconds tick_length() {
    const std::int64_t hz = clock_ticks_per_second();
    return nanoseconds{hz > 0 ? 1'000'000'000 / hz : 10'000'000};
}

// The process an ended task's record belongs to (0: unknown).
pid_t process_of(const ended_task& e) { return e.pid != 0 ? e.pid : (e.whole_process ? e.tid : 0); }

// Its start, ns since boot: exact from eBPF, estimated from taskstats
// (received − elapsed, no earlier than the real start).
nanoseconds start_of(const ended_task& e) { return e.received_since_boot - e.elapsed; }

// What the records read so far say of each record's process (by index in
// arrival order).
struct life_of {
    // The process's start: a record's own (received − elapsed), but for a
    // taskstats end of a process, the earliest its life's records give (its
    // own, and those of its threads that came before it since the pid's
    // previous end). That end is its last thread's record, whose elapsed
    // time is that thread's: a thread started after the process
    // (ThreadSanitizer's, a worker's) dates the process late by as much, by
    // tens of ms in a short one, where its leader's record gives the start
    // to the reader's delay.
    nanoseconds start{};
    // For a taskstats end of a process: the index of its leader's record,
    // when that came before it and is still here; else npos.
    std::size_t leader = npos;
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

std::vector<life_of> lives_of(const std::vector<ended_task>& records) {
    std::vector<life_of> out(records.size());
    // Per pid, of the life whose end has not come: its earliest start, its leader's record.
    std::unordered_map<pid_t, life_of> open;
    for (std::size_t i = 0; i < records.size(); ++i) {
        const ended_task& e = records[i];
        out[i].start = start_of(e);
        const pid_t pid = process_of(e);
        if (e.start_ticks != 0 || pid == 0) continue;  // eBPF: exact; or a thread of an unknown process
        const auto [it, fresh] = open.try_emplace(pid, out[i]);
        life_of& l = it->second;
        if (!fresh) l.start = std::min(l.start, out[i].start);
        if (e.tid == pid && !e.process_ended) l.leader = i;
        if (e.process_ended) {
            out[i] = l;
            open.erase(it);
        }
    }
    return out;
}

// Whether the process end `e`, its process begun at `start`, is the life of
// `p` a snapshot listed.
bool same_life(const ended_task& e, nanoseconds start, const snapshot_process& p, nanoseconds tick) {
    if (e.start_ticks != 0) return e.start_ticks == p.identity.start_ticks;
    const auto est = start / tick;
    const auto st = static_cast<std::int64_t>(p.identity.start_ticks);
    return est >= st - 1 && est <= st + 1;
}

bool listed(const snapshot& s, const ended_task& e, nanoseconds start, nanoseconds tick) {
    const auto* p = s.find(process_of(e));
    return p && same_life(e, start, *p, tick);
}

}  // namespace

void ledger_sources::settle(const snapshot& before, const snapshot& after, nanoseconds deadline) {
    if (!stream_) return;
    // Every process that exited in the interval and was reaped before the
    // second walk reached it belongs to this frame, also one that no walk
    // listed (begun and ended in the interval). Its record comes an RCU grace
    // period after its release, later when the stream's thread is slow: wait
    // until the stream holds them all. Without this wait, the ends of the
    // last few ms of every interval (15-30 per frame in a fork storm) came
    // after the frame was written, and were listed only in the next frame as
    // ended_earlier, outside both frames' ended_processes.
    const nanoseconds left = deadline - sys::since_boot_now();
    if (left.count() > 0)
        (void)stream_->settle(before.since_boot, after.since_boot + after.walk_duration,
                              std::chrono::ceil<std::chrono::milliseconds>(left));
    drain();
}

void ledger_sources::await_gone(const snapshot& before, const snapshot& after, nanoseconds deadline) {
    if (!stream_) return;
    const nanoseconds tick = tick_length();
    // The processes of `before` that `after` no longer lists: ended in the
    // interval, so their ends belong to this frame.
    std::vector<const snapshot_process*> gone;
    for (const auto& b : before.processes) {
        const auto* a = after.find(b.pid());
        if (!a || a->identity.start_ticks != b.identity.start_ticks) gone.push_back(&b);
    }
    for (;;) {
        const auto lives = lives_of(pending_);
        std::erase_if(gone, [&](const snapshot_process* b) {
            for (std::size_t i = 0; i < pending_.size(); ++i) {
                const ended_task& e = pending_[i];
                if (e.process_ended && process_of(e) == b->pid() && same_life(e, lives[i].start, *b, tick)) return true;
            }
            return false;
        });
        if (gone.empty() || !stream_) return;
        const nanoseconds left = deadline - sys::since_boot_now();
        if (left.count() <= 0) return;
        (void)stream_->wait(std::chrono::ceil<std::chrono::milliseconds>(std::min<nanoseconds>(left, tick)));
        drain();
    }
}

namespace {

// still_listed with the lives already read.
std::vector<bool> held_for_next(const std::vector<ended_task>& records, const std::vector<life_of>& lives,
                                const snapshot& after, nanoseconds tick) {
    std::vector<bool> out(records.size(), false);
    for (std::size_t i = 0; i < records.size(); ++i) {
        const ended_task& e = records[i];
        if (!e.process_ended || process_of(e) == 0 || !listed(after, e, lives[i].start, tick)) continue;
        out[i] = true;
        if (lives[i].leader != life_of::npos) out[lives[i].leader] = true;
    }
    return out;
}

}  // namespace

std::vector<bool> still_listed(const std::vector<ended_task>& records, const snapshot& after) {
    return held_for_next(records, lives_of(records), after, tick_length());
}

placed_ends place_ends(std::vector<ended_task>& pending, const snapshot& before, const snapshot& after,
                       bool first_frame) {
    const nanoseconds tick = tick_length();
    const nanoseconds from = before.since_boot, to = after.since_boot;
    placed_ends out;
    std::vector<ended_task> keep;
    const auto lives = lives_of(pending);
    // A record whose process the second walk still lists (it ended after the
    // walk passed it, or is a zombie not yet reaped): the next frame's,
    // where `after` is its reading. A process end takes its leader's record
    // along (taskstats; eBPF's end is the leader's record): there it dates
    // the process (compute_ledger), and it is the process's own thread,
    // listed with its end. Its other threads' records stay in the frame they
    // ended in.
    const auto held = held_for_next(pending, lives, after, tick);
    for (std::size_t i = 0; i < pending.size(); ++i) {
        ended_task& e = pending[i];
        const nanoseconds start = lives[i].start;
        if (held[i]) {
            keep.push_back(e);
            continue;
        }
        // Begun after the second walk was stamped, so not listed by it: it
        // ran after the interval, and its end came while the frame waited
        // for late ends (up to gone_wait, the whole of it when an end was
        // lost). The next frame's, where all its CPU was used.
        if (start > to && !listed(after, e, start, tick)) {
            keep.push_back(e);
            continue;
        }
        if (e.process_ended && process_of(e) != 0) {
            // Begun before the first walk, which did not list it: it ended
            // before that walk, in an interval already written (its record
            // came too late for that frame). Listed here with nothing used in
            // this interval; before the first frame, not at all.
            if (!listed(before, e, start, tick) && start < from) {
                if (first_frame) continue;
                ended_process p;
                p.pid = process_of(e);
                p.parent_pid = e.parent_pid;
                p.start_ticks = e.start_ticks != 0 ? e.start_ticks
                                                   : static_cast<std::uint64_t>(std::max(start, nanoseconds{0}) / tick);
                p.uid = e.uid;
                p.name = p.end_name = e.name;
                p.final_kernel = e.exact ? e.process_kernel : e.kernel;
                p.final_user = e.exact ? e.process_user : e.user;
                p.ended_since_boot = e.received_since_boot;
                p.exit = e.exit;
                p.creation = e.creation;
                p.exact = e.exact || e.whole_process;
                out.earlier.push_back(p);
                continue;
            }
        }
        // This frame's: its arrival moved inside (from, to], the start it
        // gives (received − elapsed) kept.
        const nanoseconds at =
            std::clamp(e.received_since_boot, from + nanoseconds{1}, std::max(to, from + nanoseconds{1}));
        e.elapsed += at - e.received_since_boot;
        e.received_since_boot = at;
        out.frame.push_back(e);
    }
    pending = std::move(keep);
    return out;
}

void ledger_sources::assign(const snapshot& before, const snapshot& after) {
    auto placed = place_ends(pending_, before, after, first_frame_);
    frame_ = std::move(placed.frame);
    earlier_ = std::move(placed.earlier);
    first_frame_ = false;
}

result<cpu_ledger> ledger_sources::ledger(const snapshot& before, const snapshot& after) {
    drain();
    // One bound for both waits: a frame is late by at most gone_wait.
    const nanoseconds deadline = sys::since_boot_now() + gone_wait;
    settle(before, after, deadline);
    await_gone(before, after, deadline);
    assign(before, after);
    lost_at_ledger_ = stream_ ? stream_->lost() : std::nullopt;
    if (!stat_prev_ || !stat_cur_) return stat_error_ ? stat_error_ : make_error_code(errc::malformed_data);
    return compute_ledger(before, after, frame_, *stat_prev_, *stat_cur_, children_from_snapshots);
}

void ledger_sources::forget_until(nanoseconds /*after_since_boot*/) {
    frame_.clear();
    earlier_.clear();
    lost_ = false;
    // From the count this frame reported, not a new reading: a loss counted
    // while the frame was written is the next frame's.
    if (lost_at_ledger_) lost_base_ = *lost_at_ledger_;
    lost_at_ledger_.reset();
}

}  // namespace proctimes::cli::frames
