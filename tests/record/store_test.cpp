// SPDX-License-Identifier: MIT
// The recording store: frames in and out, identities once, replay's stepping,
// reports, retention beside a reader, one writer, schema versions.
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <thread>

#include "frames.hpp"

namespace proctimes::cli::record {
namespace {

using namespace fixtures;

std::int64_t count(const std::string& path, const std::string& sql) { return std::stoll(query(path, sql)); }

TEST(Store, FramesComeBackAsWritten) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w) << w.error().message;
    std::vector<top::top_frame> written;
    for (std::uint64_t n = 1; n <= 6; ++n) {
        written.push_back(made_frame(n));
        auto r = w->write_interval(written.back());
        ASSERT_TRUE(r) << r.error().message;
    }
    auto r = store::open_reader(path);
    ASSERT_TRUE(r) << r.error().message;
    auto all = r->read_intervals(taken_of(0), taken_of(100));
    ASSERT_TRUE(all) << all.error().message;
    ASSERT_EQ(all->size(), written.size());
    for (std::size_t i = 0; i < written.size(); ++i) expect_frame_stored(written[i], (*all)[i]);
    // Only rows with CPU or an end: 30 made, 10 idle, of which one ended
    // (p=20) and three have reaped children's CPU (p=5, 17, 29).
    EXPECT_EQ(kept_rows(written[0]).size(), 24U);
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample WHERE interval_id = (SELECT min(id) FROM interval)"), 24);

    // A window picks its intervals; the writer reads too.
    auto some = w->read_intervals(taken_of(2), taken_of(4));
    ASSERT_TRUE(some);
    ASSERT_EQ(some->size(), 3U);
    EXPECT_EQ(some->front().number, 2U);
    EXPECT_EQ(some->back().number, 4U);
}

TEST(Store, IsMadeForItsOwnerAndGroup) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    const auto old_mask = ::umask(022);
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        ASSERT_TRUE(w->write_interval(made_frame(1)));
        for (const auto& f : {path, path + "-wal", path + "-shm"}) {
            struct stat st {};
            ASSERT_EQ(::stat(f.c_str(), &st), 0) << f;
            EXPECT_EQ(st.st_mode & 0777, 0640U) << f;
        }
    }
    ::umask(old_mask);
}

TEST(Store, StepsThroughIntervalsForReplay) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    auto r = store::open_reader(path);
    ASSERT_TRUE(r);
    auto empty = r->interval_at(taken_of(1));
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().kind, error_kind::not_found);
    for (std::uint64_t n : {1, 2, 3, 5, 8}) ASSERT_TRUE(w->write_interval(made_frame(n, 5)));

    auto span = r->span();
    ASSERT_TRUE(span);
    EXPECT_EQ(span->intervals, 5U);
    EXPECT_EQ(span->first, taken_of(1));
    EXPECT_EQ(span->last, taken_of(8));
    // At a time: the interval that ends at or after it; past the end, the last.
    EXPECT_EQ(r->interval_at(taken_of(4))->number, 5U);
    EXPECT_EQ(r->interval_at(taken_of(5))->number, 5U);
    EXPECT_EQ(r->interval_at(taken_of(0))->number, 1U);
    EXPECT_EQ(r->interval_at(taken_of(50))->number, 8U);
    EXPECT_EQ(r->interval_at(taken_of(4) + 1ns)->rows.size(), kept_rows(made_frame(5, 5)).size());
    // Back and forth.
    EXPECT_EQ(r->previous(taken_of(5))->number, 3U);
    EXPECT_EQ(r->next(taken_of(5))->number, 8U);
    EXPECT_EQ(r->next(taken_of(6))->number, 8U);
    auto before_first = r->previous(taken_of(1));
    ASSERT_FALSE(before_first);
    EXPECT_EQ(before_first.error().kind, error_kind::not_found);
    auto after_last = r->next(taken_of(8));
    ASSERT_FALSE(after_last);
    EXPECT_EQ(after_last.error().kind, error_kind::not_found);
    EXPECT_NE(after_last.error().message.find("no interval after"), std::string::npos);
}

