// SPDX-License-Identifier: MIT
// The parsers of the records the BPF programs write (src/parse/bpf_records.hpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "parse/bpf_records.hpp"

using namespace proctimes::parse;

namespace {

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
    std::vector<std::byte> v(n);
    std::memcpy(v.data(), p, n);
    return v;
}

}  // namespace

TEST(BpfRecords, TaskStreamIsWholeRecords) {
    bpf_task_record r[2]{};
    r[0].tgid = 10;
    r[0].pid = 11;
    r[0].runtime = 123456789;
    std::memcpy(r[1].comm, "worker", 7);
    r[1].tgid = 20;
    auto b = bytes_of(r, sizeof r);
    std::vector<bpf_task_record> out;
    ASSERT_TRUE(parse_task_records(b, out));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].pid, 11u);
    EXPECT_EQ(out[0].runtime, 123456789u);
    EXPECT_EQ(comm_view(out[1].comm), "worker");

    // A short tail is malformed; the whole records before it are kept.
    b.resize(b.size() - 1);
    out.clear();
    EXPECT_FALSE(parse_task_records(b, out));
    EXPECT_EQ(out.size(), 1u);
    out.clear();
    EXPECT_TRUE(parse_task_records({}, out));
    EXPECT_TRUE(out.empty());
}

TEST(BpfRecords, CommWithoutNulIsSixteenBytes) {
    bpf_task_record r{};
    std::memset(r.comm, 'x', sizeof r.comm);
    EXPECT_EQ(comm_view(r.comm).size(), 16u);
    r.comm[3] = '\0';
    EXPECT_EQ(comm_view(r.comm), "xxx");
}

TEST(BpfRecords, ExitRecordSizeAndVersion) {
    bpf_exit_record r{};
    r.version = PT_TASK_RECORD_VERSION;
    r.exit_code = 7 << 8;
    auto b = bytes_of(&r, sizeof r);
    auto got = parse_exit_record(b);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->exit_code, 7 << 8);
    b.push_back(std::byte{0});
    EXPECT_FALSE(parse_exit_record(b));
    r.version = 99;
    EXPECT_FALSE(parse_exit_record(bytes_of(&r, sizeof r)));
}

namespace {

// An exec record as the program sends it: the header, `argv`, zeros up to
// the minimum size.
std::vector<std::byte> exec_sample(const std::string& argv, std::uint32_t total) {
    pt_exec_record h{};
    h.magic = PT_EXEC_RECORD_MAGIC;
    h.tgid = 42;
    h.start_boottime = 123456789;
    h.argv_len = static_cast<std::uint32_t>(argv.size());
    h.argv_total = total;
    std::vector<std::byte> v = bytes_of(&h, offsetof(pt_exec_record, argv));
    for (char c : argv) v.push_back(static_cast<std::byte>(c));
    if (v.size() < PT_EXEC_RECORD_MIN) v.resize(PT_EXEC_RECORD_MIN);
    return v;
}

}  // namespace

TEST(BpfRecords, ExecRecordCarriesTheWholeArgumentAreaOrSaysItIsNotWhole) {
    const std::string area("/bin/sh\0-c\0exit 3\0", 18);
    auto b = exec_sample(area, 18);
    ASSERT_EQ(b.size(), std::size_t{PT_EXEC_RECORD_MIN}) << "a short record is padded to the minimum";
    ASSERT_NE(b.size(), sizeof(bpf_exit_record)) << "never mistaken for an exit record";
    auto x = parse_exec_record(b);
    ASSERT_TRUE(x);
    EXPECT_EQ(x->tgid, 42u);
    EXPECT_EQ(x->start_boottime, 123456789u);
    EXPECT_EQ(x->argv, area);
    EXPECT_TRUE(x->whole());
    EXPECT_FALSE(parse_exit_record(b));

    // An area too long to copy comes with none of it: not whole.
    x = parse_exec_record(exec_sample("", 9000));
    ASSERT_TRUE(x);
    EXPECT_TRUE(x->argv.empty());
    EXPECT_FALSE(x->whole());

    // A long one: the sample is exactly header + area.
    const std::string big(5000, 'a');
    b = exec_sample(big, 5000);
    EXPECT_EQ(b.size(), offsetof(pt_exec_record, argv) + 5000);
    x = parse_exec_record(b);
    ASSERT_TRUE(x);
    EXPECT_EQ(x->argv.size(), 5000u);
}

TEST(BpfRecords, MalformedExecRecordsAreRefused) {
    const std::string area("ab\0", 3);
    // Shorter than the minimum, or longer than the largest record.
    auto b = exec_sample(area, 3);
    b.resize(PT_EXEC_RECORD_MIN - 1);
    EXPECT_FALSE(parse_exec_record(b));
    b = exec_sample(area, 3);
    b.resize(sizeof(pt_exec_record) + 1);
    EXPECT_FALSE(parse_exec_record(b));
    // Another magic.
    b = exec_sample(area, 3);
    b[offsetof(pt_exec_record, magic)] ^= std::byte{1};
    EXPECT_FALSE(parse_exec_record(b));
    // More bytes claimed than the sample holds, or than the area has.
    pt_exec_record h{};
    h.magic = PT_EXEC_RECORD_MAGIC;
    h.argv_len = PT_EXEC_RECORD_MIN;  // header + this > the 128-byte sample
    h.argv_total = PT_EXEC_RECORD_MIN;
    b = bytes_of(&h, offsetof(pt_exec_record, argv));
    b.resize(PT_EXEC_RECORD_MIN);
    EXPECT_FALSE(parse_exec_record(b));
    b = exec_sample(area, 2);  // argv_len 3 > argv_total 2
    EXPECT_FALSE(parse_exec_record(b));
}

