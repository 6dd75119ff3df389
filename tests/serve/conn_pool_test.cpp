// SPDX-License-Identifier: MIT
// serve's connection limits (conn_pool) on real sockets: which connection a
// new one past a limit sheds, seen as the end of stream its peer reads.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include <sys/socket.h>
#include <unistd.h>

#include "serve/http/conn_pool.hpp"

using proctimes::cli::serve::conn_entry;
using proctimes::cli::serve::conn_pool;
using state = conn_entry::state;

namespace {

// One connection: the pool's end (what the server holds) and the peer's.
struct wire {
    int server = -1, peer = -1;
    wire() {
        std::array<int, 2> sv{};
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv.data()) == 0) {
            server = sv[0];
            peer = sv[1];
        }
    }
    wire(const wire&) = delete;
    wire& operator=(const wire&) = delete;
    wire(wire&& o) noexcept : server(o.server), peer(o.peer) { o.server = o.peer = -1; }
    wire& operator=(wire&&) = delete;
    ~wire() {
        if (server >= 0) ::close(server);
        if (peer >= 0) ::close(peer);
    }
    // Whether the server side was shut down: the peer reads the end at once.
    [[nodiscard]] bool shut() const {
        char c = 0;
        return ::recv(peer, &c, 1, MSG_DONTWAIT) == 0;
    }
};

const std::string a(4, '\1'), b(4, '\2'), v6(16, '\3');

}  // namespace

TEST(ConnPool, PastTheAddressLimitTheOldestWaitingConnectionOfThatAddressIsShed) {
    conn_pool pool(100, 3);
    std::vector<wire> l(5);
    conn_entry* e0 = pool.opened(l[0].server, a);
    conn_entry* e1 = pool.opened(l[1].server, b);  // another address: not counted against a's limit
    conn_entry* e2 = pool.opened(l[2].server, a);
    conn_entry* e3 = pool.opened(l[3].server, a);
    EXPECT_EQ(pool.open(), 4U);
    for (const auto& x : l) EXPECT_FALSE(x.shut());
    conn_entry* e4 = pool.opened(l[4].server, a);  // a's fourth: its oldest goes
    EXPECT_TRUE(e0->shed);
    EXPECT_TRUE(l[0].shut());
    for (int i : {1, 2, 3, 4}) EXPECT_FALSE(l[static_cast<std::size_t>(i)].shut()) << i;
    EXPECT_EQ(pool.open(), 4U);
    for (conn_entry* e : {e0, e1, e2, e3, e4}) pool.closed(e);  // a shed one is not counted twice
    EXPECT_EQ(pool.open(), 0U);
}

TEST(ConnPool, IdleAndPartialConnectionsGoBeforeIncompleteHeadsAndARequestUnderWayNever) {
    conn_pool pool(3, 100);
    std::vector<wire> l(6);
    conn_entry* busy = pool.opened(l[0].server, a);
    pool.set(busy, state::busy);
    conn_entry* head = pool.opened(l[1].server, b);
    pool.set(head, state::in_head);
    conn_entry* idle = pool.opened(l[2].server, v6);
    // The fourth: the waiting one goes, though it came last.
    conn_entry* n1 = pool.opened(l[3].server, a);
    EXPECT_TRUE(idle->shed);
    EXPECT_TRUE(l[2].shut());
    EXPECT_FALSE(head->shed);
    // The fifth: n1 waits too, and goes before the incomplete head.
    conn_entry* n2 = pool.opened(l[4].server, b);
    EXPECT_TRUE(n1->shed);
    EXPECT_FALSE(head->shed);
    // Every other one busy: the new one is shut itself.
    pool.set(head, state::busy);
    pool.set(n2, state::busy);
    conn_entry* n3 = pool.opened(l[5].server, a);
    EXPECT_TRUE(n3->shed);
    EXPECT_TRUE(l[5].shut());
    EXPECT_FALSE(l[0].shut());
    EXPECT_FALSE(l[1].shut());
    EXPECT_FALSE(l[4].shut());
    EXPECT_EQ(pool.open(), 3U);
    // An answered request waits again, and is then the first to go.
    pool.set(busy, state::waiting);
    wire extra;
    conn_entry* n4 = pool.opened(extra.server, b);
    EXPECT_TRUE(busy->shed);
    EXPECT_TRUE(l[0].shut());
    for (conn_entry* e : {busy, head, idle, n1, n2, n3, n4}) pool.closed(e);
    EXPECT_EQ(pool.open(), 0U);
}

TEST(ConnPool, ALaterStateChangeOfAShedConnectionIsIgnored) {
    conn_pool pool(1, 1);
    wire l0, l1;
    conn_entry* e0 = pool.opened(l0.server, a);
    conn_entry* e1 = pool.opened(l1.server, a);
    ASSERT_TRUE(e0->shed);
    pool.set(e0, state::in_head);  // its request line came before the library saw the end
    pool.set(nullptr, state::busy);
    EXPECT_EQ(pool.open(), 1U);
    pool.closed(e0);
    EXPECT_EQ(pool.open(), 1U);
    pool.closed(e1);
    pool.closed(nullptr);
    EXPECT_EQ(pool.open(), 0U);
}