TEST(Store, WritesEachIdentityOnce) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        for (std::uint64_t n = 1; n <= 10; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 50)));
    }
    const auto kept = static_cast<std::int64_t>(kept_rows(made_frame(1, 50)).size());
    EXPECT_EQ(count(path, "SELECT count(*) FROM process"), kept);
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample"), 10 * kept);
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 10);
    {
        // A new writer finds the stored identities; an exec (new name and
        // command line) is a new identity of the same pid and creation.
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        auto f = made_frame(11, 50);
        f.rows[0].name = "execd";
        f.rows[0].command = "/bin/execd";
        ASSERT_TRUE(w->write_interval(f));
        ASSERT_TRUE(w->write_interval(made_frame(12, 50)));
    }
    EXPECT_EQ(count(path, "SELECT count(*) FROM process"), kept + 1);
    EXPECT_EQ(count(path, "SELECT count(*) FROM process WHERE pid = 1000"), 2);
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample"), 12 * kept);
    // The same instant again replaces the interval.
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        auto f = made_frame(12, 3);
        ASSERT_TRUE(w->write_interval(f));
        auto back = w->interval_at(taken_of(12));
        ASSERT_TRUE(back);
        expect_frame_stored(f, *back);
    }
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 12);
    // A process listed twice in a frame is stored once, and counted once.
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        auto f = made_frame(14, 3);
        f.rows.push_back(f.rows[0]);
        ASSERT_TRUE(w->write_interval(f));
        EXPECT_EQ(count(path, "SELECT processes FROM interval WHERE number = 14"),
                  static_cast<std::int64_t>(kept_rows(made_frame(14, 3)).size()));
        EXPECT_EQ(
            count(path, "SELECT count(*) FROM sample WHERE interval_id = (SELECT id FROM interval WHERE number = 14)"),
            static_cast<std::int64_t>(kept_rows(made_frame(14, 3)).size()));
    }
    // An identity only the replaced interval had goes with it.
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w);
        auto f = made_frame(13, 3);
        f.rows.push_back(made_row(13, 1));
        f.rows.back().pid = 77'777;
        ASSERT_TRUE(w->write_interval(f));
        EXPECT_EQ(count(path, "SELECT count(*) FROM process WHERE pid = 77777"), 1);
        f.rows.pop_back();
        ASSERT_TRUE(w->write_interval(f));
        EXPECT_EQ(count(path, "SELECT count(*) FROM process WHERE pid = 77777"), 0);
        // The cache forgot it too: written again, it is stored again.
        f.rows.push_back(made_row(13, 1));
        f.rows.back().pid = 77'777;
        ASSERT_TRUE(w->write_interval(f));
        EXPECT_EQ(
            count(path, "SELECT count(*) FROM sample s JOIN process p ON p.id = s.process_id WHERE p.pid = 77777"), 1);
    }
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample WHERE process_id NOT IN (SELECT id FROM process)"), 0);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
}

TEST(Store, IsCompact) {
    // 100 intervals of 200 processes with 300-byte command lines: the
    // command lines are stored once, a sample takes a few dozen bytes.
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    for (std::uint64_t n = 1; n <= 100; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 200, 300)));
    ASSERT_TRUE(w->retain(0s, 0));
    const auto samples = count(path, "SELECT count(*) FROM sample");
    const auto processes = count(path, "SELECT count(*) FROM process");
    EXPECT_EQ(samples, 100 * processes);
    const auto used = w->used_bytes();
    ASSERT_TRUE(used);
    const double per_sample = static_cast<double>(*used) / static_cast<double>(samples);
    std::printf("store: %lld samples, %lld identities, %llu bytes: %.1f bytes a sample\n",
                static_cast<long long>(samples), static_cast<long long>(processes),
                static_cast<unsigned long long>(*used), per_sample);
    EXPECT_LT(per_sample, 150.0);  // with the command line in each sample, over 400
}

