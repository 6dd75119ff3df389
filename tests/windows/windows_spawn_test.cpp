// SPDX-License-Identifier: MIT
// Children on Windows: CreateProcessW inside a job object, their exit code,
// creation and exit instants, CPU, the descendants' CPU from the job, the
// command-line quoting, and the waits (one handle, and more than 64).
#include <gtest/gtest.h>

#include <windows.h>
// After windows.h, which it needs:
#include <shellapi.h>

#include <memory>
#include <vector>

#include "proctimes/exit.hpp"
#include "proctimes/spawn.hpp"
#include "windows/cmdline.hpp"
#include "windows_test.hpp"

using namespace std::chrono_literals;
using proctimes::errc;

namespace {

std::vector<std::string> self(std::vector<std::string> rest) {
    rest.insert(rest.begin(), {wintest::self_path(), "child"});
    return rest;
}

TEST(WindowsSpawn, ExitCodeInstantsAndCpu) {
    const auto self_before = proctimes::this_process::times();
    ASSERT_TRUE(self_before);
    const auto before = wintest::now();
    auto c = proctimes::child::spawn({.argv = self({"burn", "300", "7"})});
    ASSERT_TRUE(c) << c.error().message();
    EXPECT_GT(c->id(), 0);
    EXPECT_FALSE(c->handle_error());
    auto e = c->wait();
    const auto after = wintest::now();
    ASSERT_TRUE(e) << e.error().message();
    const auto self_after = proctimes::this_process::times();
    ASSERT_TRUE(self_after);
    ASSERT_TRUE(e->status);
    EXPECT_EQ(e->status->code, 7);
    EXPECT_FALSE(e->status->signaled());
    const auto& t = e->times;
    EXPECT_EQ(t.state, proctimes::task_state::exited);
    EXPECT_GE(t.creation, before);
    EXPECT_LE(t.creation, after);
    ASSERT_TRUE(t.exit);
    EXPECT_GE(*t.exit, t.creation);
    EXPECT_LE(*t.exit, after);
    EXPECT_EQ(t.precision.source, proctimes::cpu_source::os_times);
    if (wintest::under_wine()) {
        // Wine 8's GetProcessTimes on another process gives the CALLER's
        // kernel and user times: the child's CPU reads as this process's,
        // read between the two self samples.
        EXPECT_GE(t.cpu(), self_before->cpu());
        EXPECT_LE(t.cpu(), self_after->cpu());
        // Its job's accounting is 0 under Wine 8: no descendants' CPU is known.
        EXPECT_EQ(e->children_kernel + e->children_user, 0ns);
    } else {
        EXPECT_GE(t.cpu(), 300ms);
        // No descendants: the job holds the child's own time only.
        EXPECT_LE(e->children_kernel + e->children_user, t.precision.resolution);
    }
    if (wintest::under_wine()) {
        // Wine 8: an ended process's memory counters are 0 once its Linux
        // process is gone, and its peak before (both measured).
        EXPECT_TRUE(e->max_rss_kib == 0 || (e->max_rss_kib > 1024 && e->max_rss_kib < 1024 * 1024)) << e->max_rss_kib;
    } else {
        EXPECT_GT(e->max_rss_kib, 1024);  // at least 1 MiB: an executable with the C++ runtime
    }
    auto parent = c->handle().parent_id();
    ASSERT_TRUE(parent) << parent.error().message();
    EXPECT_EQ(*parent, proctimes::this_process::id());
    // wait() again: the same values; the handle keeps answering.
    auto again = c->wait();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->times, e->times);
    auto ts = c->handle().times();
    ASSERT_TRUE(ts);
    EXPECT_EQ(ts->exit, t.exit);
    auto st = c->handle().exit_status();
    ASSERT_TRUE(st && *st);
    EXPECT_EQ((*st)->code, 7);
}

TEST(WindowsSpawn, DescendantsCpuComesFromTheJob) {
    auto c = proctimes::child::spawn({.argv = self({"spawn-burn", "300"})});
    ASSERT_TRUE(c) << c.error().message();
    auto e = c->wait();
    ASSERT_TRUE(e) << e.error().message();
    ASSERT_TRUE(e->status);
    EXPECT_EQ(e->status->code, 0);
    if (wintest::under_wine()) {
        EXPECT_EQ(e->children_kernel + e->children_user, 0ns);  // Wine 8: job accounting times are 0
    } else {
        // The grandchild burned 300 ms by its own clock, in the child's job.
        EXPECT_GE(e->children_kernel + e->children_user, 300ms - e->times.precision.resolution);
    }
}

