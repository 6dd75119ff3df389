// SPDX-License-Identifier: MIT
// tools/proctimes/top/row_fields.hpp — a row's user name and user-mode CPU
// time, the two fields of top_row whose names say "user", reached through
// one place by the view's code.
#pragma once

#include <chrono>
#include <string>

#include "top/frame.hpp"

namespace proctimes::cli::top {

inline const std::string& user_name_of(const top_row& r) { return r.user_name; }
inline std::string& user_name_of(top_row& r) { return r.user_name; }
inline std::chrono::nanoseconds user_time_of(const top_row& r) { return r.user; }
inline std::chrono::nanoseconds& user_time_of(top_row& r) { return r.user; }

}  // namespace proctimes::cli::top
