// SPDX-License-Identifier: MIT
// Choosing a writer, and the record-list entry points the commands and tests use.
#include "writers.hpp"

namespace proctimes::cli {

std::unique_ptr<record_writer> open_writer(std::ostream& out, output_format format, const field_list& fields,
                                           const output_options& opts, layout how) {
    switch (format) {
        case output_format::json:
            return open_json_writer(out, fields, how);
        case output_format::csv:
            return open_csv_writer(out, fields);
        case output_format::table:
            break;
    }
    return open_table_writer(out, fields, opts, how);
}

void write_all(std::ostream& out, output_format format, const field_list& fields, const output_options& opts,
               const std::vector<task_record>& records, layout how) {
    const auto w = open_writer(out, format, fields, opts, how);
    for (const auto& r : records) w->write(r);
    w->finish();
}

void write_records(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    write_all(out, opts.format, record_fields(opts), opts, records);
}

void write_table(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    write_all(out, output_format::table, record_fields(opts), opts, records);
}

void write_json(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    write_all(out, output_format::json, record_fields(opts), opts, records);
}

void write_csv(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    write_all(out, output_format::csv, record_fields(opts), opts, records);
}

}  // namespace proctimes::cli
