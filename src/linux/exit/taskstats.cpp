// SPDX-License-Identifier: MIT
#include "linux/exit/taskstats.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "parse/procfs.hpp"
#include "proctimes/error.hpp"

namespace proctimes::inline v1::detail {
namespace {

constexpr std::size_t buffer_size = std::size_t{64} * 1024;  // one datagram; an exit record is about 450 bytes
constexpr int receive_buffer = 4 * 1024 * 1024;              // room for bursts of exits between two drains
constexpr std::chrono::milliseconds reply_timeout{1000};

std::size_t align4(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

// One generic-netlink request: header, genl header, one attribute.
std::error_code send_request(int sock, std::uint16_t type, std::uint16_t flags, std::uint8_t cmd, std::uint16_t attr,
                             const std::string& value) noexcept {
    char msg[256] = {};
    const std::size_t attr_len = NLA_HDRLEN + value.size() + 1;  // with its NUL
    const std::size_t total = NLMSG_HDRLEN + GENL_HDRLEN + align4(attr_len);
    if (total > sizeof msg) return make_error_code(errc::invalid_argument);
    nlmsghdr h{};
    h.nlmsg_len = static_cast<std::uint32_t>(total);
    h.nlmsg_type = type;
    h.nlmsg_flags = static_cast<std::uint16_t>(NLM_F_REQUEST | flags);
    h.nlmsg_seq = 1;
    genlmsghdr g{};
    g.cmd = cmd;
    g.version = 1;
    nlattr a{};
    a.nla_len = static_cast<std::uint16_t>(attr_len);
    a.nla_type = attr;
    std::memcpy(msg, &h, sizeof h);
    std::memcpy(msg + NLMSG_HDRLEN, &g, sizeof g);
    std::memcpy(msg + NLMSG_HDRLEN + GENL_HDRLEN, &a, sizeof a);
    std::memcpy(msg + NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN, value.c_str(), value.size() + 1);
    sockaddr_nl to{};
    to.nl_family = AF_NETLINK;
    ssize_t n;
    do {
        n = ::sendto(sock, msg, total, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? last_errno() : std::error_code{};
}

// Waits up to reply_timeout for one datagram. Returns its size, or -1 with errno.
ssize_t receive(int sock, char* buf, std::size_t size) noexcept {
    pollfd p{sock, POLLIN, 0};
    int r;
    do {
        r = ::poll(&p, 1, static_cast<int>(reply_timeout.count()));
    } while (r < 0 && errno == EINTR);
    if (r == 0) errno = ETIMEDOUT;
    if (r <= 0) return -1;
    ssize_t n;
    do {
        n = ::recv(sock, buf, size, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    return n;
}

// Reads replies until `done(datagram)` says the awaited one came. An error
// message (a negative errno) or reply_timeout of silence ends the wait.
template <class F>
std::error_code await_reply(int sock, char* buf, F&& done) noexcept {
    for (;;) {
        const ssize_t n = receive(sock, buf, buffer_size);
        if (n < 0) return last_errno();
        const std::string_view dgram(buf, static_cast<std::size_t>(n));
        if (done(dgram)) return {};
        if (auto e = parse::parse_netlink_error(dgram); e && *e < 0) return errno_code(-*e);
    }
}

}  // namespace

bool in_initial_pid_namespace() noexcept {
    // The namespace's inode first: in a pid namespace of its own with its own
    // /proc mounted (unshare --pid --fork --mount-proc), NSpid lists only the
    // levels that /proc's namespace sees, one, as in the initial namespace.
    char link[64];
    const ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
    if (n > 0) {
        link[n] = '\0';
        return std::string_view(link, static_cast<std::size_t>(n)) == "pid:[4026531836]";  // PROC_PID_INIT_INO
    }
    std::string text;
    if (read_file("/proc/self/status", text)) return false;
    const auto st = parse::parse_status(text);
    return st && st->nspid_levels == 1;
}

std::unique_ptr<exit_records> exit_records::open(std::error_code& why) noexcept {
    try {
        if (!in_initial_pid_namespace()) {
            // Records name tasks by their ids in the initial pid namespace.
            why = make_error_code(errc::foreign_namespace);
            return nullptr;
        }
        std::unique_ptr<exit_records> r(new exit_records);
        r->buf_ = std::make_unique<char[]>(buffer_size);
        r->sock_.reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC));
        if (!r->sock_) {
            why = last_errno();
            return nullptr;
        }
        const int sock = r->sock_.get();
        sockaddr_nl self{};
        self.nl_family = AF_NETLINK;
        if (::bind(sock, reinterpret_cast<const sockaddr*>(&self), sizeof self) != 0) {
            why = last_errno();
            return nullptr;
        }
        if (::setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer, sizeof receive_buffer) != 0)
            (void)::setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);

        // The family id of TASKSTATS.
        if ((why = send_request(sock, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME)))
            return nullptr;
        why = await_reply(sock, r->buf_.get(), [&r](std::string_view dgram) {
            const auto id = parse::parse_genl_family_id(dgram);
            if (id) r->family_ = *id;
            return id.has_value();
        });
        if (why == std::errc::no_such_file_or_directory) why = make_error_code(errc::not_supported);  // no taskstats
        if (why) return nullptr;

        // Listen on every CPU a task can exit on.
        std::string cpus;
        if (read_file("/sys/devices/system/cpu/possible", cpus) || cpus.empty()) {
            why = make_error_code(errc::not_supported);
            return nullptr;
        }
        while (!cpus.empty() && (cpus.back() == '\n' || cpus.back() == ' ')) cpus.pop_back();
        if ((why = send_request(sock, r->family_, NLM_F_ACK, TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
                                cpus)))
            return nullptr;
        // Exit records can come before the acknowledgement; they concern no
        // handle yet (none is registered before open() returns). EPERM
        // without CAP_NET_ADMIN.
        if ((why = await_reply(sock, r->buf_.get(),
                               [](std::string_view dgram) { return parse::parse_netlink_error(dgram) == 0; })))
            return nullptr;
        const int fl = ::fcntl(sock, F_GETFL);
        if (fl < 0 || ::fcntl(sock, F_SETFL, fl | O_NONBLOCK) != 0) {
            why = last_errno();
            return nullptr;
        }
        why.clear();
        return r;
    } catch (...) {
        why = errno_code(ENOMEM);
        return nullptr;
    }
}

bool exit_records::drain(std::vector<parse::taskstats_exit>& out) noexcept {
    bool records_lost = false;
    for (;;) {
        const ssize_t n = ::recv(sock_.get(), buf_.get(), buffer_size, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == ENOBUFS) {
                records_lost = true;
                continue;
            }
            return !records_lost;  // EAGAIN: nothing more
        }
        try {
            parse::parse_taskstats_exits(std::string_view(buf_.get(), static_cast<std::size_t>(n)), family_, out);
        } catch (...) {
            records_lost = true;  // out of memory: this datagram's records are lost
        }
    }
}

exit_record to_exit_record(const parse::taskstats_exit& e) noexcept {
    exit_record r;
    r.run = std::chrono::nanoseconds{static_cast<std::int64_t>(e.run_ns)};
    r.user_us = e.utime_us;
    r.kernel_us = e.stime_us;
    // A record with no elapsed time is a kernel that did not fill it.
    if (e.elapsed_us != 0) r.elapsed = std::chrono::microseconds{static_cast<std::int64_t>(e.elapsed_us)};
    return r;
}

}  // namespace proctimes::inline v1::detail