TEST(Store, WaitsForALockWithinTheBusyTimeout) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path, open_options{std::chrono::milliseconds(3000)});
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->write_interval(made_frame(1)));
    // Another connection (sqlite3 on the command line, say) holds the write
    // lock for a while: the writer waits, then writes.
    sqlite3* other = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    std::thread release([other] {
        std::this_thread::sleep_for(300ms);
        sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
    });
    const auto start = std::chrono::steady_clock::now();
    auto r = w->write_interval(made_frame(2));
    const auto waited = std::chrono::steady_clock::now() - start;
    release.join();
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_GE(waited, 250ms);
    // Held past the timeout: a busy error naming the interval, nothing of
    // it written; once the lock is gone, writing goes on.
    w = store::open_reader(path);  // the patient writer goes
    auto impatient = store::open_writer(path, open_options{std::chrono::milliseconds(100)});
    ASSERT_TRUE(impatient) << impatient.error().message;
    ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
    auto refused = impatient->write_interval(made_frame(3));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, error_kind::busy) << refused.error().message;
    EXPECT_NE(refused.error().message.find("frame 3"), std::string::npos) << refused.error().message;
    ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(other);
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 2);
    ASSERT_TRUE(impatient->write_interval(made_frame(3)));
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 3);
}

TEST(Store, ReportsCpuPerGroup) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    for (std::uint64_t n = 1; n <= 5; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 12)));
    // What the report should say for frames 2..4, by user, from the frames.
    std::map<std::string, std::chrono::nanoseconds> want;
    std::chrono::nanoseconds total{};
    for (std::uint64_t n = 2; n <= 4; ++n)
        for (const auto& r : kept_rows(made_frame(n, 12))) {
            want[r.user_name] += r.interval_cpu() + r.interval_children_cpu();
            total += r.interval_cpu() + r.interval_children_cpu();
        }
    auto rep = w->report(taken_of(2), taken_of(4), group_by::user, 0);
    ASSERT_TRUE(rep) << rep.error().message;
    EXPECT_EQ(rep->intervals, 3U);
    EXPECT_EQ(rep->first, taken_of(2));
    EXPECT_EQ(rep->last, taken_of(4));
    EXPECT_EQ(rep->span, 3s);
    EXPECT_EQ(rep->busy, 9ms);  // 2 + 3 + 4 ms of the made ledgers
    EXPECT_EQ(rep->attributed, total);
    ASSERT_EQ(rep->rows.size(), want.size());
    for (std::size_t i = 0; i < rep->rows.size(); ++i) {
        EXPECT_EQ(rep->rows[i].cpu(), want[rep->rows[i].key]) << rep->rows[i].key;
        if (i > 0) {
            EXPECT_GE(rep->rows[i - 1].cpu(), rep->rows[i].cpu());
        }
    }
    auto top1 = w->report(taken_of(2), taken_of(4), group_by::program, 1);
    ASSERT_TRUE(top1);
    ASSERT_EQ(top1->rows.size(), 1U);
    EXPECT_EQ(top1->attributed, total);
    auto by_cgroup = w->report(taken_of(0), taken_of(100), group_by::cgroup, 0);
    ASSERT_TRUE(by_cgroup);
    ASSERT_EQ(by_cgroup->rows.size(), 2U);
    EXPECT_EQ(by_cgroup->rows[0].key.rfind("/system.slice/unit", 0), 0U);
    EXPECT_EQ(by_cgroup->rows[0].processes + by_cgroup->rows[1].processes,
              static_cast<std::uint64_t>(count(path, "SELECT count(*) FROM process")));
    auto none = w->report(taken_of(50), taken_of(60), group_by::user, 5);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->intervals, 0U);
    EXPECT_TRUE(none->rows.empty());
}

