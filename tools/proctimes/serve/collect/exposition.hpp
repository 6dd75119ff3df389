// SPDX-License-Identifier: MIT
// The two text formats a Prometheus scraper reads: the Prometheus text format
// 0.0.4 and OpenMetrics 1.0 (chosen by the request's Accept header). Pure: a
// list of metric families in, one string out.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace proctimes::cli::serve {

enum class metric_type { counter, gauge };

/// One label of a sample: the name as written, the value as the process or
/// group gave it (rendered through label_value() and the format's escapes).
/// Both only need to live until the family::add call that takes them.
struct label {
    std::string_view name;
    std::string_view value;
};

/// One metric family. `name` is the family name: for a counter, without the
/// `_total` suffix, which the writers add to every sample (both formats).
struct family {
    /// Both name a text that outlives the family (a string literal).
    std::string_view name;
    std::string_view help;
    metric_type type = metric_type::gauge;
    /// A counter whose samples are named `name` alone, as client_golang writes
    /// a counter registered without `_total` (process-exporter's
    /// namedprocess_scrape_errors): TYPE counter in the 0.0.4 text format;
    /// OpenMetrics requires `_total` on a counter's samples, so there the
    /// family is TYPE unknown, which keeps the same series name. Set before
    /// the first add().
    bool bare_counter = false;
    /// The sample lines, written as add() is called: both formats write a
    /// sample the same way (only the HELP and TYPE lines differ), so a
    /// collection's samples are written once, straight into one buffer per
    /// family, with no list of label strings per sample.
    std::string lines;

    /// Whether the samples are named `name` + `_total`: a counter that is not bare.
    [[nodiscard]] bool totals() const noexcept { return type == metric_type::counter && !bare_counter; }
    /// Adds a sample: `name` (with `_total` when totals()),
    /// the labels in the order given, the value as format_value() writes it.
    void add(std::initializer_list<label> labels, double value);
};

/// A family with no samples yet.
inline family family_of(std::string_view name, std::string_view help, metric_type t) {
    family f;
    f.name = name;
    f.help = help;
    f.type = t;
    return f;
}

enum class format { text_004, openmetrics_100 };

/// The q-value an Accept-style header gives `type` (a media type, or a token
/// such as "gzip" for Accept-Encoding): that of the most specific matching
/// entry, names compared case-insensitively; with `wildcards`, "type/*", "*/*"
/// and "*" match too. 0 when nothing matches; entries with a bad q are ignored.
double accept_q(std::string_view header, std::string_view type, bool wildcards) noexcept;

/// OpenMetrics when `accept` names application/openmetrics-text (any case,
/// any parameters) with a q above 0 and not below text/plain's; else the
/// 0.0.4 text format.
format negotiate(std::string_view accept) noexcept;
std::string_view content_type(format f) noexcept;

/// The label value a name becomes: label values must be UTF-8 (a scraper
/// refuses the whole scrape otherwise), and process names are any bytes. Each
/// byte that is not part of valid UTF-8 becomes the four characters \xHH
/// (upper-case hex, 80 to FF); a backslash of the name is doubled when it could
/// otherwise be read as the start of such an escape (followed by a backslash,
/// by an invalid byte, or by x and two hex digits from 80 to FF). The mapping
/// is one-to-one: distinct names stay distinct series. Valid UTF-8 (U+FFFD
/// included) and any other backslash are kept as they are.
std::string label_value(std::string_view name);

/// Renders the families. Label values go through label_value(), then are
/// escaped for the format (\\, \", \n); help text escapes \\ and \n. No
/// `_created` samples: Prometheus 2.42 would store each as another series.
/// OpenMetrics output ends with "# EOF".
std::string render(const std::vector<family>& families, format f);

/// The shortest decimal that reads back as `v` ("+Inf", "-Inf", "NaN" for
/// the special values, as both formats spell them).
std::string format_value(double v);

}  // namespace proctimes::cli::serve
