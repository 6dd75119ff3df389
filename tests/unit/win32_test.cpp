// SPDX-License-Identifier: MIT
// The logic of the Win32 layer that does not need a running system: command
// lines, environment blocks, error mapping, access masks, the handle table.
#include <gtest/gtest.h>

#include <cerrno>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "proctimes/error.hpp"
#include "win32_layer/cmdline.hpp"
#include "win32_layer/handles.hpp"
#include "win32_layer/win32.hpp"

using namespace proctimes;
using namespace proctimes::win32;
using V = std::vector<std::string>;

// ---- command lines ---------------------------------------------------------------

TEST(CommandLine, SplitsOnBlanks) {
    EXPECT_EQ(split_command_line("prog a b"), (V{"prog", "a", "b"}));
    EXPECT_EQ(split_command_line("  prog \t a   b  "), (V{"prog", "a", "b"}));
    EXPECT_EQ(split_command_line(""), V{});
    EXPECT_EQ(split_command_line(" \t "), V{});
}

TEST(CommandLine, ProgramNameOnlyGroupsWithQuotes) {
    EXPECT_EQ(split_command_line("\"C:\\Program Files\\x.exe\" arg"), (V{"C:\\Program Files\\x.exe", "arg"}));
    EXPECT_EQ(split_command_line("pro\"g x\"y z"), (V{"prog xy", "z"}));
    EXPECT_EQ(split_command_line("a\\\"b c"), (V{"a\\b c"}));  // no escaping in argv[0]: \ literal, " toggles
}

TEST(CommandLine, MicrosoftDocumentedExamples) {
    // The examples of "Parsing C command-line arguments" (after the program name).
    EXPECT_EQ(split_command_line("p \"abc\" d e"), (V{"p", "abc", "d", "e"}));
    EXPECT_EQ(split_command_line("p a\\\\\\b d\"e f\"g h"), (V{"p", "a\\\\\\b", "de fg", "h"}));
    EXPECT_EQ(split_command_line("p a\\\\\\\"b c d"), (V{"p", "a\\\"b", "c", "d"}));
    EXPECT_EQ(split_command_line("p a\\\\\\\\\"b c\" d e"), (V{"p", "a\\\\b c", "d", "e"}));
    EXPECT_EQ(split_command_line("p a\"b\"\" c d"), (V{"p", "ab\" c d"}));
}

TEST(CommandLine, EmptyAndQuotedArguments) {
    EXPECT_EQ(split_command_line("p \"\""), (V{"p", ""}));
    EXPECT_EQ(split_command_line("p \"\" x"), (V{"p", "", "x"}));
    EXPECT_EQ(split_command_line("p \"a b"), (V{"p", "a b"}));  // unterminated quote runs to the end
    EXPECT_EQ(split_command_line("p a\\b\\"), (V{"p", "a\\b\\"}));
}

TEST(EnvironmentBlock, ParsesUpToTheEmptyEntry) {
    const char block[] = "A=1\0B=two words\0=C:=C:\\\0\0garbage";
    auto env = parse_environment_block(block, sizeof block);
    ASSERT_TRUE(env);
    EXPECT_EQ(*env, (V{"A=1", "B=two words", "=C:=C:\\"}));
    const char empty[] = "\0";
    EXPECT_EQ(parse_environment_block(empty, sizeof empty)->size(), 0u);
}

TEST(EnvironmentBlock, UnterminatedIsRejected) {
    const char block[6] = {'A', '=', '1', '\0', 'B', '='};
    EXPECT_FALSE(parse_environment_block(block, sizeof block));
}

// ---- errors --------------------------------------------------------------------------

