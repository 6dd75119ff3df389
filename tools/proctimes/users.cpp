// SPDX-License-Identifier: MIT
#include "users.hpp"

#include <charconv>

#include "system.hpp"

namespace proctimes::cli {

namespace {
constexpr user_id unknown_uid = static_cast<user_id>(-1);
}  // namespace

std::optional<user_id> user_argument(const std::string& s) {
    if (auto uid = sys::user_by_name(s)) return uid;
    unsigned long v = 0;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, v);
    if (!s.empty() && ec == std::errc{} && p == end && v < unknown_uid) return static_cast<user_id>(v);
    return std::nullopt;
}

const std::string& user_names::name(user_id uid) {
    if (auto it = cache_.find(uid); it != cache_.end()) return it->second;
    std::string n;
    if (uid == unknown_uid) {
        n = "?";
    } else {
        n = sys::user_name(uid).value_or(std::to_string(uid));
    }
    return cache_.emplace(uid, std::move(n)).first->second;
}

}  // namespace proctimes::cli
