// SPDX-License-Identifier: MIT
// The machine-wide parsers (src/parse/machine.hpp) on text in the kernel's
// formats (fs/proc/loadavg.c, fs/proc/meminfo.c, fs/proc/stat.c) and on
// damaged text; and read_machine_status on this machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include <stdlib.h>
#include <unistd.h>

#include "parse/machine.hpp"
#include "proctimes/boot.hpp"
#include "proctimes/error.hpp"
#include "proctimes/machine.hpp"

using namespace proctimes::parse;

TEST(ParseMachine, LoadAverages) {
    const auto r = parse_load_averages("0.20 1.18 12.05 1/80 11206\n");
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ((*r)[0], 0.20);
    EXPECT_DOUBLE_EQ((*r)[1], 1.18);
    EXPECT_DOUBLE_EQ((*r)[2], 12.05);
    EXPECT_TRUE(parse_load_averages("1.5 2.25 3.125"));  // any number of fraction digits, nothing after
    EXPECT_FALSE(parse_load_averages(""));
    EXPECT_FALSE(parse_load_averages("0.20 0.18"));
    EXPECT_FALSE(parse_load_averages("0.20  0.18 0.12 1/80 1"));  // two spaces
    EXPECT_FALSE(parse_load_averages("-0.20 0.18 0.12 1/80 1"));
    EXPECT_FALSE(parse_load_averages("0,20 0.18 0.12 1/80 1"));
    EXPECT_FALSE(parse_load_averages("1 0.18 0.12 1/80 1"));  // no fraction
    EXPECT_FALSE(parse_load_averages("0. 0.18 0.12 1/80 1"));
    EXPECT_FALSE(parse_load_averages("0.20 0.18 0.12x 1/80 1"));
    EXPECT_FALSE(parse_load_averages("99999999999999999999.00 0.18 0.12"));
}

TEST(ParseMachine, MeminfoTotals) {
    const auto m = parse_meminfo_totals(
        "MemTotal:       16318332 kB\nMemFree:         1234567 kB\nMemAvailable:    8123456 kB\nBuffers: 1 kB\n");
    EXPECT_EQ(m.total_bytes, 16318332ULL * 1024);
    EXPECT_EQ(m.available_bytes, 8123456ULL * 1024);
    // Linux < 3.14 has no MemAvailable.
    const auto old = parse_meminfo_totals("MemTotal: 1024 kB\nMemFree: 10 kB\n");
    EXPECT_EQ(old.total_bytes, 1024ULL * 1024);
    EXPECT_FALSE(old.available_bytes);
    EXPECT_FALSE(parse_meminfo_totals("MemTotal: 12 MB\n").total_bytes);
    EXPECT_FALSE(parse_meminfo_totals("MemTotal: -12 kB\n").total_bytes);
    EXPECT_FALSE(parse_meminfo_totals("MemTotal: kB\n").total_bytes);
    EXPECT_FALSE(parse_meminfo_totals("MemTotal: 18446744073709551615 kB\n").total_bytes);  // past 2^64 bytes
    EXPECT_FALSE(parse_meminfo_totals("").total_bytes);
}

TEST(ParseMachine, PerCpuLines) {
    const auto c = parse_proc_stat_per_cpu(
        "cpu  10 20 30 40 50 60 70 80 0 0\n"
        "cpu0 1 2 3 4 5 6 7 8 9 10\n"
        "cpu3 5 6 7 8\n"  // an older kernel's four counters; CPUs 1 and 2 offline
        "cpu4 5 6 x 8\n"  // damaged: skipped
        "cpu5 1 2 3\n"    // too few: skipped
        "intr 1 2 3\n");
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c[0].cpu, 0);
    EXPECT_EQ(c[0].ticks[0], 1u);
    EXPECT_EQ(c[0].ticks[9], 10u);
    EXPECT_EQ(c[1].cpu, 3);
    EXPECT_EQ(c[1].ticks[3], 8u);
    EXPECT_EQ(c[1].ticks[4], 0u);
    EXPECT_TRUE(parse_proc_stat_per_cpu("").empty());
    EXPECT_TRUE(parse_proc_stat_per_cpu("cpu 1 2 3 4\n").empty());
    EXPECT_TRUE(parse_proc_stat_per_cpu("cpu99999999 1 2 3 4\n").empty());
}

// read_machine_status on a procfs of files written here.
TEST(MachineStatus, ReadsAProcRoot) {
    char dir_template[] = "/tmp/pt_machine_XXXXXX";
    const char* dir = ::mkdtemp(dir_template);
    ASSERT_NE(dir, nullptr);
    const std::string root = dir;
    const auto write = [&](const char* name, const char* text) { std::ofstream(root + "/" + name) << text; };
    write("loadavg", "0.50 0.25 0.10 2/300 4242\n");
    write("meminfo", "MemTotal:       2048 kB\nMemAvailable:   1024 kB\n");
    write("stat", "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 5 0 5 40 0 0 0 0 0 0\ncpu1 5 0 5 40 0 0 0 0 0 0\nbtime 1\n");
    const auto m = proctimes::read_machine_status(proctimes::machine_part::all, root);
    ASSERT_TRUE(m) << m.error().message();
    ASSERT_TRUE(m->load);
    EXPECT_DOUBLE_EQ((*m->load)[0], 0.5);
    EXPECT_EQ(m->memory_total_bytes, 2048u * 1024);
    EXPECT_EQ(m->memory_available_bytes, 1024u * 1024);
    ASSERT_EQ(m->per_cpu.size(), 2u);
    EXPECT_EQ(m->per_cpu[1].cpu, 1);
    EXPECT_EQ(m->per_cpu[1].times.cpus, 1);
    const auto tick = std::chrono::nanoseconds(1'000'000'000 / proctimes::clock_ticks_per_second());
    EXPECT_EQ(m->per_cpu[0].times.busy(), 10 * tick);
    EXPECT_EQ(m->per_cpu[0].times.idle, 40 * tick);

    const auto only_load = proctimes::read_machine_status(proctimes::machine_part::load, root);
    ASSERT_TRUE(only_load);
    EXPECT_TRUE(only_load->load);
    EXPECT_FALSE(only_load->memory_total_bytes);
    EXPECT_TRUE(only_load->per_cpu.empty());

    // A part whose file is damaged is empty; nothing readable is an error.
    write("loadavg", "garbage\n");
    const auto damaged = proctimes::read_machine_status(proctimes::machine_part::all, root);
    ASSERT_TRUE(damaged);
    EXPECT_FALSE(damaged->load);
    EXPECT_TRUE(damaged->memory_total_bytes);
    const auto only_damaged = proctimes::read_machine_status(proctimes::machine_part::load, root);
    ASSERT_FALSE(only_damaged);
    EXPECT_EQ(only_damaged.error(), proctimes::errc::malformed_data);
    const auto missing = proctimes::read_machine_status(proctimes::machine_part::all, root + "/none");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error(), std::errc::no_such_file_or_directory);

    for (const char* name : {"loadavg", "meminfo", "stat"}) std::remove((root + "/" + name).c_str());
    ::rmdir(dir);
}
