// SPDX-License-Identifier: MIT
// `serve --namedprocess`: the exporter's own process_* metrics (the Go
// client's process collector, which process-exporter serves), against
// /proc/self and getrlimit; and namedprocess_namegroup_threads_wchan against
// a child whose four threads wait in read(2) on a pipe.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "scrape_text.hpp"
#include "serve/collect/collector.hpp"

namespace {

using serve_testing::value_of;

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Field n (proc(5) numbering, n >= 3) of /proc/self/stat.
double stat_field(int n) {
    const std::string s = slurp("/proc/self/stat");
    std::istringstream in(s.substr(s.rfind(')') + 2));
    std::string t;
    for (int i = 3; i <= n; ++i) in >> t;
    return std::stod(t);
}

// This process's CPU, exact to the microsecond.
double cpu_now() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void burn(double seconds) {
    const double end = cpu_now() + seconds;
    volatile unsigned x = 0;
    while (cpu_now() < end)
        for (int i = 0; i < 100000; ++i) x = x + static_cast<unsigned>(i);
}

double limit_value(int resource) {
    rlimit r{};
    ::getrlimit(resource, &r);
    return r.rlim_cur == RLIM_INFINITY ? 18446744073709551615.0 : static_cast<double>(r.rlim_cur);
}

}  // namespace

TEST(ServeSelfMetrics, ProcessMetricsAgreeWithProcSelf) {
    std::string error;
    auto col = serve_testing::namedprocess_collector("no-such-group-xyz", false, error);
    ASSERT_TRUE(col) << error;
    const double cpu_before = cpu_now();
    const std::string a = col->scrape(proctimes::cli::serve::format::text_004);
    const double cpu_after = cpu_now();
    const double cpu_a = value_of(a, "process_cpu_seconds_total");
    // Exact: between the microsecond totals before and after the scrape (the
    // Go client's ticks would fall up to 10 ms short of the first).
    EXPECT_GE(cpu_a, cpu_before - 1e-9);
    EXPECT_LE(cpu_a, cpu_after + 1e-9);
    for (const char* help : {"# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
                             "# TYPE process_cpu_seconds_total counter\n",
                             "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                             "# TYPE process_resident_memory_bytes gauge\n",
                             "# HELP process_start_time_seconds Start time of the process since unix epoch in "
                             "seconds.\n# TYPE process_start_time_seconds gauge\n",
                             "# TYPE process_virtual_memory_max_bytes gauge\n", "# TYPE process_open_fds gauge\n",
                             "# TYPE process_max_fds gauge\n", "# TYPE process_virtual_memory_bytes gauge\n"})
        EXPECT_NE(a.find(help), std::string::npos) << help;

    EXPECT_EQ(value_of(a, "process_max_fds"), limit_value(RLIMIT_NOFILE));
    EXPECT_EQ(value_of(a, "process_virtual_memory_max_bytes"), limit_value(RLIMIT_AS));
    // Start: btime + stat field 22, as the Go client computes it.
    const std::string st = slurp("/proc/stat");
    const double btime = std::stod(st.substr(st.find("\nbtime ") + 7));
    EXPECT_NEAR(value_of(a, "process_start_time_seconds"),
                btime + stat_field(22) / static_cast<double>(::sysconf(_SC_CLK_TCK)), 1e-6);
    // Memory and descriptors move a little between two reads: brackets.
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    const double rss = stat_field(24) * page, vsz = stat_field(23);
    EXPECT_NEAR(value_of(a, "process_resident_memory_bytes"), rss, rss * 0.25);
    EXPECT_NEAR(value_of(a, "process_virtual_memory_bytes"), vsz, vsz * 0.25);
    int fds = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) fds += e.path().empty() ? 0 : 1;
    EXPECT_NEAR(value_of(a, "process_open_fds"), fds - 1, 3);

    // CPU is monotonic across scrapes and sees the CPU burnt in between.
    burn(0.2);
    const std::string b = col->scrape(proctimes::cli::serve::format::text_004);
    const double cpu_b = value_of(b, "process_cpu_seconds_total");
    EXPECT_GE(cpu_b, cpu_a + 0.19);
    EXPECT_LE(cpu_b, cpu_now() + 1e-9);
}

namespace {
int g_pipe_read = -1;
void* wait_on_pipe(void*) {
    char c;
    (void)::read(g_pipe_read, &c, 1);
    return nullptr;
}

// The sum of threads_wchan samples of `group`, and the one for `wchan`.
std::pair<double, double> wchan_counts(const std::string& text, const std::string& group, const std::string& wchan) {
    double sum = 0, one = 0;
    const std::string head = "namedprocess_namegroup_threads_wchan{groupname=\"" + group + "\",wchan=\"";
    for (auto at = text.find("\n" + head); at != std::string::npos; at = text.find("\n" + head, at + 1)) {
        const auto close = text.find("\"}", at);
        const std::string w = text.substr(at + 1 + head.size(), close - at - 1 - head.size());
        const double v = std::stod(text.substr(close + 3));
        sum += v;
        if (w == wchan) one = v;
    }
    return {sum, one};
}
}  // namespace

TEST(ServeThreadsWchan, CountsTheProcessAndWithThreadsEachThread) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(p[1]);
        g_pipe_read = p[0];
        ::prctl(PR_SET_NAME, "pe-wchan-kid");
        pthread_t t[3];
        for (auto& x : t) ::pthread_create(&x, nullptr, wait_on_pipe, nullptr);
        wait_on_pipe(nullptr);
        ::_exit(0);
    }
    ::close(p[0]);
    // Until the four threads are blocked in read(2): the child's task list has
    // four entries and each wchan is the same non-zero symbol.
    std::string wchan;
    for (int i = 0; i < 200; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        int n = 0;
        bool same = true;
        std::string first;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(child) + "/task", ec)) {
            std::string w = slurp(e.path().string() + "/wchan");
            if (first.empty()) first = w;
            same = same && w == first && !w.empty() && w != "0";
            ++n;
        }
        if (n == 4 && same) {
            wchan = first;
            break;
        }
    }
    if (wchan.empty()) {
        ::close(p[1]);
        ::waitpid(child, nullptr, 0);
        GTEST_SKIP() << "the kernel shows no wchan symbol here (it may need root)";
    }
    for (const bool threads : {false, true}) {
        std::string error;
        auto col = serve_testing::namedprocess_collector("pe-wchan-kid", threads, error);
        ASSERT_TRUE(col) << error;
        const std::string text = col->scrape(proctimes::cli::serve::format::text_004);
        const auto [sum, one] = wchan_counts(text, "pe-wchan-kid", wchan);
        // The process's own wchan; with --threads, each of its 4 threads too.
        EXPECT_EQ(one, threads ? 5 : 1) << "threads " << threads << "\n" << text.substr(0, 0);
        EXPECT_EQ(sum, one);
        EXPECT_NE(text.find("# TYPE namedprocess_namegroup_threads_wchan gauge\n"), std::string::npos);
    }
    ::close(p[1]);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
}
