// SPDX-License-Identifier: MIT
// The exposition writers and the process-exporter config reader of `proctimes serve`.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "serve/collect/exposition.hpp"
#include "serve/pe/grouping.hpp"

using namespace proctimes::cli::serve;

namespace {
std::vector<family> one_counter() {
    family f;
    f.name = "x_cpu_seconds";
    f.help = "CPU\\time\nhere";
    f.type = metric_type::counter;
    f.add({{"group", "a\"b\\c\nd"}, {"mode", "user"}}, 1.5);
    family g;
    g.name = "x_procs";
    g.help = "n";
    g.add({}, 3);
    return {f, g};
}
}  // namespace

TEST(Exposition, Text004) {
    EXPECT_EQ(render(one_counter(), format::text_004),
              "# HELP x_cpu_seconds_total CPU\\\\time\\nhere\n"
              "# TYPE x_cpu_seconds_total counter\n"
              "x_cpu_seconds_total{group=\"a\\\"b\\\\c\\nd\",mode=\"user\"} 1.5\n"
              "# HELP x_procs n\n# TYPE x_procs gauge\nx_procs 3\n");
}

TEST(Exposition, OpenMetricsNamesFamiliesWithoutTotalAndEnds) {
    const std::string s = render(one_counter(), format::openmetrics_100);
    EXPECT_NE(s.find("# TYPE x_cpu_seconds counter\n"), std::string::npos);
    EXPECT_NE(s.find("\nx_cpu_seconds_total{"), std::string::npos);
    EXPECT_EQ(s.find("_created"), std::string::npos);
    EXPECT_EQ(s.substr(s.size() - 6), "# EOF\n");
}

TEST(Exposition, LabelValuesAreAlwaysUtf8) {
    family f;
    f.name = "g";
    f.help = "h";
    f.add({{"group", std::string("a\xff"
                                 "b\xc3\xa9"
                                 "c\xed\xa0\x80"
                                 "\xe2\x82")}},
          1);
    const std::string s = render({f}, format::text_004);
    // Each byte that is not UTF-8 is written \xHH (one-to-one, label_value()),
    // and the text format escapes that backslash once more.
    EXPECT_NE(s.find("g{group=\"a\\\\xFF"
                     "b\xc3\xa9"
                     "c\\\\xED\\\\xA0\\\\x80"
                     "\\\\xE2\\\\x82\"} 1\n"),
              std::string::npos)
        << s;
}

// A sample's label is written straight into its family's lines, mapped
// (label_value) and escaped for the format in one pass: the same text as the
// mapping followed by the format's escapes (\\, \", \n), for every kind of
// byte a process name can hold.
TEST(Exposition, LabelWrittenInOnePassIsTheMappingThenTheEscapes) {
    const auto escaped = [](const std::string& v) {
        std::string out;
        for (const char c : v) {
            if (c == '\\')
                out += "\\\\";
            else if (c == '"')
                out += "\\\"";
            else if (c == '\n')
                out += "\\n";
            else
                out += c;
        }
        return out;
    };
    const std::string names[] = {"",
                                 "plain",
                                 "q\"uote",
                                 "new\nline",
                                 "back\\slash",
                                 "\\\\",
                                 "\\x80",
                                 "\\xff",
                                 "\\x7f",
                                 "\\\xff",
                                 "a\xff\\",
                                 "\xc3\xa9\xe2\x82",
                                 std::string("nul\0byte", 8),
                                 "\xed\xa0\x80\"\n\\"};
    for (const std::string& n : names) {
        family f = family_of("g", "h", metric_type::gauge);
        f.add({{"name", n}, {"mode", "user"}}, 2);
        EXPECT_EQ(f.lines, "g{name=\"" + escaped(label_value(n)) + "\",mode=\"user\"} 2\n") << n;
    }
    EXPECT_EQ(label_value("\\x80"), "\\\\x80");  // a backslash that could read as an escape is doubled
    EXPECT_EQ(label_value("\\x7f"), "\\x7f");    // one that cannot is kept
}

TEST(Exposition, Negotiation) {
    EXPECT_EQ(negotiate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
              format::openmetrics_100);
    EXPECT_EQ(negotiate("text/plain;version=0.0.4;q=1,*/*;q=0.1"), format::text_004);
    EXPECT_EQ(negotiate(""), format::text_004);
    EXPECT_EQ(content_type(format::text_004), "text/plain; version=0.0.4; charset=utf-8");
}

