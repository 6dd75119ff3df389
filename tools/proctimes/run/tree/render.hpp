// SPDX-License-Identifier: MIT
// tools/proctimes/tree/render.hpp — the renderers of `proctimes run --tree`:
// pure functions from a recorded tree to the text of one output (docs/CLI.md,
// "run --tree"). No I/O: run_tree.cpp writes what they return.
#pragma once

#include <cstddef>
#include <string>

#include "model.hpp"

namespace proctimes::cli::tree {

struct table_options {
    std::size_t top = 15;  ///< busiest processes listed, and program groups
    bool utc = false;      ///< reserved for instants (the table shows durations only)
};

/// For people: the header lines (wall, rusage CPU, tree CPU, unaccounted,
/// source), the busiest processes by own CPU, the summary by program.
std::string render_table(const tree_report& r, const table_options& opts);

/// One JSON object (two-space indent, pure ASCII, ending with a newline): the
/// tree-level fields, then "processes" (every process, in recorded order).
std::string render_json(const tree_report& r);

/// CSV: a header and one row per process; an empty line; the tree's own
/// header and row. argv is one column holding a JSON array of strings.
std::string render_csv(const tree_report& r);

/// Chrome's Trace Event Format (JSON object form), as Perfetto UI and
/// chrome://tracing open it: a track per process, an "X" event per process
/// and per program, an "i" event per exec; times in µs from the earliest
/// instant of the tree.
std::string render_trace(const tree_report& r);

/// A self-contained SVG icicle: the command on top, each process under its
/// parent, box widths proportional to the CPU of the process and its
/// descendants, the process's own part darker, a <title> per box.
std::string render_svg(const tree_report& r);

/// Text for XML character data and attribute values: made valid UTF-8 (as
/// names are in JSON), characters XML 1.0 cannot hold (controls but tab and
/// line feed, U+FFFE, U+FFFF) written "\xHH" / "\uFFFE", markup escaped.
std::string xml_text(std::string_view bytes);

}  // namespace proctimes::cli::tree
