// SPDX-License-Identifier: MIT
// A child for the spawn tests: burns CPU, then exits with a chosen status.
//   cpu_burner <user_ms> [exit_status] [kernel_ms] [sleep_ms] [report]
// With "usage", it writes its own user time (getrusage, ns) instead.
// With "report", its last act before exiting is to write CLOCK_REALTIME in
// nanoseconds (decimal) to its standard output.
// user_ms of CPU in user mode (a busy loop), kernel_ms in the kernel (reads
// of /dev/zero, which the kernel fills with memset), then sleeps sleep_ms of
// wall time without using CPU.
#include <cstdlib>
#include <ctime>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace {
long long cpu_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}
}  // namespace

int main(int argc, char** argv) {
    const long long user_ms = argc > 1 ? std::atoll(argv[1]) : 0;
    const int status = argc > 2 ? std::atoi(argv[2]) : 0;
    const long long kernel_ms = argc > 3 ? std::atoll(argv[3]) : 0;
    const long long sleep_ms = argc > 4 ? std::atoll(argv[4]) : 0;

    const long long start = cpu_ns();
    volatile unsigned long sink = 0;
    while (cpu_ns() - start < user_ms * 1'000'000) {
        for (int i = 0; i < 200'000; ++i) sink = sink + static_cast<unsigned long>(i);
    }
    if (kernel_ms > 0) {
        static char buf[1 << 20];
        const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
        const long long k0 = cpu_ns();
        while (fd >= 0 && cpu_ns() - k0 < kernel_ms * 1'000'000) {
            if (::read(fd, buf, sizeof buf) < 0) break;
        }
    }
    if (sleep_ms > 0) {
        timespec ts{static_cast<time_t>(sleep_ms / 1000), static_cast<long>(sleep_ms % 1000) * 1'000'000};
        while (::nanosleep(&ts, &ts) != 0) {
        }
    }
    if (argc > 5 && (argv[5][0] == 'r' || argv[5][0] == 'u')) {
        unsigned long long ns = 0;
        if (argv[5][0] == 'r') {
            timespec now{};
            ::clock_gettime(CLOCK_REALTIME, &now);
            ns = static_cast<unsigned long long>(now.tv_sec) * 1'000'000'000ULL +
                 static_cast<unsigned long long>(now.tv_nsec);
        } else {
            // "usage": its own user time as it measures it, getrusage(2) in µs.
            rusage ru{};
            ::getrusage(RUSAGE_SELF, &ru);
            ns = (static_cast<unsigned long long>(ru.ru_utime.tv_sec) * 1'000'000ULL +
                  static_cast<unsigned long long>(ru.ru_utime.tv_usec)) *
                 1000ULL;
        }
        char buf[32];
        int i = sizeof buf;
        do {
            buf[--i] = static_cast<char>('0' + ns % 10);
            ns /= 10;
        } while (ns != 0);
        if (::write(1, buf + i, sizeof buf - static_cast<unsigned>(i)) < 0) return 100;
        ::_exit(status);  // no exit handlers between the report and the end
    }
    return status;
}
