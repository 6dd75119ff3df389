// Writers of the proctimes command: table, JSON, CSV. See docs/CLI.md for the
// contract they implement.
#include "output.hpp"
#include "cli.hpp"
#include "json_record.hpp"

#include <algorithm>
#include <ctime>
#include <limits>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace proctimes::cli {

using std::chrono::nanoseconds;

// ---- helpers -------------------------------------------------------------------

namespace {

// "whole" or "whole.fff" with the fraction (frac_digits wide) truncated and
// its trailing zeros dropped.
std::string trimmed_decimal(std::int64_t whole, std::int64_t frac, int frac_digits) {
    std::string s = fmt::format("{}.{:0{}}", whole, frac, frac_digits);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

// value / unit with 3 decimals, truncated.
std::string in_unit(std::int64_t ns, std::int64_t unit) {
    return trimmed_decimal(ns / unit, (ns % unit) * 1000 / unit, 3);
}

}  // namespace

std::string human_duration(nanoseconds d) {
    std::int64_t ns = d.count();
    if (ns == 0) return "0 s";
    if (ns < 0) {
        if (ns == std::numeric_limits<std::int64_t>::min()) ++ns;  // one ns off, not UB
        std::string out = human_duration(nanoseconds{-ns});
        out.insert(out.begin(), '-');
        return out;
    }
    constexpr std::int64_t us = 1'000, ms = 1'000'000, s = 1'000'000'000, min = 60 * s, h = 60 * min;
    if (ns < us) return fmt::format("{} ns", ns);
    if (ns < ms) return in_unit(ns, us) + " µs";
    if (ns < s) return in_unit(ns, ms) + " ms";
    if (ns < min) return in_unit(ns, s) + " s";
    if (ns < h) {
        const std::int64_t rest = ns % min;
        return fmt::format("{} min {} s", ns / min, trimmed_decimal(rest / s, (rest % s) / (s / 10), 1));
    }
    return fmt::format("{} h {:02} min", ns / h, (ns % h) / min);
}

std::string table_time(instant t, bool utc) {
    using namespace std::chrono;
    const auto secs = floor<seconds>(t);
    const auto millis = duration_cast<milliseconds>(t - secs).count();
    const std::time_t tt = static_cast<std::time_t>(secs.time_since_epoch().count());
    std::tm tm{};
    const bool ok = utc ? ::gmtime_r(&tt, &tm) != nullptr : ::localtime_r(&tt, &tm) != nullptr;
    if (!ok) return "?";
    const long off_min = utc ? 0 : tm.tm_gmtoff / 60;
    const long abs_off = off_min < 0 ? -off_min : off_min;
    return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {}{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1,
                       tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis, off_min < 0 ? '-' : '+', abs_off / 60,
                       abs_off % 60);
}

std::string table_exit(const task_record& r, bool utc) {
    if (!r.exit) return "-";
    return (r.exit_source == "observed" ? "<= " : "") + table_time(*r.exit, utc);
}

std::string rfc3339_utc(instant t) {
    using namespace std::chrono;
    // Pure calendar arithmetic (no libc, no time zone): whole 100 ns ticks, floored.
    const auto ticks = floor<filetime_duration>(t);
    const auto day = floor<days>(ticks);
    const year_month_day ymd{day};
    const hh_mm_ss<filetime_duration> tod{ticks - day};
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z", static_cast<int>(ymd.year()),
                       static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), tod.hours().count(),
                       tod.minutes().count(), tod.seconds().count(), tod.subseconds().count());
}

std::optional<std::uint64_t> filetime_ticks(instant t) {
    auto ft = filetime_from_time(t);
    if (!ft) return std::nullopt;
    return ft->ticks;
}

std::string escape_for_table(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '\\') {
            out += "\\\\";
        } else if (c >= 0x20 && c <= 0x7E) {
            out += ch;
        } else {
            out += fmt::format("\\x{:02x}", c);
        }
    }
    return out;
}

namespace {

// Length of the valid UTF-8 sequence at the start of s (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t utf8_sequence_length(std::string_view s) {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const auto cont = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
        if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogates
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
        if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
        return 4;
    }
    return 0;
}

}  // namespace

