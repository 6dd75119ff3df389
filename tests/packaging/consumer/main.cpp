// SPDX-License-Identifier: MIT
// A minimal program using the installed library: it must build and report a
// positive creation FILETIME for itself.
#include <proctimes/proctimes.hpp>

#include <cstdio>

int main() {
    auto t = proctimes::this_process::times();
    if (!t) return 1;
    auto ft = proctimes::filetime_from_time(t->creation);
    if (!ft || ft->ticks <= proctimes::filetime_unix_epoch) return 2;
    std::printf("proctimes %s: created at FILETIME %llu\n", PROCTIMES_VERSION_STRING,
                static_cast<unsigned long long>(ft->ticks));
    return 0;
}
