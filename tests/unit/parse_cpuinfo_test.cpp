// SPDX-License-Identifier: MIT
// The /proc/cpuinfo flags parser (src/parse/cpuinfo.hpp), on an excerpt of an
// x86-64 cpuinfo and on texts without a usable flags line.
#include <gtest/gtest.h>

#include <string_view>

#include "parse/cpuinfo.hpp"

using namespace proctimes::parse;

namespace {

constexpr std::string_view x86 =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "flags\t\t: fpu vme de pse tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid\n"
    "bugs\t\t: sysret_ss_attrs\n"
    "\n"
    "processor\t: 1\n"
    "flags\t\t: fpu\n";

}  // namespace

TEST(ParseCpuinfo, FirstFlagsLine) {
    const auto line = cpuinfo_flags_line(x86);
    ASSERT_TRUE(line);
    EXPECT_EQ(*line, "flags\t\t: fpu vme de pse tsc msr constant_tsc rep_good nopl nonstop_tsc cpuid");
}

TEST(ParseCpuinfo, WholeWordsOnly) {
    const auto line = *cpuinfo_flags_line(x86);
    EXPECT_TRUE(cpuinfo_has_flag(line, "constant_tsc"));
    EXPECT_TRUE(cpuinfo_has_flag(line, "nonstop_tsc"));
    EXPECT_TRUE(cpuinfo_has_flag(line, "fpu"));               // the first word, after ": "
    EXPECT_TRUE(cpuinfo_has_flag(line, "cpuid"));             // the last word, at the end
    EXPECT_TRUE(cpuinfo_has_flag(line, "tsc"));               // whole word, though also inside others
    EXPECT_FALSE(cpuinfo_has_flag(line, "stop_tsc"));         // the end of a word
    EXPECT_FALSE(cpuinfo_has_flag(line, "constant"));         // the start of a word
    EXPECT_FALSE(cpuinfo_has_flag(line, "flags"));            // the key is not a flag
    EXPECT_FALSE(cpuinfo_has_flag(line, "sysret_ss_attrs"));  // another line
    EXPECT_FALSE(cpuinfo_has_flag(line, ""));
}

TEST(ParseCpuinfo, LastLineWithoutNewline) {
    const auto line = cpuinfo_flags_line("processor\t: 0\nflags\t\t: sse2 nonstop_tsc");
    ASSERT_TRUE(line);
    EXPECT_TRUE(cpuinfo_has_flag(*line, "nonstop_tsc"));
}

TEST(ParseCpuinfo, NoFlagsLine) {
    // arm64 names its feature line "Features".
    EXPECT_FALSE(cpuinfo_flags_line("processor\t: 0\nFeatures\t: fp asimd evtstrm\n"));
    EXPECT_FALSE(cpuinfo_flags_line(""));
    // The first line is never the flags line: cpuinfo starts with "processor".
    EXPECT_FALSE(cpuinfo_flags_line("flags\t\t: fpu\n"));
}