TEST(ErrorMapping, CoreErrorsByContext) {
    EXPECT_EQ(error_from({}, error_context::open), static_cast<DWORD>(ERROR_SUCCESS));
    EXPECT_EQ(error_from(errc::no_such_process, error_context::open), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_EQ(error_from(errc::no_such_thread, error_context::open), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_EQ(error_from(errc::not_a_process, error_context::open), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_EQ(error_from(errc::no_such_process, error_context::query), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    EXPECT_EQ(error_from(errc::access_denied, error_context::open), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    EXPECT_EQ(error_from(errc::invalid_handle, error_context::query), static_cast<DWORD>(ERROR_INVALID_HANDLE));
    EXPECT_EQ(error_from(errc::process_table_unavailable, error_context::open),
              static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    EXPECT_EQ(error_from(errc::malformed_data, error_context::query), static_cast<DWORD>(ERROR_INVALID_DATA));
}

TEST(ErrorMapping, ErrnoValues) {
    auto e = [](int v, error_context c) { return error_from(std::error_code(v, std::system_category()), c); };
    EXPECT_EQ(e(ENOENT, error_context::spawn), static_cast<DWORD>(ERROR_FILE_NOT_FOUND));
    EXPECT_EQ(e(ENOTDIR, error_context::spawn), static_cast<DWORD>(ERROR_PATH_NOT_FOUND));
    EXPECT_EQ(e(EACCES, error_context::spawn), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    EXPECT_EQ(e(EPERM, error_context::open), static_cast<DWORD>(ERROR_ACCESS_DENIED));
    EXPECT_EQ(e(ENOEXEC, error_context::spawn), static_cast<DWORD>(ERROR_BAD_EXE_FORMAT));
    EXPECT_EQ(e(ENOMEM, error_context::spawn), static_cast<DWORD>(ERROR_NOT_ENOUGH_MEMORY));
    EXPECT_EQ(e(EMFILE, error_context::open), static_cast<DWORD>(ERROR_TOO_MANY_OPEN_FILES));
    EXPECT_EQ(e(ESRCH, error_context::open), static_cast<DWORD>(ERROR_INVALID_PARAMETER));
    EXPECT_EQ(e(ESRCH, error_context::query), static_cast<DWORD>(ERROR_NOT_SUPPORTED));
    EXPECT_EQ(e(EIO, error_context::query), static_cast<DWORD>(ERROR_GEN_FAILURE));
}

TEST(ErrorMapping, ExceptionsAtTheBoundary) {
    auto from = [](auto thrower) {
        try {
            thrower();
        } catch (...) {
            return error_from_current_exception();
        }
        return DWORD{0};
    };
    EXPECT_EQ(from([] { throw std::bad_alloc(); }), static_cast<DWORD>(ERROR_NOT_ENOUGH_MEMORY));
    EXPECT_EQ(from([] { throw 42; }), static_cast<DWORD>(ERROR_INTERNAL_ERROR));
}

TEST(LastError, IsPerThread) {
    last_error() = 1234;
    DWORD other = 0;
    std::thread([&] {
        other = last_error();
        last_error() = 99;
    }).join();
    EXPECT_EQ(other, 0u);
    EXPECT_EQ(last_error(), 1234u);
}

// ---- access masks -------------------------------------------------------------------

TEST(Access, FullQueryImpliesLimited) {
    EXPECT_TRUE(can_query_process(normalize_process_access(PROCESS_QUERY_INFORMATION)));
    EXPECT_TRUE(can_query_process(normalize_process_access(PROCESS_QUERY_LIMITED_INFORMATION)));
    EXPECT_TRUE(can_query_thread(normalize_thread_access(THREAD_QUERY_INFORMATION)));
    EXPECT_TRUE(can_query_thread(normalize_thread_access(THREAD_QUERY_LIMITED_INFORMATION)));
}

TEST(Access, OtherRightsDoNotQuery) {
    EXPECT_FALSE(can_query_process(normalize_process_access(0)));
    EXPECT_FALSE(can_query_process(normalize_process_access(PROCESS_VM_READ)));
    EXPECT_FALSE(
        can_query_process(normalize_process_access(PROCESS_TERMINATE | SYNCHRONIZE | PROCESS_SET_INFORMATION)));
    EXPECT_FALSE(can_query_thread(normalize_thread_access(THREAD_SUSPEND_RESUME)));
    // Thread rights do not leak into process masks: 0x0040 is THREAD_QUERY_INFORMATION
    // but PROCESS_DUP_HANDLE.
    EXPECT_FALSE(can_query_process(normalize_process_access(THREAD_QUERY_INFORMATION)));
    // 0x1000 is PROCESS_QUERY_LIMITED_INFORMATION but THREAD_RESUME.
    EXPECT_FALSE(can_query_thread(normalize_thread_access(PROCESS_QUERY_LIMITED_INFORMATION)));
}

TEST(Access, GenericRightsAreMapped) {
    EXPECT_TRUE(can_query_process(normalize_process_access(GENERIC_READ)));
    EXPECT_TRUE(can_query_process(normalize_process_access(GENERIC_EXECUTE)));
    EXPECT_TRUE(can_query_process(normalize_process_access(GENERIC_ALL)));
    EXPECT_TRUE(can_query_process(normalize_process_access(MAXIMUM_ALLOWED)));
    EXPECT_FALSE(can_query_process(normalize_process_access(GENERIC_WRITE)));
    EXPECT_TRUE(normalize_process_access(GENERIC_EXECUTE) & SYNCHRONIZE);
    EXPECT_FALSE(normalize_process_access(GENERIC_READ) & GENERIC_READ);  // generic bits are gone
    EXPECT_TRUE(can_query_thread(normalize_thread_access(GENERIC_READ)));
    EXPECT_TRUE(can_query_thread(normalize_thread_access(GENERIC_EXECUTE)));
    EXPECT_EQ(normalize_thread_access(MAXIMUM_ALLOWED) & THREAD_ALL_ACCESS, THREAD_ALL_ACCESS);
}

// ---- the handle table -----------------------------------------------------------------

TEST(HandleTable, ValuesAreDistinctAlignedAndNeverSpecial) {
    handle_table t;
    std::set<std::uintptr_t> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::uintptr_t h = t.insert(handle_entry{});
        EXPECT_EQ(h % 4, 0u);
        EXPECT_GE(h, handle_table::first_value);
        EXPECT_NE(h, current_process_handle);
        EXPECT_NE(h, current_thread_handle);
        EXPECT_TRUE(seen.insert(h).second);
    }
    EXPECT_EQ(t.size(), 1000u);
    EXPECT_FALSE(t.find(0));
    EXPECT_FALSE(t.find(current_process_handle));
    EXPECT_FALSE(t.find(current_thread_handle));
    EXPECT_FALSE(t.find(*seen.begin() + 1));
}

TEST(HandleTable, ClosedValuesAreNeverReused) {
    handle_table t;
    handle_entry e;
    e.access = 0x1234;
    const std::uintptr_t a = t.insert(e);
    ASSERT_TRUE(t.find(a));
    EXPECT_EQ(t.find(a)->access, 0x1234u);
    EXPECT_TRUE(t.erase(a));
    EXPECT_FALSE(t.erase(a));
    EXPECT_FALSE(t.find(a));
    for (int i = 0; i < 100; ++i) EXPECT_NE(t.insert(handle_entry{}), a);
}

TEST(HandleTable, ConcurrentUseKeepsEveryValueUnique) {
    handle_table t;
    constexpr int threads = 4, per = 2000;
    std::vector<std::vector<std::uintptr_t>> got(threads);
    std::vector<std::thread> ts;
    ts.reserve(threads);
    for (int k = 0; k < threads; ++k)
        ts.emplace_back([&, k] {
            for (int i = 0; i < per; ++i) {
                const auto h = t.insert(handle_entry{});
                got[k].push_back(h);
                if (i % 2) t.erase(h);
                (void)t.find(h);
            }
        });
    for (auto& th : ts) th.join();
    std::set<std::uintptr_t> all;
    for (auto& v : got) all.insert(v.begin(), v.end());
    EXPECT_EQ(all.size(), static_cast<std::size_t>(threads * per));
    EXPECT_EQ(t.size(), static_cast<std::size_t>(threads * per / 2));
}
