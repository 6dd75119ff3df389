// SPDX-License-Identifier: MIT
// Prints "<creation FILETIME> <anchor source>" for the pid given, using a
// fresh process's own boot anchor: the system tests compare it with theirs.
#include <cstdio>
#include <cstdlib>

#include "proctimes/proctimes.hpp"

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    auto h = proctimes::process::open(static_cast<pid_t>(std::atoi(argv[1])));
    if (!h) {
        std::fprintf(stderr, "%s\n", h.error().message().c_str());
        return 1;
    }
    auto ft = proctimes::filetime_from_time(h->creation());
    auto anchor = proctimes::get_boot_anchor();
    if (!ft || !anchor) return 1;
    std::printf("%llu %d\n", static_cast<unsigned long long>(ft->ticks), static_cast<int>(anchor->source));
    return 0;
}
