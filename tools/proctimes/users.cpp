// SPDX-License-Identifier: MIT
#include "users.hpp"

#include <cerrno>
#include <charconv>
#include <vector>

#include <pwd.h>

namespace proctimes::cli {

namespace {
constexpr uid_t unknown_uid = static_cast<uid_t>(-1);
constexpr std::size_t max_buffer = std::size_t{1} << 20;
}  // namespace

std::optional<uid_t> user_argument(const std::string& s) {
    passwd pw{};
    passwd* res = nullptr;
    std::vector<char> buf(4096);
    int rc = 0;
    while ((rc = ::getpwnam_r(s.c_str(), &pw, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < max_buffer)
        buf.resize(buf.size() * 2);
    if (rc == 0 && res) return res->pw_uid;
    unsigned long v = 0;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (!s.empty() && ec == std::errc{} && p == end && v < unknown_uid) return static_cast<uid_t>(v);
    return std::nullopt;
}

const std::string& user_names::name(uid_t uid) {
    if (auto it = cache_.find(uid); it != cache_.end()) return it->second;
    std::string n;
    if (uid == unknown_uid) {
        n = "?";
    } else {
        passwd pw{};
        passwd* res = nullptr;
        std::vector<char> buf(4096);
        int rc = 0;
        while ((rc = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < max_buffer)
            buf.resize(buf.size() * 2);
        n = (rc == 0 && res) ? std::string(res->pw_name) : std::to_string(uid);
    }
    return cache_.emplace(uid, std::move(n)).first->second;
}

}  // namespace proctimes::cli
