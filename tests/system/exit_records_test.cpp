// SPDX-License-Identifier: MIT
// Exit records (set_exit_records_enabled): tasks that cannot be read after
// their end get their exact final run time from the kernel's taskstats record.
// Needs CAP_NET_ADMIN in the initial pid namespace; skipped elsewhere.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proctimes/proctimes.hpp"
#include "system/helpers.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using namespace proctimes;
using testing_helpers::burn_thread_cpu;

namespace {

// The tests fork their children first and only then register the listener
// (which starts the exit monitor thread): ThreadSanitizer does not let a child
// forked from a multi-threaded process start threads.
class ExitRecords : public ::testing::Test {
protected:
    void SetUp() override { set_exit_monitor_enabled(true); }
    void TearDown() override { set_exit_records_enabled(false); }
    static std::error_code enable() {
        set_exit_records_enabled(true);
        return exit_records_status();
    }
};

// ThreadSanitizer kills a child forked from a multi-threaded process when it
// starts a thread (and so the grandchildren of such a child). The tests whose
// children start threads fork them first; when the test process already has
// threads (repeated runs, or several tests in one process), they cannot.
[[maybe_unused]] int own_thread_count() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
        ::closedir(d);
    }
    return n;
}

#if defined(__SANITIZE_THREAD__)
#define SKIP_IF_CHILDREN_CANNOT_START_THREADS()                                                                  \
    do {                                                                                                         \
        if (const int n = own_thread_count(); n > 1)                                                             \
            GTEST_SKIP() << "ThreadSanitizer refuses threads in children forked from this process (it has " << n \
                         << " threads); run this test on its own, as ctest does";                                \
    } while (0)
#else
#define SKIP_IF_CHILDREN_CANNOT_START_THREADS() \
    do {                                        \
    } while (0)
#endif

#define REQUIRE_EXIT_RECORDS()                                                              \
    do {                                                                                    \
        if (auto why = enable()) GTEST_SKIP() << "no exit records here: " << why.message(); \
    } while (0)

nanoseconds clock_now(clockid_t id) {
    timespec ts{};
    ::clock_gettime(id, &ts);
    return seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec};
}

template <class T>
void send(int fd, const T& v) {
    if (::write(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) ::_exit(3);
}

// Reads one value from a child, failing (not hanging) if it died first.
template <class T>
T receive(int fd) {
    T v{};
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20'000) != 1) {
        ADD_FAILURE() << "the child sent nothing within 20 s";
        return v;
    }
    EXPECT_EQ(::read(fd, &v, sizeof v), static_cast<ssize_t>(sizeof v));
    return v;
}

struct pipe_pair {
    int r = -1, w = -1;
    pipe_pair() {
        int p[2];
        if (::pipe(p) != 0) std::abort();
        r = p[0];
        w = p[1];
    }
    ~pipe_pair() {
        ::close(r);
        ::close(w);
    }
};

// A grandchild that runs `body` once released, then exits; its parent (the
// test's child) waits for it and reaps it the moment it ends, so the zombie
// is usually gone before anyone can read it.
class reaped_at_once {
public:
    explicit reaped_at_once(const std::function<void()>& body)
        : parent_([this, body] {
              const pid_t g = ::fork();
              if (g == 0) {
                  char x;
                  if (::read(go_.r, &x, 1) != 1) ::_exit(4);
                  body();
                  ::_exit(0);
              }
              send(pid_pipe_.w, g);
              ::waitpid(g, nullptr, 0);
              for (;;) ::pause();
              return 0;
          }) {}
    /// Starts the parent; returns the grandchild's pid.
    pid_t start() {
        parent_.start();
        return receive<pid_t>(pid_pipe_.r);
    }
    void release() { ASSERT_EQ(::write(go_.w, "g", 1), 1); }

private:
    pipe_pair pid_pipe_, go_;  // made before the fork
    testing_helpers::forked parent_;
};

}  // namespace

