// SPDX-License-Identifier: MIT
// The JSON writer: each record is written as it comes, member by member, into
// a buffer handed to the stream every 64 KiB — no document tree. The layout is
// byte for byte what nlohmann::ordered_json::dump(2 or -1, ' ', true) gives
// for the same members (the format the command has always printed; the tests
// compare the two).
#include "writers.hpp"

#include <array>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "buffered_writer.hpp"

namespace proctimes::cli {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_u_escape(std::string& out, unsigned unit) {
    const char esc[6] = {'\\',
                         'u',
                         hex_digits[(unit >> 12) & 0xF],
                         hex_digits[(unit >> 8) & 0xF],
                         hex_digits[(unit >> 4) & 0xF],
                         hex_digits[unit & 0xF]};
    out.append(esc, 6);
}

// The code point of the valid UTF-8 sequence of `n` bytes at `p`.
unsigned decode(const unsigned char* p, std::size_t n) {
    switch (n) {
        case 1:
            return p[0];
        case 2:
            return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
        case 3:
            return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
        default:
            return ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    }
}

void append_code_point(std::string& out, unsigned cp) {
    switch (cp) {
        case '"':
            out += "\\\"";
            return;
        case '\\':
            out += "\\\\";
            return;
        case '\b':
            out += "\\b";
            return;
        case '\f':
            out += "\\f";
            return;
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\t':
            out += "\\t";
            return;
        default:
            break;
    }
    if (cp >= 0x20 && cp < 0x7F) {
        out += static_cast<char>(cp);
    } else if (cp <= 0xFFFF) {
        append_u_escape(out, cp);
    } else {
        append_u_escape(out, 0xD7C0u + (cp >> 10));
        append_u_escape(out, 0xDC00u + (cp & 0x3FFu));
    }
}

}  // namespace

void append_json_string(std::string& out, std::string_view bytes) {
    out += '"';
    std::size_t plain = 0;  // the run of bytes copied as they are
    const auto copy_plain = [&](std::size_t end) { out.append(bytes.data() + plain, end - plain); };
    for (std::size_t i = 0; i < bytes.size();) {
        const auto c = static_cast<unsigned char>(bytes[i]);
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        copy_plain(i);
        const std::size_t n = c < 0x80 ? 1 : utf8_sequence_length(bytes.substr(i));
        if (n == 0) {
            append_u_escape(out, c);  // a stray byte: U+00HH, as to_valid_utf8 makes it
            ++i;
        } else {
            append_code_point(out, decode(reinterpret_cast<const unsigned char*>(bytes.data() + i), n));
            i += n;
        }
        plain = i;
    }
    copy_plain(bytes.size());
    out += '"';
}

namespace {

class json_writer final : public buffered_writer {
public:
    json_writer(std::ostream& out, const field_list& fields, layout how)
        : buffered_writer(out), fields_(fields), layout_(how), indent_(how == layout::stream ? -1 : 2) {
        // What is the same for every record, made once: each member's key
        // with its separator, and the line break before each depth.
        const auto key = [&](std::string_view name) {
            return fmt::format("\"{}\"{}", name, indent_ < 0 ? ":" : ": ");  // names are plain ASCII
        };
        for (const field* f : fields_.json) keys_.push_back(key(f->name));
        threads_key_ = key("threads");
        if (indent_ >= 0) {
            for (std::size_t depth = 0; depth < breaks_.size(); ++depth) {
                breaks_[depth] = '\n';
                breaks_[depth].append(depth * static_cast<std::size_t>(indent_), ' ');
            }
        }
    }

    void write(const task_record& r) override {
        if (layout_ == layout::document) {
            buf_ += count_ == 0 ? '[' : ',';
            newline(1);
            object(r, 1);
        } else {
            object(r, 0);
            buf_ += '\n';
        }
        ++count_;
        drain_if_full();  // and within a process's threads (object())
    }

    void finish() override {
        if (layout_ == layout::document) {
            if (count_ == 0) {
                buf_ += "[]";
            } else {
                newline(0);
                buf_ += ']';
            }
            buf_ += '\n';
        }
        drain();
    }

private:
    void newline(int depth) {
        if (depth < max_depth) {
            buf_ += breaks_[static_cast<std::size_t>(depth)];
        } else if (indent_ >= 0) {
            buf_ += '\n';
            buf_.append(static_cast<std::size_t>(depth) * static_cast<std::size_t>(indent_), ' ');
        }
    }

    void member(bool& first, int depth, const std::string& key) {
        if (!first) buf_ += ',';
        first = false;
        newline(depth);
        buf_ += key;
    }

    void append_number(const fmt::format_int& n) { buf_.append(n.data(), n.size()); }

    void value(int depth) {
        using kind = field_value::kind;
        switch (v_.type) {
            case kind::absent:
            case kind::null:
                buf_ += "null";
                return;
            case kind::boolean:
                buf_ += v_.flag ? "true" : "false";
                return;
            case kind::integer:
                append_number(fmt::format_int(v_.number));
                return;
            case kind::unsigned_integer:
                append_number(fmt::format_int(v_.unsigned_number));
                return;
            // nlohmann's shortest round-trip form ("12.5", "0.0", "1e+20",
            // null for NaN): rare (cpu_percent), so not the cost.
            case kind::real:
                buf_ += nlohmann::json(v_.real).dump();
                return;
            case kind::text:
                append_json_string(buf_, v_.text);
                return;
            case kind::text_list: {
                const auto& list = *v_.list;
                if (list.empty()) {
                    buf_ += "[]";
                    return;
                }
                buf_ += '[';
                for (std::size_t i = 0; i < list.size(); ++i) {
                    if (i > 0) buf_ += ',';
                    newline(depth + 1);
                    append_json_string(buf_, list[i]);
                }
                newline(depth);
                buf_ += ']';
                return;
            }
        }
    }

    void object(const task_record& r, int depth) {
        buf_ += '{';
        bool first = true;
        for (std::size_t i = 0; i < fields_.json.size(); ++i) {
            fields_.json[i]->value(r, v_);
            if (v_.type == field_value::kind::absent) continue;
            member(first, depth + 1, keys_[i]);
            value(depth + 1);
        }
        if (fields_.threads && !r.tid) {
            member(first, depth + 1, threads_key_);
            if (r.threads.empty()) {
                buf_ += "[]";
            } else {
                buf_ += '[';
                for (std::size_t i = 0; i < r.threads.size(); ++i) {
                    if (i > 0) buf_ += ',';
                    newline(depth + 2);
                    object(r.threads[i], depth + 2);
                    // One process can have thousands of threads: the buffer
                    // goes out as it fills, not once per process.
                    drain_if_full();
                }
                newline(depth + 1);
                buf_ += ']';
            }
        }
        if (!first) newline(depth);
        buf_ += '}';
    }

    const field_list& fields_;
    const layout layout_;
    const int indent_;  // -1: compact (JSON Lines)
    // Records nest threads only: depth 0 (the array), 1 (a process), 2 (its
    // members and its threads array), 3 (a thread), 4 (its members and a
    // list's elements), one more for a list inside a thread.
    static constexpr int max_depth = 6;
    std::vector<std::string> keys_;  // "\"name\": " of each field of the list
    std::string threads_key_;
    std::array<std::string, max_depth> breaks_;  // "\n" and the indent of each depth
    field_value v_;                              // reused for every field
    std::size_t count_ = 0;
};

}  // namespace

std::unique_ptr<record_writer> open_json_writer(std::ostream& out, const field_list& fields, layout how) {
    return std::make_unique<json_writer>(out, fields, how);
}

}  // namespace proctimes::cli