std::string to_valid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    while (!bytes.empty()) {
        const std::size_t n = utf8_sequence_length(bytes);
        if (n > 0) {
            out.append(bytes.substr(0, n));
            bytes.remove_prefix(n);
        } else {
            // A stray byte 0x80..0xFF: encode U+0080..U+00FF in two bytes.
            const auto c = static_cast<unsigned char>(bytes.front());
            out += static_cast<char>(0xC0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3F));
            bytes.remove_prefix(1);
        }
    }
    return out;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

// ---- table ---------------------------------------------------------------------

namespace {

// Columns a terminal uses for s: one per UTF-8 lead byte ("µ" is two bytes,
// one column). Cells hold only ASCII and "µ", so this is exact here.
std::size_t display_width(std::string_view s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

struct column {
    std::string title;
    bool right = false;
};

// The `ps` layout: PID [TID] [PPID] OWNER S [CREATED | CPU%] KERNEL USER RES NAME,
// the name last (its width varies most), KERNEL and USER of the interval with
// --interval.
std::vector<std::string> ps_table_row(const task_record& r, const output_options& opts) {
    std::vector<std::string> row;
    const bool is_thread = r.tid.has_value();
    const ps_values v = r.ps.value_or(ps_values{});
    row.push_back(is_thread ? std::string() : std::to_string(r.pid));
    if (opts.threads) row.push_back(is_thread ? std::to_string(*r.tid) : std::string());
    if (!opts.interval) row.push_back(is_thread ? std::string() : std::to_string(v.ppid));
    row.push_back(escape_for_table(v.user_name));
    row.push_back(escape_for_table(std::string_view(&v.proc_state, 1)));
    if (opts.interval) {
        row.push_back(r.used ? fmt::format("{:.1f}", r.used->cpu_percent) : "-");
        row.push_back(r.used ? human_duration(r.used->kernel) : "-");
        row.push_back(r.used ? human_duration(r.used->user) : "-");
    } else {
        row.push_back(table_time(r.creation, opts.utc));
        row.push_back(human_duration(r.kernel));
        row.push_back(human_duration(r.user));
    }
    row.push_back(human_duration(r.resolution));
    row.push_back((is_thread ? "  " : "") + escape_for_table(r.name));
    return row;
}

std::vector<std::string> table_row(const task_record& r, const output_options& opts) {
    if (opts.ps) return ps_table_row(r, opts);
    std::vector<std::string> row;
    const bool is_thread = r.tid.has_value();
    row.push_back(is_thread ? std::string() : std::to_string(r.pid));
    if (opts.threads) row.push_back(is_thread ? std::to_string(*r.tid) : std::string());
    row.push_back((is_thread ? "  " : "") + escape_for_table(r.name));
    row.push_back(table_time(r.creation, opts.utc));
    row.push_back(opts.exit_detail ? table_exit(r, opts.utc) : r.exit ? table_time(*r.exit, opts.utc) : "-");
    row.push_back(human_duration(r.kernel));
    row.push_back(human_duration(r.user));
    row.push_back(human_duration(r.resolution));
    if (opts.state) row.push_back(r.state);
    return row;
}

}  // namespace

void write_table(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    std::vector<column> cols;
    cols.push_back({"PID", true});
    if (opts.threads) cols.push_back({"TID", true});
    if (opts.ps) {
        if (!opts.interval) cols.push_back({"PPID", true});
        cols.push_back({"OWNER", false});
        cols.push_back({"S", false});
        if (opts.interval) {
            cols.push_back({"CPU%", true});
        } else {
            cols.push_back({"CREATED", false});
        }
        cols.push_back({"KERNEL", true});
        cols.push_back({"USER", true});
        cols.push_back({"RES", true});
        cols.push_back({"NAME", false});
    } else {
        cols.push_back({"NAME", false});
        cols.push_back({"CREATED", false});
        cols.push_back({"EXITED", false});
        cols.push_back({"KERNEL", true});
        cols.push_back({"USER", true});
        cols.push_back({"RES", true});
        if (opts.state) cols.push_back({"STATE", false});
    }

    std::vector<std::vector<std::string>> rows;
    {
        std::vector<std::string> header;
        for (const auto& c : cols) header.push_back(c.title);
        rows.push_back(std::move(header));
    }
    for (const auto& p : records) {
        rows.push_back(table_row(p, opts));
        for (const auto& t : p.threads) rows.push_back(table_row(t, opts));
    }

    std::vector<std::size_t> width(cols.size(), 0);
    for (const auto& row : rows)
        for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));

    for (const auto& row : rows) {
        std::string line;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::size_t pad = width[i] - display_width(row[i]);
            if (i > 0) line += "  ";
            if (cols[i].right) line.append(pad, ' ');
            line += row[i];
            if (!cols[i].right) line.append(pad, ' ');
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out << line << '\n';
    }
}