// One process is its pid and creation, however many sets of attributes it was
// stored with: a command line that read empty while it was exiting and came
// whole with its end record, an exec to another program.
TEST(Store, ReportCountsAProcessOnceWhateverItWasSeenAs) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    auto f1 = made_frame(1, 0);
    auto f2 = made_frame(2, 0);
    auto f3 = made_frame(3, 0);
    top::top_row a = made_row(1, 0);
    a.name = "short";
    a.command.clear();  // read while it exited
    a.ended = false;
    a.state = 'R';
    a.exit_code.reset();
    a.exit_signal.reset();
    a.basis = "both";
    f1.rows.push_back(a);
    a.command = "/usr/bin/short --run";
    a.ended = true;
    a.state = 'X';
    a.exit_code = 0;
    a.basis = "ended";
    f2.rows.push_back(a);
    // Another process that ran a shell, then exec'd make, and ended.
    top::top_row b = made_row(1, 1);
    b.name = "sh";
    b.uid = a.uid;
    b.user_name = a.user_name;
    b.ended = false;
    b.basis = "both";
    f1.rows.push_back(b);
    f2.rows.push_back(b);
    b.name = "make";
    b.command = "make -j2";
    b.ended = true;
    b.basis = "ended";
    f3.rows.push_back(b);
    for (const auto* f : {&f1, &f2, &f3}) ASSERT_TRUE(w->write_interval(*f));
    EXPECT_EQ(count(path, "SELECT count(*) FROM process"), 4);

    auto rep = w->report(taken_of(0), taken_of(10), group_by::program, 0);
    ASSERT_TRUE(rep) << rep.error().message;
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> got;
    for (const auto& r : rep->rows) got[r.key] = {r.processes, r.ended};
    EXPECT_EQ(got["short"], std::pair(std::uint64_t{1}, std::uint64_t{1}));
    EXPECT_EQ(got["sh"], std::pair(std::uint64_t{1}, std::uint64_t{0}));
    EXPECT_EQ(got["make"], std::pair(std::uint64_t{1}, std::uint64_t{1}));
    auto by_user = w->report(taken_of(0), taken_of(10), group_by::user, 0);
    ASSERT_TRUE(by_user);
    ASSERT_EQ(by_user->rows.size(), 1U);
    EXPECT_EQ(by_user->rows[0].processes, 2U);
    EXPECT_EQ(by_user->rows[0].ended, 2U);
}

/// A reader that reads the newest intervals in a loop until told to stop:
/// every read succeeds and every interval it gets is whole.
struct busy_reader {
    std::atomic<bool> stop{false};
    std::atomic<int> reads{0}, failures{0};
    std::string first_failure;
    std::thread thread;

    busy_reader(const std::string& path, std::size_t rows) {
        thread = std::thread([this, path, rows] {
            auto r = store::open_reader(path);
            if (!r) {
                first_failure = r.error().message;
                ++failures;
                return;
            }
            while (!stop) {
                auto frames = r->read_intervals(taken_of(0), taken_of(1'000'000));
                if (!frames) {
                    if (failures++ == 0) first_failure = frames.error().message;
                    continue;
                }
                for (const auto& f : *frames)
                    if (f.rows.size() != rows && failures++ == 0)
                        first_failure =
                            "interval " + std::to_string(f.number) + " has " + std::to_string(f.rows.size()) + " rows";
                ++reads;
            }
        });
    }
    busy_reader(const busy_reader&) = delete;
    busy_reader& operator=(const busy_reader&) = delete;
    ~busy_reader() {
        stop = true;
        thread.join();
    }
};

