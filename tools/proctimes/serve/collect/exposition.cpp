// SPDX-License-Identifier: MIT
#include "serve/collect/exposition.hpp"

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

// label_value(name) appended to out; with `escaped`, also escaped for both
// formats (\\, \", \n) in the same pass.
void append_label_value(std::string& out, std::string_view name, bool escaped) {
    static constexpr char hex[] = "0123456789ABCDEF";
    // A backslash of the mapping, and of the format's escape of it.
    const std::string_view slash = escaped ? "\\\\" : "\\";
    while (!name.empty()) {
        const std::size_t n = utf8_length(name);
        if (n == 0) {
            const auto b = static_cast<unsigned char>(name[0]);
            out += slash;
            out += 'x';
            out += hex[b >> 4];
            out += hex[b & 0xF];
            name.remove_prefix(1);
            continue;
        }
        if (name[0] == '\\') {
            out += slash;
            if (reads_as_escape(name.substr(1))) out += slash;
        } else if (escaped && name[0] == '"') {
            out += "\\\"";
        } else if (escaped && name[0] == '\n') {
            out += "\\n";
        } else {
            out.append(name.data(), n);
        }
        name.remove_prefix(n);
    }
}

// format_value(v), appended to out.
void append_value(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "NaN";
    } else if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
    } else {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, r.ptr);
    }
}

}  // namespace

std::string label_value(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    append_label_value(out, name, false);
    return out;
}

void family::add(std::initializer_list<label> labels, double value) {
    if (lines.empty()) lines.reserve(256);
    lines += name;
    if (totals()) lines += "_total";
    if (labels.size() != 0) {
        lines += '{';
        bool first = true;
        for (const label& l : labels) {
            if (!first) lines += ',';
            first = false;
            lines += l.name;
            lines += "=\"";
            append_label_value(lines, l.value, true);
            lines += '"';
        }
        lines += '}';
    }
    lines += ' ';
    append_value(lines, value);
    lines += '\n';
}

double accept_q(std::string_view header, std::string_view type, bool wildcards) noexcept {
    const auto trim = [](std::string_view v) {
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        return v;
    };
    const auto iequal = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            const auto lc = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
            if (lc(a[i]) != lc(b[i])) return false;
        }
        return true;
    };
    const auto slash = type.find('/');
    // The most specific range that matches decides (RFC 9110 12.5.1); among
    // equally specific ones, the highest q.
    int best_rank = -1;
    double best_q = 0;
    while (!header.empty()) {
        const auto comma = header.find(',');
        std::string_view item = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
        const auto semi = item.find(';');
        const std::string_view range = trim(item.substr(0, semi));
        double q = 1;
        bool valid = true;
        for (std::string_view params = semi == std::string_view::npos ? std::string_view() : item.substr(semi + 1);
             !params.empty();) {
            const auto next = params.find(';');
            const std::string_view p = trim(params.substr(0, next));
            params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
            if (p.size() < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=') continue;
            const std::string_view v = trim(p.substr(2));
            const auto r = std::from_chars(v.data(), v.data() + v.size(), q);
            valid = r.ec == std::errc() && r.ptr == v.data() + v.size() && q >= 0 && q <= 1;
        }
        if (!valid || range.empty()) continue;
        int rank = -1;
        if (iequal(range, type))
            rank = 2;
        else if (wildcards && slash != std::string_view::npos && range.size() == slash + 2 &&
                 iequal(range.substr(0, slash + 1), type.substr(0, slash + 1)) && range.back() == '*')
            rank = 1;
        else if (wildcards && (range == "*/*" || range == "*"))
            rank = 0;
        if (rank > best_rank || (rank == best_rank && q > best_q)) {
            best_rank = rank;
            best_q = q;
        }
    }
    return best_rank < 0 ? 0 : best_q;
}

format negotiate(std::string_view accept) noexcept {
    // OpenMetrics only when named (a wildcard keeps the 0.0.4 text format, as
    // a browser's */* should) with q > 0, and not below the text format's q.
    const double om = accept_q(accept, "application/openmetrics-text", false);
    const double text = accept_q(accept, "text/plain", true);
    return om > 0 && om >= text ? format::openmetrics_100 : format::text_004;
}

std::string_view content_type(format f) noexcept {
    return f == format::openmetrics_100 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                        : "text/plain; version=0.0.4; charset=utf-8";
}

std::string format_value(double v) {
    std::string out;
    append_value(out, v);
    return out;
}

std::string render(const std::vector<family>& families, format f) {
    const bool om = f == format::openmetrics_100;
    std::size_t size = 16;
    for (const auto& fam : families) size += 2 * fam.name.size() + fam.help.size() + fam.lines.size() + 40;
    std::string out;
    out.reserve(size);
    for (const auto& fam : families) {
        const bool counter = fam.totals();
        const char* type_line = counter                          ? " counter\n"
                                : fam.type == metric_type::gauge ? " gauge\n"
                                : om                             ? " unknown\n"
                                                                 : " counter\n";
        // 0.0.4 names a counter family by its samples' name; OpenMetrics by the
        // family name without the suffix.
        const std::string_view suffix = counter && !om ? "_total" : "";
        out += "# HELP ";
        out += fam.name;
        out += suffix;
        out += ' ';
        escape_help(out, fam.help);
        out += "\n# TYPE ";
        out += fam.name;
        out += suffix;
        out += type_line;
        out += fam.lines;
    }
    if (om) out += "# EOF\n";
    return out;
}

}  // namespace proctimes::cli::serve
