// SPDX-License-Identifier: MIT
// The closed sets (proctimes/words.hpp): every word of every table is
// documented, each value prints as its word, the command line takes the word
// and the older spelling alike; and the PROCTIMES_* values the library
// refuses are said once per command, and by doctor.
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "commands.hpp"
#include "output/output.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/snapshot.hpp"
#include "proctimes/times.hpp"
#include "proctimes/tree.hpp"
#include "proctimes/words.hpp"
#if PROCTIMES_BUILT_EXPORTER
#include "serve/serve.hpp"
#endif
#ifndef _WIN32
#include "record/store.hpp"
#include "record/words.hpp"
#endif

namespace {

using cli_testing::run_cli;
using namespace proctimes;

// One set as the documentation shows it: a table row per value that has a word.
struct documented_set {
    std::string name;
    std::string doc;  // the docs/ page that lists it
    std::vector<std::string> rows;
};

template <class E, std::size_t N>
documented_set set_of(std::string name, std::string doc, const std::array<word_row<E>, N>& rows) {
    documented_set s{std::move(name), std::move(doc), {}};
    for (const auto& r : rows) {
        if (r.word.empty()) continue;
        std::string alias = r.alias.empty() ? std::string() : "`" + std::string(r.alias) + "`";
        s.rows.push_back("| `" + std::string(r.word) + "` | " + alias + " | " + std::string(r.description) + " |");
    }
    return s;
}

// Every table of the library and of the command.
std::vector<documented_set> every_set() {
    return {
        set_of("cpu_source", "CLI.md", cpu_source_words), set_of("exit_source", "CLI.md", exit_source_words),
            set_of("task_state", "CLI.md", task_state_words),
            set_of("snapshot_source", "CLI.md", snapshot_source_words),
            set_of("tree_source", "CLI.md", tree_source_words),
            set_of("exit_stream_source", "CLI.md", exit_stream_source_words),
            set_of("tsc_rate_source", "API.md", tsc_rate_source_words),
            set_of("output_format", "CLI.md", cli::output_format_words),
            set_of("interval_basis", "CLI.md", cli::interval_basis_words),
            set_of("end_seen_by", "CLI.md", cli::end_seen_by_words), set_of("ps_sort", "CLI.md", cli::ps_sort_words),
            set_of("ps_grouping", "CLI.md", cli::ps_grouping_words),
            set_of("ps_ended_source", "CLI.md", cli::ps_ended_source_words),
            set_of("end_choice", "CLI.md", cli::end_choice_words),
#if PROCTIMES_BUILT_EXPORTER
            set_of("group_by", "CLI.md", cli::group_by_words),
#endif
#ifndef _WIN32
            set_of("report group_by", "CLI.md", cli::record::group_by_words),
#endif
    };
}

std::string read_doc(const std::string& name) {
    std::ifstream in(std::string(PROCTIMES_DOCS) + "/" + name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The documentation cannot drift from the tables: each row of each table,
// word, older spelling and meaning, stands in its page (CLI.md is also the
// man page's source) as a table line.
TEST(Words, EveryRowOfEveryTableIsDocumented) {
    for (const auto& set : every_set()) {
        const std::string doc = read_doc(set.doc);
        ASSERT_FALSE(doc.empty()) << set.doc;
        std::string missing;
        for (const auto& row : set.rows)
            if (doc.find(row + "\n") == std::string::npos) missing += row + "\n";
        EXPECT_TRUE(missing.empty()) << "docs/" << set.doc << " lacks these lines of " << set.name << ":\n" << missing;
    }
}

TEST(Words, EachValuePrintsAsItsWordAndReadsBack) {
    EXPECT_EQ(to_string(snapshot_source::procfs), "procfs");
    EXPECT_EQ(to_string(snapshot_source::automatic), "auto");
    EXPECT_EQ(to_string(cpu_source::cpu_clock_and_stat), "cpu_clock+stat");
    EXPECT_EQ(to_string(cpu_source::bpf_task), "bpf");
    EXPECT_EQ(to_string(exit_source::exit_record), "exit_record");
    EXPECT_EQ(to_string(task_state::exited_partial), "exited_partial");
    EXPECT_EQ(to_string(tree_source::ptrace), "ptrace");
    EXPECT_EQ(to_string(exit_stream_source::taskstats), "taskstats");
    EXPECT_EQ(to_string(tsc_rate_source::architected_timer), "cntfrq");
    EXPECT_EQ(cli::to_string(cli::interval_basis::ended_earlier), "ended_earlier");
    EXPECT_EQ(cli::to_string(cli::end_seen_by::exit_stream), "exit_stream");
    EXPECT_EQ(cli::to_string(cli::ps_grouping::none), "");
    EXPECT_EQ(cli::to_string(cli::ps_grouping::cgroup), "cgroup");
    // Out of the table: the fallback, not a neighbour's word.
    EXPECT_EQ(to_string(static_cast<cpu_source>(200)), "unknown");
    EXPECT_EQ(cli::to_string(static_cast<cli::interval_basis>(200)), "?");

    EXPECT_EQ(word_value<snapshot_source>("procfs"), snapshot_source::procfs);
    EXPECT_EQ(word_value<snapshot_source>("proc"), snapshot_source::procfs);
    EXPECT_EQ(word_value<snapshot_source>("automatic"), snapshot_source::automatic);
    EXPECT_EQ(word_value<snapshot_source>("PROC"), std::nullopt);
    EXPECT_EQ(word_value<cli::ps_grouping>(""), std::nullopt) << "a row without a word is never read";
    EXPECT_EQ(word_value<cli::ps_sort>("kernel"), cli::ps_sort::kernel);
    EXPECT_EQ(word_value<cli::ps_sort>("memory"), std::nullopt);
}

// ps --source: the canonical words and the older ones give the same
// snapshot; what no table holds is a usage error that lists the words.
TEST(Words, OlderSpellingsStillWorkOnTheCommandLine) {
    const std::string pid = std::to_string(::getpid());
    for (const char* word : {"procfs", "proc", "auto", "automatic"}) {
        const auto r = run_cli({"ps", "--source", word, "--sort", "pid", "--top", "1", "--format", "csv"});
        EXPECT_EQ(r.code, 0) << word << ": " << r.err;
        EXPECT_NE(r.out.find("\n1,"), std::string::npos) << word << ": " << r.out;
    }
    const auto bad = run_cli({"ps", "--source", "windows"});
    EXPECT_EQ(bad.code, 2) << "windows is not a source ps offers";
    EXPECT_NE(bad.err.find("windows not in {auto,procfs,bpf}"), std::string::npos) << bad.err;
    const auto help = run_cli({"ps", "--help"});
    EXPECT_NE(help.out.find("--source SOURCE:{auto,procfs,bpf}"), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("--sort KEY:{cpu,kernel,user,start,pid,name}"), std::string::npos) << help.out;
    EXPECT_EQ(run_cli({"watch", "--all", "--end-source", "auto", "--help"}).code, 0);
    EXPECT_EQ(run_cli({"run", "--tree", "--tree-source", "none", "--", "true"}).code, 2)
        << "none is a tree source printed, never asked for";
}

#ifndef _WIN32
// report --group-by (record/words.hpp): each word reads back as its value and
// prints as itself, in the report's group_by field too; any other word is a
// usage error that lists the words.
TEST(Words, ReportGroupingWordsReadBackAndPrintAsThemselves) {
    using cli::record::group_by;
    ASSERT_EQ(cli::record::group_by_words.size(), 3U);
    for (const auto& row : cli::record::group_by_words) {
        EXPECT_EQ(word_value<group_by>(row.word), row.value) << row.word;
        EXPECT_EQ(word_of(row.value), row.word);
        EXPECT_TRUE(row.alias.empty()) << row.word << " has no older spelling";
    }
    EXPECT_EQ(word_of(group_by::program), "program");
    EXPECT_EQ(word_of(group_by::user), "user");
    EXPECT_EQ(word_of(group_by::cgroup), "cgroup");
    EXPECT_EQ(word_value<group_by>("cgroup"), group_by::cgroup);
    for (const char* other : {"name", "exe", "Program", "USER", "program ", "", "comm"})
        EXPECT_EQ(word_value<group_by>(other), std::nullopt) << "'" << other << "'";
    // Out of the table: the fallback, not a neighbour's word.
    EXPECT_EQ(word_of(static_cast<group_by>(200)), "unknown");
}

TEST(Words, ReportTakesEachGroupingWordAndRefusesOthers) {
    namespace fs = std::filesystem;
    char dir_template[] = "/tmp/proctimes-words-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const fs::path dir = dir_template;
    const std::string path = (dir / "empty.db").string();
    {
        auto s = cli::record::store::open_writer(path);
        ASSERT_TRUE(s) << s.error().message;
    }
    for (const auto& row : cli::record::group_by_words) {
        const std::string word(row.word);
        for (const char* option : {"--group-by", "-g"}) {
            const auto r = run_cli({"report", "--store", path, option, word, "--format", "json"});
            ASSERT_EQ(r.code, 0) << option << ' ' << word << ": " << r.err;
            const auto j = nlohmann::json::parse(r.out, nullptr, false);
            ASSERT_FALSE(j.is_discarded()) << r.out;
            EXPECT_EQ(j.value("group_by", std::string()), word) << r.out;
            EXPECT_EQ(j.value("intervals", -1), 0) << r.out;
        }
    }
    const auto plain = run_cli({"report", "--store", path, "--format", "json"});
    ASSERT_EQ(plain.code, 0) << plain.err;
    const auto plain_json = nlohmann::json::parse(plain.out, nullptr, false);
    ASSERT_FALSE(plain_json.is_discarded()) << plain.out;
    EXPECT_EQ(plain_json.value("group_by", std::string()), "program") << "the default: " << plain.out;

    for (const char* bad : {"name", "Program", "exe", ""}) {
        const auto r = run_cli({"report", "--store", path, "--group-by", bad});
        EXPECT_EQ(r.code, 2) << "'" << bad << "': " << r.out;
        EXPECT_NE(r.err.find(std::string("--group-by: ") + bad + " not in {program,user,cgroup}"), std::string::npos)
            << "'" << bad << "': " << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
    const auto help = run_cli({"report", "--help"});
    EXPECT_NE(help.out.find("-g,--group-by GROUP:{program,user,cgroup}"), std::string::npos) << help.out;

    std::error_code ec;
    fs::remove_all(dir, ec);
}
#endif

class SettingWarnings : public ::testing::Test {
protected:
    void TearDown() override { ::unsetenv("PROCTIMES_BPF_DEBUG"); }
};

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

TEST_F(SettingWarnings, ARefusedValueIsSaidOncePerCommand) {
    ::setenv("PROCTIMES_BPF_DEBUG", "maybe", 1);
    const auto r = run_cli({"show", std::to_string(::getpid())});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(count_of(r.err,
                       "proctimes: warning: PROCTIMES_BPF_DEBUG=maybe ignored: expected "
                       "1/on/true/yes or 0/off/false/no\n"),
              1U)
        << r.err;
    EXPECT_EQ(count_of(r.err, "warning"), 1U) << r.err;
    EXPECT_NE(r.out.find(std::to_string(::getpid())), std::string::npos) << "the command still runs";
#if PROCTIMES_BUILT_EXPORTER
    const auto d = run_cli({"doctor"});
    EXPECT_EQ(d.code, 0) << d.err;
    EXPECT_NE(d.out.find("environment: values ignored\n"
                         "  PROCTIMES_BPF_DEBUG=maybe: ignored, expected 1/on/true/yes or 0/off/false/no\n"),
              std::string::npos)
        << d.out;
#endif
}

TEST_F(SettingWarnings, GoodValuesSayNothing) {
    for (const char* value : {"off", "0", "NO", ""}) {
        ::setenv("PROCTIMES_BPF_DEBUG", value, 1);
        const auto r = run_cli({"show", std::to_string(::getpid())});
        EXPECT_EQ(r.code, 0) << value << ": " << r.err;
        EXPECT_EQ(r.err.find("warning"), std::string::npos) << value << ": " << r.err;
#if PROCTIMES_BUILT_EXPORTER
        const auto d = run_cli({"doctor"});
        EXPECT_NE(d.out.find("environment: no PROCTIMES_* value ignored\n"), std::string::npos) << d.out;
        EXPECT_EQ(d.out.find("ignored, expected"), std::string::npos) << d.out;
#endif
    }
}

}  // namespace