TEST(Store, RetainsByAgeWhileAReaderReads) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    for (std::uint64_t n = 1; n <= 200; ++n) {
        auto f = made_frame(n, 20);
        // Processes that live in one interval only: their identities go with it.
        f.rows.push_back(made_row(n, 100));
        f.rows.back().pid = static_cast<proctimes::pid_t>(50'000 + n);
        ASSERT_TRUE(w->write_interval(f));
    }
    busy_reader reader(path, kept_rows(made_frame(2, 20)).size() + 1);
    retain_result got;
    for (std::uint64_t n = 201; n <= 260; ++n) {
        auto f = made_frame(n, 20);
        f.rows.push_back(made_row(n, 100));
        f.rows.back().pid = static_cast<proctimes::pid_t>(50'000 + n);
        ASSERT_TRUE(w->write_interval(f));
        if (n == 230) {
            auto r = w->retain(59s, 0);
            ASSERT_TRUE(r) << r.error().message;
            got = *r;
        }
    }
    while (reader.reads < 3 && reader.failures == 0) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(reader.failures, 0) << reader.first_failure;
    // At 230: 171..230 stay (taken at most 59 s before the newest).
    EXPECT_EQ(got.intervals_deleted, 170U);
    EXPECT_EQ(got.processes_deleted, 170U);  // the one-interval processes of 1..170
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 90);
    EXPECT_EQ(count(path, "SELECT min(number) FROM interval"), 171);
    EXPECT_EQ(count(path, "SELECT count(*) FROM process WHERE pid >= 50000"), 90);
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample WHERE process_id NOT IN (SELECT id FROM process)"), 0);
    EXPECT_EQ(count(path, "SELECT count(*) FROM sample WHERE interval_id NOT IN (SELECT id FROM interval)"), 0);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
    // Long-lived identities stay: the interval after retention reads whole.
    auto f = w->interval_at(taken_of(171));
    ASSERT_TRUE(f);
    expect_frame_stored(
        [&] {
            auto m = made_frame(171, 20);
            m.rows.push_back(made_row(171, 100));
            m.rows.back().pid = 50'171;
            return m;
        }(),
        *f);
}

TEST(Store, RetainsBySizeAndGivesSpaceBack) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto w = store::open_writer(path);
    ASSERT_TRUE(w);
    for (std::uint64_t n = 1; n <= 400; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 60, 200)));
    auto used = w->used_bytes();
    ASSERT_TRUE(used);
    busy_reader reader(path, kept_rows(made_frame(2, 60)).size());
    const std::uint64_t limit = *used / 4;
    auto r = w->retain(0s, limit);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->bytes_before, *used);
    EXPECT_LE(r->bytes_after, limit);
    EXPECT_GT(r->intervals_deleted, 250U);
    EXPECT_LT(r->intervals_deleted, 400U);
    // Freed pages went back: the database file holds about what is used.
    EXPECT_EQ(count(path, "PRAGMA freelist_count"), 0);
    EXPECT_EQ(count(path, "SELECT max(number) FROM interval"), 400);
    while (reader.reads < 3 && reader.failures == 0) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(reader.failures, 0) << reader.first_failure;
    // A limit below one interval keeps the newest.
    ASSERT_TRUE(w->retain(0s, 1));
    EXPECT_EQ(count(path, "SELECT count(*) FROM interval"), 1);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
}

TEST(Store, RefusesASecondWriterAndNamesTheFirst) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    auto first = store::open_writer(path);
    ASSERT_TRUE(first);
    auto second = store::open_writer(path);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().kind, error_kind::locked);
    EXPECT_NE(second.error().message.find(path), std::string::npos) << second.error().message;
    EXPECT_NE(second.error().message.find("pid " + std::to_string(::getpid())), std::string::npos)
        << second.error().message;
    // Readers are welcome.
    ASSERT_TRUE(first->write_interval(made_frame(1)));
    auto reader = store::open_reader(path);
    ASSERT_TRUE(reader);
    auto through_reader = reader->write_interval(made_frame(2));
    ASSERT_FALSE(through_reader);
    EXPECT_EQ(through_reader.error().kind, error_kind::read_only);
    first = store::open_reader(path);  // the writer closes
    EXPECT_TRUE(store::open_writer(path));
}

