// SPDX-License-Identifier: MIT
// `proctimes show`, run in-process through proctimes::cli::run, checked
// against the contract of docs/CLI.md: field names and types, units, the
// values the library itself computes, error reporting and exit statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "output.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/filetime.hpp"
#include "proctimes/process.hpp"
#include "proctimes/version.hpp"
#include "run_cli.hpp"

namespace {

using nlohmann::json;

using cli_testing::cli_result;
using cli_testing::run_cli;

std::string self_pid() { return std::to_string(::getpid()); }

// A thread of this process with a chosen name, alive until destroyed.
class named_thread {
public:
    explicit named_thread(const std::string& name) {
        std::promise<pid_t> started;
        auto tid = started.get_future();
        thread_ = std::thread([this, name, &started] {
            const int rc = ::pthread_setname_np(::pthread_self(), name.c_str());
            started.set_value(rc == 0 ? static_cast<pid_t>(::gettid()) : -rc);
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [this] { return stop_; });
        });
        tid_ = tid.get();
    }
    named_thread(const named_thread&) = delete;
    named_thread& operator=(const named_thread&) = delete;
    ~named_thread() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    /// The thread id, or minus the error of pthread_setname_np.
    pid_t tid() const { return tid_; }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stop_ = false;
    pid_t tid_ = 0;
    std::thread thread_;
};

// A pid that named a process a moment ago: a child, forked, exited and reaped.
pid_t reaped_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

