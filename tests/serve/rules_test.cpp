// SPDX-License-Identifier: MIT
// The regexes of `proctimes serve` (config cmdline rules, --include/--exclude)
// and watch --name: RE2, Go's syntax, linear time; the name templates; and
// the label values distinct names become.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "pattern.hpp"
#include "serve/collect/exposition.hpp"
#include "serve/pe/goflags.hpp"
#include "serve/pe/grouping.hpp"
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

namespace {

// Renders TEXT (which must parse) for a process with these values.
std::string render(std::string_view text, const name_values& v) {
    std::string err;
    const auto t = pe_name_template::parse(text, err);
    EXPECT_TRUE(t) << text << ": " << err;
    return t ? t->render(v) : std::string("(unparsed)");
}

}  // namespace

TEST(NameTemplate, FieldsMatchesAndOnePass) {
    const std::vector<std::pair<std::string, std::string>> m{{"prog", "serve.py"}, {"port", "80"}};
    const std::vector<std::string> cg{"/", "/user.slice/x.scope"};
    name_values v{"python3", "python3.11", "/usr/bin/python3.11", "www", 42, "2026-11-26 13:23:20.78 +0000 UTC", &cg,
                  &m};
    EXPECT_EQ(render("{{.Comm}}:{{ .Matches.prog }}@{{.Matches.port}}", v), "python3:serve.py@80");
    EXPECT_EQ(render("{{.ExeBase}}/{{.ExeFull}}/{{.Username}}/{{.PID}}", v), "python3.11//usr/bin/python3.11/www/42");
    // What process-exporter 0.7.10 writes for these (measured with it).
    EXPECT_EQ(render("{{.Comm}}|{{.StartTime}}|{{.Cgroups}}", v),
              "python3|2026-11-26 13:23:20.78 +0000 UTC|[/ /user.slice/x.scope]");
    // A value that looks like a template is not expanded again (a process
    // named "{{.Comm}}" made an old substitution loop forever).
    name_values tricky{"{{.Comm}}", "", "", "{{.Username}}", 1, "", nullptr, nullptr};
    EXPECT_EQ(render("{{.Comm}}-{{.Comm}}", tricky), "{{.Comm}}-{{.Comm}}");
    EXPECT_EQ(render("<{{.Username}}>", tricky), "<{{.Username}}>");
    // An unknown capture is Go's "<no value>"; Go's trim markers and comments.
    EXPECT_EQ(render("{{.Matches.x}}", v), "<no value>");
    EXPECT_EQ(render("a  {{- .Comm -}}  b{{/* note */}}", v), "apython3b");
    EXPECT_EQ(render("{{.Cgroups}}", tricky), "[]");
}

TEST(NameTemplate, AFieldProcessExporterLacksEndsTheNameThere) {
    // process-exporter 0.7.10 wrote "sleep|" for "{{.Comm}}|{{.Cwd}}": Go's
    // template stops at the failing field and the text so far is the name.
    name_values v{"sleep", "sleep", "sleep", "root", 7, "", nullptr, nullptr};
    EXPECT_EQ(render("{{.Comm}}|{{.Cwd}}|{{.PID}}", v), "sleep|");
    std::string err;
    const auto t = pe_name_template::parse("{{.Comm}}|{{.Cwd}}|{{.PID}}", err);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->uses(pe_name_template::field::pid));  // never reached
}

TEST(NameTemplate, WhatCannotBeEvaluatedIsRefused) {
    for (const char* bad : {"{{.Comm", "x {{ .Comm | printf \"%s\" }}", "{{printf \"a\"}}", "{{.}}",
                            "{{.StartTime.Unix}}", "{{if .PID}}x{{end}}", "{{$x := 1}}"}) {
        std::string err;
        EXPECT_FALSE(pe_name_template::parse(bad, err)) << bad;
        EXPECT_NE(err.find("name template"), std::string::npos) << bad << ": " << err;
    }
    std::string err;
    EXPECT_TRUE(parse_pe_config("process_names:\n  - comm: [a]\n    name: '{{.Comm'\n", err).empty());
    EXPECT_NE(err.find("unclosed action"), std::string::npos) << err;
}

