// SPDX-License-Identifier: MIT
// The taskstats netlink parsers, on datagrams built here field by field in the
// layout the kernel sends (netlink header, genl header, nested attributes).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "parse/netlink.hpp"
#include "parse/procfs.hpp"

using namespace proctimes::parse;

namespace {

constexpr std::uint16_t family = 0x1a;

std::string pad4(std::string s) {
    s.resize((s.size() + 3) & ~std::size_t{3}, '\0');
    return s;
}

std::string attr(std::uint16_t type, const std::string& value) {
    nlattr a{};
    a.nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + value.size());
    a.nla_type = type;
    std::string out(reinterpret_cast<const char*>(&a), sizeof a);
    return pad4(out + value);
}

template <class T>
std::string bytes(const T& v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

std::string message(std::uint16_t type, std::uint8_t cmd, const std::string& attrs) {
    genlmsghdr g{};
    g.cmd = cmd;
    g.version = 1;
    nlmsghdr h{};
    h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + GENL_HDRLEN + attrs.size());
    h.nlmsg_type = type;
    return bytes(h) + bytes(g) + attrs;
}

std::string stats(std::uint32_t pid, std::uint64_t run_ns, std::uint64_t utime_us, std::uint64_t stime_us,
                  bool group_dead) {
    taskstats t{};
    t.version = TASKSTATS_VERSION;
    t.ac_pid = pid;
    t.ac_flag = group_dead ? 0x20 : 0;  // AGROUP
    t.cpu_run_virtual_total = run_ns;
    t.cpu_run_real_total = (utime_us + stime_us) * 1000;
    t.ac_utime = utime_us;
    t.ac_stime = stime_us;
    t.ac_etime = 123'456;
    return bytes(t);
}

std::string aggr(std::uint16_t outer, std::uint16_t id_type, std::uint32_t id, const std::string& st) {
    return attr(static_cast<std::uint16_t>(outer | NLA_F_NESTED),
                attr(id_type, bytes(id)) + attr(TASKSTATS_TYPE_STATS, st));
}

std::string exit_message(std::uint32_t pid, std::uint64_t run_ns, bool group_dead, bool with_group) {
    std::string a = aggr(TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, pid, stats(pid, run_ns, 30, 10, group_dead));
    if (with_group) a += aggr(TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID, pid, stats(pid, 0, 0, 0, false));
    a += attr(TASKSTATS_TYPE_NULL, "");
    return message(family, TASKSTATS_CMD_NEW, a);
}

}  // namespace

