// SPDX-License-Identifier: MIT
// The stub backend's calling process and thread (backend/backend.hpp). The ids are
// POSIX; the times are not known without a backend: errc::not_supported.
#include <unistd.h>

#include "backend/backend.hpp"
#include "clock_ns.hpp"

namespace proctimes::inline v1::detail {

pid_t self_process_id() noexcept { return ::getpid(); }
// A thread id is a platform concept; the stub has none to give.
pid_t self_thread_id() noexcept { return 0; }

result<process_times> self_process_times() noexcept { return make_error_code(errc::not_supported); }
result<thread_times> self_thread_times(bool) noexcept { return make_error_code(errc::not_supported); }

instant realtime_now() noexcept { return instant{std::chrono::nanoseconds{now_ns(CLOCK_REALTIME)}}; }

}  // namespace proctimes::inline v1::detail
