// SPDX-License-Identifier: MIT
// The windows backend's exit records (src/backend/backend.hpp: exit_backend).
// The switches themselves are portable (src/exit/settings.cpp); there is no
// exit monitor to switch here: an open handle keeps an ended process or
// thread readable, with its final values and exit time, so nothing is lost
// while nobody watches, and nothing needs reaping; waiters record the end.
// Exit records (taskstats, eBPF) and the system-wide exit stream are
// Linux's: not_supported (no_exit_records).
#include "backend/backend.hpp"

namespace proctimes::inline v1::detail {

exit_backend& platform_exit_backend() noexcept { return no_exit_records::instance(); }

}  // namespace proctimes::inline v1::detail
