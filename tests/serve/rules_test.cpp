// SPDX-License-Identifier: MIT
// The regexes of `proctimes serve` (config cmdline rules, --include/--exclude)
// and watch --name: RE2, Go's syntax, linear time; the name templates; and
// the label values distinct names become.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>
#include <string>

#include "pattern.hpp"
#include "serve/exposition.hpp"
#include "serve/grouping.hpp"
#include "utf8.hpp"

using proctimes::cli::pattern;
using namespace proctimes::cli::serve;

namespace {

std::shared_ptr<const pattern> re(const std::string& text) {
    std::string error;
    auto p = pattern::compile(text, error);
    EXPECT_TRUE(p) << text << ": " << error;
    return p;
}

using steady = std::chrono::steady_clock;

}  // namespace

// std::regex recursed once per character: `.+` over a 30 KB command line
// overflowed the stack (SIGSEGV).
TEST(Pattern, DotPlusOverAFortyKilobyteCommandLine) {
    const std::string cmdline = "sh -c sleep 60; : " + std::string(40000, 'x');
    EXPECT_TRUE(re(".+")->search(cmdline));
    EXPECT_TRUE(re("^sh -c (.+)x$")->search(cmdline));
    EXPECT_FALSE(re("^(.+)y$")->search(cmdline));
    const std::string huge(4 << 20, 'a');  // 4 MiB: still linear
    EXPECT_TRUE(re("a+$")->search(huge));
}

// Exponential backtracking: with std::regex this never returned.
TEST(Pattern, NestedQuantifiersReturnPromptly) {
    const std::string text = std::string(40, 'a') + "!";
    const auto t0 = steady::now();
    EXPECT_FALSE(re("(a+)+$")->search(text));
    EXPECT_FALSE(re("^(a|aa)+$")->search(text));
    EXPECT_FALSE(re("(a*)*b")->search(std::string(100000, 'a')));
    EXPECT_LT(steady::now() - t0, std::chrono::seconds(10));  // microseconds in fact; generous on a loaded machine
}

TEST(Pattern, GoSyntax) {
    std::vector<std::pair<std::string, std::string>> named;
    ASSERT_TRUE(re(R"(--config=(?P<cfg>\S+))")->search("/usr/bin/app --config=/etc/app.conf -v", named));
    ASSERT_EQ(named.size(), 1u);
    EXPECT_EQ(named[0], (std::pair<std::string, std::string>{"cfg", "/etc/app.conf"}));
    EXPECT_TRUE(re("(?i)^PYTHON3")->search("python3 -m http.server"));
    EXPECT_FALSE(re("^PYTHON3")->search("python3 -m http.server"));
    EXPECT_TRUE(re(R"(\Ajava\b)")->search("java -jar x.jar"));
    EXPECT_FALSE(re(R"(\Ajava)")->search("/usr/bin/java"));
    EXPECT_TRUE(re(R"(jar\z)")->search("java -jar x.jar"));
    EXPECT_FALSE(re(R"(jar\z)")->search("java -jar x.jar\n"));
    EXPECT_TRUE(re(R"(^\pL+$)")->search("h\xc3\xa9llo"));
    EXPECT_FALSE(re(R"(^\pL+$)")->search("hello1"));
    EXPECT_TRUE(re(R"(\Qa.b*c\E)")->search("xa.b*cx"));
    EXPECT_FALSE(re(R"(\Qa.b*c\E)")->search("xaxbbbcx"));
    // Go's `$` and `^` are the text's ends (no multi-line mode unless (?m)).
    EXPECT_FALSE(re("^b$")->search("a\nb"));
    EXPECT_TRUE(re("(?m)^b$")->search("a\nb"));
}

// Go reads a byte that is not UTF-8 as U+FFFD, which `.` matches.
TEST(Pattern, InvalidUtf8CountsAsOneCharacter) {
    EXPECT_TRUE(re("^x.y$")->search("x\xffy"));
    EXPECT_TRUE(re("^.+$")->search("\xfe\xff"));
    EXPECT_FALSE(re("^x..y$")->search("x\xffy"));
}

TEST(Pattern, ErrorsAreReported) {
    std::string error;
    EXPECT_EQ(pattern::compile("(", error), nullptr);
    EXPECT_NE(error.find("missing )"), std::string::npos) << error;
    error.clear();
    EXPECT_EQ(pattern::compile(R"((a)\1)", error), nullptr);  // no backreferences in RE2 (nor in Go)
    EXPECT_FALSE(error.empty());
}

