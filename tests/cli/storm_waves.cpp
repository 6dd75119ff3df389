// SPDX-License-Identifier: MIT
// A helper for the `ps --interval` storm test: forks N children in waves of
// W; each child names itself NAME (prctl PR_SET_NAME) and _exits at once, and
// the parent reaps the whole wave before the next. A process of its own, so
// that each fork copies a small address space, not the test's.
//   storm_waves N W NAME
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: storm_waves N W NAME\n");
        return 2;
    }
    const int n = std::atoi(argv[1]);
    const int w = std::atoi(argv[2]);
    if (n < 0 || w <= 0) return 2;
    for (int made = 0; made < n;) {
        const int k = std::min(w, n - made);
        for (int i = 0; i < k; ++i) {
            const pid_t p = ::fork();
            if (p == 0) {
                ::prctl(PR_SET_NAME, argv[3], 0, 0, 0);
                ::_exit(0);
            }
            if (p < 0) return 1;
        }
        for (int i = 0; i < k; ++i)
            if (::wait(nullptr) < 0) return 1;
        made += k;
    }
    // _exit, not a return: no exit-time work of a sanitizer runtime
    // (LeakSanitizer's check clones a task of its own, one more child that
    // the test would count).
    ::_exit(0);
}