// ---- JSON ----------------------------------------------------------------------

namespace {

}  // namespace

ojson instant_ticks(const std::optional<instant>& t) {
    if (!t) return nullptr;
    auto ticks = filetime_ticks(*t);
    return ticks ? ojson(*ticks) : ojson(nullptr);
}

ojson json_record(const task_record& r, const output_options& opts) {
    ojson j = ojson::object();
    j["pid"] = r.pid;
    if (r.tid) j["tid"] = *r.tid;
    j["name"] = to_valid_utf8(r.name);
    j["creation_filetime"] = instant_ticks(r.creation);
    j["exit_filetime"] = instant_ticks(r.exit);
    j["creation_time"] = rfc3339_utc(r.creation);
    j["exit_time"] = r.exit ? ojson(rfc3339_utc(*r.exit)) : ojson(nullptr);
    if (opts.exit_detail) {
        j["exit_source"] = r.exit ? ojson(r.exit_source) : ojson(nullptr);
        j["exit_earliest_filetime"] = instant_ticks(r.exit ? r.exit_earliest : std::nullopt);
        j["exit_earliest_time"] = r.exit && r.exit_earliest ? ojson(rfc3339_utc(*r.exit_earliest)) : ojson(nullptr);
        j["exit_resolution_ns"] = r.exit ? ojson(r.exit_resolution.count()) : ojson(nullptr);
    }
    j["kernel_ns"] = r.kernel.count();
    j["user_ns"] = r.user.count();
    j["resolution_ns"] = r.resolution.count();
    j["total_resolution_ns"] = r.total_resolution.count();
    j["source"] = r.source;
    if (opts.state) {
        j["state"] = r.state;
        j["sampled_at_time"] = r.sampled_at ? ojson(rfc3339_utc(*r.sampled_at)) : ojson(nullptr);
    }
    if (opts.ps) {
        const ps_values v = r.ps.value_or(ps_values{});
        j["ppid"] = v.ppid;
        j["uid"] = v.uid ? ojson(*v.uid) : ojson(nullptr);
        j["user_name"] = to_valid_utf8(v.user_name);
        j["proc_state"] = std::string(1, v.proc_state);
        if (opts.interval) {
            const interval_values u = r.used.value_or(interval_values{});
            j["interval_ns"] = u.interval.count();
            j["interval_kernel_ns"] = u.kernel.count();
            j["interval_user_ns"] = u.user.count();
            j["cpu_percent"] = u.cpu_percent;
            j["basis"] = u.basis;
        }
    }
    if (opts.threads && !r.tid) {
        ojson threads = ojson::array();
        for (const auto& t : r.threads) threads.push_back(json_record(t, opts));
        j["threads"] = std::move(threads);
    }
    return j;
}

void write_json(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    ojson arr = ojson::array();
    for (const auto& r : records) arr.push_back(json_record(r, opts));
    // ensure_ascii: the output is pure ASCII whatever the names hold. Names are
    // already valid UTF-8 (to_valid_utf8); "replace" is only a safety net.
    out << arr.dump(2, ' ', true, ojson::error_handler_t::replace) << '\n';
}

// ---- CSV -----------------------------------------------------------------------

namespace {

std::string optional_number(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string(); }

}  // namespace

