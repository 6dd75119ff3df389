// SPDX-License-Identifier: MIT
// A child for the process-tree tests.
//   tree_threads <threads> <ms>      starts <threads> more threads, each
//                                    burning <ms> of CPU, joins them, exits 0
//   tree_threads exec <program> ...  a thread other than the main one execs
//                                    <program> with the remaining arguments
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {
long long thread_cpu_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "exec") == 0) {
        std::thread([argv] {
            ::execv(argv[2], argv + 2);
            ::_exit(126);
        }).join();
        return 125;
    }
    const int n = argc > 1 ? std::atoi(argv[1]) : 2;
    const long long ms = argc > 2 ? std::atoll(argv[2]) : 20;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(n > 0 ? n : 0));
    for (int i = 0; i < n; ++i)
        threads.emplace_back([ms] {
            const long long start = thread_cpu_ns();
            volatile unsigned long sink = 0;
            while (thread_cpu_ns() - start < ms * 1'000'000)
                for (int j = 0; j < 100'000; ++j) sink = sink + static_cast<unsigned long>(j);
        });
    for (auto& t : threads) t.join();
    return 0;
}
