// SPDX-License-Identifier: MIT
// A fresh process for Win32Exit.OptOutWithTheEnvironment: the exit-record
// switch is decided once per process, so each case needs a process of its own.
//   win32_exit_switch_child opt-out   run with PROCTIMES_EXIT_RECORDS=0: the
//                                     Win32 layer leaves exit records off
//   win32_exit_switch_child default   run without it: off in the C++ API,
//                                     on once the Win32 layer is first used
// Exits 0 when the process saw what its case says, else 1 with the reason on
// standard error; 2 on a usage error.
#include <proctimes/windows.h>
#include <proctimes/exit.hpp>

#include <cstdio>
#include <cstring>

#include <unistd.h>

namespace {

int fail(const char* why) {
    std::fprintf(stderr, "win32_exit_switch_child: %s\n", why);
    return 1;
}

// The first use of the Win32 layer, on the parent (any process will do).
bool use_the_layer() {
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(::getppid()));
    return h != nullptr && CloseHandle(h);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    if (std::strcmp(argv[1], "opt-out") == 0) {
        if (!use_the_layer()) return fail("OpenProcess of the parent failed");
        if (proctimes::exit_records_enabled()) return fail("PROCTIMES_EXIT_RECORDS=0 did not keep exit records off");
        return 0;
    }
    if (std::strcmp(argv[1], "default") == 0) {
        if (proctimes::exit_records_enabled()) return fail("the C++ API's default is not off");
        if (!use_the_layer()) return fail("OpenProcess of the parent failed");
        if (!proctimes::exit_records_enabled()) return fail("the Win32 layer did not turn exit records on");
        return 0;
    }
    return 2;
}
