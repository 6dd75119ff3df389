// SPDX-License-Identifier: MIT
// Runs a check in a forked child, for process-wide state a test must not
// leave behind in the test process: resource limits, the SIGCHLD disposition,
// private mounts. The body returns "" when all is well, else what failed; the
// child reports it through a pipe and is killed by SIGALRM if it hangs.
#pragma once

#include <cerrno>
#include <functional>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proctimes/error.hpp"

namespace test_in_child {

struct outcome {
    int wait_status = -1;  // as waitpid(2) gives it
    std::string text;      // what the body returned
    [[nodiscard]] bool ok() const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && text.empty(); }
    [[nodiscard]] std::string why() const {
        if (WIFSIGNALED(wait_status)) return "child killed by signal " + std::to_string(WTERMSIG(wait_status));
        return text;
    }
};

inline outcome run(const std::function<std::string()>& body, unsigned timeout_s = 120) {
    outcome o;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) {
        o.text = "pipe failed";
        return o;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[0]);
        ::alarm(timeout_s);
        std::string r;
        try {
            r = body();
        } catch (...) {
            r = "exception";
        }
        (void)!::write(p[1], r.data(), r.size());
        ::_exit(0);
    }
    ::close(p[1]);
    char buf[512];
    ssize_t n;
    while ((n = ::read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) o.text.append(buf, static_cast<std::size_t>(n));
    ::close(p[0]);
    while (::waitpid(pid, &o.wait_status, 0) < 0 && errno == EINTR) {
    }
    return o;
}

/// Whether descriptor-exhaustion checks can run in this build. Under the
/// AddressSanitizer build (built with UndefinedBehaviorSanitizer too),
/// UBSan's vptr check probes memory through a pipe(2) of its own; with no
/// descriptor left it reports a false "invalid vptr" and the check fails for
/// the sanitizer's sake. Those tests run in the plain and ThreadSanitizer builds.
inline constexpr const char* descriptor_exhaustion_skip_reason =
#if defined(__SANITIZE_ADDRESS__)
    "UBSan's vptr check needs a pipe of its own: no descriptor left for it in this test";
#else
    nullptr;
#endif

/// Sets RLIMIT_NOFILE (soft and hard) so that exactly `free_fds` more
/// descriptors can be opened. Holes below a run of `free_fds` free numbers
/// are filled (with descriptors left open: for a forked child only).
inline bool leave_free_descriptors(int free_fds) {
    // Under UBSan, the first check of an object's dynamic type probes memory
    // through a pipe (the sanitizer runtime's own), which fails once the
    // descriptors are gone and then reports a valid object as one with an
    // invalid vptr. Check the library's error category once while
    // descriptors are free, so that later checks hit the runtime's cache.
    const std::error_code a = proctimes::make_error_code(proctimes::errc::no_such_process);
    const std::error_code b = proctimes::make_error_code(proctimes::errc::no_such_thread);
    if (a == b || a.category() != b.category()) return false;
    for (;;) {
        const int lowest = ::fcntl(0, F_DUPFD, 0);
        if (lowest < 0) return false;
        bool run_is_free = true;
        for (int fd = lowest + 1; fd < lowest + free_fds; ++fd)
            if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) run_is_free = false;
        if (!run_is_free) continue;  // keep `lowest` open: a filler
        ::close(lowest);
        const rlimit rl{static_cast<rlim_t>(lowest + free_fds), static_cast<rlim_t>(lowest + free_fds)};
        return ::setrlimit(RLIMIT_NOFILE, &rl) == 0;
    }
}

}  // namespace test_in_child
