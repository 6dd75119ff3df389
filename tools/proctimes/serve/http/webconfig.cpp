// SPDX-License-Identifier: MIT
#include "serve/http/webconfig.hpp"

#include <algorithm>
#include <array>
#include <set>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <yaml-cpp/yaml.h>

#include "serve/files.hpp"

namespace proctimes::cli::serve {
namespace {

constexpr std::size_t max_file_bytes = std::size_t{1} << 20;

bool read_limited(const std::string& path, std::string& out, std::string& error, const char* key) {
    auto text = read_regular_file(path, max_file_bytes);
    if (!text) {
        error = std::string(key) + ": cannot read " + path + ": " +
                (text.error() == std::errc::file_too_large ? "larger than 1 MiB" : text.error().message());
        return false;
    }
    out = std::move(*text);
    return true;
}

// Refuses any key of map `n` outside `known`, naming it with `where`.
bool only_keys(const YAML::Node& n, std::initializer_list<std::string_view> known, const std::string& where,
               std::string& error) {
    if (!n.IsMap()) {
        error = where + ": expected a mapping";
        return false;
    }
    for (const auto& kv : n) {
        const auto key = kv.first.as<std::string>();
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            error = where;
            if (!error.empty()) error += '.';
            error += key;
            error += ": unknown key";
            return false;
        }
    }
    return true;
}

// A Go TLS 1.0-1.2 cipher suite as GnuTLS selects it: key exchange, cipher, MAC.
struct suite {
    const char *go, *kx, *cipher, *mac;
};
constexpr std::array<suite, 16> suites{{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
}};
// TLS 1.3 suites: Go accepts them in cipher_suites and ignores them.
constexpr std::array<const char*, 3> tls13_suites{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                                  "TLS_CHACHA20_POLY1305_SHA256"};

int version_rank(const std::string& v) {
    static const std::array<const char*, 4> names{"TLS10", "TLS11", "TLS12", "TLS13"};
    for (std::size_t i = 0; i < names.size(); ++i)
        if (v == names[i]) return static_cast<int>(i);
    return -1;
}

// GnuTLS chooses key exchange, cipher and MAC each from its own list, so a
// list of suites can be honoured only when every combination of their parts
// is itself in the list. Returns the priority items, or "" with `error`.
std::string suite_priorities(const std::vector<std::string>& names, bool tls13, std::string& error) {
    std::set<std::string> kx, ci, mac, want;
    for (const auto& n : names) {
        if (std::find(tls13_suites.begin(), tls13_suites.end(), n) != tls13_suites.end()) continue;
        const auto* s = std::find_if(suites.begin(), suites.end(), [&](const suite& x) { return n == x.go; });
        if (s == suites.end()) {
            error = "tls_server_config.cipher_suites: unknown or insecure cipher suite '" + n + "'";
            return {};
        }
        kx.insert(s->kx);
        ci.insert(s->cipher);
        mac.insert(s->mac);
        want.insert(std::string(s->kx) + "/" + s->cipher);
    }
    if (want.empty()) {
        error = "tls_server_config.cipher_suites: no TLS 1.2 suite listed";
        return {};
    }
    for (const auto& s : suites) {
        if (kx.count(s.kx) && ci.count(s.cipher) && mac.count(s.mac) &&
            !want.count(std::string(s.kx) + "/" + s.cipher)) {
            error = std::string(
                        "tls_server_config.cipher_suites: GnuTLS picks key exchange, cipher and MAC "
                        "separately, so this list would also allow ") +
                    s.go + "; add it or list suites whose parts combine only into each other";
            return {};
        }
    }
    if (tls13 && !mac.count("AEAD")) {
        error =
            "tls_server_config.cipher_suites: no AEAD (GCM, ChaCha20) suite, which TLS 1.3 needs here "
            "(GnuTLS applies the list to TLS 1.3 as well); add one or set max_version: TLS12";
        return {};
    }
    std::string p = ":-KX-ALL:-CIPHER-ALL:-MAC-ALL";
    for (const auto& k : kx) p += ":+" + k;
    for (const auto& c : ci) p += ":+" + c;
    for (const auto& m : mac) p += ":+" + m;
    return p;
}

std::string curve_priorities(const std::vector<std::string>& names, std::string& error) {
    static const std::map<std::string, const char*, std::less<>> groups = {{"CurveP256", "GROUP-SECP256R1"},
                                                                           {"CurveP384", "GROUP-SECP384R1"},
                                                                           {"CurveP521", "GROUP-SECP521R1"},
                                                                           {"X25519", "GROUP-X25519"}};
    std::string p = ":-GROUP-ALL";
    for (const auto& n : names) {
        const auto g = groups.find(n);
        if (g == groups.end()) {
            error = "tls_server_config.curve_preferences: unknown curve '" + n + "'";
            return {};
        }
        p += std::string(":+") + g->second;
    }
    return p;
}

std::vector<std::string> strings(const YAML::Node& n, const std::string& key, std::string& error) {
    std::vector<std::string> out;
    if (!n || n.IsNull()) return out;
    if (!n.IsSequence()) {
        error = key + ": expected a list of strings";
        return out;
    }
    for (const auto& e : n) {
        if (!e.IsScalar()) {
            error = key + ": expected a list of strings";
            return {};
        }
        out.push_back(e.as<std::string>());
    }
    return out;
}

std::string scalar(const YAML::Node& n, const std::string& key, std::string& error) {
    if (!n || n.IsNull()) return {};
    if (!n.IsScalar()) {
        error = key + ": expected a string";
        return {};
    }
    return n.as<std::string>();
}

std::string joined(const std::string& dir, const std::string& file) {
    if (file.empty() || file.front() == '/' || dir.empty()) return file;
    return dir + "/" + file;
}

// PEM text from `inline_key` or from the file `file_key` (exactly one may be given).
bool pem(const YAML::Node& t, const char* inline_key, const char* file_key, const std::string& dir, std::string& out,
         std::string& error) {
    std::string text = scalar(t[inline_key], std::string("tls_server_config.") + inline_key, error);
    std::string file = scalar(t[file_key], std::string("tls_server_config.") + file_key, error);
    if (!error.empty()) return false;
    if (!text.empty() && !file.empty()) {
        error = std::string("tls_server_config: both ") + inline_key + " and " + file_key + " are given";
        return false;
    }
    if (!file.empty())
        return read_limited(joined(dir, file), out, error, (std::string("tls_server_config.") + file_key).c_str());
    out = std::move(text);
    return true;
}

bool parse_tls(const YAML::Node& t, const std::string& dir, web_config& c, std::string& error) {
    if (!only_keys(t,
                   {"cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type", "client_ca_file",
                    "client_allowed_sans", "min_version", "max_version", "cipher_suites", "prefer_server_cipher_suites",
                    "curve_preferences"},
                   "tls_server_config", error))
        return false;
    if (t["client_allowed_sans"] && !t["client_allowed_sans"].IsNull()) {
        error =
            "tls_server_config.client_allowed_sans: not supported (client certificates are verified "
            "against client_ca_file only)";
        return false;
    }
    if (!pem(t, "cert", "cert_file", dir, c.cert_pem, error) || !pem(t, "key", "key_file", dir, c.key_pem, error) ||
        !pem(t, "client_ca", "client_ca_file", dir, c.client_ca_pem, error))
        return false;
    const std::string auth = scalar(t["client_auth_type"], "tls_server_config.client_auth_type", error);
    if (!error.empty()) return false;
    c.tls = !c.cert_pem.empty() || !c.key_pem.empty() || !c.client_ca_pem.empty() || !auth.empty();
    if (!c.tls) return true;
    if (c.cert_pem.empty()) return error = "tls_server_config: missing one of cert or cert_file", false;
    if (c.key_pem.empty()) return error = "tls_server_config: missing one of key or key_file", false;
    if (auth.empty() || auth == "NoClientCert")
        c.auth = client_auth::none;
    else if (auth == "RequestClientCert")
        c.auth = client_auth::request;
    else if (auth == "RequireAnyClientCert" || auth == "RequireClientCert")
        c.auth = client_auth::require_any;
    else if (auth == "VerifyClientCertIfGiven")
        c.auth = client_auth::verify_if_given;
    else if (auth == "RequireAndVerifyClientCert")
        c.auth = client_auth::require_and_verify;
    else
        return error = "tls_server_config.client_auth_type: invalid '" + auth + "'", false;
    if (!c.client_ca_pem.empty() && c.auth == client_auth::none)
        return error = "tls_server_config: client CAs are configured without a client_auth_type", false;
    if ((c.auth == client_auth::verify_if_given || c.auth == client_auth::require_and_verify) &&
        c.client_ca_pem.empty())
        return error = "tls_server_config.client_auth_type: " + auth + " needs client_ca_file or client_ca", false;

    const std::string minv = scalar(t["min_version"], "tls_server_config.min_version", error);
    const std::string maxv = scalar(t["max_version"], "tls_server_config.max_version", error);
    if (!error.empty()) return false;
    const int lo = minv.empty() ? 2 : version_rank(minv), hi = maxv.empty() ? 3 : version_rank(maxv);
    if (lo < 0) return error = "tls_server_config.min_version: unknown TLS version '" + minv + "'", false;
    if (hi < 0) return error = "tls_server_config.max_version: unknown TLS version '" + maxv + "'", false;
    if (lo > hi) return error = "tls_server_config: min_version is above max_version", false;
    static const std::array<const char*, 4> vers{"VERS-TLS1.0", "VERS-TLS1.1", "VERS-TLS1.2", "VERS-TLS1.3"};
    c.priorities = "NORMAL:-VERS-ALL";
    for (int v = hi; v >= lo; --v) c.priorities += std::string(":+") + vers[static_cast<std::size_t>(v)];
    const auto names = strings(t["cipher_suites"], "tls_server_config.cipher_suites", error);
    if (!error.empty()) return false;
    if (!names.empty()) {
        c.priorities += suite_priorities(names, hi == 3, error);
        if (!error.empty()) return false;
    }
    const auto curves = strings(t["curve_preferences"], "tls_server_config.curve_preferences", error);
    if (!error.empty()) return false;
    if (!curves.empty()) {
        c.priorities += curve_priorities(curves, error);
        if (!error.empty()) return false;
    }
    const YAML::Node pref = t["prefer_server_cipher_suites"];
    if (!pref || pref.IsNull() || pref.as<bool>()) c.priorities += ":%SERVER_PRECEDENCE";

    // Checked now, so that a bad file is a usage error naming it rather than
    // a server that does not start.
    gnutls_priority_t prio = nullptr;
    const char* at = nullptr;
    if (::gnutls_priority_init(&prio, c.priorities.c_str(), &at) < 0)
        return error = "tls_server_config: GnuTLS refuses the priority string " + c.priorities, false;
    ::gnutls_priority_deinit(prio);
    gnutls_certificate_credentials_t cred = nullptr;
    ::gnutls_certificate_allocate_credentials(&cred);
    const gnutls_datum_t cd{reinterpret_cast<unsigned char*>(c.cert_pem.data()),
                            static_cast<unsigned>(c.cert_pem.size())};
    const gnutls_datum_t kd{reinterpret_cast<unsigned char*>(c.key_pem.data()),
                            static_cast<unsigned>(c.key_pem.size())};
    int rc = ::gnutls_certificate_set_x509_key_mem(cred, &cd, &kd, GNUTLS_X509_FMT_PEM);
    if (rc < 0) error = std::string("tls_server_config: the certificate and key do not load: ") + ::gnutls_strerror(rc);
    if (error.empty() && !c.client_ca_pem.empty()) {
        const gnutls_datum_t ca{reinterpret_cast<unsigned char*>(c.client_ca_pem.data()),
                                static_cast<unsigned>(c.client_ca_pem.size())};
        rc = ::gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
        if (rc <= 0) error = "tls_server_config: no CA certificate in client_ca_file or client_ca";
    }
    ::gnutls_certificate_free_credentials(cred);
    return error.empty();
}

bool parse_http(const YAML::Node& h, web_config& c, std::string& error) {
    if (!only_keys(h, {"http2", "headers"}, "http_server_config", error)) return false;
    const YAML::Node hd = h["headers"];
    if (!hd || hd.IsNull()) return true;
    if (!hd.IsMap()) return error = "http_server_config.headers: expected a mapping", false;
    // exporter-toolkit's list, with the values it allows where it restricts them.
    static const std::map<std::string, std::vector<std::string>, std::less<>> allowed = {
        {"Strict-Transport-Security", {}},
        {"X-Content-Type-Options", {"nosniff"}},
        {"X-Frame-Options", {"deny", "sameorigin"}},
        {"X-XSS-Protection", {}},
        {"Content-Security-Policy", {}}};
    for (const auto& kv : hd) {
        const auto name = kv.first.as<std::string>();
        const auto a = allowed.find(name);
        if (a == allowed.end())
            return error = "http_server_config.headers." + name + ": header cannot be configured", false;
        if (!kv.second.IsScalar()) return error = "http_server_config.headers." + name + ": expected a string", false;
        const auto value = kv.second.as<std::string>();
        if (!a->second.empty() && std::find(a->second.begin(), a->second.end(), value) == a->second.end())
            return error = "http_server_config.headers." + name, error += ": invalid value '", error += value,
                   error += '\'', false;
        if (value.find_first_of("\r\n") != std::string::npos)
            return error = "http_server_config.headers." + name + ": a line break in the value", false;
        if (!value.empty()) c.headers.emplace_back(name, value);
    }
    return true;
}

// A bcrypt hash as Go's bcrypt.Cost accepts it: $2a$, $2b$ or $2y$, a cost
// of two digits from 04 to 31, and 53 characters of salt and hash.
bool bcrypt_hash(const std::string& h) {
    if (h.size() != 60 || h[0] != '$' || h[1] != '2' || (h[2] != 'a' && h[2] != 'b' && h[2] != 'y') || h[3] != '$' ||
        h[6] != '$')
        return false;
    if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9') return false;
    const int cost = (h[4] - '0') * 10 + (h[5] - '0');
    return cost >= 4 && cost <= 31;
}

}  // namespace