TEST(ProcessExporterConfig, GoRegexesAreAccepted) {
    std::string err;
    const auto rules = parse_pe_config(R"(process_names:
  - name: "{{.Matches.prog}}"
    cmdline:
    - '(?i)\Apython3? (?P<prog>\S+)'
  - name: "letters"
    cmdline:
    - '^\pL+\z'
    - '\Q.\E|x'
)",
                                       err);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(rules.size(), 2u);
    std::vector<std::pair<std::string, std::string>> named;
    ASSERT_TRUE(rules[0].cmdline.at(0)->search("Python3 serve.py --port 1", named));
    ASSERT_EQ(named.size(), 1u);
    EXPECT_EQ(named[0].second, "serve.py");
    EXPECT_TRUE(rules[1].cmdline.at(0)->search("abc"));
    err.clear();
    EXPECT_TRUE(parse_pe_config("process_names:\n  - cmdline: ['(a']\n", err).empty());
    EXPECT_NE(err.find("(a"), std::string::npos) << err;
}

TEST(NameTemplate, FieldsMatchesAndOnePass) {
    const std::vector<std::pair<std::string, std::string>> m{{"prog", "serve.py"}, {"port", "80"}};
    EXPECT_EQ(render_name_template("{{.Comm}}:{{ .Matches.prog }}@{{.Matches.port}}", "python3", "python3.11",
                                   "/usr/bin/python3.11", "www", 42, m),
              "python3:serve.py@80");
    EXPECT_EQ(render_name_template("{{.ExeBase}}/{{.ExeFull}}/{{.Username}}/{{.PID}}", "c", "b", "/a/b", "u", 7, {}),
              "b//a/b/u/7");
    // A value that looks like a template is not expanded again (a process
    // named "{{.Comm}}" made the old substitution loop forever).
    EXPECT_EQ(render_name_template("{{.Comm}}-{{.Comm}}", "{{.Comm}}", "", "", "", 1, {}), "{{.Comm}}-{{.Comm}}");
    EXPECT_EQ(render_name_template("<{{.Username}}>", "c", "", "", "{{.Username}}", 1, {}), "<{{.Username}}>");
    // Fields proctimes does not fill stay as written; an unknown capture is Go's "<no value>".
    EXPECT_EQ(render_name_template("{{.StartTime}} {{.Matches.x}} {{", "c", "", "", "", 1, {}),
              "{{.StartTime}} <no value> {{");
}

TEST(EmptyName, HasAPlaceholderNoCommCanTake) {
    EXPECT_EQ(shown_name(""), empty_name_placeholder);
    EXPECT_GT(empty_name_placeholder.size(), 15u);  // TASK_COMM_LEN - 1
    EXPECT_EQ(shown_name("x"), "x");
}

namespace {

// The inverse of label_value(), as a reader of the documented rule would write it.
std::string decode_label(const std::string& v) {
    const auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == '\\') {
            out += '\\';
            ++i;
        } else if (v[i] == '\\' && i + 3 < v.size() && v[i + 1] == 'x' && hex(v[i + 2]) >= 8 && hex(v[i + 3]) >= 0) {
            out += static_cast<char>(hex(v[i + 2]) * 16 + hex(v[i + 3]));
            i += 3;
        } else {
            out += v[i];
        }
    }
    return out;
}

}  // namespace

// x\xff, x\xfe and x<U+FFFD> all became x<U+FFFD>: one series three times.
TEST(LabelValue, DistinctNamesStayDistinct) {
    const std::string names[] = {"x\xff", "x\xfe", "x\xef\xbf\xbd", "x\\xff", "x\\xFF", "x\\\xff", "x\\\\xFF", "x"};
    std::set<std::string> values;
    for (const auto& n : names) {
        const std::string v = label_value(n);
        EXPECT_TRUE(proctimes::cli::valid_utf8(v)) << v;
        values.insert(v);
        EXPECT_EQ(decode_label(v), n) << v;
    }
    EXPECT_EQ(values.size(), std::size(names));
    EXPECT_EQ(label_value("x\xff"), "x\\xFF");
    EXPECT_EQ(label_value("x\xef\xbf\xbd"), "x\xef\xbf\xbd");
    // systemd's escapes in unit and cgroup names are kept as they are.
    EXPECT_EQ(label_value("system-systemd\\x2dfsck.slice"), "system-systemd\\x2dfsck.slice");
}

TEST(LabelValue, OneToOneOnRandomBytes) {
    std::mt19937 rng(12345);
    const char alphabet[] = {'\\', 'x', 'X', 'f', 'F', '8', '0', 'a', '\xff', '\x80', '\xc3', '\xa9', '\xe2', '\x82'};
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        const int len = static_cast<int>(rng() % 8);
        for (int j = 0; j < len; ++j) s += alphabet[rng() % sizeof alphabet];
        const std::string v = label_value(s);
        ASSERT_TRUE(proctimes::cli::valid_utf8(v)) << v;
        ASSERT_EQ(decode_label(v), s) << v;
    }
}