TEST(Store, AKilledWritersLockDoesNotBlockTheNext) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        auto w = store::open_writer(path);
        const char c = w ? 'y' : 'n';
        (void)!::write(ready[1], &c, 1);
        for (;;) ::pause();
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    ASSERT_EQ(c, 'y');
    auto while_alive = store::open_writer(path);
    ASSERT_FALSE(while_alive);
    EXPECT_NE(while_alive.error().message.find("pid " + std::to_string(child)), std::string::npos)
        << while_alive.error().message;
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    auto after = store::open_writer(path);
    ASSERT_TRUE(after) << after.error().message;
}

/// A new store at `path` holding made_frame(1).
void write_first_interval(const std::string& path) {
    auto w = store::open_writer(path);
    ASSERT_TRUE(w) << w.error().message;
    ASSERT_TRUE(w->write_interval(made_frame(1)));
}

TEST(Store, AVersionOneStoreIsReadAndAWriterUpgradesIt) {
    temp_dir dir;
    const auto path = dir.file("v1.db");
    ASSERT_NO_FATAL_FAILURE(write_first_interval(path));
    // What version 1 wrote: no live_processes column.
    query(path, "ALTER TABLE interval DROP COLUMN live_processes");
    query(path, "PRAGMA user_version = 1");
    const auto first = made_frame(1);
    const auto kept = kept_rows(first);
    const auto live_rows = static_cast<std::size_t>(
        std::count_if(kept.begin(), kept.end(), [](const top::top_row& r) { return !r.ended; }));
    {
        auto r = store::open_reader(path);
        ASSERT_TRUE(r) << r.error().message;
        auto frames = r->read_intervals(taken_of(0), taken_of(100));
        ASSERT_TRUE(frames) << frames.error().message;
        ASSERT_EQ(frames->size(), 1u);
        EXPECT_EQ(frames->front().tasks, first.tasks);
        EXPECT_EQ(frames->front().live_processes, live_rows) << "version 1 kept no count: the processes kept";
        EXPECT_EQ(count(path, "PRAGMA user_version"), 1) << "a reader changes nothing";
    }
    {
        auto w = store::open_writer(path);
        ASSERT_TRUE(w) << w.error().message;
        ASSERT_TRUE(w->write_interval(made_frame(2)));
    }
    EXPECT_EQ(count(path, "PRAGMA user_version"), schema_version);
    auto r = store::open_reader(path);
    ASSERT_TRUE(r);
    auto frames = r->read_intervals(taken_of(0), taken_of(100));
    ASSERT_TRUE(frames) << frames.error().message;
    ASSERT_EQ(frames->size(), 2u);
    EXPECT_EQ(frames->at(0).live_processes, live_rows);
    expect_frame_stored(made_frame(2), frames->at(1));
}

TEST(Store, RefusesANewerSchemaAndForeignDatabases) {
    temp_dir dir;
    const auto path = dir.file("a.db");
    ASSERT_NO_FATAL_FAILURE(write_first_interval(path));
    EXPECT_EQ(count(path, "PRAGMA user_version"), schema_version);
    EXPECT_EQ(count(path, "PRAGMA application_id"), application_id);
    query(path, "PRAGMA user_version = " + std::to_string(schema_version + 1));
    for (bool writer : {true, false}) {
        auto s = writer ? store::open_writer(path) : store::open_reader(path);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().kind, error_kind::schema);
        EXPECT_NE(s.error().message.find("newer proctimes (schema version " + std::to_string(schema_version + 1)),
                  std::string::npos)
            << s.error().message;
        EXPECT_NE(s.error().message.find(path), std::string::npos);
    }
    const auto other = dir.file("other.db");
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(db);
    }
    auto foreign = store::open_writer(other);
    ASSERT_FALSE(foreign);
    EXPECT_EQ(foreign.error().kind, error_kind::schema);
    EXPECT_NE(foreign.error().message.find("not a proctimes store"), std::string::npos) << foreign.error().message;
}

}  // namespace
}  // namespace proctimes::cli::record
