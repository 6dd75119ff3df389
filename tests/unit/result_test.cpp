// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cerrno>

#include "proctimes/result.hpp"

using proctimes::errc;
using proctimes::result;

TEST(Result, ValueAndError) {
    result<int> ok = 5;
    EXPECT_TRUE(ok);
    EXPECT_EQ(ok.value(), 5);
    EXPECT_FALSE(ok.error());

    result<int> bad = errc::no_such_process;
    EXPECT_FALSE(bad);
    EXPECT_EQ(bad.error(), errc::no_such_process);
    EXPECT_EQ(bad.value_or(7), 7);
    EXPECT_THROW((void)bad.value(), std::system_error);
}

TEST(Result, ErrorsCompareWithPortableConditions) {
    const std::error_code native{ESRCH, std::system_category()};
    const std::error_code ours = proctimes::make_error_code(errc::no_such_process);
    EXPECT_EQ(native, std::errc::no_such_process);
    EXPECT_EQ(ours, std::errc::no_such_process);
    EXPECT_EQ(proctimes::make_error_code(errc::access_denied), std::errc::permission_denied);
    EXPECT_EQ(proctimes::make_error_code(errc::process_table_unavailable), std::errc::no_such_file_or_directory);
    EXPECT_STREQ(ours.category().name(), "proctimes");
    EXPECT_NE(ours.message().find("no such process"), std::string::npos);
}

TEST(Result, ZeroErrorCodeBecomesAnError) {
    // A result must never claim failure with a "success" code.
    result<int> r{std::error_code{}};
    EXPECT_FALSE(r);
    EXPECT_TRUE(r.error());
}

TEST(Result, Void) {
    result<void> ok;
    EXPECT_TRUE(ok);
    EXPECT_NO_THROW(ok.value());
    result<void> bad = errc::invalid_handle;
    EXPECT_FALSE(bad);
    EXPECT_THROW(bad.value(), std::system_error);
}
