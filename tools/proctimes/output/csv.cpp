// SPDX-License-Identifier: MIT
// The CSV writer (RFC 4180): a header of the field names, then one line per
// record, each thread's line right after its process's. Streams: lines go to
// the stream in blocks of about 64 KiB.
#include "writers.hpp"

#include <algorithm>
#include <iterator>
#include <ostream>

#include <fmt/format.h>

#include "buffered_writer.hpp"

namespace proctimes::cli {

namespace {

class csv_writer final : public buffered_writer {
public:
    csv_writer(std::ostream& out, const field_list& fields) : buffered_writer(out) {
        for (const field* f : fields.csv)
            if (f->csv) fields_.push_back(f);
        bool first = true;
        for (const field* f : fields_) {
            if (!first) buf_ += ',';
            first = false;
            buf_ += f->name;
        }
        buf_ += '\n';
    }

    void write(const task_record& r) override {
        line(r);
        for (const auto& t : r.threads) line(t);
    }

    void finish() override { drain(); }

private:
    void line(const task_record& r) {
        using kind = field_value::kind;
        bool first = true;
        for (const field* f : fields_) {
            if (!first) buf_ += ',';
            first = false;
            f->value(r, v_);
            switch (v_.type) {
                case kind::absent:
                case kind::null:
                case kind::text_list:
                    break;  // empty column (lists are JSON only)
                case kind::boolean:
                    buf_ += v_.flag ? "true" : "false";
                    break;
                case kind::integer:
                    append_number(fmt::format_int(v_.number));
                    break;
                case kind::unsigned_integer:
                    append_number(fmt::format_int(v_.unsigned_number));
                    break;
                case kind::real:
                    fmt::format_to(std::back_inserter(buf_), "{:.{}f}", v_.real, v_.decimals);
                    break;
                case kind::text:
                    append_text(v_.text);
                    break;
            }
        }
        buf_ += '\n';
        drain_if_full();  // per line: one process can have thousands of threads
    }

    void append_number(const fmt::format_int& n) { buf_.append(n.data(), n.size()); }

    // Valid UTF-8 (to_valid_utf8), quoted when it must be (csv_field).
    void append_text(std::string_view s) {
        const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
        if (ascii && s.find_first_of(",\"\r\n") == std::string_view::npos) {
            buf_ += s;
        } else {
            buf_ += csv_field(ascii ? std::string(s) : to_valid_utf8(s));
        }
    }

    std::vector<const field*> fields_;  // the list's CSV columns
    field_value v_;                     // reused for every field
};

}  // namespace

std::unique_ptr<record_writer> open_csv_writer(std::ostream& out, const field_list& fields) {
    return std::make_unique<csv_writer>(out, fields);
}

}  // namespace proctimes::cli
