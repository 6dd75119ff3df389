// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parse/number.hpp"
#include "parse/procfs.hpp"

using namespace proctimes::parse;

namespace {
std::string fixture(const std::string& name) {
    std::ifstream in(std::string(PROCTIMES_FIXTURES) + "/" + name, std::ios::binary);
    EXPECT_TRUE(in) << name;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}
}  // namespace

TEST(ParseStat, RealLine) {
    const auto text = fixture("stat_plain.txt");
    auto r = parse_stat(text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->pid, 1977);
    EXPECT_EQ(r->comm, "p");
    EXPECT_EQ(r->state, 'Z');
    EXPECT_EQ(r->ppid, 1976);
    EXPECT_EQ(r->flags & pf_kthread, 0u);
    EXPECT_EQ(r->utime, 14u);
    EXPECT_EQ(r->stime, 0u);
    EXPECT_EQ(r->num_threads, 1);
    EXPECT_EQ(r->starttime, 20104u);
}

TEST(ParseStat, ExitCodeOfAZombie) {
    // stat_plain.txt is a zombie that called exit(3): field 52 is 3 << 8.
    auto r = parse_stat(fixture("stat_plain.txt"));
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->exit_code);
    EXPECT_EQ(*r->exit_code, 768);
    EXPECT_EQ(decode_wait_status(*r->exit_code), (proctimes::exit_status{3, 0, false}));
    // Killed by SIGKILL (9) with the core-dump bit (0x80) set.
    auto k = parse_stat(fixture("stat_zombie_killed.txt"));
    ASSERT_TRUE(k);
    EXPECT_EQ(k->state, 'Z');
    ASSERT_TRUE(k->exit_code);
    EXPECT_EQ(*k->exit_code, 137);
    EXPECT_EQ(decode_wait_status(*k->exit_code), (proctimes::exit_status{0, 9, true}));
    // A name that imitates fields does not shift field 52 either.
    auto h = parse_stat(fixture("stat_hostile_comm.txt"));
    ASSERT_TRUE(h);
    EXPECT_EQ(h->exit_code, std::optional<std::int64_t>(0));
}

TEST(ParseStat, OlderKernelsWithoutField52) {
    // Linux < 3.5 prints 44 fields: everything else parses, exit_code is empty.
    std::string text = fixture("stat_plain.txt");
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::size_t cut = text.size();
    for (int i = 0; i < 8; ++i) cut = text.rfind(' ', cut - 1);
    const std::string old = text.substr(0, cut) + "\n";
    auto r = parse_stat(old);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->starttime, 20104u);
    EXPECT_FALSE(r->exit_code);
    // Only up to field 22 (the minimum proctimes reads): still accepted.
    auto minimal = parse_stat("5 (y) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3\n");
    ASSERT_TRUE(minimal);
    EXPECT_FALSE(minimal->exit_code);
    // Field 52 present but not a number: malformed.
    EXPECT_FALSE(parse_stat(text.substr(0, text.rfind(' ')) + " x\n"));
    EXPECT_FALSE(parse_stat(text.substr(0, text.rfind(' ')) + " -1\n"));
}

TEST(DecodeWaitStatus, ExitsSignalsAndNonEnds) {
    EXPECT_EQ(decode_wait_status(0), (proctimes::exit_status{0, 0, false}));
    EXPECT_EQ(decode_wait_status(42 << 8), (proctimes::exit_status{42, 0, false}));
    EXPECT_EQ(decode_wait_status(255 << 8), (proctimes::exit_status{255, 0, false}));
    EXPECT_EQ(decode_wait_status(15), (proctimes::exit_status{0, 15, false}));
    EXPECT_EQ(decode_wait_status(0x80 | 11), (proctimes::exit_status{0, 11, true}));
    EXPECT_EQ(decode_wait_status(11)->shell_code(), 139);
    EXPECT_FALSE(decode_wait_status((19 << 8) | 0x7F));  // stopped by SIGSTOP
    EXPECT_FALSE(decode_wait_status(0xFFFF));            // continued
    EXPECT_FALSE(decode_wait_status(-1));
    EXPECT_FALSE(decode_wait_status(0x10000));
}

