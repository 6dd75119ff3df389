// SPDX-License-Identifier: MIT
// Basic authentication of the web config: bcrypt hashes checked by
// libxcrypt (crypt_rn understands $2a$, $2b$ and $2y$).
#include <crypt.h>

#include <array>
#include <cstring>
#include <random>

#include <gnutls/crypto.h>

#include "serve/webconfig.hpp"

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

basic_auth::basic_auth(const std::map<std::string, std::string, std::less<>>& users) : users_(users) {
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
}

bool basic_auth::allows(const char* authorization) {
    if (authorization == nullptr) return false;
    std::string_view v(authorization);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    if (v.size() < 6 || strncasecmp(v.data(), "basic ", 6) != 0) return false;
    v.remove_prefix(6);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    std::string plain;
    if (v.size() > 4096 || !base64_decode(v, plain)) return false;
    const auto colon = plain.find(':');
    if (colon == std::string::npos) return false;
    const std::string user = plain.substr(0, colon), password = plain.substr(colon + 1);
    ::explicit_bzero(plain.data(), plain.size());
    if (password.find('\0') != std::string::npos) return false;  // crypt reads up to a NUL
    const auto u = users_.find(user);
    const std::string& hash = u != users_.end() ? u->second : decoy_;
    if (hash.empty()) return false;
    const std::string key = sha256(user + '\0' + hash + '\0' + password);
    std::lock_guard lk(mu_);  // one bcrypt at a time: guesses use one core at most
    if (!key.empty()) {
        if (const auto s = seen_.find(key); s != seen_.end()) return s->second && u != users_.end();
    }
    const bool ok = bcrypt_matches(hash, password) && u != users_.end();
    if (!key.empty()) {
        if (seen_.size() >= 256) seen_.clear();
        seen_.emplace(key, ok);
    }
    return ok;
}

}  // namespace proctimes::cli::serve
