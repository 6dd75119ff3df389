// SPDX-License-Identifier: MIT
// tools/proctimes/users.hpp — users as the command names them: a --user
// argument (a name or a decimal uid), and a uid's name for output.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

#include "proctimes/times.hpp"

namespace proctimes::cli {

/// --user: a user name from the password database, or a decimal uid. Empty
/// when it is neither (or is the reserved uid (user_id)-1). On Windows,
/// which has no uids, only a decimal number is one.
std::optional<user_id> user_argument(const std::string& s);

/// uid → user name from the password database, once per uid; the uid in
/// decimal when it has none, "?" for the unknown uid. References returned
/// stay valid while the object lives. One thread at a time.
class user_names {
public:
    const std::string& name(user_id uid);

private:
    std::unordered_map<user_id, std::string> cache_;
};

}  // namespace proctimes::cli