std::string read_comm(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// The documented fields (docs/CLI.md).
const std::set<std::string> process_fields = {"pid",
                                              "name",
                                              "creation_filetime",
                                              "exit_filetime",
                                              "creation_time",
                                              "exit_time",
                                              "kernel_ns",
                                              "user_ns",
                                              "resolution_ns",
                                              "total_resolution_ns",
                                              "source",
                                              "exit_source",
                                              "exit_earliest_filetime",
                                              "exit_earliest_time",
                                              "exit_resolution_ns"};

std::set<std::string> keys_of(const json& j) {
    std::set<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
    return keys;
}

// Whether s has the shape of pattern, where 'D' stands for any digit.
// (No std::regex: GCC 12 warns inside <regex> in sanitizer builds.)
bool has_shape(std::string_view s, std::string_view pattern) {
    if (s.size() != pattern.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (pattern[i] == 'D' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != pattern[i]) return false;
    }
    return true;
}

// RFC 3339 "YYYY-MM-DDTHH:MM:SS.fffffffZ" → FILETIME ticks, computed here
// independently of the writers.
std::uint64_t ticks_from_rfc3339(const std::string& s) {
    if (!has_shape(s, "DDDD-DD-DDTDD:DD:DD.DDDDDDDZ")) {
        ADD_FAILURE() << "not RFC 3339 UTC with 7 fractional digits: " << s;
        return 0;
    }
    const auto num = [&](std::size_t pos, std::size_t len) { return std::stoi(s.substr(pos, len)); };
    using namespace std::chrono;
    const year_month_day ymd{year{num(0, 4)}, month{static_cast<unsigned>(num(5, 2))},
                             day{static_cast<unsigned>(num(8, 2))}};
    const auto since_unix =
        sys_days{ymd}.time_since_epoch() + hours{num(11, 2)} + minutes{num(14, 2)} + seconds{num(17, 2)};
    const auto ticks = duration_cast<proctimes::filetime_duration>(since_unix).count() + std::stoll(s.substr(20, 7));
    return static_cast<std::uint64_t>(ticks) + proctimes::filetime_unix_epoch;
}

// Checks every documented field of one process or thread object.
void check_record(const json& j, bool is_thread, bool with_threads) {
    auto expected = process_fields;
    if (is_thread) expected.insert("tid");
    if (with_threads && !is_thread) expected.insert("threads");
    EXPECT_EQ(keys_of(j), expected) << j.dump();

    EXPECT_TRUE(j.at("pid").is_number_integer());
    if (is_thread) {
        EXPECT_TRUE(j.at("tid").is_number_integer());
    }
    EXPECT_TRUE(j.at("name").is_string());
    ASSERT_TRUE(j.at("creation_filetime").is_number_unsigned());
    EXPECT_TRUE(j.at("exit_filetime").is_null());  // everything shown here is running
    ASSERT_TRUE(j.at("creation_time").is_string());
    EXPECT_TRUE(j.at("exit_time").is_null());
    EXPECT_TRUE(j.at("exit_source").is_null());
    EXPECT_TRUE(j.at("exit_earliest_filetime").is_null());
    EXPECT_TRUE(j.at("exit_earliest_time").is_null());
    EXPECT_TRUE(j.at("exit_resolution_ns").is_null());
    ASSERT_TRUE(j.at("kernel_ns").is_number_integer());
    ASSERT_TRUE(j.at("user_ns").is_number_integer());
    ASSERT_TRUE(j.at("resolution_ns").is_number_integer());
    ASSERT_TRUE(j.at("total_resolution_ns").is_number_integer());
    ASSERT_TRUE(j.at("source").is_string());

    EXPECT_GE(j.at("kernel_ns").get<std::int64_t>(), 0);
    EXPECT_GE(j.at("user_ns").get<std::int64_t>(), 0);
    EXPECT_GE(j.at("kernel_ns").get<std::int64_t>() + j.at("user_ns").get<std::int64_t>(), 0);
    EXPECT_GT(j.at("resolution_ns").get<std::int64_t>(), 0);
    EXPECT_GT(j.at("total_resolution_ns").get<std::int64_t>(), 0);
    EXPECT_LE(j.at("total_resolution_ns").get<std::int64_t>(), j.at("resolution_ns").get<std::int64_t>());
    EXPECT_FALSE(j.at("source").get<std::string>().empty());
    // The two spellings of the creation instant agree to the tick.
    EXPECT_EQ(ticks_from_rfc3339(j.at("creation_time").get<std::string>()),
              j.at("creation_filetime").get<std::uint64_t>());
}

std::uint64_t filetime_now() { return proctimes::filetime_from_time(std::chrono::system_clock::now())->ticks; }

// RFC 4180 reader, strict: a quote may only open a field or be doubled inside one.
std::vector<std::vector<std::string>> parse_csv(const std::string& s) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, was_quoted = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (quoted) {
            if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            EXPECT_TRUE(field.empty() && !was_quoted) << "stray quote at byte " << i;
            quoted = was_quoted = true;
        } else if (c == ',') {
            row.push_back(std::move(field));
            field.clear();
            was_quoted = false;
        } else if (c == '\n') {
            row.push_back(std::move(field));
            rows.push_back(std::move(row));
            row.clear();
            field.clear();
            was_quoted = false;
        } else {
            field += c;
        }
    }
    EXPECT_FALSE(quoted) << "unterminated quoted field";
    EXPECT_TRUE(row.empty() && field.empty()) << "last line not terminated";
    return rows;
}

const std::string csv_header =
    "pid,tid,name,creation_filetime,exit_filetime,creation_time,exit_time,kernel_ns,user_ns,resolution_ns,"
    "total_resolution_ns,source,exit_source,exit_earliest_filetime,exit_earliest_time,exit_resolution_ns";

// ---- JSON ------------------------------------------------------------------------

