// SPDX-License-Identifier: MIT
// The Prometheus exporter-toolkit web configuration (`-web.config.file`,
// `--web-config`): TLS through libmicrohttpd's GnuTLS, basic authentication
// with bcrypt hashes (libxcrypt), and extra response headers.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "serve/error.hpp"

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
/// config file's directory, as exporter-toolkit does). Errors (naming the
/// key): error_kind::tls for anything of tls_server_config (a bad value, a
/// setting GnuTLS cannot honour, a certificate or key file that cannot be
/// read or loaded), error_kind::config for any other key or value.
outcome<web_config> parse_web_config(std::string_view yaml, const std::string& dir);

/// Reads FILE (a regular file of at most 1 MiB, opened without blocking)
/// and parses it; the message of an error starts with FILE.
outcome<web_config> read_web_config(const std::string& path);

/// Basic authentication against `users`: bcrypt through libxcrypt's crypt_rn,
/// compared in constant time. The outcome of (user, password) pairs already
/// checked is remembered under a SHA-256 digest, and looked up without waiting
/// for any hash: a scraper whose credentials passed once is answered at once
/// however many new guesses are being hashed. Hashes run on one thread of
/// their own, one at a time (a flood of guesses uses one core and no HTTP
/// worker), from a queue of at most `max_pending`; a request beyond it is told
/// `busy` at once.
class basic_auth {
public:
    enum class verdict { allowed, denied, busy };
    /// What a header needs: a verdict at once, or a hash (`ticket`).
    struct lookup_result {
        bool known = true;  ///< false: submit the ticket
        verdict v = verdict::denied;
        struct ticket {
            std::string key, hash, password;
            bool user_known = false;
        } t;
    };
    using done_fn = std::function<void(verdict)>;

    explicit basic_auth(const std::map<std::string, std::string, std::less<>>& users, std::size_t max_pending = 8);
    ~basic_auth();
    basic_auth(const basic_auth&) = delete;
    basic_auth& operator=(const basic_auth&) = delete;

    /// Decides from the value of an Authorization header and the remembered
    /// outcomes alone; never waits for a hash.
    lookup_result lookup(const char* authorization);
    /// Queues the hash of `t`; `done` is called exactly once: from the
    /// hashing thread with the outcome, at once with `busy` when the queue is
    /// full, or with `denied` by stop().
    void submit(lookup_result::ticket t, done_fn done);
    /// Ends every waiting check as `denied` and joins the hashing thread
    /// (after the hash it may be running).
    void stop();

private:
    struct job {
        lookup_result::ticket t;
        done_fn done;
    };
    void remember(const std::string& key, bool ok);
    void run();

    const std::map<std::string, std::string, std::less<>>& users_;
    std::string decoy_;  ///< a hash verified for unknown users (same cost)
    const std::size_t max_pending_;
    std::mutex cache_mu_;               ///< held for map look-ups only, never during a hash
    std::set<std::string> good_, bad_;  ///< digests of user, hash and password
    std::mutex queue_mu_;
    std::condition_variable queue_cv_;
    std::deque<job> queue_;
    done_fn running_;  ///< the caller of the hash under way
    bool hashing_ = false, stopping_ = false;
    std::thread thread_;
};

/// Base64 (RFC 4648, with padding) decoding; false on a bad character or length.
bool base64_decode(std::string_view in, std::string& out);

}  // namespace proctimes::cli::serve
