// SPDX-License-Identifier: MIT
// proctimes/settings.hpp — the environment variables the library reads, and
// the values of them it refused (docs/API.md, "Environment variables").
//
// Every on/off variable takes 1, on, true, yes or 0, off, false, no (any
// case); an empty value is the same as unset. A value the library refuses
// leaves its setting at the default, as if the variable were unset, and is
// listed by setting_problems(), so that a program (proctimes doctor, a
// service's start-up log) can say so instead of going on with a setting the
// user did not get.
#pragma once

#include <string>
#include <vector>

#include "proctimes/export.h"

namespace proctimes::inline v1 {

/// A variable of the environment whose value the library refuses.
struct setting_problem {
    std::string variable;  ///< e.g. "PROCTIMES_EXIT_RECORDS"
    std::string value;     ///< the refused value, as set
    std::string expected;  ///< what it would accept, e.g. "1/on/true/yes or 0/off/false/no"
};

/// Reads every variable of the table now and returns those whose values are
/// refused (empty when none is). Throws std::bad_alloc only.
PROCTIMES_API std::vector<setting_problem> setting_problems();

}  // namespace proctimes::inline v1