TEST(Exposition, NegotiationHonoursQAndIgnoresCase) {
    EXPECT_EQ(negotiate("application/openmetrics-text;q=0"), format::text_004);
    EXPECT_EQ(negotiate("application/openmetrics-text; q=0.0, text/plain"), format::text_004);
    EXPECT_EQ(negotiate("application/openmetrics-text;q=0.2,text/plain;q=0.9"), format::text_004);
    EXPECT_EQ(negotiate("Application/OpenMetrics-Text"), format::openmetrics_100);
    EXPECT_EQ(negotiate("APPLICATION/OPENMETRICS-TEXT; Q=0.5, */*;q=0.1"), format::openmetrics_100);
    // A wildcard alone keeps the text format; a bad q drops its entry.
    EXPECT_EQ(negotiate("*/*"), format::text_004);
    EXPECT_EQ(negotiate("application/openmetrics-text;q=2"), format::text_004);
    EXPECT_EQ(negotiate("application/openmetrics-text;q=abc"), format::text_004);
    EXPECT_DOUBLE_EQ(accept_q("gzip, deflate", "gzip", true), 1.0);
    EXPECT_DOUBLE_EQ(accept_q("GZIP;q=0.5", "gzip", true), 0.5);
    EXPECT_DOUBLE_EQ(accept_q("gzip;q=0, *", "gzip", true), 0.0);
    EXPECT_DOUBLE_EQ(accept_q("*;q=0.3", "gzip", true), 0.3);
    EXPECT_DOUBLE_EQ(accept_q("deflate", "gzip", true), 0.0);
    EXPECT_DOUBLE_EQ(accept_q("text/*;q=0.4, */*;q=0.1", "text/plain", true), 0.4);
}

TEST(Exposition, Values) {
    EXPECT_EQ(format_value(0.1), "0.1");
    EXPECT_EQ(format_value(1e-9), "1e-09");
    EXPECT_EQ(format_value(123456789.123456789), "123456789.12345679");
    EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(format_value(std::nan("")), "NaN");
}

TEST(ProcessExporterConfig, ReadsProcessNames) {
    std::string err;
    const auto rules = parse_pe_config(R"(process_names:
  - name: "{{.Comm}}"
    cmdline:
    - '.+'
  - name: "db-{{.Username}}"
    comm:
    - postgres
    - mysqld
  - exe:
    - /usr/sbin/sshd
)",
                                       err);
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(rules.size(), 3u);
    EXPECT_EQ(rules[0].name_template, "{{.Comm}}");
    EXPECT_EQ(rules[0].cmdline.size(), 1u);
    EXPECT_EQ(rules[1].comm, (std::vector<std::string>{"postgres", "mysqld"}));
    EXPECT_EQ(rules[2].name_template, "{{.ExeBase}}");
    EXPECT_TRUE(rules[2].needs_exe());
}

TEST(ProcessExporterConfig, ClearErrors) {
    std::string err;
    EXPECT_TRUE(parse_pe_config("process_names: 3\n", err).empty());
    EXPECT_NE(err.find("process_names"), std::string::npos);
    err.clear();
    EXPECT_TRUE(parse_pe_config("process_names:\n  - name: x\n", err).empty());
    EXPECT_NE(err.find("none of"), std::string::npos);
    err.clear();
    EXPECT_TRUE(parse_pe_config("process_names: [ {comm: [a] ", err).empty());  // not YAML
    EXPECT_FALSE(err.empty());
    err.clear();
    EXPECT_TRUE(parse_pe_config("process_names:\n  - cmdline: ['(']\n", err).empty());  // bad regex
    EXPECT_FALSE(err.empty());
}

// process-exporter's error counters carry no _total: 0.0.4 writes them as
// counters under their own name; OpenMetrics, where a counter's samples must
// end in _total, as unknown, so the series keeps its name in both.
TEST(Exposition, BareCounterKeepsItsName) {
    family f;
    f.name = "namedprocess_scrape_errors";
    f.help = "e";
    f.type = metric_type::counter;
    f.bare_counter = true;
    f.add({}, 2);
    EXPECT_EQ(render({f}, format::text_004),
              "# HELP namedprocess_scrape_errors e\n# TYPE namedprocess_scrape_errors counter\n"
              "namedprocess_scrape_errors 2\n");
    EXPECT_EQ(render({f}, format::openmetrics_100),
              "# HELP namedprocess_scrape_errors e\n# TYPE namedprocess_scrape_errors unknown\n"
              "namedprocess_scrape_errors 2\n# EOF\n");
}