TEST(NameTemplate, GoTimeAndListFormats) {
    EXPECT_EQ(go_time_string(0, 0), "1970-01-01 00:00:00 +0000 UTC");
    EXPECT_EQ(go_time_string(1764163400, 780'000'000), "2025-11-26 13:23:20.78 +0000 UTC");
    EXPECT_EQ(go_time_string(1764163400, 500'000'000), "2025-11-26 13:23:20.5 +0000 UTC");
    EXPECT_EQ(go_time_string(1764163400, 1), "2025-11-26 13:23:20.000000001 +0000 UTC");
    EXPECT_EQ(go_time_string(10, 1'500'000'000), "1970-01-01 00:00:11.5 +0000 UTC");
    EXPECT_EQ(go_string_list({}), "[]");
    EXPECT_EQ(go_string_list({"a", "b c"}), "[a b c]");
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

// An exit record's process has no pid, start time or cgroups to show: a rule
// whose name shows them cannot name it (its CPU is then counted
// unattributed), where the rendering used to call it "p0".
TEST(NameTemplate, AnEndedProcessIsNotNamedWithAMadeUpPid) {
    char path[] = "/tmp/proctimes-rules-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string yaml =
        "process_names:\n  - name: 'p{{.PID}}'\n    comm: [sh]\n  - name: '{{.Comm}}'\n    comm: [bash]\n";
    ASSERT_EQ(::write(fd, yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
    ::close(fd);
    proctimes::cli::serve_options o;
    o.config_file = path;
    auto made = classifier::make(o);
    ::unlink(path);
    ASSERT_TRUE(made) << made.error().message;
    const auto& c = *made;
    EXPECT_EQ(c->ended_verdict("sh", 0, nullptr).k, verdict::kind::unknown);
    const verdict bash = c->ended_verdict("bash", 0, nullptr);  // a record has its comm
    EXPECT_EQ(bash.k, verdict::kind::matched);
    EXPECT_EQ(bash.group, "bash");
}

namespace {

// A classifier over the config YAML (nullptr, and `err`, when it is refused).
std::unique_ptr<classifier> from_config(const std::string& yaml, std::string& err) {
    char path[] = "/tmp/proctimes-rules-XXXXXX";
    const int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    if (fd < 0) return nullptr;
    EXPECT_EQ(::write(fd, yaml.data(), yaml.size()), static_cast<ssize_t>(yaml.size()));
    ::close(fd);
    proctimes::cli::serve_options o;
    o.config_file = path;
    auto made = classifier::make(o);
    ::unlink(path);
    if (!made) {
        err = made.error().message;
        return nullptr;
    }
    return std::move(*made);
}

// The group the rules give a process of this comm and command line (words
// separated by NULs, as /proc/<pid>/cmdline has them); "-" when none.
std::string group_for(classifier& c, std::string_view comm, std::string_view area) {
    const process_facts f = command_line_facts(area);
    const verdict v = c.ended_verdict(comm, 0, &f);
    return v.k == verdict::kind::matched ? v.group : std::string("-");
}

}  // namespace

// process-exporter starts with these and groups no process; `process_names: []`
// fell back to grouping every process by name, and the others were refused.
TEST(ProcessExporterConfig, NoRulesGroupNoProcess) {
    for (const char* yaml : {"", "# only a comment\n\n# another one\n", "process_names:\n", "process_names: ~\n",
                             "process_names: []\n", "other: 1\n", "---\n"}) {
        std::string err;
        EXPECT_TRUE(parse_pe_config(yaml, err).empty()) << yaml;
        EXPECT_EQ(err, "") << yaml;
        auto c = from_config(yaml, err);
        ASSERT_TRUE(c) << yaml << ": " << err;
        EXPECT_TRUE(c->uses_config()) << yaml;
        EXPECT_EQ(group_for(*c, "sleep",
                            std::string_view("sleep\0"
                                             "1\0",
                                             8)),
                  "-")
            << yaml;
        EXPECT_FALSE(c->group_of_ended("bash", 0)) << yaml;
    }
    // What process-exporter refuses stays refused.
    for (const char* yaml : {"process_names: 3\n", "process_names: {comm: [a]}\n", "- comm: [a]\n", "just text\n",
                             "process_names:\n  - name: x\n", "process_names:\n  - ~\n"}) {
        std::string err;
        EXPECT_TRUE(parse_pe_config(yaml, err).empty()) << yaml;
        EXPECT_NE(err, "") << yaml;
    }
}

// Go's yaml.v2: the last of two equal keys counts (yaml-cpp's lookup took the first).
TEST(ProcessExporterConfig, TheLastOfDuplicateKeysCounts) {
    std::string err;
    auto c = from_config(
        "process_names:\n  - comm: [bash]\nprocess_names:\n  - comm: [sleep]\n"
        "  - name: a\n    comm: [bash]\n    comm: [cat]\n    name: 'b-{{.Comm}}'\n",
        err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(group_for(*c, "sleep", std::string_view("sleep\0", 6)), "sleep");
    EXPECT_EQ(group_for(*c, "bash", std::string_view("bash\0", 5)), "-");
    EXPECT_EQ(group_for(*c, "cat", std::string_view("cat\0", 4)), "b-cat");
    // A later null empties the earlier list, as in Go.
    EXPECT_TRUE(parse_pe_config("process_names:\n  - comm: [a]\n    comm:\n", err).empty());
    EXPECT_NE(err.find("none of comm"), std::string::npos) << err;
}

// `<<` merges a map in, as yaml.v2 does: in document order (a key after it
// overrides, one before it is overridden), and of a list of maps the first
// takes precedence. yaml-cpp alone saw a key named "<<" and no comm.
TEST(ProcessExporterConfig, MergeKeys) {
    std::string err;
    auto c = from_config(R"(base: &b {comm: [sleep]}
named: &n {comm: [cat], name: "fromn"}
process_names:
  - <<: *b
    name: "m-{{.Comm}}"
  - name: "before"
    <<: *n
  - comm: [bash]
    <<: [{name: "first"}, {name: "second", comm: [dash]}]
)",
                         err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(group_for(*c, "sleep", std::string_view("sleep\0", 6)), "m-sleep");
    EXPECT_EQ(group_for(*c, "cat", std::string_view("cat\0", 4)), "fromn");
    EXPECT_EQ(group_for(*c, "dash", std::string_view("dash\0", 5)), "first");
    EXPECT_EQ(group_for(*c, "bash", std::string_view("bash\0", 5)), "-");
    // A quoted "<<" is an ordinary key: the entry has no matcher.
    EXPECT_TRUE(parse_pe_config("base: &b {comm: [x]}\nprocess_names:\n  - \"<<\": *b\n", err).empty());
    EXPECT_NE(err.find("none of comm"), std::string::npos) << err;
    err.clear();
    EXPECT_TRUE(parse_pe_config("process_names:\n  - <<: [1]\n    comm: [x]\n", err).empty());
    EXPECT_NE(err.find("merge key"), std::string::npos) << err;
    EXPECT_NE(err.find("line 2"), std::string::npos) << err;
    // A map that merges itself (yaml-cpp builds the cycle) is refused, not followed forever.
    err.clear();
    EXPECT_TRUE(parse_pe_config("a: &a {<<: *a}\nprocess_names:\n  - <<: *a\n    comm: [x]\n", err).empty());
    EXPECT_NE(err.find("nested more than"), std::string::npos) << err;
}

// An empty list is a matcher too: `comm: []` and `exe: []` match nothing,
// `cmdline: []` everything; an empty or null name is the default {{.ExeBase}};
// a null item is "".
TEST(ProcessExporterConfig, EmptyListsNamesAndNulls) {
    std::string err;
    auto c = from_config(R"(process_names:
  - comm: []
    name: never
  - exe: []
    cmdline: []
    name: never
  - comm: [~, sleep]
    name: ""
  - comm: [cat]
    name:
  - cmdline: []
    name: "all-{{.Comm}}"
)",
                         err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(group_for(*c, "sleep",
                        std::string_view("/bin/sleep\0"
                                         "9\0",
                                         13)),
              "sleep");
    EXPECT_EQ(group_for(*c, "cat", std::string_view("/usr/bin/cat\0", 13)), "cat");
    EXPECT_EQ(group_for(*c, "top", std::string_view("top\0", 4)), "all-top");
}

// {{.Matches}} is the whole map, as Go prints it: keys sorted, "" holding the
// last unnamed group (the whole match when there is none). It was cut off.
TEST(NameTemplate, TheWholeMatchesMap) {
    std::string err;
    auto c = from_config(R"(process_names:
  - name: "x{{.Matches}}y"
    cmdline: ['^(sl)(?P<a>e+)p (?P<b>\d+)']
  - name: "{{.Matches}}|{{.Matches.a}}"
    cmdline: ['^cat', '(?P<a>-\w)?$']
  - name: "{{.Matches}}"
    comm: [top]
)",
                         err);
    ASSERT_TRUE(c) << err;
    EXPECT_EQ(group_for(*c, "sleep",
                        std::string_view("sleep\0"
                                         "300\0",
                                         10)),
              "xmap[:sl a:ee b:300]y");
    EXPECT_EQ(group_for(*c, "cat", std::string_view("cat\0", 4)), "map[: a:]|");
    EXPECT_EQ(group_for(*c, "cat", std::string_view("cat\0-n\0", 7)), "map[:-n a:-n]|-n");
    EXPECT_EQ(group_for(*c, "top", std::string_view("top\0", 4)), "map[]");
    EXPECT_EQ(go_string_map({{"b", "1"}, {"", "x"}, {"b", "2"}}), "map[:x b:2]");
}

// Go's regexp refuses \C (one byte), which RE2 takes; the docs promise Go's syntax.
TEST(ProcessExporterConfig, BackslashCIsRefusedAsGoRefusesIt) {
    std::string err;
    EXPECT_TRUE(parse_pe_config("process_names:\n  - cmdline: ['a\\Cb']\n", err).empty());
    EXPECT_NE(err.find("invalid escape sequence: `\\C`"), std::string::npos) << err;
    EXPECT_NE(err.find("a\\Cb"), std::string::npos) << err;
    for (const char* ok : {"a\\\\Cb", "\\Qa\\Cb\\E", "[C]\\\\C", "\\QC\\E\\\\C"}) {
        err.clear();
        EXPECT_EQ(parse_pe_config(std::string("process_names:\n  - cmdline: ['") + ok + "']\n", err).size(), 1u)
            << ok << ": " << err;
    }
    EXPECT_NE(go_regexp_refusal("[\\C]"), "");
    EXPECT_NE(go_regexp_refusal("\\Qx\\E\\C"), "");
    const auto mapped = rules_from_procnames("", "sleep,(\\C+)");
    ASSERT_FALSE(mapped);
    EXPECT_EQ(mapped.error().kind, proctimes::cli::serve::error_kind::usage);
    err = mapped.error().message;
    EXPECT_NE(err.find("-namemapping: bad regex '(\\C+)': invalid escape sequence"), std::string::npos) << err;
    err.clear();
    proctimes::cli::serve_options o;
    o.include = "^a\\C";
    const auto refused = classifier::make(o);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().kind, proctimes::cli::serve::error_kind::usage);
    err = refused.error().message;
    EXPECT_NE(err.find("--include"), std::string::npos) << err;
    EXPECT_NE(err.find("\\C"), std::string::npos) << err;
}

// process-exporter's YAML reader refuses a byte that is not UTF-8, in a comment too.
TEST(ProcessExporterConfig, BytesThatAreNotUtf8AreRefused) {
    std::string err;
    EXPECT_TRUE(parse_pe_config("process_names:\n  - comm: [sl\xff"
                                "eep]\n",
                                err)
                    .empty());
    EXPECT_NE(err.find("line 2, column 14 (byte 0xFF)"), std::string::npos) << err;
    err.clear();
    EXPECT_TRUE(parse_pe_config("# caf\xe9\nprocess_names:\n  - comm: [a]\n", err).empty());
    EXPECT_NE(err.find("line 1, column 6 (byte 0xE9)"), std::string::npos) << err;
    err.clear();
    EXPECT_EQ(parse_pe_config("# caf\xc3\xa9\nprocess_names:\n  - comm: [\xc3\xa9t\xc3\xa9]\n", err).size(), 1u) << err;
    // Nor a control character (C0 but tab, LF and CR; DEL; C1 but NEL; U+FFFE).
    for (const char* bad : {"\x01", "\x7f", "\x1b", "\xc2\x80", "\xef\xbf\xbe"}) {
        err.clear();
        EXPECT_TRUE(parse_pe_config(std::string("process_names:\n  - comm: [a] # x") + bad + "\n", err).empty()) << bad;
        EXPECT_NE(err.find("line 2, column 18: the character U+"), std::string::npos) << err;
    }
    err.clear();
    EXPECT_EQ(
        parse_pe_config("\xef\xbb\xbfprocess_names: \t# \xc2\x85 \xf0\x9f\x98\x80\r\n  - comm: [a]\n", err).size(), 1u)
        << err;
}

// Deep nesting was refused as "yaml-cpp: error at line 1, column 1204: bad file".
TEST(ProcessExporterConfig, DeepNestingIsRefusedWithItsLimitAndLine) {
    std::string err;
    const std::string flow = "process_names:\n  - comm: [x]\nx: " + std::string(2000, '[') + std::string(2000, ']');
    EXPECT_TRUE(parse_pe_config(flow, err).empty());
    EXPECT_NE(err.find("line 3, column"), std::string::npos) << err;
    EXPECT_NE(err.find("nested more than 499 deep"), std::string::npos) << err;  // yaml-cpp 0.7's limit
    EXPECT_EQ(err.find("bad file"), std::string::npos) << err;
    err.clear();
    std::string block = "process_names:\n  - comm: [x]\nx:\n";
    for (int i = 1; i <= 600; ++i) block += std::string(2 * static_cast<std::size_t>(i), ' ') + "a:\n";
    EXPECT_TRUE(parse_pe_config(block, err).empty());
    EXPECT_NE(err.find("line 501, column"), std::string::npos) << err;  // where the 500th level starts
    EXPECT_NE(err.find("nested more than"), std::string::npos) << err;
    err.clear();
    const std::string shallow = "process_names:\n  - comm: [x]\nx: " + std::string(400, '[') + std::string(400, ']');
    EXPECT_EQ(parse_pe_config(shallow, err).size(), 1u) << err;
}

// Random texts of YAML's structure, anchors, aliases and merge keys: each is
// rules or a message, never an exception, a hang or a crash (a map merging
// itself through an alias is a cycle yaml-cpp builds).
TEST(ProcessExporterConfig, RandomStructureIsRulesOrAMessage) {
    std::mt19937 rng(20261128);
    const char* const prefixes[] = {"", "base: &a {comm: [a], name: m}\n", "c: &c {<<: *c}\nbase: &a {exe: [a]}\n"};
    const char* const items[] = {"comm: [a]",
                                 "<<: *a",
                                 "<<: [*a, {name: y}]",
                                 "name: x",
                                 "cmdline: ['(?P<n>.)']",
                                 "comm: []",
                                 "<<: *c",
                                 "exe: [b]",
                                 "'<<': *a",
                                 "comm: ~",
                                 "name: '{{.Matches}}'"};
    const char* const noise[] = {"{", "[", "]", "*a", "&a ", ": ", "\n", "<<: ", "- ", "\xff"};
    const auto t0 = steady::now();
    std::size_t with_rules = 0, refused = 0;
    for (int i = 0; i < 20000; ++i) {
        std::string text = prefixes[rng() % std::size(prefixes)];
        text += "process_names:\n";
        for (unsigned e = rng() % 4; e > 0; --e) {
            text += "  - ";
            for (unsigned k = 1 + rng() % 4; k > 0; --k)
                text += std::string(items[rng() % std::size(items)]) + "\n    ";
            text += "\n";
        }
        if (rng() % 3 == 0) text.insert(rng() % (text.size() + 1), noise[rng() % std::size(noise)]);
        std::string err;
        const auto rules = parse_pe_config(text, err);
        ASSERT_TRUE(err.empty() || rules.empty()) << text;
        with_rules += rules.empty() ? 0 : 1;
        refused += err.empty() ? 0 : 1;
    }
    EXPECT_GT(with_rules, 1000u);
    EXPECT_GT(refused, 1000u);
    EXPECT_LT(steady::now() - t0, std::chrono::seconds(60));  // about a second; generous on a loaded machine
}
