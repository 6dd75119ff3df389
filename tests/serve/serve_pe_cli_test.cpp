// SPDX-License-Identifier: MIT
// `serve --once --namedprocess` against a child that does known work:
// touches 64 MiB, writes and fsyncs 4 MiB, opens 50 descriptors, sleeps 20
// times. Its group must show at least that much, and the counters must not
// go back when the child ends.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include "cli.hpp"
#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

namespace {

using serve_testing::value_of;

// The "Threads:" count /proc/<pid>/status gives, or -1.
double threads_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("Threads:", 0) == 0) return std::stod(line.substr(8));
    return -1;
}

constexpr std::size_t mem_bytes = std::size_t{64} << 20;
constexpr std::size_t write_bytes = std::size_t{4} << 20;
constexpr int extra_fds = 50;
constexpr int sleeps = 20;

// A child named `name` that does the work above, then says so on `ready`
// and waits for `release` to close. Only async-signal-safe calls after fork.
struct worker {
    pid_t pid = -1;
    int release = -1;
    std::string file;

    worker(const std::string& name, const std::string& path) : file(path) {
        int ready[2], rel[2];
        if (::pipe2(ready, O_CLOEXEC) != 0 || ::pipe2(rel, O_CLOEXEC) != 0) return;
        pid = ::fork();
        if (pid == 0) {
            ::close(ready[0]);
            ::close(rel[1]);  // else the child holds open the end whose closing releases it
            ::prctl(PR_SET_NAME, name.c_str());
            void* m = ::mmap(nullptr, mem_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) ::_exit(1);
            std::memset(m, 1, mem_bytes);
            const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            static char block[65536];
            std::memset(block, 'x', sizeof block);
            for (std::size_t done = 0; fd >= 0 && done < write_bytes; done += sizeof block)
                if (::write(fd, block, sizeof block) != static_cast<ssize_t>(sizeof block)) ::_exit(2);
            if (fd < 0 || ::fsync(fd) != 0) ::_exit(3);
            for (int i = 0; i < extra_fds; ++i)
                if (::open("/dev/null", O_RDONLY | O_CLOEXEC) < 0) ::_exit(4);
            for (int i = 0; i < sleeps; ++i) {
                const timespec ms{0, 1'000'000};
                ::nanosleep(&ms, nullptr);
            }
            char c = 1;
            (void)::write(ready[1], &c, 1);
            (void)::read(rel[0], &c, 1);  // until the test closes its end
            ::_exit(0);
        }
        ::close(ready[1]);
        ::close(rel[0]);
        char c = 0;
        if (::read(ready[0], &c, 1) != 1) pid = -1;
        ::close(ready[0]);
        release = rel[1];
    }
    void end() {
        if (release >= 0) ::close(release), release = -1;
        if (pid > 0) ::waitpid(pid, nullptr, 0), pid = -1;
    }
    ~worker() {
        if (pid > 0) ::kill(pid, SIGKILL);
        end();
        ::unlink(file.c_str());
    }
};

std::string unique_name(const char* prefix) { return prefix + std::to_string(::getpid() % 1000000); }
std::string scratch(const std::string& name) { return "serve-pe-" + name + ".data"; }  // on disk: the build tree

}  // namespace

