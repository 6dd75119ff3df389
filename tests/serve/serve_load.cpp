// SPDX-License-Identifier: MIT
// A load for the serve tests and bench: named (comm) so that `proctimes serve
// --group-by name` groups it.
//   serve_load burn SECONDS LOG      one CPU busy; appends "realtime_s cpu_s" to LOG every 100 ms
//   serve_load short N MS OUT SECS   after 2.5 s, up to N children one after another (no new one
//                                    after SECS seconds: a loaded machine gives each less CPU), each
//                                    busy MS ms of CPU, reaped at once; writes "children_cpu_s
//                                    self_cpu_s (since it took the name) realtime_s count" to OUT,
//                                    then lingers 1 s
//   serve_load threads N SECONDS [BUSY]  N idle threads for SECONDS; the main thread busy for
//                                    BUSY (0 to 1, default 0) of every 100 ms
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

double clock_s(clockid_t c) {
    timespec ts{};
    clock_gettime(c, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void burn_cpu(double seconds) {
    const double end = clock_s(CLOCK_PROCESS_CPUTIME_ID) + seconds;
    volatile unsigned long x = 0;
    while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < end)
        for (int i = 0; i < 10000; ++i) x = x + static_cast<unsigned long>(i);
}

double tv(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const std::string mode = argv[1];
    if (mode == "burn" && argc == 4) {
        prctl(PR_SET_NAME, "pt_burn");
        FILE* log = std::fopen(argv[3], "w");
        if (!log) return 1;
        const double until = clock_s(CLOCK_MONOTONIC) + std::atof(argv[2]);
        volatile unsigned long x = 0;
        double next = 0;
        while (clock_s(CLOCK_MONOTONIC) < until) {
            for (int i = 0; i < 100000; ++i) x = x + static_cast<unsigned long>(i);
            const double now = clock_s(CLOCK_MONOTONIC);
            if (now >= next) {
                std::fprintf(log, "%.6f %.9f\n", clock_s(CLOCK_REALTIME), clock_s(CLOCK_PROCESS_CPUTIME_ID));
                std::fflush(log);
                next = now + 0.1;
            }
        }
        std::fclose(log);
        return 0;
    }
    if (mode == "short" && argc == 6) {
        prctl(PR_SET_NAME, "pt_short");
        // Only what it used under this name counts (a sanitizer runtime's
        // start-up, before the rename, is the group "serve_load"'s).
        rusage self0{};
        getrusage(RUSAGE_SELF, &self0);
        const int n = std::atoi(argv[2]);
        const double ms = std::atof(argv[3]);
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        const double stop_at = clock_s(CLOCK_MONOTONIC) + std::atof(argv[5]);
        int i = 0;
        for (; i < n && clock_s(CLOCK_MONOTONIC) < stop_at; ++i) {
            const pid_t c = fork();
            if (c == 0) {
                burn_cpu(ms / 1000);
                _exit(0);
            }
            if (c < 0) return 1;
            int st = 0;
            waitpid(c, &st, 0);
        }
        rusage ch{}, self{};
        getrusage(RUSAGE_CHILDREN, &ch);
        getrusage(RUSAGE_SELF, &self);
        FILE* out = std::fopen(argv[4], "w");
        if (!out) return 1;
        std::fprintf(out, "%.6f %.6f %.6f %d\n", tv(ch.ru_utime) + tv(ch.ru_stime),
                     tv(self.ru_utime) + tv(self.ru_stime) - tv(self0.ru_utime) - tv(self0.ru_stime),
                     clock_s(CLOCK_REALTIME), i);
        std::fclose(out);
        std::this_thread::sleep_for(std::chrono::seconds(1));
        return 0;
    }
    if (mode == "threads" && (argc == 4 || argc == 5)) {
        prctl(PR_SET_NAME, "pt_threads");
        const int n = std::atoi(argv[2]);
        std::vector<pthread_t> ts(static_cast<std::size_t>(n));
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, std::size_t{64} * 1024);
        for (auto& t : ts)
            if (pthread_create(
                    &t, &a,
                    [](void*) -> void* {
                        pause();
                        return nullptr;
                    },
                    nullptr) != 0)
                return 1;
        const double busy = argc == 5 ? std::atof(argv[4]) : 0, end = clock_s(CLOCK_MONOTONIC) + std::atof(argv[3]);
        if (busy <= 0) {
            std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[3])));
            _exit(0);
        }
        for (double next = clock_s(CLOCK_MONOTONIC); next < end;) {
            burn_cpu(busy * 0.1);
            next += 0.1;
            const double left = next - clock_s(CLOCK_MONOTONIC);
            if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
        }
        _exit(0);
    }
    return 2;
}
