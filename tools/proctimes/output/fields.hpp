// SPDX-License-Identifier: MIT
// tools/proctimes/output/fields.hpp — the field registry: every JSON member,
// CSV column and table column of the proctimes command, spelled once.
//
// A field has a machine name (the JSON key and the CSV column; empty for a
// table-only column), a table title (empty when the table does not show it),
// an alignment, a fixed width for tables written a line at a time (watch), and
// how to get it from a task_record: a typed value for JSON and CSV, a cell for
// the table. A command picks its fields into a field_list and hands it to the
// writers (writers.hpp), which know nothing of any field. The names are a
// documented contract: docs/CLI.md, "Field reference" (a test checks that every
// registered field is listed there).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "output.hpp"

namespace proctimes::cli {

/// One field's value for JSON and CSV. The writers reuse one object for every
/// field, so `text` keeps its capacity and most values cost no allocation.
struct field_value {
    enum class kind : unsigned char {
        absent,            ///< JSON: the member is left out; CSV: an empty column
        null,              ///< JSON: null; CSV: an empty column
        boolean,           ///< JSON: true/false (JSON-only fields)
        integer,           ///< decimal
        unsigned_integer,  ///< decimal
        real,              ///< JSON: shortest round-trip form (nlohmann); CSV: `decimals` digits
        text,              ///< bytes; written as valid UTF-8 (to_valid_utf8), escaped for JSON, quoted for CSV
        text_list,         ///< JSON: an array of strings (JSON-only fields)
    };
    kind type = kind::absent;
    bool flag = false;
    std::int64_t number = 0;
    std::uint64_t unsigned_number = 0;
    double real = 0;
    int decimals = 0;
    std::string text;
    const std::vector<std::string>* list = nullptr;

    void set_absent() noexcept { type = kind::absent; }
    void set_null() noexcept { type = kind::null; }
    void set_boolean(bool b) noexcept { type = kind::boolean, flag = b; }
    void set_integer(std::int64_t v) noexcept { type = kind::integer, number = v; }
    void set_unsigned(std::uint64_t v) noexcept { type = kind::unsigned_integer, unsigned_number = v; }
    void set_real(double v, int csv_decimals) noexcept { type = kind::real, real = v, decimals = csv_decimals; }
    void set_text(std::string_view s) { type = kind::text, text.assign(s.data(), s.size()); }
    void set_list(const std::vector<std::string>& l) noexcept { type = kind::text_list, list = &l; }
};

enum class align : unsigned char { left, right };

struct field {
    std::string_view name;   ///< JSON key and CSV column; empty: a table-only column
    std::string_view title;  ///< table column; empty: not in the table
    align alignment = align::left;
    /// Tables written a line at a time (watch): the column's width, as fmt
    /// pads ("{:>7}"); 0 for the last column.
    unsigned width = 0;
    bool csv = true;  ///< false: JSON only (arrays, booleans, run's notes)
    /// The value for JSON and CSV; null for a table-only column.
    void (*value)(const task_record& r, field_value& out) = nullptr;
    /// The table cell (bytes printable on one line); null when not in the table.
    std::string (*cell)(const task_record& r, const output_options& opts) = nullptr;
};

/// What one command writes: its fields in order for JSON and for CSV, its
/// table columns in order, and whether JSON nests each process's threads.
struct field_list {
    std::vector<const field*> json;  ///< JSON members, in order
    /// CSV columns, in order: the JSON fields but the JSON-only ones, except
    /// that CSV has always put the exit detail after `source` (where JSON has
    /// it after `exit_time`).
    std::vector<const field*> csv;
    std::vector<const field*> columns;  ///< table columns
    /// JSON: a "threads" array after the fields of every process record
    /// (present even when empty). Table and CSV always write the thread rows a
    /// record holds, right after it.
    bool threads = false;
};

/// The fields of a record under `opts` (docs/CLI.md): show's (with exit
/// detail), run's and watch's record (with state), ps's (with ps and interval).
field_list record_fields(const output_options& opts);

/// `run`'s report: record_fields(opts) followed by the command's own fields.
field_list run_fields(const output_options& opts);

/// `watch`'s record: record_fields(opts) with the table columns of a table
/// written a line at a time (fixed widths; STATE says more about the end).
field_list watch_fields(const output_options& opts);

/// `watch` over a scope (watch_fields.cpp): one record per process that
/// ended, with its user, exit status and how its end was seen; the table a
/// line at a time, at most 80 columns.
field_list watch_scope_fields(const output_options& opts);
/// The totals record `watch` over a scope writes when it stops (JSON and CSV;
/// the table prints its own lines).
field_list watch_totals_fields();
/// The fields the two lists above add to the registry.
std::span<const field* const> watch_scope_registered_fields();

/// Every registered field, for the documentation test.
std::span<const field* const> all_fields();

}  // namespace proctimes::cli
