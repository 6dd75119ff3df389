// SPDX-License-Identifier: MIT
// The store under failure: a writer killed at random moments, a full disk,
// paths that are no store, and files of random bytes.
#include <fcntl.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <set>

#include "frames.hpp"

namespace proctimes::cli::record {
namespace {

using namespace fixtures;

constexpr int kill_rows = 12;

/// Frame numbers of run `i` of the kill test: i * 100000 + 1, + 2, ...
std::uint64_t run_base(int i) { return static_cast<std::uint64_t>(i) * 100'000; }

/// Frame `n` as the child writes it: a new process each frame, so
/// identities are written all along.
top::top_frame killed_frame(std::uint64_t n) {
    auto f = made_frame(n, kill_rows);
    f.rows[0].pid = static_cast<proctimes::pid_t>(n % 4'000'000);
    return f;
}

/// The child: opens the store and writes frames until it is killed; after
/// each write returned, the frame's number down the pipe.
[[noreturn]] void write_until_killed(const std::string& path, int run, int out) {
    auto w = store::open_writer(path);
    if (!w) ::_exit(3);
    for (std::uint64_t n = run_base(run) + 1;; ++n) {
        if (!w->write_interval(killed_frame(n))) ::_exit(4);
        if (::write(out, &n, sizeof n) != static_cast<ssize_t>(sizeof n)) ::_exit(5);
    }
}

TEST(StoreFaults, KillNineAtRandomMomentsLosesNothingFinished) {
    temp_dir dir;
    const auto path = dir.file("killed.db");
    std::mt19937 rng(20261128);
    std::uniform_int_distribution<int> early_us(0, 3'000), later_us(0, 40'000);
    int runs_with_writes = 0;
    std::size_t acknowledged_total = 0;
    for (int run = 1; run <= 100; ++run) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(fds[0]);
            write_until_killed(path, run, fds[1]);
        }
        ::close(fds[1]);
        // Odd runs: killed within 3 ms of the start (before the store opened,
        // while it opens, or at its first writes, as the machine's speed has
        // it). Even runs: at a random moment after the first
        // interval was acknowledged, so that half the kills fall mid-run
        // however slow the start is.
        std::set<std::uint64_t> acknowledged;
        std::uint64_t n = 0;
        if (run % 2 == 0) {
            pollfd p{fds[0], POLLIN, 0};
            if (::poll(&p, 1, 10'000) == 1 && ::read(fds[0], &n, sizeof n) == static_cast<ssize_t>(sizeof n))
                acknowledged.insert(n);
        }
        ::usleep(static_cast<useconds_t>(run % 2 == 0 ? later_us(rng) : early_us(rng)));
        ::kill(child, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFSIGNALED(status)) << "run " << run << ": the writer stopped by itself, status " << status;
        while (::read(fds[0], &n, sizeof n) == static_cast<ssize_t>(sizeof n)) acknowledged.insert(n);
        ::close(fds[0]);
        acknowledged_total += acknowledged.size();
        runs_with_writes += acknowledged.empty() ? 0 : 1;

        // The store opens (for writing too: the lock died with its holder)
        // and is sound; every acknowledged interval is there and whole, and
        // so is any other: none is half-written.
        if (!std::filesystem::exists(path)) continue;  // killed before SQLite made the file
        {
            auto w = store::open_writer(path);
            ASSERT_TRUE(w) << "run " << run << ": " << w.error().message;
        }
        ASSERT_EQ(query(path, "PRAGMA integrity_check"), "ok") << "run " << run;
        auto r = store::open_reader(path);
        if (!r && r.error().kind == error_kind::not_found && acknowledged.empty()) continue;  // no schema yet
        ASSERT_TRUE(r) << "run " << run << ": " << r.error().message;
        auto frames = r->read_intervals(taken_of(run_base(run)), taken_of(run_base(run + 1) - 1));
        ASSERT_TRUE(frames) << frames.error().message;
        std::set<std::uint64_t> present;
        const auto rows = kept_rows(made_frame(2, kill_rows)).size();
        for (const auto& f : *frames) {
            present.insert(f.number);
            ASSERT_EQ(f.rows.size(), rows) << "run " << run << ", frame " << f.number << " is half-written";
            expect_frame_stored(killed_frame(f.number), f);
        }
        for (auto a : acknowledged) ASSERT_TRUE(present.count(a)) << "run " << run << " lost frame " << a;
        // At most the one in flight is there without its acknowledgement.
        ASSERT_LE(present.size(), acknowledged.size() + 1) << "run " << run;
    }
    // Every run that waited for its first acknowledgement was killed mid-run.
    EXPECT_GE(runs_with_writes, 50) << acknowledged_total << " frames in all";
    std::printf("kill -9: %d of 100 runs killed after writes began, %zu intervals acknowledged\n", runs_with_writes,
                acknowledged_total);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
}

/// A 1 MiB tmpfs mounted on a folder of its own; unmounted at the end.
class small_disk {
public:
    small_disk() {
        if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") == 0)
            mounted_ = true;
        else
            error_ = errno;
    }
    small_disk(const small_disk&) = delete;
    small_disk& operator=(const small_disk&) = delete;
    ~small_disk() {
        if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
    }
    [[nodiscard]] bool mounted() const { return mounted_; }
    [[nodiscard]] int error() const { return error_; }
    [[nodiscard]] std::string file(const std::string& n) const { return dir_.file(n); }

private:
    temp_dir dir_;
    bool mounted_ = false;
    int error_ = 0;
};

TEST(StoreFaults, AFullDiskLosesTheIntervalOnlyAndWritingResumes) {
    small_disk disk;
    if (!disk.mounted()) {
        if (disk.error() == EPERM) GTEST_SKIP() << "mounting a tmpfs is not permitted here";
        FAIL() << "cannot mount a tmpfs: " << std::strerror(disk.error());
    }
    const auto path = disk.file("full.db");
    const auto ballast = disk.file("ballast");
    {
        std::ofstream b(ballast, std::ios::binary);
        b << std::string(std::size_t{256} * 1024, 'b');
        ASSERT_TRUE(b.good());
    }
    auto w = store::open_writer(path);
    ASSERT_TRUE(w) << w.error().message;
    std::uint64_t n = 1;
    std::optional<record::error> full;
    for (; n < 100'000; ++n) {
        auto f = made_frame(n, 30, 600);
        for (auto& r : f.rows) r.pid += static_cast<proctimes::pid_t>(n * 100);  // new identities each time
        auto r = w->write_interval(f);
        if (!r) {
            full = r.error();
            break;
        }
    }
    ASSERT_TRUE(full) << "1 MiB never filled";
    const std::uint64_t last_written = n - 1;
    ASSERT_GT(last_written, 3U);
    EXPECT_EQ(full->kind, error_kind::full) << full->message;
    EXPECT_NE(full->message.find("the interval taken at " + describe(taken_of(n))), std::string::npos) << full->message;
    EXPECT_NE(full->message.find("was not written"), std::string::npos) << full->message;
    EXPECT_NE(full->message.find("full"), std::string::npos) << full->message;
    EXPECT_NE(full->message.find(path), std::string::npos) << full->message;
    // Still full: the next fails the same way.
    auto again = w->write_interval(made_frame(n + 1, 30, 600));
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().kind, error_kind::full);

    // Nothing written before is lost; the store opens and reads.
    {
        auto r = store::open_reader(path);
        ASSERT_TRUE(r) << r.error().message;
        auto span = r->span();
        ASSERT_TRUE(span) << span.error().message;
        EXPECT_EQ(span->intervals, last_written);
        auto last = r->interval_at(taken_of(last_written));
        ASSERT_TRUE(last);
        EXPECT_EQ(last->rows.size(), kept_rows(made_frame(1, 30)).size());
    }
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");

    // A recorder restarted while the disk is full: the store opens (the old
    // writer's close could not copy the WAL back: nothing is lost by it).
    w = store::open_reader(path);
    w = store::open_writer(path);
    ASSERT_TRUE(w) << w.error().message;
    EXPECT_EQ(w->span()->intervals, last_written);
    auto still_full = w->write_interval(made_frame(n + 1, 30, 600));
    ASSERT_FALSE(still_full);
    EXPECT_EQ(still_full.error().kind, error_kind::full) << still_full.error().message;

    // Room again: the writer goes on.
    ASSERT_EQ(::unlink(ballast.c_str()), 0);
    auto f = made_frame(n + 2, 30, 600);
    for (auto& r : f.rows) r.pid += static_cast<proctimes::pid_t>((n + 2) * 100);
    auto resumed = w->write_interval(f);
    ASSERT_TRUE(resumed) << resumed.error().message;
    auto back = w->interval_at(taken_of(n + 2));
    ASSERT_TRUE(back);
    expect_frame_stored(f, *back);
    EXPECT_EQ(w->span()->intervals, last_written + 1);
    EXPECT_EQ(query(path, "PRAGMA integrity_check"), "ok");
}

TEST(StoreFaults, PathsThatAreNoStoreGetAClearError) {
    temp_dir dir;
    auto as_dir = store::open_writer(dir.path());
    ASSERT_FALSE(as_dir);
    EXPECT_EQ(as_dir.error().kind, error_kind::path);
    EXPECT_NE(as_dir.error().message.find("is a directory"), std::string::npos) << as_dir.error().message;

    const auto fifo = dir.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    for (bool writer : {true, false}) {
        auto s = writer ? store::open_writer(fifo) : store::open_reader(fifo);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().kind, error_kind::path);
        EXPECT_NE(s.error().message.find("not a regular file"), std::string::npos) << s.error().message;
    }

