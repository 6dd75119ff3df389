// SPDX-License-Identifier: MIT
// The field registry and the streaming writers (tools/proctimes/output/), on
// synthetic records: the JSON writer's bytes against nlohmann::json's dump of
// the same members, the registry against docs/CLI.md, the pid arguments.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "fields.hpp"
#include "numbers.hpp"
#include "output.hpp"
#include "writers.hpp"

namespace {

using namespace std::chrono_literals;
using namespace proctimes::cli;
using ojson = nlohmann::ordered_json;

std::string random_bytes(std::mt19937_64& rng, std::size_t max_len) {
    std::string s(rng() % (max_len + 1), '\0');
    for (auto& c : s) {
        // Mostly the bytes that need care: controls, quotes, backslash, DEL, high bytes.
        const auto k = rng() % 4;
        c = static_cast<char>(k == 0   ? rng() % 0x20
                              : k == 1 ? 0x7F + rng() % 0x81
                              : k == 2 ? "\"\\,\n"[rng() % 4]
                                       : 0x20 + rng() % 0x5F);
    }
    return s;
}

std::string fmt_hex(unsigned char c) {
    const char* d = "0123456789abcdef";
    return {' ', d[c >> 4], d[c & 0xF]};
}

TEST(JsonWriter, StringEscapingIsNlohmannsEnsureAsciiOfTheValidUtf8) {
    std::mt19937_64 rng(7);
    std::vector<std::string> inputs = {"",
                                       "plain",
                                       "\x7f",
                                       "a\"b\\c",
                                       "\b\f\n\r\t\x01",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80",
                                       "\xed\xa0\x80",
                                       "\xc3",
                                       "\xf4\x90\x80\x80",
                                       "\xe0\x80\xaf"};
    for (int i = 0; i < 2000; ++i) inputs.push_back(random_bytes(rng, 24));
    // Every valid code point class, as UTF-8.
    for (std::uint32_t cp : {0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
        std::string u;
        if (cp < 0x800) {
            u = {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
        } else if (cp < 0x10000) {
            u = {static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                 static_cast<char>(0x80 | (cp & 0x3F))};
        } else {
            u = {static_cast<char>(0xF0 | (cp >> 18)), static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
                 static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), static_cast<char>(0x80 | (cp & 0x3F))};
        }
        inputs.push_back(cp == 0x7F ? std::string("\x7f") : u);
    }
    for (const auto& in : inputs) {
        std::string ours;
        append_json_string(ours, in);
        const std::string theirs = ojson(to_valid_utf8(in)).dump(-1, ' ', true);
        std::string hex;
        for (const char c : in) hex += fmt_hex(static_cast<unsigned char>(c));
        ASSERT_EQ(ours, theirs) << "input bytes:" << hex;
    }
}

task_record synthetic(std::mt19937_64& rng, int i) {
    task_record r;
    r.pid = 1000 + i;
    r.name = random_bytes(rng, 15);
    r.creation =
        proctimes::instant{std::chrono::nanoseconds{static_cast<long long>(rng() % 2'000'000'000'000'000'000ull)}};
    if (i % 2) {
        r.exit = r.creation + std::chrono::nanoseconds{rng() % 10'000'000'000ull};
        r.exit_source = i % 3 ? proctimes::exit_source::observed : proctimes::exit_source::exit_record;
        if (i % 5) r.exit_earliest = *r.exit - 3ms;
        r.exit_resolution = 3ms;
    }
    r.kernel = std::chrono::nanoseconds{static_cast<long long>(rng() % 1'000'000'000'000ull)};
    r.user = std::chrono::nanoseconds{static_cast<long long>(rng() % 1'000'000'000'000ull)};
    r.resolution = 10ms;
    r.total_resolution = 1ns;
    r.source = proctimes::cpu_source::cpu_clock_and_stat;
    r.state = r.exit ? proctimes::task_state::exited : proctimes::task_state::running;
    if (i % 4) r.sampled_at = r.creation + 1s;
    if (i % 3)
        r.ps = ps_values{1, i % 2 ? std::optional<std::uint32_t>(1000) : std::nullopt, random_bytes(rng, 6), 'S'};
    const double percents[] = {0.0, 12.5, 1e20, std::nan(""), 100.0 / 3.0, -0.0};
    if (i % 2 == 0) r.used = interval_values{1s, 2ms, 3ms, percents[i % 6], interval_basis::both};
    return r;
}

std::vector<task_record> synthetic_records() {
    std::mt19937_64 rng(11);
    std::vector<task_record> out;
    for (int i = 0; i < 40; ++i) {
        task_record r = synthetic(rng, i);
        for (int t = 0; t < i % 4; ++t) {
            task_record th = synthetic(rng, i + t);
            th.pid = r.pid;
            th.tid = r.pid + t;
            r.threads.push_back(std::move(th));
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<output_options> every_option_set() {
    std::vector<output_options> out;
    for (int mask = 0; mask < 32; ++mask) {
        output_options o;
        o.threads = mask & 1;
        o.state = mask & 2;
        o.exit_detail = mask & 4;
        o.ps = mask & 8;
        o.interval = (mask & 16) != 0;
        if (o.interval && !o.ps) continue;
        out.push_back(o);
    }
    return out;
}

// Streaming must not change a byte: nlohmann, given the members our output
// holds, lays them out exactly as we did (dump(2) for the array, dump(-1) for
// each JSON Lines record). A changed order, indent, number or escape fails.
TEST(JsonWriter, DocumentIsByteForByteNlohmannsDump) {
    const auto records = synthetic_records();
    for (const auto& o : every_option_set()) {
        std::ostringstream out;
        write_all(out, output_format::json, record_fields(o), o, records);
        const std::string s = out.str();
        ASSERT_EQ(ojson::parse(s).dump(2, ' ', true) + "\n", s);
        const auto j = ojson::parse(s);
        ASSERT_EQ(j.size(), records.size());
        EXPECT_EQ(j[1].at("pid"), records[1].pid);
        EXPECT_EQ(j[1].contains("threads"), o.threads);
        // ps --interval rows carry exit_source even without the exit detail.
        EXPECT_EQ(j[1].contains("exit_source"), o.exit_detail || (o.ps && o.interval));
    }
    std::ostringstream empty;
    write_all(empty, output_format::json, record_fields({}), {}, {});
    EXPECT_EQ(empty.str(), "[]\n");
}

TEST(JsonWriter, StreamIsOneCompactObjectPerLine) {
    const auto records = synthetic_records();
    output_options o;
    o.state = o.exit_detail = true;
    std::ostringstream out;
    write_all(out, output_format::json, watch_fields(o), o, records, layout::stream);
    std::istringstream lines(out.str());
    std::string line;
    std::size_t n = 0;
    while (std::getline(lines, line)) {
        ASSERT_EQ(ojson::parse(line).dump(-1, ' ', true), line);
        EXPECT_EQ(ojson::parse(line).at("pid"), records[n].pid);
        ++n;
    }
    EXPECT_EQ(n, records.size());
}

TEST(JsonWriter, RunReportIsOneObjectWithItsFieldsBeforeTheThreads) {
    auto records = synthetic_records();
    task_record r = records[3];  // has threads
    ASSERT_FALSE(r.threads.empty());
    run_values v;
    v.command = {"sh", "-c", "echo \xff"};
    v.cpu_percent = 12.25;
    v.signal = 9;
    v.warnings = {"its exit status is unknown"};
    r.run = v;
    output_options o;
    o.threads = o.state = o.exit_detail = true;
    std::ostringstream out;
    write_all(out, output_format::json, run_fields(o), o, {r}, layout::single);
    const auto j = ojson::parse(out.str());
    EXPECT_EQ(j.dump(2, ' ', true) + "\n", out.str());
    EXPECT_EQ(j.at("command")[2], "echo \u00ff");
    EXPECT_TRUE(j.at("exit_code").is_null());
    EXPECT_EQ(j.at("signal"), 9);
    EXPECT_EQ(j.back(), j.at("threads"));
    EXPECT_FALSE(j.at("threads")[0].contains("command")) << "run's fields are the command's only";

    std::ostringstream csv;
    write_all(csv, output_format::csv, run_fields(o), o, {r}, layout::single);
    std::istringstream lines(csv.str());
    std::string header, row, thread_row;
    std::getline(lines, header);
    std::getline(lines, row);
    std::getline(lines, thread_row);
    EXPECT_EQ(header.find("command"), std::string::npos) << "JSON only";
    EXPECT_NE(header.find(",cpu_percent,"), std::string::npos);
    EXPECT_NE(row.find(",12.25,"), std::string::npos) << row;
    EXPECT_EQ(thread_row.substr(thread_row.size() - 8), ",,,,,,,,") << "run's columns empty on thread rows";
}

TEST(FieldRegistry, EachListNamesAFieldOnceAndCsvHasTheJsonFieldsButJsonOnlyOnes) {
    for (const auto& o : every_option_set()) {
        // run's report never has the ps fields (both have a cpu_percent).
        std::vector<field_list> lists{record_fields(o), watch_fields(o)};
        if (!o.ps) lists.push_back(run_fields(o));
        for (const auto& l : lists) {
            std::set<std::string_view> json, csv;
            for (const field* f : l.json) {
                EXPECT_FALSE(f->name.empty());
                EXPECT_TRUE(json.insert(f->name).second) << f->name;
                if (f->csv) csv.insert(f->name);
            }
            std::set<std::string_view> csv_listed;
            for (const field* f : l.csv) EXPECT_TRUE(csv_listed.insert(f->name).second) << f->name;
            EXPECT_EQ(csv_listed, csv);
            for (const field* f : l.columns) EXPECT_TRUE(f->cell != nullptr && !f->title.empty()) << f->name;
        }
    }
}

// docs/CLI.md, "Field reference": one row per registered field, keyed by
// (field, table column); none missing, none extra.
TEST(FieldRegistry, EveryFieldIsDocumentedInCliMd) {
    std::ifstream in(std::string(PROCTIMES_DOCS) + "/CLI.md");
    ASSERT_TRUE(in) << "cannot read docs/CLI.md";
    std::string line;
    bool inside = false;
    std::set<std::pair<std::string, std::string>> documented;
    std::set<std::string> json_only_rows;
    const auto cell = [](std::string s) {
        std::erase(s, '`');
        while (!s.empty() && s.front() == ' ') s.erase(s.begin());
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s == "—" ? std::string() : s;
    };
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) inside = line == "## Field reference";
        if (!inside || line.rfind("| ", 0) != 0 || line.rfind("| field ", 0) == 0) continue;
        std::vector<std::string> cells;
        std::istringstream row(line.substr(1));
        std::string c;
        while (std::getline(row, c, '|')) cells.push_back(c);
        ASSERT_GE(cells.size(), 5u) << line;
        const auto key = std::pair{cell(cells[0]), cell(cells[1])};
        EXPECT_TRUE(documented.insert(key).second) << "documented twice: " << line;
        if (line.find("JSON only") != std::string::npos) json_only_rows.insert(key.first);
    }
    ASSERT_FALSE(documented.empty()) << "no \"## Field reference\" table in docs/CLI.md";
    std::set<std::pair<std::string, std::string>> registered;
    for (const field* f : all_fields()) {
        registered.emplace(std::string(f->name), std::string(f->title));
        if (!f->csv) {
            EXPECT_TRUE(json_only_rows.count(std::string(f->name))) << f->name << ": say \"JSON only\"";
        }
    }
    EXPECT_EQ(documented, registered);
}

TEST(PidArgument, NumbersFittingPidTAndClearMessagesOtherwise) {
    std::ostringstream err;
    EXPECT_EQ(pid_argument("123", &err), 123);
    EXPECT_EQ(pid_argument("-5", &err), -5) << "left to process::open";
    EXPECT_EQ(err.str(), "");
    EXPECT_FALSE(pid_argument("12x", &err));
    EXPECT_EQ(err.str(), "proctimes: '12x': not a process id\n");
    err.str("");
    EXPECT_FALSE(pid_argument("99999999999", &err));
    EXPECT_EQ(err.str().rfind("proctimes: pid 99999999999: ", 0), 0u) << err.str();
    err.str("");
    EXPECT_FALSE(pid_argument("", &err));
    EXPECT_FALSE(pid_argument("\x1b[2J", nullptr));
    EXPECT_EQ(err.str(), "proctimes: '': not a process id\n");
}

}  // namespace
