// SPDX-License-Identifier: MIT
// read_process_resources (proctimes/resources.hpp) and its parsers (stat
// and status of src/parse/procfs.hpp; io, limits, smaps_rollup, wchan of
// src/parse/resources.hpp), on real layouts and on hostile content:
// truncated lines, NaN, numbers beyond 64 bits, names with ") ", a FIFO
// planted as a file, a pid reused.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "parse/procfs.hpp"
#include "parse/resources.hpp"
#include "proctimes/resources.hpp"

using namespace proctimes;
using namespace proctimes::parse;

namespace {

const std::string stat_line =
    "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1234 0 7 0 15 3 0 0 20 0 3 0 98765 123456789 2048 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

std::string status_text(const std::string& swap, const std::string& vol, const std::string& nonvol) {
    return "Name:\tx\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nUid:\t1000\t1001\t1001\t1001\nVmRSS:\t    2048 "
           "kB\n" +
           swap + "Threads:\t1\nvoluntary_ctxt_switches:\t" + vol + "\nnonvoluntary_ctxt_switches:\t" + nonvol + "\n";
}

}  // namespace

TEST(Resources, StatFieldsAfterTheLastParenthesis) {
    const auto s = parse_stat(stat_line);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->minflt, 1234u);
    EXPECT_EQ(s->majflt, 7u);
    EXPECT_EQ(s->utime, 15u);
    EXPECT_EQ(s->stime, 3u);
    EXPECT_EQ(s->num_threads, 3);
    EXPECT_EQ(s->starttime, 98765u);
    EXPECT_EQ(s->vsize, 123456789u);
    EXPECT_EQ(s->comm, "my (odd) name");
    EXPECT_EQ(s->rss_pages, 2048u);
}

TEST(Resources, HostileStatIsRefused) {
    // Cut in the middle of the fields the exporter needs.
    EXPECT_FALSE(parse_stat(stat_line.substr(0, stat_line.find("98765"))));
    // Cut before the sizes (23, 24): parsed, the sizes left empty.
    const auto cut = parse_stat(stat_line.substr(0, stat_line.find(" 123456789")) + "\n");
    ASSERT_TRUE(cut);
    EXPECT_FALSE(cut->vsize);
    EXPECT_FALSE(cut->rss_pages);
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

TEST(Resources, StatusSwitchesAndSwap) {
    const auto s = parse_status(status_text("VmSwap:\t     100 kB\n", "20", "3"));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->vm_swap_bytes, 102400u);
    EXPECT_EQ(s->voluntary_switches, 20u);
    EXPECT_EQ(s->nonvoluntary_switches, 3u);
    // A kernel thread has no VmSwap line: 0.
    const auto k = parse_status(status_text("", "5", "6"));
    ASSERT_TRUE(k);
    EXPECT_FALSE(k->vm_swap_bytes);
    // "nonvoluntary_ctxt_switches" must not be read as "voluntary_ctxt_switches".
    EXPECT_EQ(k->voluntary_switches, 5u);
}

TEST(Resources, HostileStatusIsRefused) {
    EXPECT_FALSE(parse_status(status_text("", "NaN", "3")));
    EXPECT_FALSE(parse_status(status_text("", "20", "99999999999999999999999")));
    EXPECT_FALSE(parse_status("voluntary_ctxt_switches:\t20\n"));          // truncated: no Name, Tgid, Pid
    EXPECT_FALSE(parse_status(status_text("VmSwap:\t 100\n", "1", "1")));  // no unit
    // A swap size whose bytes do not fit 64 bits.
    EXPECT_FALSE(parse_status(status_text("VmSwap:\t18014398509481984 kB\n", "1", "1")));
    EXPECT_FALSE(parse_status(""));
}

TEST(Resources, Io) {
    const auto io = parse_io(
        "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n");
    ASSERT_TRUE(io);
    EXPECT_EQ(io->read_bytes, 4096u);
    EXPECT_EQ(io->write_bytes, 8192u);
    EXPECT_EQ(io->read_chars, 100u);
    EXPECT_EQ(io->write_syscalls, 2u);
    EXPECT_FALSE(parse_io("syscr: x\nread_bytes: 1\nwrite_bytes: 1\n"));
    EXPECT_FALSE(parse_io("rchar: 100\nwchar: 200\nread_bytes: 4096\n"));  // truncated
    EXPECT_FALSE(parse_io("read_bytes: NaN\nwrite_bytes: 1\n"));
    EXPECT_FALSE(parse_io("read_bytes: 1\nwrite_bytes: 18446744073709551616\n"));
    EXPECT_FALSE(parse_io(""));
}

