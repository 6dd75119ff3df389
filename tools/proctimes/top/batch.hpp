// SPDX-License-Identifier: MIT
// tools/proctimes/top/batch.hpp — `proctimes top -b`: the frames of a feed
// written one after another, for scripts and logs: a table (a header, the
// busiest rows, a blank line between frames) or one JSON object per frame on
// one line (docs/CLI.md, "proctimes top").
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

#include "output/output.hpp"
#include "top/frame.hpp"

namespace proctimes::cli::top {

struct batch_options {
    std::chrono::nanoseconds interval = std::chrono::seconds(2);  ///< -d
    std::optional<unsigned> count;                                ///< -n: frames to write; empty: until interrupted
    output_format format = output_format::table;                  ///< table or json
    std::optional<std::size_t> top;                               ///< --top: at most N process rows
    bool threads = false;                                         ///< -H: each process's threads under it
    bool utc = false;                                             ///< table instants in UTC
};

/// Takes the feed's first frame (no interval yet: not written), then writes
/// each later one. Returns 0, 1 when a frame could not be made or the output
/// could not be written (said on `err`).
int run_batch(frame_feed& feed, const batch_options& opts, std::ostream& out, std::ostream& err);

/// One frame as one line of JSON (no newline at the end).
std::string frame_json(const top_frame& f, const batch_options& opts);

/// One frame as a table: the header lines, then the rows (busiest first, at
/// most opts.top), each ended with a newline.
std::string frame_table(const top_frame& f, const batch_options& opts);

/// The rows of a frame in the order the batch mode writes them: by the CPU
/// they used in the interval, the busiest first; ties by the CPU of the
/// children they reaped in it, then by pid.
void sort_rows_by_cpu(std::vector<top_row>& rows);

}  // namespace proctimes::cli::top