TEST(ShowJson, OwnProcessHasExactlyTheDocumentedFields) {
    const std::uint64_t before = filetime_now();
    const auto r = run_cli({"show", "--format", "json", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const json doc = json::parse(r.out);
    ASSERT_TRUE(doc.is_array());
    ASSERT_EQ(doc.size(), 1u);
    const json& p = doc[0];
    check_record(p, false, false);

    EXPECT_EQ(p.at("pid").get<pid_t>(), ::getpid());
    EXPECT_EQ(p.at("name").get<std::string>(), read_comm("/proc/self/comm"));
    // The caller itself: the calling process's own source (getrusage), as
    // through GetCurrentProcess(), whatever handle names it.
    EXPECT_EQ(p.at("source").get<std::string>(), "rusage");
    EXPECT_EQ(p.at("total_resolution_ns").get<std::int64_t>(), 1000);
    EXPECT_EQ(p.at("resolution_ns").get<std::int64_t>(), 1000);
    EXPECT_LE(p.at("creation_filetime").get<std::uint64_t>(), before);
}

TEST(ShowJson, CreationMatchesTheLibraryWithinATick) {
    const auto r = run_cli({"show", "--format", "json", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto ft = json::parse(r.out)[0].at("creation_filetime").get<std::uint64_t>();

    // 10 ms (one USER_HZ tick of the kernel's start time) + 1 ms of slack, in 100 ns ticks.
    constexpr std::int64_t tolerance = 110'000;
    const auto self = proctimes::this_process::times();
    ASSERT_TRUE(self) << self.error().message();
    const auto lib = proctimes::filetime_from_time(self->creation);
    ASSERT_TRUE(lib);
    EXPECT_LE(std::llabs(static_cast<std::int64_t>(ft - lib->ticks)), tolerance);

    // And independently of the library's anchor: starttime (field 22 of
    // /proc/self/stat, read after the last ')') + CLOCK_REALTIME − CLOCK_BOOTTIME,
    // corrected by any clock step since the shared anchor was fixed.
    std::ifstream f("/proc/self/stat");
    std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 22; ++i) rest >> field;
    const std::int64_t start_ticks = std::stoll(field);
    timespec real{}, boot{};
    ::clock_gettime(CLOCK_REALTIME, &real);
    ::clock_gettime(CLOCK_BOOTTIME, &boot);
    const std::int64_t anchor_100ns =
        (static_cast<std::int64_t>(real.tv_sec - boot.tv_sec) * 1'000'000'000 + (real.tv_nsec - boot.tv_nsec)) / 100;
    auto anchor = proctimes::get_boot_anchor();
    ASSERT_TRUE(anchor);
    const std::int64_t step_100ns = anchor->clock_step().count() / 100;
    const std::int64_t expected = static_cast<std::int64_t>(proctimes::filetime_unix_epoch) + anchor_100ns -
                                  step_100ns + start_ticks * (10'000'000 / proctimes::clock_ticks_per_second());
    EXPECT_LE(std::llabs(static_cast<std::int64_t>(ft) - expected), tolerance);
}

TEST(ShowJson, ThreadsIncludeANamedThreadWithItsTid) {
    named_thread t("a) (b c)");
    ASSERT_GT(t.tid(), 0) << "pthread_setname_np failed: " << -t.tid();
    const auto r = run_cli({"show", "--threads", "--format", "json", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc.size(), 1u);
    const json& p = doc[0];
    check_record(p, false, true);
    ASSERT_TRUE(p.at("threads").is_array());

    const auto process_created = p.at("creation_filetime").get<std::uint64_t>();
    bool saw_main = false, saw_named = false;
    pid_t last = 0;
    for (const json& th : p.at("threads")) {
        check_record(th, true, true);
        EXPECT_EQ(th.at("pid").get<pid_t>(), ::getpid());
        const auto tid = th.at("tid").get<pid_t>();
        EXPECT_GT(tid, last) << "threads are listed by ascending tid";
        last = tid;
        EXPECT_GE(th.at("creation_filetime").get<std::uint64_t>(), process_created);
        if (tid == ::getpid()) saw_main = true;
        if (tid == t.tid()) {
            saw_named = true;
            EXPECT_EQ(th.at("name").get<std::string>(), "a) (b c)");
            EXPECT_EQ(th.at("source").get<std::string>(), "cpu_clock+stat");
        }
    }
    EXPECT_TRUE(saw_main);
    EXPECT_TRUE(saw_named);
}

TEST(ShowJson, HostileNamesAreValidJson) {
    // A newline, quotes, a backslash and a byte that is not UTF-8.
    named_thread t(
        "q\"\\\n\xff"
        "z");
    ASSERT_GT(t.tid(), 0) << "pthread_setname_np failed: " << -t.tid();
    const auto r = run_cli({"show", "-t", "-f", "json", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char c : r.out) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << "JSON output is ASCII";
    const json doc = json::parse(r.out);  // throws (fails the test) if invalid
    bool found = false;
    for (const json& th : doc[0].at("threads")) {
        if (th.at("tid").get<pid_t>() != t.tid()) continue;
        found = true;
        // The stray byte 0xFF is reported as U+00FF.
        EXPECT_EQ(th.at("name").get<std::string>(),
                  "q\"\\\n\xc3\xbf"
                  "z");
    }
    EXPECT_TRUE(found);
}

TEST(ShowJson, NoPidMeansTheParent) {
    const auto r = run_cli({"show", "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc.size(), 1u);
    EXPECT_EQ(doc[0].at("pid").get<pid_t>(), ::getppid());
    EXPECT_FALSE(doc[0].contains("threads"));
}

// ---- errors ----------------------------------------------------------------------

TEST(ShowErrors, UnknownPidIsReportedAndOthersStillShown) {
    const pid_t dead = reaped_pid();
    ASSERT_GT(dead, 0);
    const auto r = run_cli({"show", "--format", "json", std::to_string(dead), self_pid()});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("proctimes: pid " + std::to_string(dead) + ": no such process"), std::string::npos) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc.size(), 1u);
    EXPECT_EQ(doc[0].at("pid").get<pid_t>(), ::getpid());
}

TEST(ShowErrors, NonNumericAndInvalidPids) {
    const auto r = run_cli({"show", "abc", "0", "-5", "99999999999", "12x", self_pid()});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("'abc': not a process id"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'12x': not a process id"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pid 0: invalid argument"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pid -5: invalid argument"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pid 99999999999: invalid argument"), std::string::npos) << r.err;
    // The table still has the valid one.
    EXPECT_NE(r.out.find(self_pid()), std::string::npos) << r.out;
}

TEST(ShowErrors, OnlyFailuresGiveAnEmptyArray) {
    const auto r = run_cli({"show", "--format", "json", std::to_string(reaped_pid())});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(json::parse(r.out), json::array());
}

// ---- CSV -------------------------------------------------------------------------

TEST(ShowCsv, HeaderRowsAndQuoting) {
    named_thread plain("a) (b c)");
    named_thread tricky("x,\"y\"\nz");
    ASSERT_GT(plain.tid(), 0);
    ASSERT_GT(tricky.tid(), 0);
    const auto r = run_cli({"show", "--threads", "--format", "csv", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), csv_header);
    EXPECT_NE(r.out.find(",\"x,\"\"y\"\"\nz\","), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(",a) (b c),"), std::string::npos) << "no quotes without need: " << r.out;

    const auto rows = parse_csv(r.out);
    ASSERT_GE(rows.size(), 5u);  // header, the process, main + 2 threads
    for (const auto& row : rows) ASSERT_EQ(row.size(), 16u);
    const auto& proc = rows[1];
    EXPECT_EQ(proc[0], self_pid());
    EXPECT_EQ(proc[1], "") << "tid is empty on the process row";
    EXPECT_EQ(proc[2], read_comm("/proc/self/comm"));
    EXPECT_EQ(proc[4], "");  // exit_filetime
    EXPECT_EQ(proc[6], "");  // exit_time
    EXPECT_EQ(ticks_from_rfc3339(proc[5]), std::stoull(proc[3]));
    EXPECT_EQ(proc[11], "rusage");  // the caller itself
    for (std::size_t i = 12; i < 16; ++i) EXPECT_EQ(proc[i], "") << "no exit: exit_source and its bounds empty";

    bool saw_plain = false, saw_tricky = false;
    for (std::size_t i = 2; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i][0], self_pid());
        EXPECT_FALSE(rows[i][1].empty());
        if (rows[i][1] == std::to_string(plain.tid())) {
            saw_plain = true;
            EXPECT_EQ(rows[i][2], "a) (b c)");
        }
        if (rows[i][1] == std::to_string(tricky.tid())) {
            saw_tricky = true;
            EXPECT_EQ(rows[i][2], "x,\"y\"\nz");
        }
    }
    EXPECT_TRUE(saw_plain);
    EXPECT_TRUE(saw_tricky);
}

// ---- table -----------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(ShowTable, HasTheColumnsAndTheName) {
    const auto r = run_cli({"show", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 2u) << r.out;
    for (const char* col : {"PID", "NAME", "CREATED", "EXITED", "KERNEL", "USER", "RES"})
        EXPECT_NE(lines[0].find(col), std::string::npos) << col;
    EXPECT_EQ(lines[0].find("TID"), std::string::npos);
    EXPECT_NE(lines[1].find(self_pid()), std::string::npos);
    EXPECT_NE(lines[1].find(read_comm("/proc/self/comm")), std::string::npos);
    EXPECT_NE(lines[1].find(" - "), std::string::npos) << "EXITED is '-' while running";
    // The caller itself is read through getrusage: 1 µs.
    EXPECT_NE(lines[1].find(proctimes::cli::human_duration(std::chrono::microseconds{1})), std::string::npos) << "RES";
}

TEST(ShowTable, ThreadsAreIndentedAndNamesEscapedSoColumnsAlign) {
    named_thread plain("a) (b c)");
    named_thread tricky("n\nl\xff\\");
    ASSERT_GT(plain.tid(), 0);
    ASSERT_GT(tricky.tid(), 0);
    const auto r = run_cli({"show", "--threads", "--utc", self_pid()});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto lines = lines_of(r.out);
    EXPECT_NE(lines[0].find("TID"), std::string::npos);
    EXPECT_NE(r.out.find("  a) (b c)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  n\\x0al\\xff\\\\"), std::string::npos) << r.out;

    // Every row has its CREATED value where the header has CREATED.
    const auto created_col = lines[0].find("CREATED");
    const auto pid_col_end = lines[0].find("PID") + 3;
    std::size_t thread_rows = 0;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        ASSERT_GT(lines[i].size(), created_col + 30) << lines[i];
        EXPECT_TRUE(has_shape(lines[i].substr(created_col, 30), "DDDD-DD-DD DD:DD:DD.DDD +00:00")) << lines[i];
        // Thread rows have an empty PID cell (the PID column ends where its header does).
        if (lines[i].find_first_not_of(' ') >= pid_col_end) ++thread_rows;
    }
    EXPECT_GE(thread_rows, 3u);
    EXPECT_EQ(thread_rows, lines.size() - 2);  // header and the process row excepted
}

TEST(ShowTable, LocalTimeUsesTheTimeZone) {
    const char* old = ::getenv("TZ");
    const std::string saved = old ? old : "";
    ::setenv("TZ", "XST-05:30", 1);  // POSIX sign: 5 h 30 east of UTC
    ::tzset();
    const auto r = run_cli({"show", self_pid()});
    if (old) {
        ::setenv("TZ", saved.c_str(), 1);
    } else {
        ::unsetenv("TZ");
    }
    ::tzset();
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(" +05:30"), std::string::npos) << r.out;
}

// ---- usage -----------------------------------------------------------------------

TEST(Usage, ErrorsExitWithTwo) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"show", "--format", "xml"}, {"bogus"}, {"show", "--nope"}, {"--nope"}, {"show", "--format"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 2) << args.back();
        EXPECT_EQ(r.out, "") << args.back();
        EXPECT_NE(r.err.find("proctimes: "), std::string::npos) << args.back();
    }
}

TEST(Usage, HelpAndNoSubcommandPrintUsage) {
    for (const auto& args : std::vector<std::vector<std::string>>{{}, {"--help"}, {"-h"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 0);
        EXPECT_NE(r.out.find("Usage: proctimes"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("show"), std::string::npos) << r.out;
        EXPECT_EQ(r.err, "");
    }
    const auto r = run_cli({"show", "--help"});
    EXPECT_EQ(r.code, 0);
    EXPECT_NE(r.out.find("--threads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--format"), std::string::npos) << r.out;
}

}  // namespace
