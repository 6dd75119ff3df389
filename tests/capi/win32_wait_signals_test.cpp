// SPDX-License-Identifier: MIT
// WaitForSingleObject under a storm of signals: a handler running every
// 100 ms interrupts the wait five times in a 500 ms timeout, and the wait
// still returns WAIT_TIMEOUT after about 500 ms — as on Windows, where no
// signal stretches a wait.
#include <proctimes/windows.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <signal.h>

#include "system/helpers.hpp"
#include "system/signal_storm.hpp"

using namespace std::chrono;
using namespace std::chrono_literals;
using testing_helpers::under_signal_storm;

namespace {

constexpr auto bound = 5s;

void expect_timeout_under_signals(HANDLE h) {
    DWORD r = 12345;
    const auto st = under_signal_storm([&] { r = WaitForSingleObject(h, 500); }, bound);
    ASSERT_TRUE(st.within_bound) << "a 500 ms WaitForSingleObject did not return within " << bound.count()
                                 << " s under SIGALRM every 100 ms (" << st.signals << " signals)";
    EXPECT_EQ(r, static_cast<DWORD>(WAIT_TIMEOUT)) << GetLastError();
    EXPECT_GE(st.took, 500ms) << "a signal cut the wait short";
    EXPECT_GE(st.signals, 2) << "the storm did not reach the waiting thread";
}

}  // namespace

TEST(Win32WaitSignals, CreateProcessChild) {
    std::string cmd = "sleep 60";
    STARTUPINFOA si{};
    si.cb = sizeof si;
    PROCESS_INFORMATION pi{};
    ASSERT_TRUE(CreateProcessA(nullptr, cmd.data(), nullptr, nullptr, FALSE, 0, nullptr, nullptr, &si, &pi))
        << GetLastError();
    expect_timeout_under_signals(pi.hProcess);
    expect_timeout_under_signals(pi.hThread);
    ::kill(static_cast<pid_t>(pi.dwProcessId), SIGKILL);
    EXPECT_EQ(WaitForSingleObject(pi.hProcess, 20000), static_cast<DWORD>(WAIT_OBJECT_0));
    EXPECT_TRUE(CloseHandle(pi.hThread));
    EXPECT_TRUE(CloseHandle(pi.hProcess));
}

TEST(Win32WaitSignals, OpenedProcess) {
    testing_helpers::forked ch([] { return 0; });  // waits on its pipe until killed
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE, FALSE, static_cast<DWORD>(ch.pid()));
    ASSERT_NE(h, nullptr) << GetLastError();
    expect_timeout_under_signals(h);
    EXPECT_TRUE(CloseHandle(h));
}
