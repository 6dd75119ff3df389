// SPDX-License-Identifier: MIT
// The kernel's taskstats exit records, received on a generic-netlink socket
// registered as a listener for every CPU (needs CAP_NET_ADMIN). The kernel
// sends one record as each task (thread) ends, in do_exit(), before the task's
// pidfd becomes readable: by the time anyone sees an exit, its record is in the
// socket. Used by the exit monitor for the final values of tasks that cannot
// be read after their end (docs/EXIT.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include <sys/types.h>

#include "exit/record.hpp"
#include "linux/sys.hpp"
#include "parse/netlink.hpp"

namespace proctimes::inline v1::detail {

class exit_records {
public:
    /// Opens the socket, resolves the TASKSTATS family and registers for every
    /// possible CPU. Fails (with the reason in `why`) without CAP_NET_ADMIN,
    /// outside the initial pid namespace (records carry its pids), or on a
    /// kernel without taskstats.
    static std::unique_ptr<exit_records> open(std::error_code& why) noexcept;

    /// The socket, for the monitor's epoll set (non-blocking).
    int fd() const noexcept { return sock_.get(); }

    /// Reads every pending datagram and appends its exit records to `out`.
    /// Returns false when the kernel reported lost datagrams (a burst of exits
    /// overflowed the socket's buffer): some records are then missing.
    bool drain(std::vector<parse::taskstats_exit>& out) noexcept;

private:
    exit_records() = default;

    unique_fd sock_;
    std::uint16_t family_ = 0;
    std::unique_ptr<char[]> buf_;
};

/// The portable exit record (exit/record.hpp) of a taskstats record: its
/// exact run time, the tick-sampled split, and its elapsed time (none when
/// the kernel left ac_etime 0).
exit_record to_exit_record(const parse::taskstats_exit& e) noexcept;

/// Whether this process is in the initial pid namespace: /proc/self/ns/pid is
/// the initial namespace's inode (else, where that link cannot be read, the
/// NSpid line of /proc/self/status has one id). False when neither can be read.
bool in_initial_pid_namespace() noexcept;

}  // namespace proctimes::inline v1::detail