TEST_F(ExitRecords, ThreadOfAnotherProcessEndsWithItsExactRunTime) {
    // The thread burns CPU, reads its own CPU clock as its last act of note,
    // and ends while its process lives on: the kernel frees its accounting at
    // once, so only the record can give its final run time.
    SKIP_IF_CHILDREN_CANNOT_START_THREADS();
    pipe_pair tid_pipe, go, last;
    testing_helpers::forked c([&] {
        std::thread t([&] {
            send(tid_pipe.w, static_cast<pid_t>(::gettid()));
            char x;
            if (::read(go.r, &x, 1) != 1) ::_exit(4);
            burn_thread_cpu(40ms);
            send(last.w, clock_now(CLOCK_THREAD_CPUTIME_ID).count());
        });
        t.join();
        for (;;) ::pause();
        return 0;
    });
    REQUIRE_EXIT_RECORDS();
    c.start();
    const auto tid = receive<pid_t>(tid_pipe.r);
    auto h = thread::open(c.pid(), tid).value();
    const auto before = h.times().value();
    const auto released = system_clock::now();
    ASSERT_EQ(::write(go.w, "g", 1), 1);
    const nanoseconds own{receive<long long>(last.r)};
    ASSERT_TRUE(wait_for_exit(h, 20s).value());
    const auto woke = system_clock::now();
    const auto r = h.times().value();
    // The exit instant from the same record: creation + the kernel's elapsed
    // time, floored like creation (up to one 10 ms tick early), never later
    // than the wake-up. The thread lived at least the 40 ms it burned after
    // its release.
    EXPECT_EQ(r.precision.exit_source, exit_source::exit_record);
    ASSERT_TRUE(r.exit && r.exit_earliest);
    EXPECT_EQ(*r.exit_earliest, *r.exit);
    EXPECT_LE(*r.exit, woke);
    EXPECT_GE(*r.exit + 10ms + 1us, released + 40ms);
    EXPECT_LE(r.precision.exit_resolution, 10ms);
    EXPECT_EQ(r.state, task_state::exited);
    EXPECT_EQ(r.precision.source, cpu_source::exit_record);
    EXPECT_EQ(r.precision.total_resolution, 1ns);
    EXPECT_GE(r.cpu(), own) << "the final run time includes everything the thread saw of itself";
    EXPECT_GE(r.cpu(), before.cpu());
    // After its last clock read the thread only wrote a pipe and returned.
    EXPECT_LE(r.cpu(), own + 20ms);
    ASSERT_TRUE(r.exit.has_value());
    EXPECT_EQ(r.sampled_at, *r.exit);
    EXPECT_EQ(h.times().value().cpu(), r.cpu()) << "final: it never changes";
}

TEST_F(ExitRecords, ThreadOfThisProcess) {
    REQUIRE_EXIT_RECORDS();
    std::atomic<pid_t> tid{0};
    std::atomic<bool> go{false};
    std::atomic<long long> own{0};
    std::thread t([&] {
        tid = static_cast<pid_t>(::gettid());
        while (!go) std::this_thread::sleep_for(1ms);
        burn_thread_cpu(30ms);
        own = clock_now(CLOCK_THREAD_CPUTIME_ID).count();
    });
    while (tid == 0) std::this_thread::sleep_for(1ms);
    auto h = thread::open(::getpid(), tid).value();
    go = true;
    t.join();
    ASSERT_TRUE(wait_for_exit(h, 20s).value());
    const auto r = h.times().value();
    EXPECT_EQ(r.state, task_state::exited);
    EXPECT_EQ(r.precision.source, cpu_source::exit_record);
    EXPECT_GE(r.cpu(), nanoseconds{own.load()});
    EXPECT_LE(r.cpu(), nanoseconds{own.load()} + 20ms);
}

