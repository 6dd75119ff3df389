// SPDX-License-Identifier: MIT
#include "report.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace proctimes::inline v1::detail {

bool report_once(std::atomic<bool>& once, const char* format, ...) noexcept {
    if (once.exchange(true, std::memory_order_relaxed)) return false;
    char line[448] = "proctimes: ";
    const std::size_t head = std::strlen(line);
    std::va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line + head, 401, format, args);
    va_end(args);
    std::size_t len = head + (n < 0 ? 0 : n > 400 ? 400 : static_cast<std::size_t>(n));
    line[len++] = '\n';
    (void)std::fwrite(line, 1, len, stderr);
    return true;
}

}  // namespace proctimes::inline v1::detail