outcome<web_config> parse_web_config(std::string_view yaml, const std::string& dir) {
    web_config c;
    std::string error;
    try {
        const YAML::Node root = YAML::Load(std::string(yaml));
        if (!root || root.IsNull()) return c;
        if (!only_keys(root, {"tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"}, "", error))
            return {error_kind::config, std::move(error)};
        if (root["rate_limit"] && !root["rate_limit"].IsNull())
            return {error_kind::config, "rate_limit: not supported (see --max-connections-per-ip)"};
        if (const YAML::Node t = root["tls_server_config"]; t && !t.IsNull() && !parse_tls(t, dir, c, error))
            return {error_kind::tls, std::move(error)};
        if (const YAML::Node h = root["http_server_config"]; h && !h.IsNull() && !parse_http(h, c, error))
            return {error_kind::config, std::move(error)};
        if (const YAML::Node u = root["basic_auth_users"]; u && !u.IsNull()) {
            if (!u.IsMap()) return {error_kind::config, "basic_auth_users: expected a mapping of user to bcrypt hash"};
            for (const auto& kv : u) {
                const auto user = kv.first.as<std::string>();
                if (!kv.second.IsScalar() || !bcrypt_hash(kv.second.as<std::string>()))
                    return {error_kind::config,
                            "basic_auth_users." + user + ": not a bcrypt hash ($2a$, $2b$ or $2y$)"};
                c.users.emplace(user, kv.second.as<std::string>());
            }
        }
    } catch (const std::exception& e) {  // yaml-cpp's parse and conversion errors, with their line
        return {error_kind::config, e.what()};
    }
    return c;
}

outcome<web_config> read_web_config(const std::string& path) {
    std::string text, error;
    if (!read_limited(path, text, error, "--web-config")) return {error_kind::config, std::move(error)};
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : slash == 0 ? "/" : path.substr(0, slash);
    auto c = parse_web_config(text, dir);
    if (!c) return {c.error().kind, path + ": " + c.error().message};
    return c;
}

}  // namespace proctimes::cli::serve
