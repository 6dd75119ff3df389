// SPDX-License-Identifier: MIT
// tools/proctimes/output/writers.hpp — the three writers of the proctimes
// command: one table, one JSON and one CSV writer, each given a command's
// field_list (fields.hpp) and fed records one at a time.
//
// The JSON and CSV writers stream: each record is formatted into a buffer that
// goes out in blocks of about 64 KiB, never a document of the whole output.
// The table writer aligned to its contents keeps its cells until finish(), as
// it must to know the widths; the fixed-width table streams too.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "fields.hpp"
#include "output.hpp"

namespace proctimes::cli {

/// How the records are laid out.
enum class layout {
    /// All records at once: a table aligned to its contents; a JSON array
    /// (indented by 2, "[]" when empty); CSV with a header.
    document,
    /// Records as they come, each complete on its own lines (watch): a table
    /// of fixed column widths (field::width); JSON Lines (one compact object a
    /// line); CSV. The header of the table and of CSV is written at once.
    stream,
    /// One record (run's report): as `document`, but JSON is the bare object.
    single,
};

class record_writer {
public:
    virtual ~record_writer() = default;
    /// Writes one record, and its thread records after it (nested in JSON
    /// when the field list asks for threads).
    virtual void write(const task_record& r) = 0;
    /// Ends the output (the JSON array's bracket, the aligned table) and hands
    /// everything left to the stream. Call once, after the last record.
    virtual void finish() = 0;
    /// Hands what is buffered to the stream and flushes it (layout::stream).
    virtual void flush() = 0;
};

/// The writer of `format` for `fields`; `opts` gives the table's time zone.
/// `out` and `fields` must outlive the writer.
std::unique_ptr<record_writer> open_writer(std::ostream& out, output_format format, const field_list& fields,
                                           const output_options& opts, layout how = layout::document);

std::unique_ptr<record_writer> open_table_writer(std::ostream& out, const field_list& fields,
                                                 const output_options& opts, layout how);
std::unique_ptr<record_writer> open_json_writer(std::ostream& out, const field_list& fields, layout how);
std::unique_ptr<record_writer> open_csv_writer(std::ostream& out, const field_list& fields);

/// Every record through the writer of `format`, then finish().
void write_all(std::ostream& out, output_format format, const field_list& fields, const output_options& opts,
               const std::vector<task_record>& records, layout how = layout::document);

/// Appends `bytes` to `out` as a JSON string in double quotes: made valid
/// UTF-8 as to_valid_utf8 does, then escaped as nlohmann::json's dump with
/// ensure_ascii (\", \\, \b, \f, \n, \r, \t; other code points below U+0020
/// and from U+007F as \u00xx, lower-case hex, surrogate pairs above U+FFFF):
/// the output is pure ASCII.
void append_json_string(std::string& out, std::string_view bytes);

}  // namespace proctimes::cli
