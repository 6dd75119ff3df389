// SPDX-License-Identifier: MIT
// proctimes::child and the wait functions.
#include "proctimes/spawn.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "clock_ns.hpp"
#include "linux/spawn_gate.hpp"
#include "linux/task.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/linux.hpp"

extern char** environ;

namespace proctimes::inline v1 {

using detail::unique_fd;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

namespace {

// poll(2) on pidfds; timeout empty = forever. Returns the number ready.
// A signal handler interrupts ppoll with EINTR; the wait then resumes for
// what is left until a deadline on the monotonic clock, so that signals
// arriving more often than the timeout never stretch the wait.
result<int> poll_pidfds(pollfd* fds, std::size_t n, std::optional<nanoseconds> timeout) noexcept {
    std::int64_t deadline = -1;  // CLOCK_MONOTONIC ns; -1: forever
    if (timeout) {
        const std::int64_t t = std::max(timeout->count(), std::int64_t{0});
        const std::int64_t now = detail::now_ns(CLOCK_MONOTONIC);
        // Beyond what the clock can reach (child::wait's nanoseconds::max()): forever.
        if (now >= 0 && t <= std::numeric_limits<std::int64_t>::max() - now) deadline = now + t;
    }
    for (;;) {
        timespec ts{};
        timespec* tp = nullptr;
        if (deadline >= 0) {
            const std::int64_t left = std::max(deadline - detail::now_ns(CLOCK_MONOTONIC), std::int64_t{0});
            ts.tv_sec = static_cast<time_t>(left / 1'000'000'000);
            ts.tv_nsec = static_cast<long>(left % 1'000'000'000);
            tp = &ts;
        }
        const int r = ::ppoll(fds, n, tp, nullptr);
        if (r >= 0) return r;
        if (errno != EINTR) return detail::last_errno();
    }
}

bool is_regular_executable(const std::string& path) noexcept {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Resolves the program through PATH in the parent, so that the child only
// calls execve (async-signal-safe). Returns "" when nothing by that name exists.
std::string resolve_program(const std::string& name, bool search) {
    if (!search || name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    std::string first_found;
    while (start <= dirs.size()) {
        const auto colon = dirs.find(':', start);
        std::string_view dir = std::string_view(dirs).substr(start, colon == std::string::npos ? colon : colon - start);
        if (dir.empty()) dir = ".";  // an empty PATH entry is the current directory
        std::string candidate;
        candidate.reserve(dir.size() + 1 + name.size());
        candidate.append(dir).append(1, '/').append(name);
        if (is_regular_executable(candidate)) return candidate;
        if (first_found.empty() && ::access(candidate.c_str(), F_OK) == 0) first_found = candidate;
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    // Not found as executable: exec the first existing one to get EACCES, else ENOENT.
    return first_found;
}

[[noreturn]] void child_fail(int pipe_fd, int err) noexcept {
    (void)!::write(pipe_fd, &err, sizeof err);
    ::_exit(127);
}

// waitid(2) on a pidfd, retried on EINTR. 0 or -1 with errno.
long waitid_pidfd(int pidfd, siginfo_t& si, rusage* ru, int flags = WEXITED) noexcept {
    long w;
    do {
        w = ::syscall(SYS_waitid, P_PIDFD, pidfd, &si, flags, ru);
    } while (w < 0 && errno == EINTR);
    return w;
}

exit_status status_of(const siginfo_t& si) noexcept {
    exit_status st;
    if (si.si_code == CLD_EXITED) {
        st.code = si.si_status;
    } else {
        st.signal = si.si_status;
        st.core_dumped = si.si_code == CLD_DUMPED;
    }
    return st;
}

// What waitid alone tells about a reaped child whose own values could not be
// read (spawn.hpp, child_exit::times_error): its rusage covers it and the
// descendants it waited for, undivided.
child_exit from_rusage_only(const siginfo_t& si, const rusage& ru, instant created, nanoseconds created_res,
                            instant seen, std::error_code why) noexcept {
    child_exit e;
    e.status = status_of(si);
    e.times_error = why;
    e.max_rss_kib = ru.ru_maxrss;
    auto& t = e.times;
    t.creation = created;
    t.exit = seen;
    t.kernel = detail::to_ns(ru.ru_stime);
    t.user = detail::to_ns(ru.ru_utime);
    t.precision.resolution = microseconds{1};
    t.precision.total_resolution = microseconds{1};
    t.precision.creation_resolution = created_res;
    t.precision.source = cpu_source::wait_rusage;
    t.state = task_state::exited;
    t.sampled_at = seen;
    return e;
}

}  // namespace

void child::release() noexcept {
    if (process_.valid() && !result_) detail::handle_access::release_child(process_);
    if (pidfd_ < 0) return;
    const int fd = std::exchange(pidfd_, -1);
    if (result_) {
        ::close(fd);
        return;
    }
    // A child without a handle that nobody waited for: the exit monitor
    // cannot watch it (it has no /proc descriptors), so a thread of its own
    // reaps it when it exits, and the destructor does not block.
    detail::reap_when_ended(fd, pid_);
}

result<child> child::spawn(const spawn_options& o) noexcept { return spawn_impl(o, nullptr); }

result<child> child::spawn_impl(const spawn_options& o, detail::spawn_gate* gate) noexcept {
    if (o.argv.empty() || o.argv[0].empty()) return errc::invalid_argument;
    static constexpr const char* bin_sh = "/bin/sh";
    std::string program;
    std::vector<char*> argv, envp, sh_argv;
    try {
        program = o.program.empty() ? resolve_program(o.argv[0], true) : o.program;
        if (!program.empty() && program[0] != '/' && !o.working_directory.empty()) {
            // The child changes directory before exec: anchor a relative path
            // to this process's directory, where the caller meant it.
            char cwd[4096];
            if (!::getcwd(cwd, sizeof cwd)) return detail::last_errno();
            std::string absolute(cwd);
            absolute.append(1, '/').append(program);
            program = std::move(absolute);
        }
        for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        if (o.run_scripts_with_sh) {
            // As execvp(3) runs a file the kernel refuses with ENOEXEC:
            // /bin/sh FILE ARGS..., built here so that the child only execs.
            sh_argv.push_back(const_cast<char*>(bin_sh));
            sh_argv.push_back(const_cast<char*>(program.c_str()));
            for (std::size_t i = 1; i < o.argv.size(); ++i) sh_argv.push_back(const_cast<char*>(o.argv[i].c_str()));
            sh_argv.push_back(nullptr);
        }
        if (o.environment) {
            for (const auto& e : *o.environment) envp.push_back(const_cast<char*>(e.c_str()));
            envp.push_back(nullptr);
        }
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    if (program.empty()) return detail::errno_code(ENOENT);
    char* const* env = o.environment ? envp.data() : environ;

    int errpipe[2];
    if (::pipe2(errpipe, O_CLOEXEC) != 0) return detail::last_errno();
    unique_fd err_read{errpipe[0]}, err_write{errpipe[1]};
    int gatepipe[2] = {-1, -1};
    if (gate && ::pipe2(gatepipe, O_CLOEXEC) != 0) return detail::last_errno();
    unique_fd gate_read{gatepipe[0]}, gate_write{gatepipe[1]};

    // Block every signal around the clone: the child must not run this
    // process's handlers before exec.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);

    int pidfd = -1;
    clone_args args{};
    args.flags = CLONE_PIDFD;
    args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
    args.exit_signal = SIGCHLD;
    const instant clone_before = detail::realtime_now();
    const long pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) {
        // The child: only async-signal-safe calls from here on.
        for (int sig = 1; sig < NSIG; ++sig) {
            struct sigaction sa {};
            if (::sigaction(sig, nullptr, &sa) != 0 || sa.sa_handler == SIG_DFL) continue;
            if (sa.sa_handler == SIG_IGN && !o.default_signals) continue;  // exec keeps it ignored
            sa.sa_handler = SIG_DFL;
            sa.sa_flags = 0;
            ::sigaction(sig, &sa, nullptr);
        }
        if (o.default_signals) {
            sigset_t none;
            ::sigemptyset(&none);
            ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
        } else {
            ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        }
        if (o.new_process_group && ::setpgid(0, 0) != 0) child_fail(errpipe[1], errno);
        if (o.open_files_soft_limit) {
            rlimit rl{};
            if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) child_fail(errpipe[1], errno);
            rl.rlim_cur = static_cast<rlim_t>(*o.open_files_soft_limit);
            if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) child_fail(errpipe[1], errno);
        }
        const int fds[3] = {o.stdin_fd, o.stdout_fd, o.stderr_fd};
        for (int i = 0; i < 3; ++i) {
            if (fds[i] < 0) continue;
            if (fds[i] == i) {
                const int fl = ::fcntl(i, F_GETFD);
                if (fl >= 0) ::fcntl(i, F_SETFD, fl & ~FD_CLOEXEC);
            } else if (::dup2(fds[i], i) < 0) {
                child_fail(errpipe[1], errno);
            }
        }
        if (!o.working_directory.empty() && ::chdir(o.working_directory.c_str()) != 0) child_fail(errpipe[1], errno);
        if (gatepipe[0] >= 0) {
            // Hold until the parent says go; its end closed without a byte: give up.
            ::close(gatepipe[1]);
            char go = 0;
            ssize_t g;
            do {
                g = ::read(gatepipe[0], &go, 1);
            } while (g < 0 && errno == EINTR);
            if (g != 1) child_fail(errpipe[1], ECANCELED);
            ::close(gatepipe[0]);
        }
        ::execve(program.c_str(), argv.data(), env);
        if (errno == ENOEXEC && !sh_argv.empty()) {
            ::execve(bin_sh, sh_argv.data(), env);
            errno = ENOEXEC;  // the file's own failure, not the shell's
        }
        child_fail(errpipe[1], errno);
    }
    const int clone_errno = errno;
    const instant clone_after = detail::realtime_now();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) return detail::errno_code(clone_errno);  // ENOSYS before Linux 5.3
    unique_fd pfd{pidfd};
    err_write.reset();
    if (gate) {
        gate_read.reset();
        if (gate->after_clone) gate->after_clone(static_cast<pid_t>(pid), gate->context);
        const char go = 1;
        ssize_t g;
        do {
            g = ::write(gate_write.get(), &go, 1);
        } while (g < 0 && errno == EINTR);
        gate_write.reset();
    }

    int child_errno = 0;
    ssize_t n;
    do {
        n = ::read(err_read.get(), &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof child_errno)) {
        // exec failed: reap the child now and report why.
        siginfo_t si{};
        ::syscall(SYS_waitid, P_PIDFD, pfd.get(), &si, WEXITED, nullptr);
        return detail::errno_code(child_errno);
    }
    // exec succeeded (the pipe closed on exec): the command runs, and from
    // here on the caller gets a child whatever fails. Open the handle on the
    // pidfd; open_child consumes the descriptor it is given even when it
    // fails, so it gets a duplicate and the original stays for the waitid.
    child c;
    c.pid_ = static_cast<pid_t>(pid);
    c.clone_before_ = clone_before;
    c.clone_after_ = clone_after;
    unique_fd dup{::fcntl(pfd.get(), F_DUPFD_CLOEXEC, 0)};
    if (!dup) {
        c.handle_error_ = detail::last_errno();  // EMFILE: the handle would need more
    } else if (auto h = detail::handle_access::make_process(detail::open_child_core(c.pid_, std::move(dup))); h) {
        c.process_ = std::move(*h);
        return c;
    } else {
        c.handle_error_ = h.error();
    }
    c.pidfd_ = pfd.release();
    return c;
}

result<std::optional<child_exit>> child::wait_without_handle(nanoseconds timeout) noexcept {
    pollfd p{pidfd_, POLLIN, 0};
    auto r = poll_pidfds(&p, 1, timeout);
    if (!r) return r.error();
    if (*r == 0) return std::optional<child_exit>();
    const instant seen = detail::realtime_now();
    siginfo_t si{};
    rusage ru{};
    if (waitid_pidfd(pidfd_, si, &ru) != 0) {
        // ECHILD: reaped by something else (SIGCHLD ignored, or a handler)
        // with nothing read about its end.
        return errno == ECHILD ? handle_error_ : detail::last_errno();
    }
    result_ = from_rusage_only(si, ru, clone_before_, std::max(clone_after_ - clone_before_, nanoseconds{1}), seen,
                               handle_error_);
    return std::optional<child_exit>(*result_);
}

result<std::optional<child_exit>> child::wait_for(nanoseconds timeout) noexcept {
    if (result_) return std::optional<child_exit>(*result_);
    if (!process_.valid() && pidfd_ >= 0) return wait_without_handle(timeout);
    auto* core = detail::handle_access::core(process_);
    if (!core) return errc::invalid_handle;
    pollfd p{core->pidfd.get(), POLLIN, 0};
    auto r = poll_pidfds(&p, 1, timeout);
    if (!r) return r.error();
    if (*r == 0) return std::optional<child_exit>();
    // The first observer of the end stamps it: this wake-up, unless the
    // monitor (or a query) was earlier. Then the zombie's own values (CPU
    // clock, 1 ns, children excluded), read while it is still unreaped.
    const instant seen = detail::realtime_now();
    detail::record_exit(*core, seen);
    auto own = process_.times();
    siginfo_t si{};
    rusage ru{};
    const long w = waitid_pidfd(core->pidfd.get(), si, &ru);
    if (w != 0 && errno != ECHILD) return detail::last_errno();
    child_exit e;
    if (w == 0) {
        e.status = status_of(si);
        core->life.child_reaped(*e.status);  // process::exit_status() answers it from now on
        e.max_rss_kib = ru.ru_maxrss;
    } else {
        // ECHILD: something else in this process reaped it (the kernel, when
        // SIGCHLD is ignored; or a SIGCHLD handler). The status is what the
        // zombie showed if anyone saw it, else unknown; the times are what
        // was recorded.
        if (auto st = core->life.status()) e.status = *st;
    }
    if (!own) own = process_.times();
    if (!own) {
        if (w != 0) return own.error();  // neither its own values nor the wait's
        // Reaped here, but its own values were not readable: report what
        // the wait gave, and why the rest is missing.
        // The creation instant was read at open: one 10 ms start tick, floored.
        result_ = from_rusage_only(si, ru, process_.creation(), std::chrono::milliseconds{10}, seen, own.error());
        if (auto x = core->life.exit_instant()) result_->times.exit = x;
        return std::optional<child_exit>(*result_);
    }
    e.times = *own;
    if (w == 0 && own->precision.source != cpu_source::stat_ticks) {
        const nanoseconds ru_user = detail::to_ns(ru.ru_utime), ru_kernel = detail::to_ns(ru.ru_stime);
        const nanoseconds own_total = own->cpu();
        const nanoseconds ru_total = ru_user + ru_kernel;
        if (ru_total <= own_total + microseconds{2}) {
            // No descendants' time in the rusage: its µs split is the child's own.
            e.times.kernel = std::min(ru_kernel, own_total);
            e.times.user = own_total - e.times.kernel;
            e.times.precision.resolution = microseconds{1};
            e.times.precision.source = cpu_source::wait_rusage;
        } else {
            // The descendants' total is exact (the rusage minus its own); only
            // its split is by ticks, and two tick-sampled splits (its own,
            // the rusage's) need not agree: the kernel side is bounded by the
            // total, so that the two sides always add up to it.
            const nanoseconds children = ru_total - own_total;
            e.children_kernel = std::clamp(ru_kernel - own->kernel, nanoseconds{0}, children);
            e.children_user = children - e.children_kernel;
        }
        core->life.adopt_wait_values(e.times);
    }
    result_ = e;
    return std::optional<child_exit>(e);
}

result<child_exit> child::wait() noexcept {
    auto r = wait_for(nanoseconds::max());
    if (!r) return r.error();
    if (!*r) return errc::not_supported;  // cannot happen: an unbounded wait
    return **r;
}

// ---- waiting on handles ---------------------------------------------------------

namespace {
result<bool> wait_one(detail::task_core* c, std::optional<nanoseconds> timeout) noexcept {
    if (!c) return errc::invalid_handle;
    if (!c->pidfd) return errc::not_supported;
    pollfd p{c->pidfd.get(), POLLIN, 0};
    auto r = poll_pidfds(&p, 1, timeout);
    if (!r) return r.error();
    if (*r == 0) return false;
    // The waiter can wake before the exit monitor does: whichever sees the end
    // first stamps it, so a query right after the wait never stamps it later.
    detail::record_exit(*c, detail::realtime_now());
    return true;
}
}  // namespace

result<bool> wait_for_exit(const process& p, std::optional<nanoseconds> timeout) noexcept {
    return wait_one(detail::handle_access::core(p), timeout);
}

result<bool> wait_for_exit(const thread& t, std::optional<nanoseconds> timeout) noexcept {
    return wait_one(detail::handle_access::core(t), timeout);
}

namespace detail {
result<bool> wait_child_exit(const child& c, std::optional<nanoseconds> timeout) noexcept {
    if (c.handle().valid()) return wait_for_exit(c.handle(), timeout);
    const int fd = native_pidfd(c);  // without a handle: the child's own pidfd
    if (fd < 0) return errc::invalid_handle;
    pollfd p{fd, POLLIN, 0};
    auto r = poll_pidfds(&p, 1, timeout);
    if (!r) return r.error();
    return *r > 0;
}
}  // namespace detail

result<std::optional<std::size_t>> wait_for_any(std::span<const process* const> ps,
                                                std::optional<nanoseconds> timeout) noexcept {
    // Nothing to wait for: without a timeout ppoll would never return.
    if (ps.empty()) return errc::invalid_argument;
    std::vector<pollfd> fds;
    try {
        fds.reserve(ps.size());
    } catch (...) {
        return detail::errno_code(ENOMEM);
    }
    for (const process* p : ps) {
        auto* c = p ? detail::handle_access::core(*p) : nullptr;
        if (!c) return errc::invalid_handle;
        if (!c->pidfd) return errc::not_supported;
        fds.push_back({c->pidfd.get(), POLLIN, 0});
    }
    auto r = poll_pidfds(fds.data(), fds.size(), timeout);
    if (!r) return r.error();
    for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
            detail::record_exit(*detail::handle_access::core(*ps[i]), detail::realtime_now());
            return std::optional<std::size_t>(i);
        }
    return std::optional<std::size_t>();
}

}  // namespace proctimes::inline v1
