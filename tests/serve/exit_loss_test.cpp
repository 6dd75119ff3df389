// SPDX-License-Identifier: MIT
// Exit records lost under `proctimes serve`: an exporter stopped (SIGSTOP)
// while hundreds of processes end, its eBPF ring buffer made small, must count
// each end it lost in proctimes_exit_records_lost_total, not the times it
// found some lost.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "harness.hpp"
#include "scrape_text.hpp"

using namespace serve_test;
using namespace std::chrono_literals;

namespace {

// Ends `n` processes (fork, _exit, reaped at once); false if one could not start.
bool end_processes(int n) {
    for (int i = 0; i < n; ++i) {
        const pid_t c = ::fork();
        if (c < 0) return false;
        if (c == 0) ::_exit(0);
        if (::waitpid(c, nullptr, 0) != c) return false;
    }
    return true;
}

}  // namespace

TEST(ServeExitLoss, EachEndTheRingHadNoRoomForIsCounted) {
    const std::string dir = temp_dir("exitloss");
    ASSERT_FALSE(dir.empty());
    // One page: about 34 records fit while the exporter does not read them.
    ::setenv("PROCTIMES_BPF_EXIT_RING_KIB", "4", 1);
    program serve({serve_bin(PROCTIMES_BIN), "serve", "--listen", "127.0.0.1:0", "--port-file", dir + "/port"},
                  dir + "/serve.log");
    ::unsetenv("PROCTIMES_BPF_EXIT_RING_KIB");
    const std::string port_text = wait_for_file(dir + "/port", 20s);
    ASSERT_FALSE(port_text.empty()) << "serve did not start: " << read_text(dir + "/serve.log");
    const int port = std::stoi(port_text);
    const http_answer first = http_get(port, "/metrics", 20s);
    ASSERT_EQ(first.status, 200) << read_text(dir + "/serve.log");
    if (first.body.find("exits=\"bpf\"") == std::string::npos)
        GTEST_SKIP() << "the exporter does not take eBPF exit records here (not root, or no BTF)";
    const double before = serve_testing::value_of(first.body, "proctimes_exit_records_lost_total");
    ASSERT_GE(before, 0) << first.body;

    constexpr int storm = 400;
    ASSERT_EQ(::kill(serve.pid(), SIGSTOP), 0);
    const bool ended = end_processes(storm);
    // The frees run an RCU grace period after each reap (longer on a loaded machine).
    std::this_thread::sleep_for(1s);
    ::kill(serve.pid(), SIGCONT);
    ASSERT_TRUE(ended) << "could not start the processes";

    const http_answer after = http_get(port, "/metrics", 20s);
    ASSERT_EQ(after.status, 200) << read_text(dir + "/serve.log");
    const double lost = serve_testing::value_of(after.body, "proctimes_exit_records_lost_total") - before;
    // At most a page of records fit: nearly every one of the storm's ends was
    // lost, and each is counted (other processes' ends may add to it).
    EXPECT_GE(lost, storm - 64) << after.body;
    const int st = serve.stop();
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "wait status " << st << ": " << read_text(dir + "/serve.log");
    remove_unless_failed(dir, HasFailure());
}