TEST(Resources, OpenFilesLimit) {
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

TEST(Resources, SmapsRollup) {
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

TEST(Resources, Wchan) {
    EXPECT_EQ(parse_wchan("0"), "");
    EXPECT_EQ(parse_wchan("do_select\n"), "do_select");
    EXPECT_EQ(parse_wchan(""), "");
}

namespace {

resource_options all_of(const std::string& root, std::uint64_t start) {
    resource_options o;
    o.proc_root = root;
    o.start_ticks = start;
    o.families = resource_family::memory | resource_family::switches | resource_family::io | resource_family::files |
                 resource_family::wait_channel;
    return o;
}

}  // namespace

// A captured /proc tree: the reader takes the files it finds, refuses what is
// malformed, and calls a pid whose start tick differs gone.
TEST(Resources, ReaderOnACapturedTree) {
    char tmpl[] = "/tmp/proctimes-resources-XXXXXX";
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
    write(root / "4242" / "wchan", "do_select");
    for (int i = 0; i < 3; ++i) write(root / "4242" / "fd" / std::to_string(i), "");
    auto r = read_process_resources(4242, all_of(root, 98765));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->missing, resource_family::none);
    EXPECT_EQ(r->name, "my (odd) name");
    EXPECT_EQ(r->state, 'S');
    EXPECT_EQ(r->thread_count, 3);
    EXPECT_EQ(r->minor_faults, 1234u);
    ASSERT_TRUE(r->switches);
    EXPECT_EQ(r->switches->voluntary, 20u);
    EXPECT_EQ(r->switches->involuntary, 3u);
    ASSERT_TRUE(r->memory);
    EXPECT_EQ(r->memory->resident_bytes, 2048u * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
    EXPECT_EQ(r->memory->virtual_bytes, 123456789u);
    EXPECT_EQ(r->memory->swap_bytes, 1024u);
    ASSERT_TRUE(r->io);
    EXPECT_EQ(r->io->write_bytes, 2u);
    EXPECT_EQ(r->open_files, 3u);
    EXPECT_EQ(r->open_files_limit, 64u);
    EXPECT_EQ(r->wait_channel, "do_select");
    EXPECT_FALSE(r->proportional);  // not asked for
    EXPECT_FALSE(r->owner);         // not asked for
    resource_options who;
    who.proc_root = root.string();
    who.families = resource_family::owner;
    const auto o = read_process_resources(4242, who);
    ASSERT_TRUE(o) << o.error().message();
    ASSERT_TRUE(o->owner);
    EXPECT_EQ(o->owner->real, 1000u);
    EXPECT_EQ(o->owner->effective, 1001u);
    EXPECT_FALSE(o->memory);  // not asked for
    EXPECT_FALSE(r->command_line);

    // Its command line, executable and cgroups, when asked for.
    write(root / "4242" / "cmdline", std::string("/bin/x\0-a\0b c\0", 14));
    write(root / "4242" / "cgroup", "12:cpu,cpuacct:/a:b\nnot a line\n0::/user.slice/x.scope\n");
    std::filesystem::create_symlink("/usr/bin/x", root / "4242" / "exe");
    resource_options facts = all_of(root, 98765);
    facts.families = resource_family::command_line | resource_family::executable | resource_family::cgroups;
    r = read_process_resources(4242, facts);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->missing, resource_family::none);
    EXPECT_EQ(r->command_line, std::string("/bin/x\0-a\0b c\0", 14));
    EXPECT_EQ(r->executable, "/usr/bin/x");
    ASSERT_TRUE(r->cgroups);
    ASSERT_EQ(r->cgroups->size(), 2u);  // the line without two colons is skipped
    EXPECT_EQ((*r->cgroups)[0].controllers, "cpu,cpuacct");
    EXPECT_EQ((*r->cgroups)[0].path, "/a:b");  // a path may hold a colon
    EXPECT_EQ((*r->cgroups)[1].hierarchy, "0");
    EXPECT_EQ((*r->cgroups)[1].path, "/user.slice/x.scope");
    std::filesystem::remove(root / "4242" / "cmdline");
    r = read_process_resources(4242, facts);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->missing, resource_family::command_line);

    // The boot second of the tree's stat.
    write(root / "stat", "cpu  1 2 3 4 5 6 7 8 9 10\nbtime 1700000000\n");
    EXPECT_EQ(read_boot_time_seconds(root).value_or(-1), 1700000000);
    write(root / "stat", "cpu  1 2 3 4 5 6 7 8 9 10\nbtime NaN\n");
    EXPECT_EQ(read_boot_time_seconds(root).error(), errc::malformed_data);

    // Only what is asked for is read: without memory and switches, no status
    // is needed (a malformed one goes unseen).
    write(root / "4242" / "status", "garbage");
    resource_options io_only = all_of(root, 98765);
    io_only.families = resource_family::io;
    r = read_process_resources(4242, io_only);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_TRUE(r->io);
    EXPECT_FALSE(r->memory);
    EXPECT_FALSE(r->switches);
    EXPECT_FALSE(r->open_files);
    // ... and with them, a malformed status is an error, not a number made up.
    EXPECT_EQ(read_process_resources(4242, all_of(root, 98765)).error(), errc::malformed_data);
    write(root / "4242" / "status", status_text("", "20", "3"));

    // Another start tick: the pid was reused. No such pid: gone.
    EXPECT_EQ(read_process_resources(4242, all_of(root, 1)).error(), errc::no_such_process);
    EXPECT_EQ(read_process_resources(4243, all_of(root, 1)).error(), errc::no_such_process);
    EXPECT_EQ(read_process_resources(0, all_of(root, 1)).error(), errc::invalid_argument);

    // No io, no smaps_rollup: read, with both named missing.
    std::filesystem::remove(root / "4242" / "io");
    resource_options with_pss = all_of(root, 98765);
    with_pss.families |= resource_family::proportional;
    r = read_process_resources(4242, with_pss);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->io);
    EXPECT_EQ(r->missing, resource_family::io | resource_family::proportional);
    write(root / "4242" / "smaps_rollup", "Rss: 8 kB\nPss: 4 kB\n");
    r = read_process_resources(4242, with_pss);
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->proportional);
    EXPECT_EQ(r->proportional->pss_bytes, 4096u);

    // An earlier read of a process that has not run stands for what only
    // running changes: io (gone from the tree now) and the descriptors.
    write(root / "4242" / "io", "read_bytes: 1\nwrite_bytes: 2\n");
    const auto first = read_process_resources(4242, with_pss);
    ASSERT_TRUE(first);
    std::filesystem::remove(root / "4242" / "io");
    write(root / "4242" / "smaps_rollup", "Pss: 8 kB\n");
    resource_options again = with_pss;
    again.previous = &*first;
    again.keep_proportional = true;
    r = read_process_resources(4242, again);
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->io);
    EXPECT_EQ(r->io->write_bytes, 2u);
    EXPECT_EQ(r->proportional->pss_bytes, 4096u);  // kept, as asked
    again.keep_proportional = false;
    EXPECT_EQ(read_process_resources(4242, again)->proportional->pss_bytes, 8192u);
    // It ran (a tick moved): everything is read again, and io is missing.
    std::string ran = stat_line;
    ran.replace(ran.find(" 15 3 "), 6, " 16 3 ");
    write(root / "4242" / "stat", ran);
    r = read_process_resources(4242, again);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->io);

    // A FIFO planted as stat: refused at once, never waited on.
    std::filesystem::remove(root / "4242" / "stat");
    ASSERT_EQ(::mkfifo((root / "4242" / "stat").c_str(), 0600), 0);
    EXPECT_EQ(read_process_resources(4242, all_of(root, 98765)).error(), errc::not_a_regular_file);
    std::filesystem::remove_all(root);
}

