// SPDX-License-Identifier: MIT
// The sweep of the exit stream's stamp map (linux/bpf/exit_stamps.hpp), on a
// hash map of the same shape that the test fills itself: which stamps it
// counts lost, which it leaves, and when the next sweep is due.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include <bpf/bpf.h>
#include <unistd.h>

#include "bpf_skip.hpp"
#include "linux/bpf/exit_stamps.hpp"

namespace {

using proctimes::detail::stamp_grace_ns;
using proctimes::detail::sweep_exit_stamps;

constexpr std::uint64_t second = 1'000'000'000;

class stamp_map {
public:
    stamp_map()
        : fd_(bpf_map_create(BPF_MAP_TYPE_HASH, "pt_test_stamps", sizeof(std::uint64_t), sizeof(pt_exit_stamp), 1024,
                             nullptr)) {}
    stamp_map(const stamp_map&) = delete;
    stamp_map& operator=(const stamp_map&) = delete;
    ~stamp_map() {
        if (fd_ >= 0) ::close(fd_);
    }
    int fd() const { return fd_; }
    // A stamp at `key`: exit instant (0: consumed, `start` then holds the
    // instant of its consumption, as the free program leaves it).
    bool put(std::uint64_t key, std::uint64_t exit, std::uint64_t start, std::uint32_t pid) const {
        pt_exit_stamp st{};
        st.exit_boottime = exit;
        st.start_boottime = start;
        st.tgid = pid;
        st.pid = pid;
        return bpf_map_update_elem(fd_, &key, &st, BPF_ANY) == 0;
    }
    bool remove(std::uint64_t key) const { return bpf_map_delete_elem(fd_, &key) == 0; }
    std::set<std::uint64_t> keys() const {
        std::set<std::uint64_t> out;
        std::uint64_t key = 0, next = 0;
        std::uint64_t* prev = nullptr;
        while (bpf_map_get_next_key(fd_, prev, &next) == 0) {
            key = next;
            prev = &key;
            out.insert(key);
        }
        return out;
    }

private:
    int fd_;
};

}  // namespace

TEST(ExitStampSweep, CountsOldStampsOfGoneTasksAndSaysWhenAStampCanBeNext) {
    PROCTIMES_REQUIRE_BPF_SNAPSHOT();
    const stamp_map m;
    ASSERT_GE(m.fd(), 0) << "cannot create a hash map: " << std::strerror(errno);
    const std::uint64_t now = 100 * second;
    ASSERT_TRUE(m.put(1, now - 6 * second, 1, 101));  // 6 s old, its task gone: lost
    ASSERT_TRUE(m.put(2, now - 7 * second, 2, 102));  // 7 s old, still listed (a zombie): left
    ASSERT_TRUE(m.put(3, now - 2 * second, 3, 103));  // 2 s old: left, a loss at the earliest in 3 s
    ASSERT_TRUE(m.put(4, now - 1 * second, 4, 104));  // 1 s old: left
    ASSERT_TRUE(m.put(5, 0, now - 6 * second, 105));  // consumed 6 s ago, its delete failed: removed, no loss
    ASSERT_TRUE(m.put(6, 0, now - 1 * second, 106));  // consumed 1 s ago: left for now
    std::set<std::uint32_t> asked;
    const auto listed = [&asked](const pt_exit_stamp& st) {
        asked.insert(st.pid);
        return st.pid == 102;
    };

    // Old enough, its task gone: first seen gone now, so not yet a loss
    // (its release may be recent: a zombie reaped late, its free an RCU
    // grace period on). The consumed one is removed.
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> gone;
    auto first = sweep_exit_stamps(m.fd(), now, listed, gone);
    EXPECT_TRUE(first.lost.empty());
    // The 2 s old one turns 5 s old first.
    EXPECT_EQ(first.next_due, now - 2 * second + stamp_grace_ns);
    EXPECT_EQ(m.keys(), (std::set<std::uint64_t>{1, 2, 3, 4, 6}));
    EXPECT_EQ(gone.size(), 1U);
    // /proc is asked only about stamps old enough to be a loss.
    EXPECT_EQ(asked, (std::set<std::uint32_t>{101, 102}));

    // 5 s on, the first is still held and still gone: a loss. The 2 s and
    // 1 s old ones are now old enough and gone: first seen gone now. The
    // consumed one is 6 s old: removed.
    auto second_sweep = sweep_exit_stamps(m.fd(), now + stamp_grace_ns, listed, gone);
    ASSERT_EQ(second_sweep.lost.size(), 1U);
    EXPECT_EQ(second_sweep.lost[0].pid, 101U);
    EXPECT_EQ(second_sweep.lost[0].exit_boottime, now - 6 * second);
    EXPECT_EQ(second_sweep.next_due, now + 2 * stamp_grace_ns);
    EXPECT_EQ(m.keys(), (std::set<std::uint64_t>{2, 3, 4}));

    // One of them is freed meanwhile (its free deleted its stamp): no loss,
    // and it is forgotten. 10 s on, the other is a loss. Only the zombie's
    // is left: no stamp can become a loss until
    // another comes.
    ASSERT_TRUE(m.remove(3));
    auto third = sweep_exit_stamps(m.fd(), now + 2 * stamp_grace_ns, listed, gone);
    ASSERT_EQ(third.lost.size(), 1U);
    EXPECT_EQ(third.lost[0].pid, 104U);
    EXPECT_EQ(third.next_due, UINT64_MAX);
    EXPECT_EQ(m.keys(), (std::set<std::uint64_t>{2}));
    EXPECT_TRUE(gone.empty());
}