TEST(ParseStat, CommWithParenthesesAndSpaces) {
    auto r = parse_stat("4242 (a) (b c)) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 75 3 4 20 0 7 0 123456 0 0\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->pid, 4242);
    EXPECT_EQ(r->comm, "a) (b c)");
    EXPECT_EQ(r->state, 'S');
    EXPECT_EQ(r->utime, 250u);
    EXPECT_EQ(r->stime, 75u);
    EXPECT_EQ(r->cutime, 3);
    EXPECT_EQ(r->cstime, 4);
    EXPECT_EQ(r->num_threads, 7);
    EXPECT_EQ(r->starttime, 123456u);
}

TEST(ParseStat, CommThatLooksLikeFields) {
    // A name crafted to imitate the rest of the line must not shift the fields.
    const auto text = fixture("stat_hostile_comm.txt");
    auto r = parse_stat(text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->comm, ") R 9 9 9 0 (");
    EXPECT_EQ(r->state, 'R');
    EXPECT_EQ(r->ppid, 77);
    EXPECT_EQ(r->utime, 1u);
    EXPECT_EQ(r->stime, 2u);
    EXPECT_EQ(r->starttime, 99u);
}

TEST(ParseStat, CommWithNewlineAndEmptyComm) {
    const std::string text = "5 (x\ny) R 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0";
    auto r = parse_stat(text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->comm, "x\ny");
    auto e = parse_stat("6 () S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->comm, "");
}

TEST(ParseStat, KernelThreadFixture) {
    const auto text = fixture("stat_kthread.txt");
    auto r = parse_stat(text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->comm, "kworker/0:1-events");
    EXPECT_EQ(r->ppid, 2);
    EXPECT_EQ(r->starttime, 15u);
    EXPECT_NE(r->flags & pf_kthread, 0u);
}

TEST(ParseStat, RejectsMalformed) {
    EXPECT_FALSE(parse_stat(""));
    EXPECT_FALSE(parse_stat("12 no parens S 1"));
    EXPECT_FALSE(parse_stat("12 (x) S 1 2 3"));                                        // truncated
    EXPECT_FALSE(parse_stat("x (y) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));   // bad pid
    EXPECT_FALSE(parse_stat("5 (y) SS 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));  // state
    EXPECT_FALSE(parse_stat("5 (y) S 1 1 1 0 -1 0 0 0 0 0 -1 2 0 0 20 0 1 0 3 0 0"));  // negative utime
    EXPECT_FALSE(parse_stat("5 (y) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99999999999999999999999 0 0"));  // overflow
    EXPECT_FALSE(parse_stat("-5 (y) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));  // found by fuzz_stat
    EXPECT_FALSE(parse_stat("+5 (y) S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));
    EXPECT_FALSE(parse_stat(")5 (y S 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));
}

namespace {
void expect_same(const std::optional<stat_record>& a, const std::optional<stat_record>& b, const std::string& line) {
    ASSERT_EQ(a.has_value(), b.has_value()) << line;
    if (!a) return;
    EXPECT_EQ(a->pid, b->pid) << line;
    EXPECT_EQ(a->comm, b->comm) << line;
    EXPECT_EQ(a->state, b->state) << line;
    EXPECT_EQ(a->ppid, b->ppid) << line;
    EXPECT_EQ(a->flags, b->flags) << line;
    EXPECT_EQ(a->utime, b->utime) << line;
    EXPECT_EQ(a->stime, b->stime) << line;
    EXPECT_EQ(a->cutime, b->cutime) << line;
    EXPECT_EQ(a->cstime, b->cstime) << line;
    EXPECT_EQ(a->num_threads, b->num_threads) << line;
    EXPECT_EQ(a->starttime, b->starttime) << line;
    EXPECT_EQ(a->exit_code, b->exit_code) << line;
}
}  // namespace

TEST(ParseStat, FastPathAgreesWithTheGeneralParse) {
    // parse_stat splits the kernel's canonical lines (single spaces) in one
    // pass and sends anything else to the general parse: both must agree on
    // real lines, on every truncation of them, and on non-canonical spacing.
    std::vector<std::string> lines;
    for (const char* f : {"stat_plain.txt", "stat_zombie_killed.txt", "stat_hostile_comm.txt", "stat_kthread.txt"})
        lines.push_back(fixture(f));
    std::ifstream self("/proc/self/stat");
    std::ostringstream own;
    own << self.rdbuf();
    lines.push_back(own.str());
    const std::string plain = fixture("stat_plain.txt");
    std::string doubled = plain;
    doubled.insert(doubled.rfind(')') + 1, " ");  // two spaces before field 3
    lines.push_back(doubled);
    std::string trailing = plain;
    trailing.insert(trailing.size() - 1, " ");  // a space before the newline
    lines.push_back(trailing);
    lines.push_back(plain.substr(0, plain.size() - 1));             // no newline
    lines.push_back(plain + plain);                                 // two lines: the first one counts
    lines.push_back(plain.substr(0, plain.size() - 1) + " 7 8\n");  // fields after 52
    std::string tabs = plain;
    tabs[tabs.rfind(' ')] = '\t';  // a tab is not a separator: field 51 becomes "x\ty"
    lines.push_back(tabs);
    const std::size_t base = lines.size();
    for (std::size_t i = 0; i < base; ++i)
        for (std::size_t cut = 0; cut <= lines[i].size(); ++cut) lines.push_back(lines[i].substr(0, cut));
    for (const auto& l : lines) expect_same(parse_stat(l), parse_stat_general(l), l);
    // The fast path really is taken for a canonical line and gives its values.
    auto r = parse_stat(plain);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->starttime, 20104u);
    EXPECT_EQ(r->exit_code, std::optional<std::int64_t>(768));
    auto more = parse_stat(plain.substr(0, plain.size() - 1) + " 7 8\n");
    ASSERT_TRUE(more);
    EXPECT_EQ(more->exit_code, std::optional<std::int64_t>(768));  // field 52, not the last one
}

TEST(ParseSchedstat, Values) {
    auto r = parse_schedstat("123456789 1000 42\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->run_ns, 123456789u);
    EXPECT_EQ(r->wait_ns, 1000u);
    EXPECT_EQ(r->timeslices, 42u);
    EXPECT_FALSE(parse_schedstat("12 34\n"));
    EXPECT_FALSE(parse_schedstat("a b c\n"));
    EXPECT_FALSE(parse_schedstat(""));
}

TEST(ParseStatus, Fixture) {
    const auto text = fixture("status.txt");
    auto r = parse_status(text);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "a) (b c)");
    EXPECT_EQ(r->tgid, 1200);
    EXPECT_EQ(r->pid, 1203);
    EXPECT_EQ(r->ppid, 1100);
    EXPECT_EQ(r->uid_real, 1000);
    EXPECT_EQ(r->uid_effective, 0);
    EXPECT_FALSE(parse_status("Name:\tx\n"));  // no Tgid/Pid
    EXPECT_FALSE(parse_status("Name:\tx\nTgid:\tz\nPid:\t1\n"));
}

TEST(ParseProcStat, Btime) {
    EXPECT_EQ(parse_proc_stat_btime(fixture("proc_stat.txt")), 1795317683u);
    EXPECT_FALSE(parse_proc_stat_btime("cpu 1 2 3\nintr 5\n"));
}

TEST(ParseBootId, Canonical) {
    auto id = parse_boot_id("b544540a-9e26-4ca8-8d51-b1b0b34397ed\n");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->bytes[0], 0xb5);
    EXPECT_EQ(id->bytes[15], 0xed);
    EXPECT_EQ(id->to_string(), "b544540a-9e26-4ca8-8d51-b1b0b34397ed");
    EXPECT_FALSE(parse_boot_id("b544540a9e264ca88d51b1b0b34397ed"));
    EXPECT_FALSE(parse_boot_id("b544540a-9e26-4ca8-8d51-b1b0b34397eZ"));
    EXPECT_FALSE(parse_boot_id("b544540a-9e26-4ca8-8d51_b1b0b34397ed"));
}

TEST(ParseAnchor, RoundTripAndRejects) {
    auto r = parse_anchor("proctimes-boot-anchor 1 b544540a-9e26-4ca8-8d51-b1b0b34397ed 1795317683412345678\n");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->realtime_minus_boottime_ns, 1795317683412345678);
    EXPECT_EQ(r->boot.to_string(), "b544540a-9e26-4ca8-8d51-b1b0b34397ed");
    EXPECT_TRUE(parse_anchor("proctimes-boot-anchor 1 b544540a-9e26-4ca8-8d51-b1b0b34397ed -5\n"));
    EXPECT_FALSE(parse_anchor("proctimes-boot-anchor 2 b544540a-9e26-4ca8-8d51-b1b0b34397ed 1\n"));
    EXPECT_FALSE(parse_anchor("proctimes-boot-anchor 1 b544540a-9e26-4ca8-8d51-b1b0b34397ed 1"));  // no newline
    EXPECT_FALSE(parse_anchor("proctimes-boot-anchor 1 b544540a-9e26-4ca8-8d51-b1b0b34397ed 1\nextra\n"));
    EXPECT_FALSE(parse_anchor("hello 1 b544540a-9e26-4ca8-8d51-b1b0b34397ed 1\n"));
}

TEST(ParseId, DirectoryNames) {
    EXPECT_EQ(parse_id("1234"), 1234);
    EXPECT_FALSE(parse_id("self"));
    EXPECT_FALSE(parse_id("-1"));
    EXPECT_FALSE(parse_id("12a"));
    EXPECT_FALSE(parse_id(""));
}

TEST(ParseStat, FlagsField) {
    // Field 9: PF_KTHREAD (0x00200000) set for kernel threads only.
    const auto kthread = parse_stat(fixture("stat_kthread.txt"));
    ASSERT_TRUE(kthread);
    EXPECT_EQ(kthread->flags, 69238880u);
    EXPECT_NE(kthread->flags & pf_kthread, 0u);
    const auto user = parse_stat(fixture("stat_plain.txt"));
    ASSERT_TRUE(user);
    EXPECT_EQ(user->flags, 4227148u);
    EXPECT_EQ(user->flags & pf_kthread, 0u);
    EXPECT_FALSE(parse_stat("5 (x) R 1 1 1 0 -1 notanumber 0 0 0 0 1 2 0 0 20 0 1 0 3 0 0"));
}

namespace {
// Appends one struct linux_dirent64 record, padded to 8 bytes like the kernel.
void put_dirent(std::string& buf, std::string_view name, unsigned char type) {
    const std::size_t len = (19 + name.size() + 1 + 7) / 8 * 8;
    std::string rec(len, '\0');
    const std::uint64_t ino = 42;
    const std::int64_t off = static_cast<std::int64_t>(buf.size() + len);
    const auto reclen = static_cast<std::uint16_t>(len);
    std::memcpy(rec.data(), &ino, 8);
    std::memcpy(rec.data() + 8, &off, 8);
    std::memcpy(rec.data() + 16, &reclen, 2);
    rec[18] = static_cast<char>(type);
    std::memcpy(rec.data() + 19, name.data(), name.size());
    buf += rec;
}
}  // namespace

TEST(ParseDirent, WalksRecords) {
    std::string buf;
    put_dirent(buf, ".", 4);
    put_dirent(buf, "1234", 4);
    put_dirent(buf, "a-name-longer-than-the-padding", 8);
    std::string_view rest = buf;
    auto a = next_dirent(rest);
    auto b = next_dirent(rest);
    auto c = next_dirent(rest);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(a->name, ".");
    EXPECT_EQ(b->name, "1234");
    EXPECT_EQ(b->type, 4);  // DT_DIR
    EXPECT_EQ(c->name, "a-name-longer-than-the-padding");
    EXPECT_EQ(c->type, 8);  // DT_REG
    EXPECT_TRUE(rest.empty());
    EXPECT_FALSE(next_dirent(rest));
}

TEST(ParseDirent, RejectsTruncatedRecords) {
    std::string buf;
    put_dirent(buf, "77", 4);
    std::string_view cut(buf.data(), buf.size() - 1);  // reclen beyond the buffer
    EXPECT_FALSE(next_dirent(cut));
    std::string_view header(buf.data(), 10);
    EXPECT_FALSE(next_dirent(header));
    std::string bad = buf;
    bad[16] = 5;  // reclen shorter than the header
    bad[17] = 0;
    std::string_view b = bad;
    EXPECT_FALSE(next_dirent(b));
    std::string no_nul = buf;
    for (std::size_t i = 19; i < no_nul.size(); ++i) no_nul[i] = 'x';
    std::string_view n = no_nul;
    EXPECT_FALSE(next_dirent(n));
}

TEST(ParseDecimalSeconds, DigitsAndOneDotOnly) {
    using std::chrono::nanoseconds;
    EXPECT_EQ(parse_decimal_seconds("2"), nanoseconds{2'000'000'000});
    EXPECT_EQ(parse_decimal_seconds("0.05"), nanoseconds{50'000'000});
    EXPECT_EQ(parse_decimal_seconds(".5"), nanoseconds{500'000'000});
    EXPECT_EQ(parse_decimal_seconds("3."), nanoseconds{3'000'000'000});
    EXPECT_EQ(parse_decimal_seconds("0.000000001"), nanoseconds{1});
    EXPECT_EQ(parse_decimal_seconds("0.0000000019"), nanoseconds{1});  // past 1 ns: truncated
    EXPECT_EQ(parse_decimal_seconds("007"), nanoseconds{7'000'000'000});
    for (const char* bad : {"", ".", "nan", "NaN", "inf", "-inf", "infinity", "1e3", "1E3", "-1", "+1", " 1", "1 ",
                            "0x10", "1.2.3", "1,5", "١"})
        EXPECT_FALSE(parse_decimal_seconds(bad)) << bad;
}

TEST(ParseDecimalSeconds, NoOverflowAtTheEdge) {
    using std::chrono::nanoseconds;
    // INT64_MAX ns = 9223372036.854775807 s.
    EXPECT_EQ(parse_decimal_seconds("9223372036.854775807"), nanoseconds::max());
    EXPECT_FALSE(parse_decimal_seconds("9223372036.854775808"));
    EXPECT_FALSE(parse_decimal_seconds("9223372037"));
    EXPECT_FALSE(parse_decimal_seconds("1e308"));
    EXPECT_FALSE(parse_decimal_seconds(std::string(400, '9')));
    EXPECT_EQ(parse_decimal_seconds("0." + std::string(400, '9')), nanoseconds{999'999'999});
}

TEST(ParseWholeNumber, DigitsOnlyAndNoOverflow) {
    EXPECT_EQ(parse_whole_number("0"), 0u);
    EXPECT_EQ(parse_whole_number("0042"), 42u);
    EXPECT_EQ(parse_whole_number("18446744073709551615"), UINT64_MAX);
    EXPECT_FALSE(parse_whole_number("18446744073709551616"));
    EXPECT_FALSE(parse_whole_number(std::string(400, '9')));
    for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0", "nan", "inf"})
        EXPECT_FALSE(parse_whole_number(bad)) << bad;
}

TEST(ParseStat, OneDefinitionOfDeadAndOfAnEndedProcess) {
    for (char st : {'Z', 'X', 'x'}) EXPECT_TRUE(proctimes::parse::is_dead_state(st)) << st;
    for (char st : {'R', 'S', 'D', 'T', 't', 'I', 'P', 'W', 'K', '?'})
        EXPECT_FALSE(proctimes::parse::is_dead_state(st)) << st;
    const auto text = fixture("stat_plain.txt");  // a zombie with one thread
    auto rec = proctimes::parse::parse_stat(text);
    ASSERT_TRUE(rec);
    ASSERT_EQ(rec->num_threads, 1);
    rec->state = 'x';
    rec->num_threads = 3;
    EXPECT_TRUE(proctimes::parse::is_dead(*rec));
    // A leader that left with pthread_exit while two other threads run.
    EXPECT_TRUE(proctimes::parse::leader_exited_early(*rec));
    EXPECT_FALSE(proctimes::parse::process_ended(*rec));
    rec->num_threads = 1;
    EXPECT_FALSE(proctimes::parse::leader_exited_early(*rec));
    EXPECT_TRUE(proctimes::parse::process_ended(*rec));
    rec->state = 'S';
    EXPECT_FALSE(proctimes::parse::process_ended(*rec));
}