// The live /proc: this process's own files, with its threads.
TEST(Resources, ReaderOnOwnProcess) {
    std::ifstream in("/proc/self/stat");
    std::string line;
    std::getline(in, line);
    const auto own = parse_stat(line);
    ASSERT_TRUE(own);
    resource_options o = all_of("/proc", own->starttime);
    o.families |= resource_family::threads | resource_family::thread_io;
    const auto r = read_process_resources(::getpid(), o);
    ASSERT_TRUE(r) << r.error().message();
    ASSERT_TRUE(r->open_files);
    EXPECT_GE(*r->open_files, 3u);  // at least stdin, stdout, stderr
    ASSERT_TRUE(r->open_files_limit);
    EXPECT_GT(*r->open_files_limit, 0u);
    ASSERT_TRUE(r->memory);
    EXPECT_GT(r->memory->resident_bytes, 0u);
    EXPECT_GE(r->minor_faults, own->minflt);
    EXPECT_EQ(r->state, 'R');  // it is reading itself
    ASSERT_FALSE(r->threads.empty());
    EXPECT_EQ(r->threads.front().id, ::getpid());
    EXPECT_TRUE(r->threads.front().switches);
    EXPECT_TRUE(r->threads.front().wait_channel);
    EXPECT_GT(read_boot_time_seconds().value_or(0), 1'000'000'000);
    resource_options who;
    who.families = resource_family::owner;
    const auto me = read_process_resources(::getpid(), who);
    ASSERT_TRUE(me) << me.error().message();
    ASSERT_TRUE(me->owner);
    EXPECT_EQ(me->owner->real, ::getuid());
    EXPECT_EQ(me->owner->effective, ::geteuid());
}
