// SPDX-License-Identifier: MIT
// The exporter's listening socket and its port file.
#pragma once

#include <cstdint>
#include <string>

#include "serve/error.hpp"

namespace proctimes::cli::serve {

struct listener {
    int fd = -1;             ///< listening, non-blocking, close-on-exec; the caller closes it
    std::uint16_t port = 0;  ///< the port bound (port 0 asked: the one the kernel chose)
};

/// Resolves `host` (getaddrinfo, AI_PASSIVE) and listens on the first address
/// that binds. SO_REUSEADDR, never SO_REUSEPORT: a port another process
/// listens on fails with "Address already in use". Errors (error_kind::listen):
/// "cannot listen on HOST:PORT: " and the resolver's reason (gai_strerror) or
/// the socket's (strerror).
outcome<listener> open_listener(const std::string& host, std::uint16_t port);

/// Writes "PORT\n" to `path` through a new temporary file in the same
/// directory (mkostemp) renamed over it. Errors: error_kind::listen.
status write_port_file(const std::string& path, std::uint16_t port);

/// HOST:PORT as shown to the user: an IPv6 host in brackets.
std::string shown_address(const std::string& host, std::uint16_t port);

}  // namespace proctimes::cli::serve