TEST_F(ExitRecords, OneThreadProcessReapedAtOnceHasItsFinalValues) {
    // A grandchild whose parent (our child) waits for it and reaps it the
    // moment it ends. The exit monitor races that parent for the zombie (on
    // the machine tried it lost about one time in five); whichever wins, the
    // handle must end with final values: the zombie's, or the record's.
    int from_record = 0, not_one_thread = 0;
    for (int attempt = 0; attempt < 10; ++attempt) {
        pipe_pair last;
        reaped_at_once c([&] {
            burn_thread_cpu(20ms);
            send(last.w, clock_now(CLOCK_PROCESS_CPUTIME_ID).count());
            send(last.w, testing_helpers::threads_now());
        });
        REQUIRE_EXIT_RECORDS();
        auto h = process::open(c.start()).value();
        c.release();
        const nanoseconds own{receive<long long>(last.r)};
        const int threads = receive<int>(last.r);
        ASSERT_TRUE(wait_for_exit(h, 20s).value());
        const auto r = h.times().value();
        SCOPED_TRACE("attempt " + std::to_string(attempt) + ", source " + std::string(to_string(r.precision.source)));
        if (threads != 1) {
            // Not the case under test: ThreadSanitizer's runtime starts a
            // helper thread in a process forked from a one-thread process
            // (here, the first grandchild), and a process that had two
            // threads must not be given its last thread's record. Its
            // zombie's values, or honestly its last sample.
            EXPECT_NE(r.precision.source, cpu_source::exit_record);
            if (r.state == task_state::exited) {
                EXPECT_GE(r.cpu(), own);
            }
            ++not_one_thread;
            continue;
        }
        EXPECT_EQ(r.state, task_state::exited) << "never a partial value";
        EXPECT_GE(r.cpu(), own);
        EXPECT_LE(r.cpu(), own + 20ms);
        // The record dates the end too, whether or not the zombie was read.
        EXPECT_EQ(r.precision.exit_source, exit_source::exit_record);
        if (r.precision.source == cpu_source::exit_record) ++from_record;
    }
    RecordProperty("final_values_from_records", from_record);
    if (not_one_thread == 10) GTEST_SKIP() << "every grandchild had a second thread (a sanitizer's): nothing tested";
}

TEST_F(ExitRecords, AProcessThatHadTwoThreadsIsNotGivenOneThreadsRecord) {
    // The last thread's record is not the process's total when another thread
    // ran before: such a process keeps the zombie's values or its last sample.
    SKIP_IF_CHILDREN_CANNOT_START_THREADS();
    reaped_at_once c([] {
        std::thread([] { burn_thread_cpu(20ms); }).join();
        burn_thread_cpu(10ms);
    });
    REQUIRE_EXIT_RECORDS();
    auto h = process::open(c.start()).value();
    c.release();
    ASSERT_TRUE(wait_for_exit(h, 20s).value());
    const auto r = h.times().value();
    EXPECT_NE(r.precision.source, cpu_source::exit_record);
    if (r.state == task_state::exited) {
        EXPECT_GE(r.cpu(), 30ms) << "the zombie was read: both threads' time";
    }
}

