// SPDX-License-Identifier: MIT
#include "serve/http/conn_pool.hpp"

#include <utility>

#include <sys/socket.h>

namespace proctimes::cli::serve {

conn_entry* conn_pool::opened(int fd, std::string addr) {
    auto* e = new conn_entry;
    e->fd = fd;
    e->addr = std::move(addr);
    std::lock_guard lk(mu_);
    e->pos = lists_[0].insert(lists_[0].end(), e);
    ++open_;
    ++per_addr_[e->addr];
    // The new connection is shed only when no other one can be: it has had
    // no time to send its request yet.
    while (!e->shed && per_addr_[e->addr] > max_per_addr_) shed(oldest(&e->addr, e));
    while (!e->shed && open_ > max_) shed(oldest(nullptr, e));
    return e;
}

void conn_pool::set(conn_entry* e, conn_entry::state to) {
    if (e == nullptr) return;
    std::lock_guard lk(mu_);
    if (e->shed || e->st == to) return;
    if (e->st != conn_entry::state::busy) lists_[index(e->st)].erase(e->pos);
    e->st = to;
    if (to != conn_entry::state::busy) e->pos = lists_[index(to)].insert(lists_[index(to)].end(), e);
}

void conn_pool::closed(conn_entry* e) {
    if (e == nullptr) return;
    {
        std::lock_guard lk(mu_);
        if (!e->shed) {
            if (e->st != conn_entry::state::busy) lists_[index(e->st)].erase(e->pos);
            forget(e);
        }
    }
    delete e;
}

std::size_t conn_pool::open() const {
    std::lock_guard lk(mu_);
    return open_;
}

conn_entry* conn_pool::oldest(const std::string* addr, conn_entry* fresh) {
    for (auto& l : lists_)
        for (conn_entry* e : l)
            if (e != fresh && (addr == nullptr || e->addr == *addr)) return e;
    return fresh;
}

void conn_pool::forget(conn_entry* e) {
    --open_;
    if (const auto a = per_addr_.find(e->addr); a != per_addr_.end() && --a->second == 0) per_addr_.erase(a);
}

void conn_pool::shed(conn_entry* e) {
    lists_[index(e->st)].erase(e->pos);
    e->shed = true;
    forget(e);
    if (e->fd >= 0) ::shutdown(e->fd, SHUT_RDWR);
}

}  // namespace proctimes::cli::serve