TEST(ServePeCli, FamiliesOfAChildWithKnownWork) {
    const std::string name = unique_name("ptpe");
    worker w(name, scratch(name));
    ASSERT_GT(w.pid, 0);
    std::ostringstream o, e;
    ASSERT_EQ(
        proctimes::cli::run({"serve", "--once", "--namedprocess", "--include", "^" + name + "$", "--top", "0"}, o, e),
        0)
        << e.str();
    const std::string out = o.str();
    const std::string g = "{groupname=\"" + name + "\"";
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_num_procs" + g + "}"), 1) << out;
    EXPECT_GE(value_of(out, "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"resident\"}"),
              static_cast<double>(mem_bytes));
    EXPECT_GE(value_of(out, "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"virtual\"}"),
              static_cast<double>(mem_bytes));
    EXPECT_GE(value_of(out, "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"swapped\"}"), 0);
    EXPECT_EQ(out.find("memtype=\"proportionalResident\""), std::string::npos);  // only with --gather-smaps
    EXPECT_GE(value_of(out, "namedprocess_namegroup_write_bytes_total" + g + "}"), static_cast<double>(write_bytes));
    EXPECT_GE(value_of(out, "namedprocess_namegroup_read_bytes_total" + g + "}"), 0);
    // Touching 64 MiB faults at least once per 2 MiB (a huge page), usually per 4 KiB page.
    EXPECT_GE(value_of(out, "namedprocess_namegroup_minor_page_faults_total" + g + "}"), 32);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_major_page_faults_total" + g + "}"), 0);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_open_filedesc" + g + "}"), extra_fds);
    const double ratio = value_of(out, "namedprocess_namegroup_worst_fd_ratio" + g + "}");
    EXPECT_GT(ratio, 0);
    EXPECT_LE(ratio, 1);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_context_switches_total" + g + ",ctxswitchtype=\"voluntary\"}"),
              sleeps);
    EXPECT_GE(value_of(out, "namedprocess_namegroup_context_switches_total" + g + ",ctxswitchtype=\"nonvoluntary\"}"),
              0);
    // Blocked in read(2): sleeping; one process, one state.
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_states" + g + ",state=\"Sleeping\"}"), 1) << out;
    double states = 0;
    for (const char* s : {"Running", "Sleeping", "Waiting", "Zombie", "Other"})
        states += value_of(out, "namedprocess_namegroup_states" + g + ",state=\"" + s + "\"}");
    EXPECT_EQ(states, 1);
    // As many threads as the kernel lists for it (one, but a sanitizer's
    // runtime may add its own to a forked child).
    EXPECT_EQ(value_of(out, "namedprocess_namegroup_num_threads" + g + "}"), threads_of(w.pid));
    EXPECT_GT(value_of(out, "namedprocess_namegroup_oldest_start_time_seconds" + g + "}"), 1.5e9);
    // Exporter-level families, named as process-exporter names them.
    EXPECT_NE(out.find("# TYPE namedprocess_scrape_errors counter\nnamedprocess_scrape_errors 0\n"), std::string::npos);
    EXPECT_GE(value_of(out, "namedprocess_scrape_partial_errors"), 0);
    EXPECT_GE(value_of(out, "namedprocess_scrape_procread_errors"), 0);
    EXPECT_NE(out.find("\nprocess_exporter_build_info{branch=\"\",goarch="), std::string::npos) << out;
    // Without --namedprocess none of it is read or written.
    std::ostringstream o2, e2;
    ASSERT_EQ(proctimes::cli::run({"serve", "--once", "--include", "^" + name + "$", "--top", "0"}, o2, e2), 0);
    EXPECT_EQ(o2.str().find("namedprocess_"), std::string::npos);
    EXPECT_EQ(o2.str().find("process_exporter_build_info"), std::string::npos);
}

TEST(ServePeCli, GatherSmapsAddsTheProportionalTypes) {
    const std::string name = unique_name("ptps");
    worker w(name, scratch(name));
    ASSERT_GT(w.pid, 0);
    std::ostringstream o, e;
    ASSERT_EQ(
        proctimes::cli::run(
            {"serve", "--once", "--namedprocess", "--gather-smaps", "--include", "^" + name + "$", "--top", "0"}, o, e),
        0)
        << e.str();
    const std::string g = "{groupname=\"" + name + "\"";
    // The child's 64 MiB are private to it: its proportional share is all of them.
    EXPECT_GE(value_of(o.str(), "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"proportionalResident\"}"),
              static_cast<double>(mem_bytes))
        << o.str();
    EXPECT_GE(value_of(o.str(), "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"proportionalSwapped\"}"), 0);
}

TEST(ServePeCli, CountersKeepWhatEndedMembersHad) {
    const std::string name = unique_name("ptpk");
    std::string error;
    auto col = serve_testing::namedprocess_collector(name, false, error);
    ASSERT_TRUE(col) << error;
    worker w(name, scratch(name));
    ASSERT_GT(w.pid, 0);
    const std::string g = "{groupname=\"" + name + "\"";
    const std::string live = col->scrape(proctimes::cli::serve::format::text_004);
    const double wrote = value_of(live, "namedprocess_namegroup_write_bytes_total" + g + "}");
    const double faults = value_of(live, "namedprocess_namegroup_minor_page_faults_total" + g + "}");
    const double vol =
        value_of(live, "namedprocess_namegroup_context_switches_total" + g + ",ctxswitchtype=\"voluntary\"}");
    ASSERT_GE(wrote, static_cast<double>(write_bytes)) << live;
    w.end();
    ::usleep(150'000);  // scrapes closer than 100 ms share one collection
    const std::string after = col->scrape(proctimes::cli::serve::format::text_004);
    EXPECT_EQ(value_of(after, "namedprocess_namegroup_num_procs" + g + "}"), 0) << after;
    EXPECT_GE(value_of(after, "namedprocess_namegroup_write_bytes_total" + g + "}"), wrote);
    EXPECT_GE(value_of(after, "namedprocess_namegroup_minor_page_faults_total" + g + "}"), faults);
    EXPECT_GE(value_of(after, "namedprocess_namegroup_context_switches_total" + g + ",ctxswitchtype=\"voluntary\"}"),
              vol);
    // The gauges are of the collection alone: no member, no memory.
    EXPECT_EQ(value_of(after, "namedprocess_namegroup_memory_bytes" + g + ",memtype=\"resident\"}"), 0);
    EXPECT_EQ(value_of(after, "namedprocess_namegroup_open_filedesc" + g + "}"), 0);
}
