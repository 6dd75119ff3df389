// SPDX-License-Identifier: MIT
// Frames made up for the store's tests, the SQLite queries the tests check
// the store with, and a temporary folder per test.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "record/store.hpp"

namespace proctimes::cli::record::fixtures {

using namespace std::chrono_literals;

/// The instant frame `n` of a made-up run was taken: one second apart.
inline instant taken_of(std::uint64_t n) {
    return instant(std::chrono::seconds(1'800'000'000) + std::chrono::seconds(static_cast<std::int64_t>(n)));
}

/// A process row of frame `n`: process `p` of `processes`. Every third uses
/// no CPU (not stored), every seventh ended; names and command lines carry
/// bytes a file format could trip on.
inline top::top_row made_row(std::uint64_t n, int p, std::size_t command_bytes = 40) {
    top::top_row r;
    r.pid = 1000 + p;
    r.ppid = p == 0 ? 1 : 1000;
    r.name = p % 5 == 0 ? std::string("we\nird (") + std::to_string(p % 10) + ")" : "proc" + std::to_string(p % 4);
    r.command = "/usr/bin/proc" + std::to_string(p) + " --arg 'é' " + std::string(command_bytes, 'x');
    if (p % 6 != 5) r.uid = static_cast<std::uint32_t>(1000 + p % 3);
    r.user_name = r.uid ? "user" + std::to_string(*r.uid - 1000) : "4294967294";
    r.cgroup = "/system.slice/unit" + std::to_string(p % 2) + ".service";
    r.creation = taken_of(0) - std::chrono::milliseconds(p * 37);
    const bool idle = p % 3 == 2;
    r.ended = p % 7 == 6;
    r.state = r.ended ? 'X' : 'S';
    if (r.ended) {
        r.exit = taken_of(n) - 3ms;
        r.exit_source = exit_source::bpf_exit;
        if (p % 2)
            r.exit_code = p % 256;
        else
            r.exit_signal = 9;
    }
    const auto k = static_cast<std::int64_t>(n * 1000 + static_cast<std::uint64_t>(p));
    if (!idle) {
        r.interval_kernel = std::chrono::nanoseconds(k * 1'000 + 1);
        r.interval_user = std::chrono::nanoseconds(k * 3'000 + 7);
    }
    if (p % 4 == 1) r.interval_children_user = std::chrono::nanoseconds(k * 11);
    r.kernel = std::chrono::nanoseconds(k * 10'000'000 + 3);
    r.user = std::chrono::nanoseconds(k * 20'000'000 + 9);
    r.resolution = 1ns;
    r.total_resolution = 1ns;
    if (p % 2) r.source = cpu_source::cpu_clock_and_stat;
    r.sampled_at = taken_of(n) - std::chrono::microseconds(p);
    r.basis = r.ended ? "ended" : "both";
    r.threads = static_cast<std::uint32_t>(1 + p % 9);
    if (p % 8 != 3) r.rss_bytes = static_cast<std::uint64_t>(4096) * (100 + static_cast<std::uint64_t>(p));
    if (p % 2) {
        r.read_bytes = static_cast<std::uint64_t>(p) * 512;
        r.write_bytes = 0;
    }
    r.voluntary_switches = static_cast<std::uint64_t>(p);
    return r;
}

inline top::top_frame made_frame(std::uint64_t n, int processes = 30, std::size_t command_bytes = 40) {
    top::top_frame f;
    f.number = n;
    f.taken = taken_of(n);
    f.uptime = std::chrono::hours(50) + std::chrono::seconds(static_cast<std::int64_t>(n));
    f.interval = n == 1 ? 0ns : 1s;
    f.cpus = 2;
    f.busy_per_cpu = {0.1 + 1.0 / 3.0, static_cast<double>(n % 10) / 10.0};
    f.busy = (f.busy_per_cpu[0] + f.busy_per_cpu[1]) / 2;
    if (n != 1) {
        cpu_ledger l;
        l.interval = 1s;
        l.stat_interval = 1s + 3us;
        l.cpus = 2;
        l.busy = std::chrono::nanoseconds(static_cast<std::int64_t>(n) * 1'000'000);
        l.live = l.busy / 2;
        l.ended = l.busy / 4;
        l.irq = 10ms;
        l.unattributed = -5ms;
        l.ended_without_record = n % 3;
        l.children_unknown = 1;
        f.ledger = l;
    } else {
        f.ledger_error = "no interval yet";
    }
    f.ended_source = "exit stream (eBPF)";
    f.exit_stream = true;
    f.ended_source_note = n % 2 ? "" : "a note";
    if (n % 4 == 0) f.records_lost = n;
    f.records_lost_any = n % 4 == 0;
    f.load = {1.5, 0.25, static_cast<double>(n) / 7};
    f.memory_total = 8ULL << 30;
    f.memory_available = (3ULL << 30) + n;
    f.tasks = 300 + n;
    f.live_processes = 200 + n;
    for (int p = 0; p < processes; ++p) f.rows.push_back(made_row(n, p, command_bytes));
    if (n % 5 == 0) f.warnings = {"first warning", "second"};
    return f;
}

/// The rows the store keeps of a frame: those with CPU or an end.
inline std::vector<top::top_row> kept_rows(const top::top_frame& f) {
    std::vector<top::top_row> out;
    for (const auto& r : f.rows)
        if (r.ended || r.interval_cpu().count() || r.interval_children_cpu().count()) out.push_back(r);
    return out;
}

inline void expect_rows_equal(const top::top_row& a, const top::top_row& b) {
    EXPECT_EQ(a.pid, b.pid);
    EXPECT_EQ(a.ppid, b.ppid);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.command, b.command);
    EXPECT_EQ(a.uid, b.uid);
    EXPECT_EQ(a.user_name, b.user_name);
    EXPECT_EQ(a.cgroup, b.cgroup);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.ended, b.ended);
    EXPECT_EQ(a.exit_code, b.exit_code);
    EXPECT_EQ(a.exit_signal, b.exit_signal);
    EXPECT_EQ(a.interval_kernel, b.interval_kernel);
    EXPECT_EQ(a.interval_user, b.interval_user);
    EXPECT_EQ(a.interval_children_kernel, b.interval_children_kernel);
    EXPECT_EQ(a.interval_children_user, b.interval_children_user);
    EXPECT_EQ(a.kernel, b.kernel);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.resolution, b.resolution);
    EXPECT_EQ(a.total_resolution, b.total_resolution);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.sampled_at, b.sampled_at);
    EXPECT_EQ(a.basis, b.basis);
    EXPECT_EQ(a.creation, b.creation);
    EXPECT_EQ(a.exit, b.exit);
    EXPECT_EQ(a.exit_source, b.exit_source);
    EXPECT_EQ(a.threads, b.threads);
    EXPECT_EQ(a.rss_bytes, b.rss_bytes);
    EXPECT_EQ(a.read_bytes, b.read_bytes);
    EXPECT_EQ(a.write_bytes, b.write_bytes);
    EXPECT_EQ(a.voluntary_switches, b.voluntary_switches);
    EXPECT_EQ(a.involuntary_switches, b.involuntary_switches);
}

/// `got` is `want` as the store keeps it (rows with CPU or an end, in pid order here).
inline void expect_frame_stored(const top::top_frame& want, const top::top_frame& got) {
    EXPECT_EQ(got.number, want.number);
    EXPECT_EQ(got.taken, want.taken);
    EXPECT_EQ(got.interval, want.interval);
    EXPECT_EQ(got.uptime, want.uptime);
    EXPECT_EQ(got.cpus, want.cpus);
    EXPECT_EQ(got.busy_per_cpu, want.busy_per_cpu);  // doubles, exactly
    EXPECT_EQ(got.busy, want.busy);
    EXPECT_EQ(got.ledger.has_value(), want.ledger.has_value());
    if (got.ledger && want.ledger) {
        EXPECT_EQ(got.ledger->interval, want.ledger->interval);
        EXPECT_EQ(got.ledger->stat_interval, want.ledger->stat_interval);
        EXPECT_EQ(got.ledger->cpus, want.ledger->cpus);
        EXPECT_EQ(got.ledger->busy, want.ledger->busy);
        EXPECT_EQ(got.ledger->live, want.ledger->live);
        EXPECT_EQ(got.ledger->ended, want.ledger->ended);
        EXPECT_EQ(got.ledger->reaped_children, want.ledger->reaped_children);
        EXPECT_EQ(got.ledger->irq, want.ledger->irq);
        EXPECT_EQ(got.ledger->unattributed, want.ledger->unattributed);
        EXPECT_EQ(got.ledger->ended_without_record, want.ledger->ended_without_record);
        EXPECT_EQ(got.ledger->children_unknown, want.ledger->children_unknown);
        EXPECT_EQ(got.ledger->attributed(), want.ledger->attributed());
    }
    EXPECT_EQ(got.ledger_error, want.ledger_error);
    EXPECT_EQ(got.ended_source, want.ended_source);
    EXPECT_EQ(got.exit_stream, want.exit_stream);
    EXPECT_EQ(got.ended_source_note, want.ended_source_note);
    EXPECT_EQ(got.records_lost, want.records_lost);
    EXPECT_EQ(got.records_lost_any, want.records_lost_any);
    EXPECT_EQ(got.load, want.load);
    EXPECT_EQ(got.memory_total, want.memory_total);
    EXPECT_EQ(got.memory_available, want.memory_available);
    EXPECT_EQ(got.tasks, want.tasks);
    EXPECT_EQ(got.live_processes, want.live_processes);
    EXPECT_EQ(got.warnings, want.warnings);
    auto rows = kept_rows(want);
    ASSERT_EQ(got.rows.size(), rows.size()) << "frame " << want.number;
    auto sorted = got.rows;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
    for (std::size_t i = 0; i < rows.size(); ++i) expect_rows_equal(rows[i], sorted[i]);
}

/// One integer (or text) answer of an SQL query on the file, through a
/// connection of its own (what `sqlite3 FILE 'query'` would say).
inline std::string query(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    std::string out = "(open failed)";
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
            const int rc = sqlite3_step(st);
            if (rc == SQLITE_ROW) {
                const auto* t = sqlite3_column_text(st, 0);
                out = t ? reinterpret_cast<const char*>(t) : "NULL";
            } else {
                out = rc == SQLITE_DONE ? "(no row)" : std::string("(error) ") + sqlite3_errmsg(db);
            }
        } else {
            out = std::string("(error) ") + sqlite3_errmsg(db);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return out;
}

/// A fresh folder under the system's temporary folder, removed at the end.
class temp_dir {
public:
    temp_dir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "proctimes-store-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
        path_ = tmpl;
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

}  // namespace proctimes::cli::record::fixtures
