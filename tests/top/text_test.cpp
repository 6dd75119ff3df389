// SPDX-License-Identifier: MIT
// Names made safe for the terminal (tools/proctimes/top/text.hpp) and the
// text of the view's cells (cells.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <clocale>
#include <string>

#include "top/cells.hpp"
#include "top/text.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::cli::top::display_width;
using proctimes::cli::top::fit_width;
using proctimes::cli::top::safe_text;

class TopText : public ::testing::Test {
protected:
    void SetUp() override {
        // wcwidth() knows wide characters only in a UTF-8 locale.
        if (std::setlocale(LC_CTYPE, "C.UTF-8") == nullptr) GTEST_SKIP() << "no C.UTF-8 locale";
    }
    void TearDown() override { std::setlocale(LC_CTYPE, "C"); }
};

TEST_F(TopText, ControlBytesAndEscapeSequencesAreWrittenOut) {
    EXPECT_EQ(safe_text("\x1b[2J\x1b]0;owned\x07name", true), "\\x1b[2J\\x1b]0;owned\\x07name");
    EXPECT_EQ(safe_text("tab\there\nnl\x7f", true), "tab\\x09here\\x0anl\\x7f");
    // C1 controls (CSI as U+009B) and bidirectional overrides.
    EXPECT_EQ(safe_text("\xc2\x9b"
                        "31m",
                        true),
              "\\u009b31m");
    EXPECT_EQ(safe_text("abc\xe2\x80\xae"
                        "fed",
                        true),
              "abc\\u202efed");
    for (const std::string& s : {safe_text("\x1b\x9b\x07\x00x", true), safe_text("\x1b\x9b", false)})
        for (char c : s) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << s;
}

TEST_F(TopText, InvalidUtf8IsWrittenAsBytes) {
    EXPECT_EQ(safe_text("a\xff\xfe"
                        "b",
                        true),
              "a\\xff\\xfeb");
    EXPECT_EQ(safe_text("\xc3", true), "\\xc3");                    // cut short
    EXPECT_EQ(safe_text("\xc0\xaf", true), "\\xc0\\xaf");           // overlong '/'
    EXPECT_EQ(safe_text("\xed\xa0\x80", true), "\\xed\\xa0\\x80");  // a surrogate
}

TEST_F(TopText, ValidUtf8KeptOrAsciiReplaced) {
    EXPECT_EQ(safe_text("caf\xc3\xa9 \xe6\x97\xa5", true), "caf\xc3\xa9 \xe6\x97\xa5");
    EXPECT_EQ(safe_text("caf\xc3\xa9 \xe6\x97\xa5", false), "caf? ?");
}

TEST_F(TopText, WidthsAndFitting) {
    EXPECT_EQ(display_width("abc"), 3);
    EXPECT_EQ(display_width("\xe6\x97\xa5\xe6\x9c\xac"), 4);  // two wide characters
    int used = 0;
    EXPECT_EQ(fit_width("\xe6\x97\xa5\xe6\x9c\xac", 3, &used), "\xe6\x97\xa5");
    EXPECT_EQ(used, 2);
    EXPECT_EQ(fit_width("hello", 0, &used), "");
    EXPECT_EQ(fit_width("hello", 10, &used), "hello");
    EXPECT_EQ(used, 5);
}

TEST(TopCells, TimesAgesSizes) {
    using proctimes::cli::top::age_cell;
    using proctimes::cli::top::bytes_cell;
    using proctimes::cli::top::cpu_time_cell;
    EXPECT_EQ(cpu_time_cell(0ns), "0:00.00");
    EXPECT_EQ(cpu_time_cell(3140ms), "0:03.14");
    EXPECT_EQ(cpu_time_cell(61min + 5s), "61:05.00");
    EXPECT_EQ(cpu_time_cell(125min), "2h05m");
    EXPECT_EQ(cpu_time_cell(200h), "200h");
    EXPECT_EQ(age_cell(42s), "42s");
    EXPECT_EQ(age_cell(5min + 3s), "5m03");
    EXPECT_EQ(age_cell(3h + 12min), "3h12");
    EXPECT_EQ(age_cell(50h), "2d02");
    EXPECT_EQ(age_cell(-5s), "0s");
    EXPECT_EQ(bytes_cell(812ULL * 1024), "812K");
    EXPECT_EQ(bytes_cell(5ULL * 1024 * 1024 + 300ULL * 1024), "5.3M");
    EXPECT_EQ(bytes_cell(1536ULL * 1024 * 1024), "1.5G");
}

TEST(TopCells, EndStatus) {
    proctimes::cli::top::top_row r;
    EXPECT_EQ(proctimes::cli::top::end_status(r), "");
    r.ended = true;
    EXPECT_EQ(proctimes::cli::top::end_status(r), "ended");
    r.exit_code = 3;
    EXPECT_EQ(proctimes::cli::top::end_status(r), "exit 3");
    r.exit_signal = 9;
    EXPECT_EQ(proctimes::cli::top::end_status(r), "signal 9 (KILL)");
}

}  // namespace
