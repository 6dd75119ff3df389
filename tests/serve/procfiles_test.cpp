// SPDX-License-Identifier: MIT
// The parsers of the per-process files behind `serve --namedprocess`
// (stat, status, io, limits, smaps_rollup), on real layouts and on hostile
// content: truncated lines, NaN, numbers beyond 64 bits, names with ") ".
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "serve/procfiles.hpp"

using namespace proctimes::cli::serve;

namespace {

const std::string stat_line =
    "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1234 0 7 0 15 3 0 0 20 0 3 0 98765 123456789 2048 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

std::string status_text(const std::string& swap, const std::string& vol, const std::string& nonvol) {
    return "Name:\tx\nState:\tS (sleeping)\nVmRSS:\t    2048 kB\n" + swap + "Threads:\t1\nvoluntary_ctxt_switches:\t" +
           vol + "\nnonvoluntary_ctxt_switches:\t" + nonvol + "\n";
}

}  // namespace

TEST(ServeProcFiles, StatFieldsAfterTheLastParenthesis) {
    const auto s = parse_stat(stat_line);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->minflt, 1234u);
    EXPECT_EQ(s->majflt, 7u);
    EXPECT_EQ(s->utime, 15u);
    EXPECT_EQ(s->stime, 3u);
    EXPECT_EQ(s->num_threads, 3);
    EXPECT_EQ(s->start_ticks, 98765u);
    EXPECT_EQ(s->vsize, 123456789u);
    EXPECT_EQ(s->rss_pages, 2048u);
}

TEST(ServeProcFiles, HostileStatIsRefused) {
    // Cut in the middle of the fields the exporter needs.
    EXPECT_FALSE(parse_stat(stat_line.substr(0, stat_line.find("98765"))));
    EXPECT_FALSE(parse_stat("4242 (x"));
    EXPECT_FALSE(parse_stat(""));
    // A name that fakes a ')' and fields: the last ')' ends it, so fakes shift nothing.
    const auto fake = parse_stat("1 (a) R 1 1 1 0 -1 0 99 0 99 0 1 1 0 0 20 0 1 0 5 5 5 x) S" + stat_line.substr(22));
    ASSERT_TRUE(fake);
    EXPECT_EQ(fake->minflt, 1234u);
    // NaN, a sign, a number of 21 digits, 2^64: refused, not wrapped or read as 0.
    for (const char* bad : {"NaN", "-5", "100000000000000000000", "18446744073709551616", "1e3", "0x10"}) {
        std::string line = stat_line;
        line.replace(line.find("1234"), 4, bad);
        EXPECT_FALSE(parse_stat(line)) << bad;
    }
    // 2^64 - 1 is a valid value.
    std::string max = stat_line;
    max.replace(max.find("123456789"), 9, "18446744073709551615");
    ASSERT_TRUE(parse_stat(max));
    EXPECT_EQ(parse_stat(max)->vsize, 18446744073709551615ull);
}

TEST(ServeProcFiles, StatusSwitchesAndSwap) {
    const auto s = parse_status(status_text("VmSwap:\t     100 kB\n", "20", "3"));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->vm_swap_bytes, 102400u);
    EXPECT_EQ(s->voluntary_switches, 20u);
    EXPECT_EQ(s->nonvoluntary_switches, 3u);
    // A kernel thread has no VmSwap line: 0.
    const auto k = parse_status(status_text("", "5", "6"));
    ASSERT_TRUE(k);
    EXPECT_EQ(k->vm_swap_bytes, 0u);
    // "nonvoluntary_ctxt_switches" must not be read as "voluntary_ctxt_switches".
    EXPECT_EQ(k->voluntary_switches, 5u);
}

TEST(ServeProcFiles, HostileStatusIsRefused) {
    EXPECT_FALSE(parse_status(status_text("", "NaN", "3")));
    EXPECT_FALSE(parse_status(status_text("", "20", "99999999999999999999999")));
    EXPECT_FALSE(parse_status("voluntary_ctxt_switches:\t20\n"));          // truncated before the second line
    EXPECT_FALSE(parse_status(status_text("VmSwap:\t 100\n", "1", "1")));  // no unit
    // A swap size whose bytes do not fit 64 bits.
    EXPECT_FALSE(parse_status(status_text("VmSwap:\t18014398509481984 kB\n", "1", "1")));
    EXPECT_FALSE(parse_status(""));
}

TEST(ServeProcFiles, Io) {
    const auto io = parse_io(
        "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n");
    ASSERT_TRUE(io);
    EXPECT_EQ(io->read_bytes, 4096u);
    EXPECT_EQ(io->write_bytes, 8192u);
    EXPECT_FALSE(parse_io("rchar: 100\nwchar: 200\nread_bytes: 4096\n"));  // truncated
    EXPECT_FALSE(parse_io("read_bytes: NaN\nwrite_bytes: 1\n"));
    EXPECT_FALSE(parse_io("read_bytes: 1\nwrite_bytes: 18446744073709551616\n"));
    EXPECT_FALSE(parse_io(""));
}

