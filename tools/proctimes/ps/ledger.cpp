// SPDX-License-Identifier: MIT
// The ledger of a `ps --interval` frame as written after its records: its own
// lines (table) or record (--ledger: JSON, CSV). What the ledger is made of
// (the exit stream, /proc/stat, the records of what ended) is in
// frames/ledger.cpp.
#include <algorithm>
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "output/writers.hpp"
#include "ps/internal.hpp"

namespace proctimes::cli::ps_detail {

namespace {

using std::chrono::nanoseconds;

double seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

void write_ledger(std::ostream& out, const result<cpu_ledger>& l, const ledger_sources& src, output_format format) {
    if (format == output_format::table) {
        if (!l) {
            out << fmt::format("\nledger: unavailable ({})\n", l.error().message());
            return;
        }
        const double capacity = seconds(l->stat_interval) * std::max(l->cpus, 1);
        auto part = [&](const char* name, nanoseconds v) {
            return fmt::format("{} {:.2f} s {:.1f} %", name, seconds(v),
                               capacity > 0 ? 100.0 * seconds(v) / capacity : 0.0);
        };
        // Terms wrapped at 80 columns, continuation lines indented.
        std::vector<std::string> parts = {part("live", l->live),
                                          part("+ ended", l->ended),
                                          part("+ children", l->reaped_children),
                                          part("+ irq", l->irq),
                                          part("+ softirq", l->softirq),
                                          part("+ steal", l->steal),
                                          part("+ unattributed", l->unattributed)};
        std::string line = fmt::format("\nledger: {} of {:.2f} CPU-s =", part("busy", l->busy), capacity);
        std::string text;
        for (const auto& p : parts) {
            const std::size_t last_nl = line.rfind('\n');
            const std::size_t col = line.size() - (last_nl == std::string::npos ? 0 : last_nl + 1);
            if (col + 1 + p.size() > 80) line += "\n       ";
            line += ' ';
            line += p;
        }
        out << line << '\n';
        std::string note = fmt::format("        guest {:.2f} s (inside user)", seconds(l->guest));
        if (src.source() == ps_ended_source::none) {
            note += fmt::format("; ended tasks not named: {}", src.why_none());
        } else if (src.lost()) {
            note += "; some exit records were lost";
        }
        out << note << '\n';
        return;
    }
    const double capacity_s = l ? seconds(l->stat_interval) * std::max(l->cpus, 1) : 0.0;
    const auto pct = [&](nanoseconds v) { return capacity_s > 0 ? 100.0 * seconds(v) / capacity_s : 0.0; };
    if (format == output_format::json) {
        const auto j =
            ledger_record(l ? &*l : nullptr, l ? std::string() : l.error().message(),
                          src.source() == ps_ended_source::exit_stream, src.why_none(), src.lost(), src.lost_count());
        out << '\n' << j.dump(2, ' ', true) << '\n';
        return;
    }
    // CSV: a block of its own after the frame's rows, its first column "record".
    std::string head = "record", row = "ledger";
    auto col = [&](const std::string& name, const std::string& value) {
        head += ',' + name;
        row += ',' + value;
    };
    col("interval_ns", l ? std::to_string(l->interval.count()) : "");
    col("stat_interval_ns", l ? std::to_string(l->stat_interval.count()) : "");
    col("cpus", l ? std::to_string(l->cpus) : "");
    col("capacity_ns", l ? std::to_string(static_cast<std::int64_t>(capacity_s * 1e9)) : "");
    // The terms' names whether or not there is a ledger: an empty one names them.
    const auto terms = ledger_terms(l ? *l : cpu_ledger{});
    for (const auto& term : terms) col(std::string(term.name) + "_ns", l ? std::to_string(term.value.count()) : "");
    for (const auto& term : terms)
        col(std::string(term.name) + "_percent", l ? fmt::format("{:.3f}", pct(term.value)) : "");
    col("ended_processes", l ? std::to_string(l->processes.size()) : "");
    col("ended_without_record", l ? std::to_string(l->ended_without_record) : "");
    col("children_unknown", l ? std::to_string(l->children_unknown) : "");
    col("ended_source", std::string(word_of(src.source())));
    col("ended_source_note", csv_field(src.why_none()));
    col("records_lost", src.lost() ? "true" : "false");
    col("records_lost_count", src.lost_count() ? std::to_string(*src.lost_count()) : "");
    col("error", l ? "" : csv_field(l.error().message()));
    out << '\n' << head << '\n' << row << '\n';
}

}  // namespace proctimes::cli::ps_detail