TEST(BpfRecords, StateLettersAsTaskStateIndex) {
    EXPECT_EQ(task_state_letter(0x0000, 0), 'R');
    EXPECT_EQ(task_state_letter(0x0001, 0), 'S');
    EXPECT_EQ(task_state_letter(0x0002, 0), 'D');
    EXPECT_EQ(task_state_letter(0x0004, 0), 'T');
    EXPECT_EQ(task_state_letter(0x0008, 0), 't');
    EXPECT_EQ(task_state_letter(0x0402, 0), 'I');     // TASK_IDLE
    EXPECT_EQ(task_state_letter(0x0040, 0), 'P');     // TASK_PARKED
    EXPECT_EQ(task_state_letter(0x0000, 0x20), 'Z');  // EXIT_ZOMBIE
    EXPECT_EQ(task_state_letter(0x0000, 0x10), 'X');  // EXIT_DEAD
    EXPECT_EQ(task_state_letter(0x0402, 0x20), 'Z');  // exit_state wins over an idle sleep
    EXPECT_EQ(task_state_letter(0x1000, 0), 'D');     // TASK_RTLOCK_WAIT
    EXPECT_EQ(task_state_letter(0x0100, 0), 'R');     // bits outside TASK_REPORT (TASK_WAKEKILL alone)
}

TEST(BpfRecords, TreeEventsHaveTheirKindsSize) {
    pt_tree_event h{};
    h.kind = PT_TREE_FORK;
    h.tgid = 42;
    h.ppid = 41;
    auto b = bytes_of(&h, sizeof h);
    auto e = parse_tree_event(b);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->head.tgid, 42U);
    EXPECT_EQ(e->head.ppid, 41U);
    EXPECT_TRUE(e->path.empty() && e->argv.empty());
    for (unsigned kind : {PT_TREE_THREAD, PT_TREE_EXIT, PT_TREE_FREE}) {
        h.kind = kind;
        EXPECT_TRUE(parse_tree_event(bytes_of(&h, sizeof h))) << kind;
    }
    // Unknown kinds, a short or long record, an exec the size of a head: refused.
    for (unsigned kind : {0U, 6U, 0xffffffffU}) {
        h.kind = kind;
        EXPECT_FALSE(parse_tree_event(bytes_of(&h, sizeof h))) << kind;
    }
    h.kind = PT_TREE_EXIT;
    b = bytes_of(&h, sizeof h);
    EXPECT_FALSE(parse_tree_event(std::span(b).first(sizeof h - 1)));
    b.push_back(std::byte{0});
    EXPECT_FALSE(parse_tree_event(b));
    h.kind = PT_TREE_EXEC;
    EXPECT_FALSE(parse_tree_event(bytes_of(&h, sizeof h)));
}

TEST(BpfRecords, ExecEventCarriesPathAndArguments) {
    pt_tree_exec_event x{};
    x.head.kind = PT_TREE_EXEC;
    std::memcpy(x.path, "/usr/bin/cc", 12);
    const char args[] = "cc\0-c\0f.c";  // the area, NUL-separated, as the stack holds it
    std::memcpy(x.argv, args, sizeof args);
    x.head.argv_len = sizeof args;
    x.head.argv_total = sizeof args;
    const auto b = bytes_of(&x, sizeof x);  // path and argv are views into it
    auto e = parse_tree_event(b);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->path, "/usr/bin/cc");
    ASSERT_EQ(e->argv.size(), sizeof args);
    bool cut = true;
    EXPECT_EQ(split_argv(e->argv, 4096, true, cut), (std::vector<std::string>{"cc", "-c", "f.c"}));
    EXPECT_FALSE(cut);
    // Bounded: "cc\0-c\0" is 6 bytes; the 7th starts f.c, kept cut.
    EXPECT_EQ(split_argv(e->argv, 7, true, cut), (std::vector<std::string>{"cc", "-c", "f"}));
    EXPECT_TRUE(cut);
    // Copied in part by the program: truncated whatever the bound.
    EXPECT_EQ(split_argv(e->argv, 4096, false, cut).size(), 3U);
    EXPECT_TRUE(cut);

    // More copied than the area holds, more than the buffer, or a path without NUL: refused.
    x.head.argv_total = sizeof args - 1;
    EXPECT_FALSE(parse_tree_event(bytes_of(&x, sizeof x)));
    x.head.argv_total = PT_TREE_ARGV_MAX + 10;
    x.head.argv_len = PT_TREE_ARGV_MAX + 1;
    EXPECT_FALSE(parse_tree_event(bytes_of(&x, sizeof x)));
    x.head.argv_len = PT_TREE_ARGV_MAX;
    EXPECT_TRUE(parse_tree_event(bytes_of(&x, sizeof x)));
    std::memset(x.path, 'a', sizeof x.path);
    EXPECT_FALSE(parse_tree_event(bytes_of(&x, sizeof x)));
}
