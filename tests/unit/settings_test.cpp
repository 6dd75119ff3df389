// SPDX-License-Identifier: MIT
// The environment readers (src/settings.hpp): the eight on/off words in any
// case, junk and empty values, numbers with junk or past 64 bits, the order
// setter > variable > default of a switch, and setting_problems().
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "proctimes/settings.hpp"
#include "settings.hpp"

namespace {

using proctimes::detail::flag_value;
using proctimes::detail::parse_flag;
using proctimes::detail::parse_setting_number;

// Sets a variable for one test and restores what was there.
class scoped_env {
public:
    scoped_env(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~scoped_env() {
        if (old_)
            ::setenv(name_, old_->c_str(), 1);
        else
            ::unsetenv(name_);
    }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(Settings, EveryOnWordInAnyCase) {
    for (const char* w : {"1", "on", "ON", "On", "true", "TRUE", "True", "yes", "YES", "yEs"})
        EXPECT_EQ(parse_flag(w), flag_value::on) << w;
}

TEST(Settings, EveryOffWordInAnyCase) {
    for (const char* w : {"0", "off", "OFF", "oFf", "false", "FALSE", "False", "no", "NO", "No"})
        EXPECT_EQ(parse_flag(w), flag_value::off) << w;
}

TEST(Settings, AnythingElseIsInvalidNotUnsetNorOn) {
    for (const char* w : {"2",       "01",  "00",  "-1", "+1",    "y",   "n",     "t", "f",    "enable",
                          "disable", " on", "on ", "1 ", "yes\n", "tru", "truee", "o", "nope", "\t0"})
        EXPECT_EQ(parse_flag(w), flag_value::invalid) << '"' << w << '"';
    EXPECT_EQ(parse_flag(std::string_view("on\0", 3)), flag_value::invalid);
}

TEST(Settings, EmptyIsUnset) { EXPECT_EQ(parse_flag(""), flag_value::unset); }

TEST(Settings, NumbersAreDigitsThatFit) {
    EXPECT_EQ(parse_setting_number("0"), 0U);
    EXPECT_EQ(parse_setting_number("16"), 16U);
    EXPECT_EQ(parse_setting_number("0016"), 16U);
    EXPECT_EQ(parse_setting_number("18446744073709551615"), UINT64_MAX);
    for (const char* junk : {"", "18446744073709551616", "99999999999999999999999", "-1", "+1", "-0", " 1", "1 ", "1k",
                             "0x10", "1e3", "1.0", "nan", "NaN", "inf", "16abc"})
        EXPECT_FALSE(parse_setting_number(junk).has_value()) << '"' << junk << '"';
}

TEST(Settings, FlagReaderReadsTheEnvironment) {
    const char* name = "PROCTIMES_TEST_SETTINGS_FLAG";
    {
        scoped_env e(name, nullptr);
        EXPECT_EQ(proctimes::detail::env_flag(name), flag_value::unset);
    }
    {
        scoped_env e(name, "");
        EXPECT_EQ(proctimes::detail::env_flag(name), flag_value::unset);
    }
    {
        scoped_env e(name, "Yes");
        EXPECT_EQ(proctimes::detail::env_flag(name), flag_value::on);
    }
    {
        scoped_env e(name, "off");
        EXPECT_EQ(proctimes::detail::env_flag(name), flag_value::off);
    }
    {
        scoped_env e(name, "maybe");
        EXPECT_EQ(proctimes::detail::env_flag(name), flag_value::invalid);
    }
}

TEST(Settings, NumberReaderRefusesJunkAndOverflow) {
    const char* name = "PROCTIMES_TEST_SETTINGS_NUMBER";
    {
        scoped_env e(name, nullptr);
        const auto r = proctimes::detail::env_number(name);
        ASSERT_TRUE(r);
        EXPECT_FALSE(r->has_value());
    }
    {
        scoped_env e(name, "");
        const auto r = proctimes::detail::env_number(name);
        ASSERT_TRUE(r);
        EXPECT_FALSE(r->has_value());
    }
    {
        scoped_env e(name, "64");
        const auto r = proctimes::detail::env_number(name);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->value_or(0), 64U);
    }
    for (const char* junk : {"64k", "-64", "nan", "18446744073709551616"}) {
        scoped_env e(name, junk);
        const auto r = proctimes::detail::env_number(name);
        ASSERT_FALSE(r) << junk;
        EXPECT_EQ(r.error(), proctimes::errc::invalid_argument) << junk;
    }
}

TEST(Settings, PathReaderTreatsEmptyAsUnset) {
    const char* name = "PROCTIMES_TEST_SETTINGS_PATH";
    {
        scoped_env e(name, "");
        EXPECT_FALSE(proctimes::detail::env_path(name).has_value());
    }
    {
        scoped_env e(name, "/some dir/x");
        EXPECT_EQ(proctimes::detail::env_path(name).value_or(""), "/some dir/x");
    }
}

TEST(Settings, SwitchTakesSetterThenVariableThenDefault) {
    const char* name = "PROCTIMES_TEST_SETTINGS_SWITCH";
    {
        scoped_env e(name, "no");
        proctimes::detail::switch_setting s(name, true);
        EXPECT_FALSE(s.on()) << "the variable beats the default";
        s.set_default(true);
        EXPECT_FALSE(s.on()) << "a changed default does not beat the variable";
        s.set(true);
        EXPECT_TRUE(s.on()) << "the setter beats the variable";
        EXPECT_FALSE(s.invalid_value_ignored());
    }
    {
        scoped_env e(name, nullptr);
        proctimes::detail::switch_setting s(name, false);
        EXPECT_FALSE(s.on());
        s.set_default(true);
        EXPECT_TRUE(s.on());
        EXPECT_FALSE(s.invalid_value_ignored());
    }
}

TEST(Settings, SwitchWithAnInvalidValueKeepsItsDefaultAndSaysSo) {
    const char* name = "PROCTIMES_TEST_SETTINGS_SWITCH";
    scoped_env e(name, "yess");
    proctimes::detail::switch_setting off(name, false);
    EXPECT_FALSE(off.on());
    EXPECT_TRUE(off.invalid_value_ignored());
    proctimes::detail::switch_setting on(name, true);
    EXPECT_TRUE(on.on());
    EXPECT_TRUE(on.invalid_value_ignored());
    on.set(false);
    EXPECT_FALSE(on.on());
    EXPECT_FALSE(on.invalid_value_ignored()) << "the setter decided";
}

TEST(Settings, ProblemsListRefusedValuesOnly) {
    scoped_env a("PROCTIMES_EXIT_MONITOR", "Off");
    scoped_env b("PROCTIMES_BPF_DEBUG", "verbose");
    scoped_env c("PROCTIMES_BPF_EXIT_RING_KIB", "16KiB");
    scoped_env d("PROCTIMES_EXIT_RECORDS", "");
    scoped_env e("PROCTIMES_BPF_TASK_ITER", nullptr);
    scoped_env f("PROCTIMES_EXIT_RECORDS_BPF", "1");
    const auto problems = proctimes::setting_problems();
    ASSERT_EQ(problems.size(), 2U);
    EXPECT_EQ(problems[0].variable, "PROCTIMES_BPF_DEBUG");
    EXPECT_EQ(problems[0].value, "verbose");
    EXPECT_EQ(problems[0].expected, "1/on/true/yes or 0/off/false/no");
    EXPECT_EQ(problems[1].variable, "PROCTIMES_BPF_EXIT_RING_KIB");
    EXPECT_EQ(problems[1].value, "16KiB");
}

}  // namespace