TEST(ServeProcFiles, OpenFilesLimit) {
    const std::string limits =
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max processes             63541                63541                processes \n"
        "Max open files            1024                 1048576              files     \n";
    EXPECT_EQ(parse_open_files_limit(limits), 1024u);
    EXPECT_EQ(parse_open_files_limit("Max open files            unlimited            unlimited            files\n"),
              UINT64_MAX);
    EXPECT_FALSE(parse_open_files_limit("Max open files            NaN                  1                    files\n"));
    EXPECT_FALSE(parse_open_files_limit("Max open files"));
    EXPECT_FALSE(parse_open_files_limit("Max processes             63541\n"));
}

TEST(ServeProcFiles, SmapsRollup) {
    const auto s = parse_smaps_rollup(
        "55d0-7ffd ---p 00000000 00:00 0                                          [rollup]\n"
        "Rss:                3000 kB\nPss:                1500 kB\nPss_Anon:            100 kB\nSwap: 0 kB\n"
        "SwapPss:              12 kB\n");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->pss_bytes, 1500u * 1024);  // not Pss_Anon's line
    EXPECT_EQ(s->swap_pss_bytes, 12u * 1024);
    EXPECT_FALSE(parse_smaps_rollup("Rss: 3 kB\n"));
    EXPECT_FALSE(parse_smaps_rollup("Pss: NaN kB\n"));
}

// A captured /proc tree: the reader takes the files it finds, refuses what is
// malformed (failed), and calls a pid whose start tick differs vanished.
TEST(ServeProcFiles, ReaderOnACapturedTree) {
    char tmpl[] = "/tmp/proctimes-procfiles-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::filesystem::path root(tmpl);
    const auto write = [](const std::filesystem::path& p, const std::string& text) {
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
    };
    write(root / "4242" / "stat", stat_line);
    write(root / "4242" / "status", status_text("VmSwap:\t 1 kB\n", "20", "3"));
    write(root / "4242" / "io", "read_bytes: 1\nwrite_bytes: 2\n");
    write(root / "4242" / "limits", "Max open files            64                   64                   files\n");
    for (int i = 0; i < 3; ++i) write(root / "4242" / "fd" / std::to_string(i), "");
    auto r = read_proc_files(root, 4242, 98765, false, false, false, nullptr);
    ASSERT_EQ(r.result, proc_files::outcome::ok);
    EXPECT_FALSE(r.partial);
    EXPECT_EQ(r.status.voluntary_switches, 20u);
    ASSERT_TRUE(r.io);
    EXPECT_EQ(r.io->write_bytes, 2u);
    ASSERT_TRUE(r.open_fds);
    EXPECT_EQ(*r.open_fds, 3u);
    EXPECT_EQ(r.fd_limit, 64u);
    // Another start tick: the pid was reused.
    EXPECT_EQ(read_proc_files(root, 4242, 1, false, false, false, nullptr).result, proc_files::outcome::vanished);
    // No such pid: ended.
    EXPECT_EQ(read_proc_files(root, 4243, 1, false, false, false, nullptr).result, proc_files::outcome::vanished);
    // No io, no smaps_rollup: partial.
    std::filesystem::remove(root / "4242" / "io");
    r = read_proc_files(root, 4242, 98765, true, false, false, nullptr);
    EXPECT_EQ(r.result, proc_files::outcome::ok);
    EXPECT_TRUE(r.partial);
    EXPECT_FALSE(r.io);
    // A malformed status: failed, not a number made up.
    write(root / "4242" / "status", "voluntary_ctxt_switches:\tNaN\nnonvoluntary_ctxt_switches:\t1\n");
    EXPECT_EQ(read_proc_files(root, 4242, 98765, false, false, false, nullptr).result, proc_files::outcome::failed);
    // A FIFO planted as stat: refused at once, never waited on.
    std::filesystem::remove(root / "4242" / "stat");
    ASSERT_EQ(::mkfifo((root / "4242" / "stat").c_str(), 0600), 0);
    EXPECT_EQ(read_proc_files(root, 4242, 98765, false, false, false, nullptr).result, proc_files::outcome::failed);
    std::filesystem::remove_all(root);
}

// The live /proc: this process's own files.
TEST(ServeProcFiles, ReaderOnOwnProcess) {
    std::ifstream in("/proc/self/stat");
    std::string line;
    std::getline(in, line);
    const auto own = parse_stat(line);
    ASSERT_TRUE(own);
    std::vector<thread_files> threads;
    const auto r = read_proc_files("/proc", ::getpid(), own->start_ticks, false, true, true, &threads);
    ASSERT_EQ(r.result, proc_files::outcome::ok);
    ASSERT_TRUE(r.open_fds);
    EXPECT_GE(*r.open_fds, 3u);  // at least stdin, stdout, stderr
    ASSERT_TRUE(r.fd_limit);
    EXPECT_GT(*r.fd_limit, 0u);
    EXPECT_GT(r.stat.rss_pages, 0u);
    EXPECT_GE(r.stat.minflt, own->minflt);
    ASSERT_FALSE(threads.empty());
    EXPECT_EQ(threads.front().tid, ::getpid());
}
