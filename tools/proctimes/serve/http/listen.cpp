// SPDX-License-Identifier: MIT
#include "serve/http/listen.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace proctimes::cli::serve {

std::string shown_address(const std::string& host, std::uint16_t port) {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

outcome<listener> open_listener(const std::string& host, std::uint16_t port) {
    const auto refused = [&](const char* why) {
        return serve::error{error_kind::listen, "cannot listen on " + shown_address(host, port) + ": " + why};
    };
    listener l;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
        return refused(rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc));
    int last_errno = 0;
    for (addrinfo* ai = res; ai && l.fd < 0; ai = ai->ai_next) {
        const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0) {
            last_errno = errno;
            continue;
        }
        // SO_REUSEADDR only lets a restarted exporter bind while old
        // connections sit in TIME_WAIT; without SO_REUSEPORT a second
        // listener on the same address and port fails with EADDRINUSE.
        const int one = 1;
        (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
            last_errno = errno;
            ::close(fd);
            continue;
        }
        sockaddr_storage ss{};
        socklen_t len = sizeof ss;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
        l.port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
        l.fd = fd;
    }
    ::freeaddrinfo(res);
    if (l.fd < 0) return refused(last_errno != 0 ? std::strerror(last_errno) : "no usable address");
    return l;
}

status write_port_file(const std::string& path, std::uint16_t port) {
    const auto failed = [](const std::string& why) { return serve::error{error_kind::listen, "--port-file: " + why}; };
    // A fresh file made by mkstemp (O_EXCL: never a planted file or symlink)
    // in the same directory, renamed over the target: readers see the whole
    // number or nothing, and the rename replaces a symlink rather than
    // following it.
    std::string tmp = path + ".XXXXXX";
    const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
    if (fd < 0) return failed("cannot create a file beside " + path + ": " + std::strerror(errno));
    (void)::fchmod(fd, 0644);
    const std::string text = std::to_string(port) + "\n";
    const bool wrote = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int werr = errno;
    if (::close(fd) != 0 || !wrote) {
        ::unlink(tmp.c_str());
        return failed("cannot write " + tmp + ": " + std::strerror(wrote ? errno : werr));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        return failed("cannot write " + path + ": " + std::strerror(e));
    }
    return ok();
}

}  // namespace proctimes::cli::serve
