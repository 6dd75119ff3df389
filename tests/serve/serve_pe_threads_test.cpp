// SPDX-License-Identifier: MIT
// `serve --namedprocess --threads`: process-exporter's per-thread-name
// families, against a child whose named threads do known work: two "ptw-a"
// threads that sleep 20 times each, one "ptw-b" that burns CPU, touches
// 16 MiB and writes and fsyncs 1 MiB. One "ptw-a" then ends: the counters of
// its name keep what it had.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sstream>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

namespace {

using serve_testing::value_of;

constexpr std::size_t touch_bytes = std::size_t{16} << 20;
constexpr std::size_t write_bytes = std::size_t{1} << 20;
constexpr int sleeps = 20;

struct child_pipes {
    int ready = -1;    // the child writes one byte per thread that has done its work
    int end_a = -1;    // closing it ends the first ptw-a thread
    int end_all = -1;  // closing it ends the child
};

int g_end_a = -1, g_end_all = -1, g_ready = -1;
const char* g_file = nullptr;

void* thread_a(void* last) {
    ::prctl(PR_SET_NAME, "ptw-a");
    for (int i = 0; i < sleeps; ++i) {
        const timespec ms{0, 1'000'000};
        ::nanosleep(&ms, nullptr);
    }
    char c = 1;
    (void)::write(g_ready, &c, 1);
    (void)::read(last != nullptr ? g_end_all : g_end_a, &c, 1);
    return nullptr;
}

void* thread_b(void*) {
    ::prctl(PR_SET_NAME, "ptw-b");
    void* m = ::mmap(nullptr, touch_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) std::memset(m, 1, touch_bytes);
    const int fd = ::open(g_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    static char block[65536];
    std::memset(block, 'y', sizeof block);
    for (std::size_t done = 0; fd >= 0 && done < write_bytes; done += sizeof block)
        (void)::write(fd, block, sizeof block);
    if (fd >= 0) ::fsync(fd), ::close(fd);
    timespec t0{}, t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile unsigned spin = 0;
    do {
        for (int i = 0; i < 100000; ++i) spin = spin + 1;
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1'000'000'000L + (t.tv_nsec - t0.tv_nsec) < 150'000'000L);
    char c = 1;
    (void)::write(g_ready, &c, 1);
    (void)::read(g_end_all, &c, 1);
    return nullptr;
}

}  // namespace

TEST(ServePeThreads, ThreadNameFamilies) {
    // The counts below are the child's own threads by name; ThreadSanitizer's
    // runtime adds a thread of its own to a forked child. The main and ASan
    // runs check them.
    if (const char* san = std::getenv("PROCTIMES_SANITIZER"); san && std::string_view(san) == "tsan")
        GTEST_SKIP() << "ThreadSanitizer adds a thread of its own to the forked child";
    const std::string name = "ptwt" + std::to_string(::getpid() % 1000000);
    const std::string file = "serve-pe-threads-" + name + ".data";
    int ready[2], end_a[2], end_all[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(end_a, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(end_all, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(ready[0]), ::close(end_a[1]), ::close(end_all[1]);
        g_ready = ready[1], g_end_a = end_a[0], g_end_all = end_all[0], g_file = file.c_str();
        ::prctl(PR_SET_NAME, name.c_str());
        pthread_t t[3];
        static int last = 1;
        if (::pthread_create(&t[0], nullptr, thread_a, nullptr) != 0 ||
            ::pthread_create(&t[1], nullptr, thread_a, &last) != 0 ||
            ::pthread_create(&t[2], nullptr, thread_b, nullptr) != 0)
            ::_exit(1);
        ::pthread_join(t[0], nullptr);
        char c = 1;
        (void)::write(g_ready, &c, 1);  // the first ptw-a has ended
        (void)::read(g_end_all, &c, 1);
        ::_exit(0);
    }
    ::close(ready[1]), ::close(end_a[0]), ::close(end_all[0]);
    char c;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(::read(ready[0], &c, 1), 1);

    std::string error;
    auto col = serve_testing::namedprocess_collector(name, true, error);
    ASSERT_TRUE(col) << error;
    const std::string out = col->scrape(proctimes::cli::serve::format::text_004);
    const std::string g = "{groupname=\"" + name + "\",threadname=\"";
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_thread_count" + g + "ptw-a\"}"), 2) << out;
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_thread_count" + g + "ptw-b\"}"), 1);
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_thread_count" + g + name + "\"}"), 1);
    const std::string a_vol =
        "namedprocess_namegroup_thread_context_switches_total" + g + "ptw-a\",ctxswitchtype=\"voluntary\"}";
    const double vol_a = value_of(out, a_vol);
    EXPECT_GE(vol_a, 2 * sleeps);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_thread_io_bytes_total" + g + "ptw-b\",iomode=\"write\"}"),
              static_cast<double>(write_bytes));
    EXPECT_GE(value_of(out, "namedprocess_namegroup_thread_io_bytes_total" + g + "ptw-b\",iomode=\"read\"}"), 0);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_thread_minor_page_faults_total" + g + "ptw-b\"}"), 8);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_thread_major_page_faults_total" + g + "ptw-b\"}"), 0);
    // 150 ms of CPU, counted in 10 ms ticks that may fall either side of the split.
    const double b_cpu =
        value_of(out, "namedprocess_namegroup_thread_cpu_seconds_total" + g + "ptw-b\",mode=\"user\"}") +
        value_of(out, "namedprocess_namegroup_thread_cpu_seconds_total" + g + "ptw-b\",mode=\"system\"}");
    EXPECT_GE(b_cpu, 0.12);
    // The process's context switches are its threads'.
    const std::string pg = "{groupname=\"" + name + "\"";
    EXPECT_GE(value_of(out, "namedprocess_namegroup_context_switches_total" + pg + ",ctxswitchtype=\"voluntary\"}"),
              2 * sleeps);
    // process-exporter's state count: the process, then each of its 4 threads.
    double states = 0;
    for (const char* s : {"Running", "Sleeping", "Waiting", "Zombie", "Other"})
        states += value_of(out, "namedprocess_namegroup_states" + pg + ",state=\"" + s + "\"}");
    EXPECT_EQ(states, 5) << out;

    // One ptw-a ends: its name's count drops, its counters do not.
    ::close(end_a[1]);
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::usleep(150'000);
    const std::string after = col->scrape(proctimes::cli::serve::format::text_004);
    EXPECT_EQ(value_of(after, "namedprocess_namegroup_thread_count" + g + "ptw-a\"}"), 1) << after;
    EXPECT_GE(value_of(after, a_vol), vol_a);

    // Without --threads: no thread families.
    std::ostringstream o, e;
    ASSERT_EQ(
        proctimes::cli::run({"serve", "--once", "--namedprocess", "--include", "^" + name + "$", "--top", "0"}, o, e),
        0);
    EXPECT_EQ(o.str().find("namedprocess_namegroup_thread_"), std::string::npos);
    EXPECT_GE(value_of(o.str(), "namedprocess_namegroup_context_switches_total" + pg + ",ctxswitchtype=\"voluntary\"}"),
              sleeps);  // the remaining ptw-a's, at least: read per thread without --threads too

    ::close(end_all[1]);
    ::close(ready[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ::unlink(file.c_str());
}
