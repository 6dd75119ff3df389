// SPDX-License-Identifier: MIT
// The Prometheus exporter-toolkit web configuration (`-web.config.file`,
// `--web-config`): TLS through libmicrohttpd's GnuTLS, basic authentication
// with bcrypt hashes (libxcrypt), and extra response headers.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace proctimes::cli::serve {

/// How a client certificate is asked for (Go's tls.ClientAuthType names).
enum class client_auth { none, request, require_any, verify_if_given, require_and_verify };

struct web_config {
    bool tls = false;
    std::string cert_pem, key_pem;  ///< the server's certificate chain and key
    std::string client_ca_pem;      ///< CAs a client certificate must chain to
    client_auth auth = client_auth::none;
    std::string priorities;  ///< GnuTLS priority string (versions, suites, groups)
    /// user -> bcrypt hash; empty: no authentication.
    std::map<std::string, std::string, std::less<>> users;
    std::vector<std::pair<std::string, std::string>> headers;  ///< added to every response
};

/// Parses the YAML text; relative file names are taken from `dir` (the
/// config file's directory, as exporter-toolkit does). Sets `error` (naming
/// the key) for an unknown key, a bad value, a setting GnuTLS cannot honour,
/// or a file that cannot be read.
web_config parse_web_config(std::string_view yaml, const std::string& dir, std::string& error);

/// Reads FILE (a regular file of at most 1 MiB, opened without blocking)
/// and parses it.
web_config read_web_config(const std::string& path, std::string& error);

/// Basic authentication against `users`: bcrypt through libxcrypt's crypt_rn,
/// compared in constant time, one hash at a time (a flood of guesses uses
/// one core), with the outcome of recent (user, password) pairs remembered
/// under a digest of the password so that a scrape every few seconds does not
/// pay a bcrypt each time.
class basic_auth {
public:
    explicit basic_auth(const std::map<std::string, std::string, std::less<>>& users);
    /// Whether the value of an Authorization header names a user whose
    /// password it carries.
    bool allows(const char* authorization);

private:
    const std::map<std::string, std::string, std::less<>>& users_;
    std::string decoy_;  ///< a hash verified for unknown users (same cost)
    std::mutex mu_;
    std::map<std::string, bool> seen_;  ///< digest of user, hash and password -> outcome
};

/// Base64 (RFC 4648, with padding) decoding; false on a bad character or length.
bool base64_decode(std::string_view in, std::string& out);

}  // namespace proctimes::cli::serve