TEST_F(ExitRecords, WithoutCapNetAdminTheListenerIsRefusedAndHandlesStillWork) {
    SKIP_IF_CHILDREN_CANNOT_START_THREADS();
    testing_helpers::forked c([] {
        __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct data[2]{};
        if (::syscall(SYS_capget, &hdr, data) != 0) return 10;
        data[CAP_NET_ADMIN / 32].effective &= ~(1u << (CAP_NET_ADMIN % 32));
        if (::syscall(SYS_capset, &hdr, data) != 0) return 11;
        set_exit_records_enabled(true);
        const auto why = exit_records_status();  // a new monitor: this is a forked child
        if (why != std::errc::operation_not_permitted) return 12;
        auto self = process::open(::getpid());
        if (!self || !self->times()) return 13;
        return 0;
    });
    REQUIRE_EXIT_RECORDS();
    c.start();
    const int status = c.reap();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The taskstats exit stream gives a process's end the status wait(2)
// reports, whichever of its threads ends last: the leader itself, another
// thread after the leader left, or the thread a fatal signal takes last.
TEST(ExitStreamTaskstats, AProcessEndsWithItsStatusWhicheverThreadEndsLast) {
    SKIP_IF_CHILDREN_CANNOT_START_THREADS();
    int go[2];
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    // Each child waits for the stream to be open, then ends.
    auto child = [&](auto&& body) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::close(go[1]);
            char ch;
            (void)!::read(go[0], &ch, 1);
            body();
            ::_exit(99);
        }
        return pid;
    };
    const pid_t alone = child([] { ::_exit(5); });
    const pid_t leader_left = child([] {
        // The leader leaves first (its own code, 0); the other thread then
        // ends the process with exit_group(2), so the last record is its.
        pthread_t t;
        ::pthread_create(
            &t, nullptr,
            [](void*) -> void* {
                ::usleep(50'000);
                ::_exit(3);
            },
            nullptr);
        ::syscall(SYS_exit, 0);  // this thread only, without unwinding the test's frames
    });
    const pid_t signalled = child([] {
        pthread_t t;
        ::pthread_create(
            &t, nullptr,
            [](void*) -> void* {
                for (;;) ::pause();
            },
            nullptr);
        ::usleep(50'000);
        ::raise(SIGTERM);
    });
    ::close(go[0]);
    ASSERT_GT(alone, 0);
    ASSERT_GT(leader_left, 0);
    ASSERT_GT(signalled, 0);
    auto s = exit_stream::open(exit_stream_source::taskstats);
    if (!s) {
        ::close(go[1]);
        for (pid_t p : {alone, leader_left, signalled}) ::waitpid(p, nullptr, 0);
        GTEST_SKIP() << "the taskstats exit stream cannot open here: " << s.error().message();
    }
    ::close(go[1]);  // every child goes
    std::map<pid_t, int> waited;
    for (pid_t p : {alone, leader_left, signalled}) {
        int st = 0;
        ASSERT_EQ(::waitpid(p, &st, 0), p);
        waited[p] = st;
    }
    std::map<pid_t, ended_task> ends;
    std::vector<ended_task> got;
    for (int i = 0; i < 50 && ends.size() < 3; ++i) {
        (void)s->wait(100ms);
        got.clear();
        ASSERT_TRUE(s->read(got));
        for (auto& t : got)
            if (t.process_ended && waited.count(t.pid) != 0) ends[t.pid] = t;
    }
    ASSERT_EQ(ends.size(), 3u) << "every end came within 5 s";
    for (const auto& [pid, st] : waited) {
        const auto& t = ends[pid];
        ASSERT_TRUE(t.status) << "pid " << pid;
        if (WIFEXITED(st)) {
            EXPECT_EQ(t.status->code, WEXITSTATUS(st)) << "pid " << pid;
            EXPECT_FALSE(t.status->signaled());
        } else {
            ASSERT_TRUE(WIFSIGNALED(st));
            EXPECT_EQ(t.status->signal, WTERMSIG(st)) << "pid " << pid;
        }
    }
    EXPECT_EQ(WEXITSTATUS(waited[alone]), 5);
    EXPECT_EQ(WEXITSTATUS(waited[leader_left]), 3);
    EXPECT_EQ(WTERMSIG(waited[signalled]), SIGTERM);
    EXPECT_NE(ends[leader_left].tid, leader_left) << "the last thread was not the leader";
}

TEST(ExitRecordsOff, StatusSaysNotSupportedWhenNotEnabled) {
    set_exit_records_enabled(false);
    EXPECT_FALSE(exit_records_enabled());
    EXPECT_EQ(exit_records_status(), errc::not_supported);
}
