#include "serve/exposition.hpp"

#include <charconv>
#include <cmath>

namespace proctimes::cli::serve {
namespace {

void escape_label(std::string& out, std::string_view v) {
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
}

void escape_help(std::string& out, std::string_view v) {
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
}

}  // namespace

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
                    escape_label(out, v);
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
