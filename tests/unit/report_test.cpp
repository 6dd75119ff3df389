// SPDX-License-Identifier: MIT
// detail::report_once: the library's one line on stderr for a failure it has
// no caller to answer to (src/report.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "report.hpp"

namespace {

using proctimes::detail::report_once;

TEST(ReportOnce, WritesOneLineTheFirstTimeOnly) {
    std::atomic<bool> once{false};
    testing::internal::CaptureStderr();
    const bool first = report_once(once, "cannot start a thread to reap child %ld (%s)", 42L, "EAGAIN");
    const bool second = report_once(once, "a second failure of the same kind");
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(first);
    EXPECT_FALSE(second);
    EXPECT_EQ(err, "proctimes: cannot start a thread to reap child 42 (EAGAIN)\n");
    EXPECT_TRUE(once.load());
}

TEST(ReportOnce, EachFlagIsItsOwnKind) {
    std::atomic<bool> a{false}, b{false};
    testing::internal::CaptureStderr();
    EXPECT_TRUE(report_once(a, "kind a"));
    EXPECT_TRUE(report_once(b, "kind b"));
    EXPECT_FALSE(report_once(a, "kind a again"));
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "proctimes: kind a\nproctimes: kind b\n");
}

TEST(ReportOnce, CutsALongMessageAt400Bytes) {
    std::atomic<bool> once{false};
    const std::string long_text(1000, 'x');
    testing::internal::CaptureStderr();
    EXPECT_TRUE(report_once(once, "%s", long_text.c_str()));
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "proctimes: " + std::string(400, 'x') + "\n");
}

}  // namespace