    auto no_folder = store::open_writer(dir.file("missing/x.db"));
    ASSERT_FALSE(no_folder);
    EXPECT_EQ(no_folder.error().kind, error_kind::path);
    EXPECT_NE(no_folder.error().message.find("missing"), std::string::npos) << no_folder.error().message;

    auto nothing = store::open_reader(dir.file("none.db"));
    ASSERT_FALSE(nothing);
    EXPECT_EQ(nothing.error().kind, error_kind::not_found);
    EXPECT_NE(nothing.error().message.find("no store at"), std::string::npos);

    // Unwritable: a read-only file system (root writes through file modes).
    const auto ro = dir.file("ro");
    ASSERT_EQ(::mkdir(ro.c_str(), 0755), 0);
    {
        auto w = store::open_writer(ro + "/x.db");
        ASSERT_TRUE(w);
        ASSERT_TRUE(w->write_interval(made_frame(1)));
    }
    if (::mount(ro.c_str(), ro.c_str(), nullptr, MS_BIND, nullptr) != 0) GTEST_SKIP() << "no bind mount here";
    const bool remounted = ::mount("none", ro.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) == 0;
    if (remounted) {
        auto w = store::open_writer(ro + "/x.db");
        EXPECT_FALSE(w);
        if (!w) {
            EXPECT_EQ(w.error().kind, error_kind::path) << w.error().message;
            EXPECT_NE(w.error().message.find(ro), std::string::npos) << w.error().message;
        }
        // Readers read a store on read-only media.
        auto r = store::open_reader(ro + "/x.db");
        if (r)
            EXPECT_EQ(r->span()->intervals, 1U);
        else
            ADD_FAILURE() << r.error().message;
    }
    ::umount2(ro.c_str(), MNT_DETACH);
    if (!remounted) GTEST_SKIP() << "no read-only remount here";
}

TEST(StoreFaults, RandomBytesGetAClearErrorNotACrash) {
    temp_dir dir;
    std::mt19937 rng(38);
    // Files of random bytes, of sizes around SQLite's pages.
    for (std::size_t size : {1UL, 100UL, 512UL, 4096UL, 4097UL, 65536UL}) {
        const auto path = dir.file("random" + std::to_string(size) + ".db");
        std::string bytes(size, '\0');
        for (auto& b : bytes) b = static_cast<char>(rng());
        std::ofstream(path, std::ios::binary) << bytes;
        for (bool writer : {true, false}) {
            auto s = writer ? store::open_writer(path) : store::open_reader(path);
            ASSERT_FALSE(s) << size << " random bytes opened as a store";
            EXPECT_TRUE(s.error().kind == error_kind::corrupt || s.error().kind == error_kind::schema)
                << s.error().message;
            EXPECT_NE(s.error().message.find(path), std::string::npos) << s.error().message;
        }
    }
    // A real store, damaged past its header: every call gives a value or an
    // error, never a crash; its header still says what it is.
    const auto good = dir.file("good.db");
    {
        auto w = store::open_writer(good);
        ASSERT_TRUE(w);
        for (std::uint64_t n = 1; n <= 60; ++n) ASSERT_TRUE(w->write_interval(made_frame(n, 40, 100)));
        ASSERT_TRUE(w->retain(0s, 0));  // checkpoints the WAL into the file
    }
    std::ifstream in(good, std::ios::binary);
    const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(original.size(), 16384U);
    int errors = 0;
    // Rounds 0-39: random runs of bytes past the header; 40-59: a few bytes
    // of the header's fields (after its magic); 60-69: the file cut short.
    for (int round = 0; round < 70; ++round) {
        const auto path = dir.file("damaged" + std::to_string(round) + ".db");
        std::string bytes = original;
        if (round < 40) {
            std::uniform_int_distribution<std::size_t> at(100, bytes.size() - 1);
            const int spots = 1 + round % 8;
            for (int i = 0; i < spots; ++i) {
                const auto start = at(rng);
                const auto len = std::min<std::size_t>(bytes.size() - start, 1 + rng() % 600);
                for (std::size_t j = 0; j < len; ++j) bytes[start + j] = static_cast<char>(rng());
            }
        } else if (round < 60) {
            std::uniform_int_distribution<std::size_t> at(16, 99);
            for (int i = 0; i < 1 + round % 3; ++i) bytes[at(rng)] = static_cast<char>(rng());
        } else {
            bytes.resize(std::uniform_int_distribution<std::size_t>(16, bytes.size() - 1)(rng));
        }
        std::ofstream(path, std::ios::binary) << bytes;
        auto w = store::open_writer(path);
        if (!w) {
            ++errors;
            EXPECT_FALSE(w.error().message.empty());
            continue;
        }
        auto frames = w->read_intervals(taken_of(0), taken_of(100));
        if (!frames) ++errors;
        auto rep = w->report(taken_of(0), taken_of(100), group_by::program, 3);
        if (!rep) ++errors;
        auto wr = w->write_interval(made_frame(100, 40, 100));
        if (!wr) ++errors;
        auto ret = w->retain(10s, 0);
        if (!ret) {
            ++errors;
            EXPECT_FALSE(ret.error().message.empty());
        }
    }
    EXPECT_GT(errors, 0);  // damage was found, and said
}

}  // namespace
}  // namespace proctimes::cli::record
