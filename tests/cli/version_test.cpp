// SPDX-License-Identifier: MIT
// `proctimes --version`: the version, and each optional part of the build
// reported as the build configured it (the PROCTIMES_BUILT_* macros, which
// reach this test from proctimes_cli) and judged against the machine.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "proctimes/snapshot.hpp"
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
    const char* names[] = {"eBPF sources", "Python binding", "exporter"};
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
    machine_facts everything{true, "", true};
    for (const auto& p : optional_parts(false, false, false, everything)) {
        EXPECT_FALSE(p.built) << p.name;
        EXPECT_FALSE(p.usable) << p.name;
        EXPECT_EQ(p.why, "") << p.name;
    }
}

TEST(Version, EbpfIsJudgedByTheLibrarysOwnCheck) {
    const auto ebpf = [](const machine_facts& f) { return optional_parts(true, false, false, f).at(0); };
    EXPECT_EQ(ebpf({}).name, "eBPF sources");
    EXPECT_TRUE(ebpf({true, "", false}).usable);
    EXPECT_EQ(ebpf({true, "", false}).why, "");
    EXPECT_FALSE(ebpf({false, "not in the initial pid namespace", true}).usable);
    EXPECT_EQ(ebpf({false, "not in the initial pid namespace", true}).why, "not in the initial pid namespace");
    EXPECT_FALSE(ebpf({false, "", true}).why.empty());
}

// The exporter is compiled into every build of the command.
TEST(Version, TheExporterIsBuilt) {
    EXPECT_EQ(PROCTIMES_BUILT_EXPORTER, 1);
    const auto r = run_cli({"--version"});
    EXPECT_NE(r.out.find("\n  exporter: built, usable here\n"), std::string::npos) << r.out;
}

// --version and doctor agree: in a pid namespace of its own the command, even
// as root, cannot use the eBPF sources (they report the initial namespace's
// ids), and --version must not say it can.
TEST(Version, SaysWhatDoctorSaysInsideAPidNamespace) {
    if (PROCTIMES_BUILT_EBPF == 0) GTEST_SKIP() << "built without eBPF";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (unshare --pid)";
    const std::string cmd = std::string("unshare --pid --fork --mount-proc ") + PROCTIMES_BIN + " --version 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    if (out.find("unshare:") != std::string::npos) GTEST_SKIP() << "unshare refused: " << out;
    ASSERT_EQ(status, 0) << out;
    EXPECT_NE(out.find("  eBPF sources: built, not usable here: "), std::string::npos) << out;
    EXPECT_EQ(out.find("eBPF sources: built, usable here"), std::string::npos) << out;
}

// Outside a namespace, the same verdict as doctor's.
TEST(Version, AgreesWithDoctor) {
    if (PROCTIMES_BUILT_EBPF == 0) GTEST_SKIP() << "built without eBPF";
    const auto doctor = run_cli({"doctor"});
    const auto version = run_cli({"--version"});
    const bool doctor_usable = doctor.out.find("eBPF snapshot source: usable") != std::string::npos;
    EXPECT_EQ(version.out.find("eBPF sources: built, usable here") != std::string::npos, doctor_usable)
        << doctor.out << version.out;
}

TEST(Version, PythonBindingNeedsAnInterpreterAndTheExporterNothingMore) {
    const auto parts = optional_parts(false, true, true, machine_facts{});
    ASSERT_EQ(parts.size(), 3u);
    EXPECT_EQ(parts[1].name, "Python binding");
    EXPECT_TRUE(parts[1].built);
    EXPECT_FALSE(parts[1].usable);
    EXPECT_EQ(parts[1].why, "no python3 on PATH");
    EXPECT_TRUE(optional_parts(false, true, false, machine_facts{false, "", true})[1].usable);
    EXPECT_EQ(parts[2].name, "exporter");
    EXPECT_TRUE(parts[2].usable);
}

TEST(Version, MachineFactsAgreeWithTheSystem) {
    const machine_facts f = proctimes::cli::read_machine_facts();
    const auto st = proctimes::bpf_snapshot_status();
    EXPECT_EQ(f.ebpf, st.usable);
    EXPECT_EQ(f.ebpf_why, st.reason);
}

}  // namespace
