// SPDX-License-Identifier: MIT
// detail::reap_when_ended (spawn_gate.hpp): the reaping of a child nobody
// will wait for, on a thread of its own.
#include <atomic>
#include <cerrno>
#include <system_error>
#include <thread>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/spawn_gate.hpp"
#include "report.hpp"

namespace proctimes::inline v1::detail {
namespace {

// waitid(2) on a pidfd, retried on EINTR. 0 or -1 with errno.
long waitid_pidfd(int pidfd, siginfo_t& si, int flags) noexcept {
    long w;
    do {
        w = ::syscall(SYS_waitid, P_PIDFD, pidfd, &si, flags, nullptr);
    } while (w < 0 && errno == EINTR);
    return w;
}

// A child whose reaping could not be handed to a thread: said once per
// process on stderr, with its pid.
void report_unreaped(pid_t pid, const char* why) noexcept {
    static std::atomic<bool> once{false};
    (void)report_once(once,
                      "cannot start a thread to reap child %ld (%s): it stays a zombie until this process waits "
                      "for it or exits; later such children are not reported",
                      static_cast<long>(pid), why);
}

}  // namespace

void reap_when_ended(int pidfd, pid_t pid) noexcept {
    try {
        std::thread([pidfd] {
            siginfo_t si{};
            (void)waitid_pidfd(pidfd, si, WEXITED);
            ::close(pidfd);
        }).detach();
        return;
    } catch (const std::system_error& e) {
        // No thread (EAGAIN at a thread limit): reaped now if it has
        // already ended; otherwise it stays a zombie until this process
        // waits for any child or exits, and stderr says so once.
        siginfo_t si{};
        const bool ended = waitid_pidfd(pidfd, si, WEXITED | WNOHANG) == 0 && si.si_pid != 0;
        if (!ended) report_unreaped(pid, e.code().message().c_str());
    } catch (...) {
        report_unreaped(pid, "out of memory");
    }
    ::close(pidfd);
}

}  // namespace proctimes::inline v1::detail
