// SPDX-License-Identifier: MIT
// The parsers of the records the BPF programs write (src/parse/bpf_records.hpp).
#include <gtest/gtest.h>

#include <cstring>
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