TEST(WindowsSpawn, CommandLineParsesBackToTheArguments) {
    std::vector<std::wstring> wargv{L"C:\\Program Files\\x.exe"};
    for (const auto& a : wintest::tricky_arguments()) wargv.push_back(*proctimes::detail::win::wide(a));
    auto line = proctimes::detail::win::command_line(wargv);
    ASSERT_TRUE(line);
    int n = 0;
    LPWSTR* parsed = ::CommandLineToArgvW(line->c_str(), &n);
    ASSERT_NE(parsed, nullptr);
    std::vector<std::wstring> back(parsed, parsed + n);
    ::LocalFree(parsed);
    EXPECT_EQ(back, wargv);
    // And through a real child, which parses its own command line.
    std::vector<std::string> argv = self({"args"});
    argv.insert(argv.end(), wintest::tricky_arguments().begin(), wintest::tricky_arguments().end());
    auto c = proctimes::child::spawn({.argv = argv});
    ASSERT_TRUE(c) << c.error().message();
    auto e = c->wait();
    ASSERT_TRUE(e && e->status);
    EXPECT_EQ(e->status->code, 0) << "the child parsed other arguments";
}

TEST(WindowsSpawn, BadArgumentsAndMissingPrograms) {
    EXPECT_EQ(proctimes::child::spawn({}).error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::child::spawn({.argv = {"say\"what"}}).error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::child::spawn({.argv = {std::string("nul\0byte", 8)}}).error(), errc::invalid_argument);
    EXPECT_EQ(proctimes::child::spawn({.argv = {"\xff\xfe"}}).error(), errc::invalid_argument);  // not UTF-8
    auto missing = proctimes::child::spawn({.argv = {"C:\\no\\such\\program.exe"}});
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), std::errc::no_such_file_or_directory);
    proctimes::child empty;
    EXPECT_EQ(empty.wait().error(), errc::invalid_handle);
}

TEST(WindowsWaits, TimeoutsAndMoreThan64Handles) {
    auto sleeper = proctimes::child::spawn({.argv = self({"sleep", "60000"})});
    ASSERT_TRUE(sleeper) << sleeper.error().message();
    // A bounded wait on a running child ends with nothing, not before its timeout.
    const auto t0 = std::chrono::steady_clock::now();
    auto w = sleeper->wait_for(100ms);
    ASSERT_TRUE(w);
    EXPECT_FALSE(*w);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);

    // 64 handles to the sleeper fill the first chunk; the one that ends is 65th.
    std::vector<proctimes::process> handles;
    for (int i = 0; i < 64; ++i) {
        auto p = proctimes::process::open(sleeper->id());
        ASSERT_TRUE(p) << p.error().message();
        handles.push_back(std::move(*p));
    }
    std::vector<const proctimes::process*> list;
    list.reserve(handles.size() + 2);
    for (const auto& h : handles) list.push_back(&h);
    auto none = proctimes::wait_for_any(list, 50ms);
    ASSERT_TRUE(none) << none.error().message();
    EXPECT_FALSE(*none);

    auto quick = proctimes::child::spawn({.argv = self({"burn", "0", "3"})});
    ASSERT_TRUE(quick);
    list.push_back(&quick->handle());
    auto any = proctimes::wait_for_any(list, 60s);
    ASSERT_TRUE(any) << any.error().message();
    ASSERT_TRUE(*any);
    EXPECT_EQ(**any, 64u);
    auto qt = quick->handle().times();
    ASSERT_TRUE(qt);
    EXPECT_EQ(qt->state, proctimes::task_state::exited);

    EXPECT_EQ(proctimes::wait_for_any({}).error(), errc::invalid_argument);
    list.push_back(nullptr);
    EXPECT_EQ(proctimes::wait_for_any(list, 0ns).error(), errc::invalid_handle);

    // End the sleeper (the test's own handle: the library has no kill).
    HANDLE h = ::OpenProcess(PROCESS_TERMINATE, FALSE, static_cast<DWORD>(sleeper->id()));
    ASSERT_NE(h, nullptr);
    ASSERT_TRUE(::TerminateProcess(h, 9));
    ::CloseHandle(h);
    auto ended = sleeper->wait_for(60s);
    ASSERT_TRUE(ended && *ended);
    ASSERT_TRUE((*ended)->status);
    EXPECT_EQ((*ended)->status->code, 9);
}

}  // namespace
