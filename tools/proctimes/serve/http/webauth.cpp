// SPDX-License-Identifier: MIT
// Basic authentication of the web config: bcrypt hashes checked by
// libxcrypt (crypt_rn understands $2a$, $2b$ and $2y$).
#include <crypt.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>

#include <gnutls/crypto.h>

#include "serve/http/webconfig.hpp"

namespace proctimes::cli::serve {
namespace {

// Equal in time that depends only on the lengths.
bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    unsigned char d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d |= static_cast<unsigned char>(a[i] ^ b[i]);
    return d == 0;
}

bool bcrypt_matches(const std::string& hash, const std::string& password) {
    crypt_data data{};
    const char* out = ::crypt_rn(password.c_str(), hash.c_str(), &data, sizeof data);
    const bool ok = out != nullptr && out[0] != '*' && same(out, hash);
    ::explicit_bzero(&data, sizeof data);
    return ok;
}

std::string sha256(const std::string& in) {
    std::array<unsigned char, 32> d{};
    if (::gnutls_hash_fast(GNUTLS_DIG_SHA256, in.data(), in.size(), d.data()) < 0) return {};
    return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace

bool base64_decode(std::string_view in, std::string& out) {
    out.clear();
    if (in.size() % 4 != 0) return false;
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    for (std::size_t i = 0; i < in.size(); i += 4) {
        const bool last = i + 4 == in.size();
        const int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=' && in[i + 3] == '=') : 0;
        int v[4];
        for (int k = 0; k < 4 - pad; ++k)
            if ((v[k] = val(in[i + static_cast<std::size_t>(k)])) < 0) return false;
        for (int k = 4 - pad; k < 4; ++k) v[k] = 0;
        const unsigned n = (static_cast<unsigned>(v[0]) << 18) | (static_cast<unsigned>(v[1]) << 12) |
                           (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
        out.push_back(static_cast<char>((n >> 16) & 0xff));
        if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xff));
        if (pad < 1) out.push_back(static_cast<char>(n & 0xff));
    }
    return true;
}

basic_auth::basic_auth(const std::map<std::string, std::string, std::less<>>& users, std::size_t max_pending)
    : users_(users), max_pending_(std::max<std::size_t>(1, max_pending)) {
    // The hash an unknown user's password is checked against, so that a
    // wrong user name costs the time a wrong password does. Its cost is the
    // largest of the configured ones.
    int cost = 10;
    for (const auto& [u, h] : users) cost = std::max(cost, (h[4] - '0') * 10 + (h[5] - '0'));
    std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> salt{};
    if (::crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, salt.data(),
                           static_cast<int>(salt.size())) != nullptr) {
        crypt_data data{};
        std::random_device rd;
        const std::string secret = std::to_string(rd()) + std::to_string(rd());
        if (const char* h = ::crypt_rn(secret.c_str(), salt.data(), &data, sizeof data); h && h[0] != '*') decoy_ = h;
    }
    thread_ = std::thread([this] { run(); });
}

basic_auth::~basic_auth() { stop(); }

basic_auth::lookup_result basic_auth::lookup(const char* authorization) {
    lookup_result r;  // known, denied
    if (authorization == nullptr) return r;
    std::string_view v(authorization);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    if (v.size() < 6 || strncasecmp(v.data(), "basic ", 6) != 0) return r;
    v.remove_prefix(6);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    std::string plain;
    if (v.size() > 4096 || !base64_decode(v, plain)) return r;
    const auto colon = plain.find(':');
    if (colon == std::string::npos) return r;
    const std::string user = plain.substr(0, colon);
    std::string password = plain.substr(colon + 1);
    ::explicit_bzero(plain.data(), plain.size());
    if (password.find('\0') != std::string::npos) return r;  // crypt reads up to a NUL
    const auto u = users_.find(user);
    const std::string& hash = u != users_.end() ? u->second : decoy_;
    if (hash.empty()) return r;
    std::string key = sha256(user + '\0' + hash + '\0' + password);
    if (!key.empty()) {
        std::lock_guard lk(cache_mu_);
        if (good_.count(key)) return {true, verdict::allowed, {}};
        if (bad_.count(key)) return r;
    }
    r.known = false;
    r.t = {std::move(key), hash, std::move(password), u != users_.end()};
    return r;
}

void basic_auth::remember(const std::string& key, bool ok) {
    if (key.empty()) return;
    std::lock_guard lk(cache_mu_);
    // Apart, so that a flood of new wrong passwords never makes a good
    // pair be forgotten (a user has one good password: `good_` stays small).
    auto& set = ok ? good_ : bad_;
    if (set.size() >= (ok ? 256u : 1024u)) set.clear();
    set.insert(key);
}

void basic_auth::submit(lookup_result::ticket t, done_fn done) {
    {
        std::lock_guard lk(queue_mu_);
        if (!stopping_ && queue_.size() + (hashing_ ? 1 : 0) < max_pending_) {
            queue_.push_back({std::move(t), std::move(done)});
            queue_cv_.notify_one();
            return;
        }
    }
    ::explicit_bzero(t.password.data(), t.password.size());
    done(verdict::busy);
}

void basic_auth::run() {
    std::unique_lock lk(queue_mu_);
    for (;;) {
        queue_cv_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        job j = std::move(queue_.front());
        queue_.pop_front();
        running_ = std::move(j.done);
        hashing_ = true;
        lk.unlock();
        // Asked again in the meantime (a scraper's retries): no second hash.
        bool ok = false, known = false;
        if (!j.t.key.empty()) {
            std::lock_guard c(cache_mu_);
            if (good_.count(j.t.key))
                known = ok = true;
            else if (bad_.count(j.t.key))
                known = true;
        }
        if (!known) {
            ok = bcrypt_matches(j.t.hash, j.t.password) && j.t.user_known;
            remember(j.t.key, ok);
        }
        ::explicit_bzero(j.t.password.data(), j.t.password.size());
        lk.lock();
        hashing_ = false;
        done_fn done = std::move(running_);
        running_ = nullptr;
        if (done) {  // else stop() has answered it
            lk.unlock();
            done(ok ? verdict::allowed : verdict::denied);
            lk.lock();
        }
    }
}

void basic_auth::stop() {
    std::vector<done_fn> waiting;
    {
        std::lock_guard lk(queue_mu_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
        for (auto& j : queue_) {
            ::explicit_bzero(j.t.password.data(), j.t.password.size());
            waiting.push_back(std::move(j.done));
        }
        queue_.clear();
        if (running_) waiting.push_back(std::move(running_));
        running_ = nullptr;
        queue_cv_.notify_all();
    }
    for (auto& d : waiting) d(verdict::denied);
    if (thread_.joinable()) thread_.join();
}

}  // namespace proctimes::cli::serve
