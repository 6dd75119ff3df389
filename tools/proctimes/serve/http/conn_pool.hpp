// SPDX-License-Identifier: MIT
// The connection limits of `proctimes serve` (--max-connections,
// --max-connections-per-ip). A connection past either limit sheds the one
// that has waited longest without a request under way: idle or partial ones
// first (nothing read but part of a request line, or waiting between
// requests), then those whose head is incomplete; one whose request is under
// way is never shed. When every other one is busy, the new connection itself
// is. Shedding is a shutdown(2) of the connection's socket: the HTTP
// library's loop then reads the end and closes it, and reports the close
// (closed()). Thread-safe: the library's loops and the hashing thread of
// basic authentication call it.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

namespace proctimes::cli::serve {

/// A connection as the pool sees it. Its descriptor stays valid while the
/// entry exists: the library reports the close before it closes the socket.
struct conn_entry {
    int fd = -1;
    std::string addr;  ///< the peer's address bytes (4 or 16; empty: unknown)
    /// waiting: nothing read but part of a request line, or idle between
    /// requests; in_head: a request line read, the head not complete;
    /// busy: a request under way (its handler called, or a hash awaited).
    enum class state { waiting, in_head, busy } st = state::waiting;
    bool shed = false;                     ///< shut down by the pool
    std::list<conn_entry*>::iterator pos;  ///< in its state's list when not busy
};

class conn_pool {
public:
    conn_pool(std::size_t max_total, std::size_t max_per_addr) : max_(max_total), max_per_addr_(max_per_addr) {}
    conn_pool(const conn_pool&) = delete;
    conn_pool& operator=(const conn_pool&) = delete;
    ~conn_pool() = default;

    /// A new connection on socket `fd` from `addr` (waiting): may shed
    /// another, or itself (then its `shed` is set). The entry is the
    /// caller's to hand back to closed().
    conn_entry* opened(int fd, std::string addr);
    /// The connection's request moved to `to` (a null entry: ignored).
    void set(conn_entry* e, conn_entry::state to);
    /// The library closed it: out of the pool, and deleted.
    void closed(conn_entry* e);

    /// Connections counted against the limits (open and not shed).
    [[nodiscard]] std::size_t open() const;

private:
    static std::size_t index(conn_entry::state s) { return s == conn_entry::state::waiting ? 0 : 1; }
    // The longest waiting connection (from `addr` only, when given) other
    // than `fresh`; `fresh` when there is none.
    conn_entry* oldest(const std::string* addr, conn_entry* fresh);
    void forget(conn_entry* e);
    void shed(conn_entry* e);

    mutable std::mutex mu_;
    std::list<conn_entry*> lists_[2];  ///< waiting, in_head: oldest first
    std::unordered_map<std::string, std::size_t> per_addr_;
    std::size_t open_ = 0;
    const std::size_t max_, max_per_addr_;
};

}  // namespace proctimes::cli::serve
