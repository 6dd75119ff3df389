// SPDX-License-Identifier: MIT
// The writers and formatting helpers of the proctimes command, on synthetic
// records (no dependence on the running system).
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "output.hpp"

namespace {

using namespace std::chrono;
using namespace std::chrono_literals;
using proctimes::instant;
using namespace proctimes::cli;

instant at(year_month_day d, nanoseconds tod) { return instant{sys_days{d}.time_since_epoch() + tod}; }

TEST(HumanDuration, Ranges) {
    EXPECT_EQ(human_duration(0ns), "0 s");
    EXPECT_EQ(human_duration(1ns), "1 ns");
    EXPECT_EQ(human_duration(999ns), "999 ns");
    EXPECT_EQ(human_duration(1us), "1 µs");
    EXPECT_EQ(human_duration(12'500ns), "12.5 µs");
    EXPECT_EQ(human_duration(850us), "850 µs");
    EXPECT_EQ(human_duration(999'999ns), "999.999 µs");
    EXPECT_EQ(human_duration(10ms), "10 ms");
    EXPECT_EQ(human_duration(12'345'678ns), "12.345 ms");
    EXPECT_EQ(human_duration(1'234'567'890ns), "1.234 s");
    EXPECT_EQ(human_duration(59'999'999'999ns), "59.999 s");  // truncated, never rounded up to 60
    EXPECT_EQ(human_duration(2min + 3400ms), "2 min 3.4 s");
    EXPECT_EQ(human_duration(2min), "2 min 0 s");
    EXPECT_EQ(human_duration(59min + 59'990ms), "59 min 59.9 s");
    EXPECT_EQ(human_duration(3h + 2min + 59s), "3 h 02 min");
    EXPECT_EQ(human_duration(100h), "100 h 00 min");
    EXPECT_EQ(human_duration(-1500ns), "-1.5 µs");
}

TEST(Times, Rfc3339IsUtcWithSevenDigitsFloored) {
    const auto t = at(2026y / 11 / 22, 3h + 41min + 7s + 123'456'789ns);
    EXPECT_EQ(rfc3339_utc(t), "2026-11-22T03:41:07.1234567Z");
    EXPECT_EQ(rfc3339_utc(instant{}), "1970-01-01T00:00:00.0000000Z");
    EXPECT_EQ(rfc3339_utc(instant{-1ns}), "1969-12-31T23:59:59.9999999Z");
    EXPECT_EQ(rfc3339_utc(at(2000y / 2 / 29, 23h + 59min + 59s)), "2000-02-29T23:59:59.0000000Z");
}

TEST(Times, TableTimeUtcHasMillisecondsAndOffset) {
    const auto t = at(2026y / 11 / 22, 3h + 41min + 7s + 123'999'999ns);
    EXPECT_EQ(table_time(t, true), "2026-11-22 03:41:07.123 +00:00");
    EXPECT_EQ(table_time(instant{-1ms}, true), "1969-12-31 23:59:59.999 +00:00");
}

TEST(Times, FiletimeTicks) {
    EXPECT_EQ(filetime_ticks(instant{}), proctimes::filetime_unix_epoch);
    EXPECT_EQ(filetime_ticks(instant{199ns}), proctimes::filetime_unix_epoch + 1);
    EXPECT_EQ(filetime_ticks(instant{-1ns}), proctimes::filetime_unix_epoch - 1);
}

TEST(Names, TableEscaping) {
    EXPECT_EQ(escape_for_table("bash"), "bash");
    EXPECT_EQ(escape_for_table("a) (b c)"), "a) (b c)");
    EXPECT_EQ(escape_for_table("a\nb\tc"), "a\\x0ab\\x09c");
    EXPECT_EQ(escape_for_table("back\\slash"), "back\\\\slash");
    EXPECT_EQ(escape_for_table("\x7f\xff"), "\\x7f\\xff");
    EXPECT_EQ(escape_for_table("caf\xc3\xa9"), "caf\\xc3\\xa9");
}

TEST(Names, ValidUtf8KeptStrayBytesBecomeLatin1CodePoints) {
    EXPECT_EQ(to_valid_utf8("plain"), "plain");
    EXPECT_EQ(to_valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
    EXPECT_EQ(to_valid_utf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600
    EXPECT_EQ(to_valid_utf8("\xff"), "\xc3\xbf");
    EXPECT_EQ(to_valid_utf8("caf\xe9"), "caf\xc3\xa9");                                // Latin-1 é
    EXPECT_EQ(to_valid_utf8("ab\xe2\x82"), "ab\xc3\xa2\xc2\x82");                      // truncated "€"
    EXPECT_EQ(to_valid_utf8("\xc0\xaf"), "\xc3\x80\xc2\xaf");                          // overlong '/'
    EXPECT_EQ(to_valid_utf8("\xed\xa0\x80"), "\xc3\xad\xc2\xa0\xc2\x80");              // surrogate
    EXPECT_EQ(to_valid_utf8("\xf4\x90\x80\x80"), "\xc3\xb4\xc2\x90\xc2\x80\xc2\x80");  // > U+10FFFF
}

TEST(Names, CsvField) {
    EXPECT_EQ(csv_field("plain text"), "plain text");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
    EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
    EXPECT_EQ(csv_field(""), "");
}

task_record exited_record() {
    task_record r;
    r.pid = 42;
    r.name = "done";
    r.creation = at(2026y / 11 / 22, 3h);
    r.exit = at(2026y / 11 / 22, 3h + 2min + 3'456'789'012ns);
    r.kernel = 1500us;
    r.user = 2s;
    r.resolution = 1us;
    r.total_resolution = 1us;
    r.source = proctimes::cpu_source::wait_rusage;
    return r;
}

TEST(Writers, JsonExitedRecord) {
    std::ostringstream out;
    write_json(out, {exited_record()}, {output_format::json, false, false});
    const auto j = nlohmann::json::parse(out.str());
    ASSERT_EQ(j.size(), 1u);
    EXPECT_EQ(j[0].at("exit_time"), "2026-11-22T03:02:03.4567890Z");
    EXPECT_EQ(j[0].at("exit_filetime").get<std::uint64_t>(),
              *filetime_ticks(at(2026y / 11 / 22, 3h + 2min + 3'456'789'000ns)));
    EXPECT_EQ(j[0].at("kernel_ns"), 1'500'000);
    EXPECT_EQ(j[0].at("user_ns"), 2'000'000'000);
    EXPECT_FALSE(j[0].contains("threads"));
    EXPECT_FALSE(j[0].contains("tid"));
}

TEST(Writers, JsonEmptyAndThreadsKey) {
    std::ostringstream empty;
    write_json(empty, {}, {});
    EXPECT_EQ(empty.str(), "[]\n");
    std::ostringstream out;
    write_json(out, {exited_record()}, {output_format::json, true, false});
    EXPECT_EQ(nlohmann::json::parse(out.str())[0].at("threads"), nlohmann::json::array());
}

TEST(Writers, TableShowsExitAndDurations) {
    std::ostringstream out;
    write_table(out, {exited_record()}, {output_format::table, false, true});
    const std::string s = out.str();
    EXPECT_NE(s.find("2026-11-22 03:02:03.456 +00:00"), std::string::npos) << s;
    EXPECT_NE(s.find("1.5 ms"), std::string::npos) << s;
    EXPECT_NE(s.find("2 s"), std::string::npos) << s;
    EXPECT_NE(s.find("1 µs"), std::string::npos) << s;
}

TEST(Writers, CsvExitedRecord) {
    std::ostringstream out;
    write_csv(out, {exited_record()}, {});
    const std::string s = out.str();
    const std::string row = s.substr(s.find('\n') + 1);
    EXPECT_EQ(row, "42,,done,134397900000000000," + std::to_string(*filetime_ticks(*exited_record().exit)) +
                       ",2026-11-22T03:00:00.0000000Z,2026-11-22T03:02:03.4567890Z,1500000,2000000000,1000,1000,"
                       "wait_rusage\n");
}

}  // namespace
