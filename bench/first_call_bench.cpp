// SPDX-License-Identifier: MIT
// What the first GetThreadTimes(GetCurrentThread(), ...) of a thread costs
// next to its second: the CPU time of the calling thread around each, over
// many fresh threads (docs/PERFORMANCE.md). The first call of a thread other
// than the main one looks its creation instant up in /proc once, when asked
// for it; kernel and user time alone, and the main thread, need no file.
//
//   first_call_bench [threads]
#include <proctimes/windows.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace {

long long thread_cpu_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

struct costs {
    std::vector<long long> first, second;
};

// One fresh thread per sample; `creation`: ask for every output, or for
// kernel and user time only.
costs measure(int threads, bool creation) {
    costs c;
    c.first.resize(static_cast<std::size_t>(threads));
    c.second.resize(static_cast<std::size_t>(threads));
    for (int i = 0; i < threads; ++i) {
        std::thread t([&, i] {
            FILETIME cr, ex, k, u;
            FILETIME* pcr = creation ? &cr : nullptr;
            FILETIME* pex = creation ? &ex : nullptr;
            const long long a = thread_cpu_ns();
            GetThreadTimes(GetCurrentThread(), pcr, pex, &k, &u);
            const long long b = thread_cpu_ns();
            GetThreadTimes(GetCurrentThread(), pcr, pex, &k, &u);
            const long long d = thread_cpu_ns();
            c.first[static_cast<std::size_t>(i)] = b - a;
            c.second[static_cast<std::size_t>(i)] = d - b;
        });
        t.join();
    }
    return c;
}

void print(const char* what, std::vector<long long> v) {
    std::sort(v.begin(), v.end());
    std::printf("%-44s min %7.1f  median %7.1f  p90 %7.1f us\n", what, static_cast<double>(v.front()) / 1e3,
                static_cast<double>(v[v.size() / 2]) / 1e3, static_cast<double>(v[v.size() * 9 / 10]) / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::max(10, std::atoi(argv[1])) : 200;
    // The main thread: its creation is the process's.
    FILETIME cr, ex, k, u;
    const long long a = thread_cpu_ns();
    GetThreadTimes(GetCurrentThread(), &cr, &ex, &k, &u);
    const long long b = thread_cpu_ns();
    std::printf("%-44s %7.1f us (once per process: the boot anchor and /proc/self/stat)\n",
                "main thread, first call, every output", static_cast<double>(b - a) / 1e3);
    const costs all = measure(threads, true);
    const costs ku = measure(threads, false);
    print("new thread, first call, every output", all.first);
    print("new thread, second call, every output", all.second);
    print("new thread, first call, kernel+user only", ku.first);
    print("new thread, second call, kernel+user only", ku.second);
    return 0;
}
