// SPDX-License-Identifier: MIT
// A helper for the `proctimes run --threads` tests: starts N threads named
// "burn-0".."burn-N-1", each of which burns CPU for MS milliseconds of its own
// CPU time and exits; the main thread joins them and exits 0.
//   thread_burner N MS
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

thread_local volatile unsigned long sink = 0;  // per thread: the burners share nothing

long long thread_cpu_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: thread_burner N MS\n");
        return 2;
    }
    const int n = std::atoi(argv[1]);
    const long long burn_ns = std::atoll(argv[2]) * 1'000'000LL;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(std::max(n, 0)));
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([i, burn_ns] {
            const std::string name = "burn-" + std::to_string(i);
            ::pthread_setname_np(::pthread_self(), name.c_str());
            const long long start = thread_cpu_ns();
            while (thread_cpu_ns() - start < burn_ns) {
                for (int k = 0; k < 10000; ++k) sink = sink + static_cast<unsigned long>(k);
            }
        });
    }
    for (auto& t : threads) t.join();
    return 0;
}