std::vector<std::string> csv_record_fields(const task_record& r, const output_options& opts) {
    std::vector<std::string> fields{
        std::to_string(r.pid),
        r.tid ? std::to_string(*r.tid) : std::string(),
        csv_field(to_valid_utf8(r.name)),
        optional_number(filetime_ticks(r.creation)),
        r.exit ? optional_number(filetime_ticks(*r.exit)) : std::string(),
        rfc3339_utc(r.creation),
        r.exit ? rfc3339_utc(*r.exit) : std::string(),
        std::to_string(r.kernel.count()),
        std::to_string(r.user.count()),
        std::to_string(r.resolution.count()),
        std::to_string(r.total_resolution.count()),
        csv_field(r.source),
    };
    if (opts.exit_detail) {
        const bool has = r.exit.has_value();
        fields.push_back(has ? csv_field(r.exit_source) : std::string());
        fields.push_back(has && r.exit_earliest ? optional_number(filetime_ticks(*r.exit_earliest)) : std::string());
        fields.push_back(has && r.exit_earliest ? rfc3339_utc(*r.exit_earliest) : std::string());
        fields.push_back(has ? std::to_string(r.exit_resolution.count()) : std::string());
    }
    if (opts.state) {
        fields.push_back(csv_field(r.state));
        fields.push_back(r.sampled_at ? rfc3339_utc(*r.sampled_at) : std::string());
    }
    if (opts.ps) {
        const ps_values v = r.ps.value_or(ps_values{});
        fields.push_back(std::to_string(v.ppid));
        fields.push_back(v.uid ? std::to_string(*v.uid) : std::string());
        fields.push_back(csv_field(to_valid_utf8(v.user_name)));
        fields.push_back(csv_field(to_valid_utf8(std::string_view(&v.proc_state, 1))));
        if (opts.interval) {
            const interval_values u = r.used.value_or(interval_values{});
            fields.push_back(std::to_string(u.interval.count()));
            fields.push_back(std::to_string(u.kernel.count()));
            fields.push_back(std::to_string(u.user.count()));
            fields.push_back(fmt::format("{:.3f}", u.cpu_percent));
            fields.push_back(csv_field(u.basis));
        }
    }
    return fields;
}

std::vector<std::string> csv_header_fields(const output_options& opts) {
    std::vector<std::string> h{"pid",     "tid",       "name",          "creation_filetime",   "exit_filetime",
                               "creation_time", "exit_time", "kernel_ns", "user_ns", "resolution_ns",
                               "total_resolution_ns", "source"};
    if (opts.exit_detail)
        for (const char* f : {"exit_source", "exit_earliest_filetime", "exit_earliest_time", "exit_resolution_ns"})
            h.push_back(f);
    if (opts.state) {
        h.push_back("state");
        h.push_back("sampled_at_time");
    }
    if (opts.ps) {
        for (const char* f : {"ppid", "uid", "user_name", "proc_state"}) h.push_back(f);
        if (opts.interval)
            for (const char* f : {"interval_ns", "interval_kernel_ns", "interval_user_ns", "cpu_percent", "basis"})
                h.push_back(f);
    }
    return h;
}

void write_csv_line(std::ostream& out, const std::vector<std::string>& fields) {
    bool first = true;
    for (const auto& f : fields) {
        if (!first) out << ',';
        out << f;
        first = false;
    }
    out << '\n';
}

void write_csv(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    write_csv_line(out, csv_header_fields(opts));
    for (const auto& p : records) {
        write_csv_line(out, csv_record_fields(p, opts));
        for (const auto& t : p.threads) write_csv_line(out, csv_record_fields(t, opts));
    }
}

task_record make_record(pid_t pid, std::optional<pid_t> tid, std::string name, const proctimes::task_times& t) {
    task_record r;
    r.pid = pid;
    r.tid = tid;
    r.name = std::move(name);
    r.creation = t.creation;
    r.exit = t.exit;
    if (t.exit) {
        r.exit_source = std::string(to_string(t.precision.exit_source));
        r.exit_earliest = t.exit_earliest;
        r.exit_resolution = t.precision.exit_resolution;
    }
    r.kernel = t.kernel;
    r.user = t.user;
    r.resolution = t.precision.resolution;
    r.total_resolution = t.precision.total_resolution;
    r.source = std::string(to_string(t.precision.source));
    r.state = std::string(to_string(t.state));
    r.sampled_at = t.sampled_at;
    return r;
}

void write_records(std::ostream& out, const std::vector<task_record>& records, const output_options& opts) {
    switch (opts.format) {
        case output_format::table: write_table(out, records, opts); return;
        case output_format::json: write_json(out, records, opts); return;
        case output_format::csv: write_csv(out, records, opts); return;
    }
}

int finish_output(std::ostream& out, std::ostream& err, bool failed) {
    out.flush();
    if (!out) {
        err << "proctimes: error writing the output\n";
        return exit_failure;
    }
    return failed ? exit_failure : exit_success;
}

}  // namespace proctimes::cli
