// SPDX-License-Identifier: MIT
// `proctimes serve` run in-process through the command line: one scrape
// (--once), and the errors of a bad configuration.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli.hpp"
#include "cli/run_cli.hpp"
#include "scrape_text.hpp"

namespace {

using serve_testing::own_comm;
using serve_testing::temp_config;
using serve_testing::value_of;

using cli_testing::run_cli;

}  // namespace

TEST(ServeCli, OnceGroupsByNameAndByUser) {
    std::string out, err;
    ASSERT_EQ(run_cli({"serve", "--once", "--top", "3"}, out, err), 0) << err;
    EXPECT_NE(out.find("proctimes_group_cpu_seconds_total{group=\"" + own_comm() + "\",mode=\"user\"}"),
              std::string::npos);
    EXPECT_NE(out.find("# TYPE proctimes_group_cpu_seconds_total counter"), std::string::npos);
    EXPECT_EQ(out.find("_created"), std::string::npos);
    // Three top processes, two modes each.
    std::size_t n = 0;
    for (std::size_t at = 0; (at = out.find("\nproctimes_process_cpu_seconds_total{", at)) != std::string::npos; ++at)
        ++n;
    EXPECT_EQ(n, 6u);
    ASSERT_EQ(run_cli({"serve", "--once", "--group-by", "user", "--top", "0"}, out, err), 0) << err;
    EXPECT_NE(out.find("proctimes_group_processes{group=\"root\"}"), std::string::npos);
    EXPECT_EQ(out.find("proctimes_process_cpu_seconds_total{"), std::string::npos);
}

TEST(ServeCli, IncludeExcludeAndNamedprocess) {
    std::string out, err;
    ASSERT_EQ(
        run_cli({"serve", "--once", "--include", "^" + own_comm() + "$", "--namedprocess", "--top", "0"}, out, err), 0)
        << err;
    EXPECT_NE(out.find("namedprocess_namegroup_cpu_seconds_total{groupname=\"" + own_comm() + "\",mode=\"system\"}"),
              std::string::npos);
    // At least this process (ctest -j may run another copy of this binary at the same time).
    EXPECT_GE(value_of(out, "namedprocess_namegroup_num_procs{groupname=\"" + own_comm() + "\"}"), 1) << out;
    EXPECT_EQ(out.find("group=\"systemd\""), std::string::npos);
    ASSERT_EQ(run_cli({"serve", "--once", "--exclude", ".*", "--top", "0"}, out, err), 0) << err;
    EXPECT_EQ(out.find("proctimes_group_cpu_seconds_total{"), std::string::npos);
}

TEST(ServeCli, ProcessExporterConfig) {
    const std::string path =
        temp_config("process_names:\n  - name: \"me-{{.Comm}}\"\n    comm:\n    - " + own_comm() + "\n");
    ASSERT_FALSE(path.empty());
    std::string out, err;
    EXPECT_EQ(run_cli({"serve", "--once", "--config", path, "--top", "0"}, out, err), 0) << err;
    EXPECT_GE(value_of(out, "proctimes_group_processes{group=\"me-" + own_comm() + "\"}"), 1) << out;
    EXPECT_EQ(out.find("group=\"kthreadd\""), std::string::npos);  // unmatched processes are not exported
    ::unlink(path.c_str());
}

TEST(ServeCli, BadConfigurationsAreUsageErrors) {
    std::string out, err;
    EXPECT_EQ(run_cli({"serve", "--once", "--include", "("}, out, err), 2);
    EXPECT_NE(err.find("regex"), std::string::npos) << err;
    EXPECT_EQ(run_cli({"serve", "--once", "--config", "/nonexistent/pe.yaml"}, out, err), 2);
    EXPECT_NE(err.find("/nonexistent/pe.yaml"), std::string::npos) << err;
    EXPECT_EQ(run_cli({"serve", "--listen", "localhost"}, out, err), 2);
    EXPECT_NE(err.find("HOST:PORT"), std::string::npos) << err;
    EXPECT_EQ(run_cli({"serve", "--listen", "127.0.0.1:70000"}, out, err), 2);
    EXPECT_EQ(run_cli({"serve", "--group-by", "colour"}, out, err), 2);
    EXPECT_EQ(run_cli({"serve", "--once", "--proc-root", "/nonexistent"}, out, err), 1);
    EXPECT_NE(err.find("/nonexistent"), std::string::npos) << err;
}