TEST(Netlink, ExitRecordOfAThread) {
    std::vector<taskstats_exit> out;
    ASSERT_EQ(parse_taskstats_exits(exit_message(4242, 77'128'593, false, false), family, out), 1u);
    const auto& e = out[0];
    EXPECT_EQ(e.pid, 4242u);
    EXPECT_EQ(e.version, TASKSTATS_VERSION);
    EXPECT_FALSE(e.group_dead);
    EXPECT_FALSE(e.group_record);
    EXPECT_EQ(e.run_ns, 77'128'593u);
    EXPECT_EQ(e.sampled_run_ns, 40'000u);
    EXPECT_EQ(e.utime_us, 30u);
    EXPECT_EQ(e.stime_us, 10u);
    EXPECT_EQ(e.elapsed_us, 123'456u);
}

TEST(Netlink, GroupEndWithAndWithoutAGroupRecord) {
    std::vector<taskstats_exit> out;
    // One datagram, two messages: a one-thread process, then the last thread
    // of a group that had more.
    const std::string one = exit_message(100, 5, true, false);
    const std::string two = exit_message(200, 6, true, true);
    ASSERT_EQ(parse_taskstats_exits(pad4(one) + two, family, out), 2u);
    EXPECT_EQ(out[0].pid, 100u);
    EXPECT_TRUE(out[0].group_dead);
    EXPECT_FALSE(out[0].group_record);
    EXPECT_EQ(out[1].pid, 200u);
    EXPECT_TRUE(out[1].group_dead);
    EXPECT_TRUE(out[1].group_record);
    EXPECT_EQ(out[1].run_ns, 6u) << "the task's own record, not the group's";
}

TEST(Netlink, OtherFamiliesCommandsAndIncompleteRecordsAreIgnored) {
    std::vector<taskstats_exit> out;
    EXPECT_EQ(parse_taskstats_exits(exit_message(1, 1, false, false), family + 1, out), 0u);
    const std::string a = aggr(TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 7, stats(7, 1, 1, 1, false));
    EXPECT_EQ(parse_taskstats_exits(message(family, TASKSTATS_CMD_GET, a), family, out), 0u);
    // A stats struct too short to hold the fields read.
    const std::string short_stats = stats(7, 1, 1, 1, false).substr(0, offsetof(taskstats, ac_stime));
    EXPECT_EQ(parse_taskstats_exits(
                  message(family, TASKSTATS_CMD_NEW, aggr(TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, 7, short_stats)),
                  family, out),
              0u);
    // No pid, or pid 0.
    EXPECT_EQ(parse_taskstats_exits(
                  message(family, TASKSTATS_CMD_NEW,
                          attr(TASKSTATS_TYPE_AGGR_PID, attr(TASKSTATS_TYPE_STATS, stats(7, 1, 1, 1, false)))),
                  family, out),
              0u);
    EXPECT_EQ(parse_taskstats_exits(exit_message(0, 1, false, false), family, out), 0u);
    EXPECT_TRUE(out.empty());
}

TEST(Netlink, EveryTruncationIsSafeAndOnlyTheWholeMessageCounts) {
    const std::string m = exit_message(4242, 9, true, true);
    for (std::size_t n = 0; n < m.size(); ++n) {
        std::vector<taskstats_exit> out;
        parse_taskstats_exits(std::string_view(m).substr(0, n), family, out);
        EXPECT_TRUE(out.empty()) << n;  // the header's length no longer fits
    }
    // A header claiming less than the attributes need cuts the attributes.
    std::string lying = m;
    const std::uint32_t len = NLMSG_HDRLEN + GENL_HDRLEN + 8;
    std::memcpy(lying.data(), &len, sizeof len);
    std::vector<taskstats_exit> out;
    EXPECT_EQ(parse_taskstats_exits(lying, family, out), 0u);
}

TEST(Netlink, FamilyIdFromTheControllerReply) {
    const std::uint16_t id = 0x1b;
    const std::string reply = message(
        GENL_ID_CTRL, CTRL_CMD_NEWFAMILY,
        attr(CTRL_ATTR_FAMILY_NAME, std::string(TASKSTATS_GENL_NAME) + '\0') + attr(CTRL_ATTR_FAMILY_ID, bytes(id)));
    EXPECT_EQ(parse_genl_family_id(reply), id);
    EXPECT_FALSE(parse_genl_family_id(reply.substr(0, reply.size() - 4)));
    const std::uint16_t reserved = GENL_ID_CTRL;
    EXPECT_FALSE(
        parse_genl_family_id(message(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, attr(CTRL_ATTR_FAMILY_ID, bytes(reserved)))));
    EXPECT_FALSE(parse_genl_family_id(message(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attr(CTRL_ATTR_FAMILY_ID, bytes(id)))));
}

TEST(Netlink, ErrorsAndAcknowledgements) {
    const auto error_message = [](int code) {
        nlmsgerr e{};
        e.error = code;
        nlmsghdr h{};
        h.nlmsg_len = static_cast<std::uint32_t>(NLMSG_HDRLEN + sizeof e);
        h.nlmsg_type = NLMSG_ERROR;
        return bytes(h) + bytes(e);
    };
    EXPECT_EQ(parse_netlink_error(error_message(0)), 0);
    EXPECT_EQ(parse_netlink_error(error_message(-1)), -1);  // EPERM
    EXPECT_FALSE(parse_netlink_error(error_message(5)));    // not something the kernel sends
    EXPECT_FALSE(parse_netlink_error(exit_message(1, 1, false, false)));
    EXPECT_EQ(parse_netlink_error(pad4(exit_message(1, 1, false, false)) + error_message(-2)), -2);
}

TEST(ParseStatus, NspidLevels) {
    const std::string base = "Name:\tx\nTgid:\t5\nPid:\t5\n";
    EXPECT_EQ(parse_status(base)->nspid_levels, 0);
    EXPECT_EQ(parse_status(base + "NSpid:\t5\n")->nspid_levels, 1);
    EXPECT_EQ(parse_status(base + "NSpid:\t81234\t5\n")->nspid_levels, 2);
    EXPECT_FALSE(parse_status(base + "NSpid:\t81234\tx\n"));
}
