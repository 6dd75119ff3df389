// SPDX-License-Identifier: MIT
#include "serve/exposition.hpp"

#include <charconv>
#include <cmath>

#include "utf8.hpp"

namespace proctimes::cli::serve {
namespace {

bool hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Whether `v` starts with what label_value() writes for an invalid byte
// (\xHH, HH from 80 to FF), or with a backslash (the start of \\).
bool reads_as_escape(std::string_view v) {
    if (v.empty()) return false;
    if (v[0] == '\\') return true;
    if (utf8_length(v) == 0) return true;  // an invalid byte: it will be written as \xHH
    if (v.size() < 3 || (v[0] != 'x' && v[0] != 'X')) return false;
    const char h = v[1];
    const bool high = h == '8' || h == '9' || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
    return high && hex_digit(v[2]);
}

void escape_label(std::string& out, std::string_view v) {
    for (const char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
}

void escape_help(std::string& out, std::string_view v) {
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
}

}  // namespace

std::string label_value(std::string_view name) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(name.size());
    while (!name.empty()) {
        const std::size_t n = utf8_length(name);
        if (n == 0) {
            const auto b = static_cast<unsigned char>(name[0]);
            out += "\\x";
            out += hex[b >> 4];
            out += hex[b & 0xF];
            name.remove_prefix(1);
            continue;
        }
        if (name[0] == '\\') {
            out += reads_as_escape(name.substr(1)) ? "\\\\" : "\\";
        } else {
            out.append(name.data(), n);
        }
        name.remove_prefix(n);
    }
    return out;
}

format negotiate(std::string_view accept) noexcept {
    return accept.find("application/openmetrics-text") != std::string_view::npos ? format::openmetrics_100
                                                                                 : format::text_004;
}

std::string_view content_type(format f) noexcept {
    return f == format::openmetrics_100 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                        : "text/plain; version=0.0.4; charset=utf-8";
}

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string render(const std::vector<family>& families, format f) {
    std::string out;
    out.reserve(4096 + families.size() * 256);
    const bool om = f == format::openmetrics_100;
    for (const auto& fam : families) {
        const bool counter = fam.type == metric_type::counter;
        const std::string sample_name = counter ? fam.name + "_total" : fam.name;
        // 0.0.4 names a counter family by its samples' name; OpenMetrics by the
        // family name without the suffix.
        const std::string& family_name = om ? fam.name : sample_name;
        out += "# HELP ";
        out += family_name;
        out += ' ';
        escape_help(out, fam.help);
        out += "\n# TYPE ";
        out += family_name;
        out += counter ? " counter\n" : " gauge\n";
        for (const auto& s : fam.samples) {
            out += sample_name;
            if (!s.labels.empty()) {
                out += '{';
                bool first = true;
                for (const auto& [k, v] : s.labels) {
                    if (!first) out += ',';
                    first = false;
                    out += k;
                    out += "=\"";
                    escape_label(out, label_value(v));
                    out += '"';
                }
                out += '}';
            }
            out += ' ';
            out += format_value(s.value);
            out += '\n';
        }
    }
    if (om) out += "# EOF\n";
    return out;
}

}  // namespace proctimes::cli::serve
