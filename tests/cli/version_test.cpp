// SPDX-License-Identifier: MIT
// `proctimes --version`: the version, and each optional part of the build
// reported as the build configured it (the PROCTIMES_BUILT_* macros, which
// reach this test from proctimes_cli) and judged against the machine.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "proctimes/version.hpp"
#include "run_cli.hpp"
#include "version_info.hpp"

namespace {

using cli_testing::run_cli;
using proctimes::cli::machine_facts;
using proctimes::cli::optional_parts;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(Version, NamesTheVersionAndEveryOptionalPartAsBuilt) {
    const auto r = run_cli({"--version"});
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.err, "");
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 5u) << r.out;
    EXPECT_EQ(lines[0], "proctimes " PROCTIMES_VERSION_STRING);
    EXPECT_EQ(lines[1], "optional parts:");
    const bool built[] = {PROCTIMES_BUILT_EBPF != 0, PROCTIMES_BUILT_PYTHON != 0, PROCTIMES_BUILT_EXPORTER != 0};
    const char* names[] = {"eBPF exit source", "Python binding", "exporter"};
    for (int i = 0; i < 3; ++i) {
        const std::string& line = lines[2 + i];
        const std::string prefix = std::string("  ") + names[i] + ": ";
        ASSERT_EQ(line.rfind(prefix, 0), 0u) << line;
        const std::string state = line.substr(prefix.size());
        if (built[i]) {
            EXPECT_TRUE(state == "built, usable here" || state.rfind("built, not usable here: ", 0) == 0) << line;
        } else {
            EXPECT_EQ(state, "not built") << line;
        }
    }
    EXPECT_EQ(r.out.back(), '\n');
}

TEST(Version, AnUnbuiltPartIsNeverUsable) {
    machine_facts everything{true, true, true, true};
    for (const auto& p : optional_parts(false, false, false, everything)) {
        EXPECT_FALSE(p.built) << p.name;
        EXPECT_FALSE(p.usable) << p.name;
        EXPECT_EQ(p.why, "") << p.name;
    }
}

TEST(Version, EbpfNeedsKernelBtfAndTheRightToLoadPrograms) {
    const auto ebpf = [](machine_facts f) { return optional_parts(true, false, false, f).at(0); };
    EXPECT_EQ(ebpf({}).name, "eBPF exit source");
    EXPECT_FALSE(ebpf({false, true, true, true}).usable);
    EXPECT_EQ(ebpf({false, true, true, true}).why, "the kernel has no BTF (/sys/kernel/btf/vmlinux)");
    EXPECT_FALSE(ebpf({true, false, false, true}).usable);
    EXPECT_EQ(ebpf({true, false, false, true}).why, "needs CAP_BPF or CAP_SYS_ADMIN");
    EXPECT_TRUE(ebpf({true, true, false, false}).usable);
    EXPECT_TRUE(ebpf({true, false, true, false}).usable);
    EXPECT_EQ(ebpf({true, true, false, false}).why, "");
}

TEST(Version, PythonBindingNeedsAnInterpreterAndTheExporterNothingMore) {
    const auto parts = optional_parts(false, true, true, machine_facts{});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[1].name, "Python binding");
    EXPECT_TRUE(parts[1].built);
    EXPECT_FALSE(parts[1].usable);
    EXPECT_EQ(parts[1].why, "no python3 on PATH");
    EXPECT_TRUE(optional_parts(false, true, false, machine_facts{false, false, false, true})[1].usable);
    EXPECT_EQ(parts[2].name, "exporter");
    EXPECT_TRUE(parts[2].usable);
}

TEST(Version, MachineFactsAgreeWithTheSystem) {
    const machine_facts f = proctimes::cli::read_machine_facts();
    // The effective set as proc(5) shows it, read apart from capget(2).
    std::ifstream status("/proc/self/status");
    std::string line;
    unsigned long long cap_eff = 0;
    bool found = false;
    while (std::getline(status, line)) {
        if (line.rfind("CapEff:", 0) == 0) {
            cap_eff = std::stoull(line.substr(7), nullptr, 16);
            found = true;
        }
    }
    if (!found) GTEST_SKIP() << "/proc/self/status has no CapEff line (no /proc?)";
    EXPECT_EQ(f.cap_sys_admin, ((cap_eff >> 21) & 1) != 0);
    EXPECT_EQ(f.cap_bpf, ((cap_eff >> 39) & 1) != 0);
    EXPECT_EQ(f.kernel_btf, ::access("/sys/kernel/btf/vmlinux", R_OK) == 0);
}

}  // namespace
