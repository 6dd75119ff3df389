// Minimal child spawning and exit watching: see spawn_min.hpp for the design
// and its limits. Self-contained on purpose, to be swapped for the library's
// general facility later.
#include "linux/spawn_min.hpp"

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <map>
#include <unordered_map>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu_split.hpp"
#include "linux/sys.hpp"
#include "proctimes/boot.hpp"

extern char** environ;

namespace proctimes::detail {

struct spawned_process::state {
    state(process p, thread t) noexcept
        : pid(p.id()), created(p.creation()), identity(p.identity()), owner_pid(::getpid()), proc(std::move(p)),
          main(std::move(t)) {}

    const pid_t pid;
    const instant created;
    const process_identity identity;
    const pid_t owner_pid;  // the process that spawned it (fork detection)

    // The live handles, closed by the watcher once the final values are recorded.
    process proc;
    thread main;

    mutable std::mutex mutex;
    mutable std::condition_variable exited;
    std::optional<child_exit> exit;
    std::chrono::nanoseconds final_kernel{}, final_user{};
    cpu_precision final_precision{};
    std::optional<thread_times> main_final;
    mutable monotonic_split process_guard;
    mutable monotonic_split thread_guard;
};

namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

constexpr int p_pidfd = 3;  // P_PIDFD, linux/wait.h (5.4)

instant realtime_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return instant{std::chrono::seconds{ts.tv_sec} + nanoseconds{ts.tv_nsec}};
}

nanoseconds from_timeval(const timeval& tv) noexcept { return std::chrono::seconds{tv.tv_sec} + microseconds{tv.tv_usec}; }

// ---- executable lookup ---------------------------------------------------------

bool is_executable_file(const std::string& path) noexcept {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// The path posix_spawn(3) should execute, resolved in the parent.
result<std::string> resolve_program(const spawn_options& o) {
    if (o.program.empty()) return errno_code(ENOENT);
    if (o.program.find('/') != std::string::npos || !o.search_path) {
        if (o.program[0] == '/' || o.working_directory.empty()) return o.program;
        // The child changes directory before exec: anchor a relative path to
        // the caller's directory, where the caller meant it.
        char cwd[4096];
        if (!::getcwd(cwd, sizeof cwd)) return last_errno();
        std::string absolute(cwd);
        absolute += '/';
        absolute += o.program;
        return absolute;
    }
    const char* env = std::getenv("PATH");
    const std::string path = env ? env : "/bin:/usr/bin";
    bool saw_denied = false;
    std::size_t begin = 0;
    for (;;) {
        const std::size_t end = path.find(':', begin);
        std::string candidate(path, begin, end == std::string::npos ? std::string::npos : end - begin);
        if (candidate.empty()) candidate.push_back('.');  // an empty PATH element is the current directory
        candidate.push_back('/');
        candidate += o.program;
        if (is_executable_file(candidate)) return candidate;
        if (::access(candidate.c_str(), F_OK) == 0) saw_denied = true;
        if (end == std::string::npos) break;
        begin = end + 1;
    }
    return errno_code(saw_denied ? EACCES : ENOENT);
}

// ---- the watcher -------------------------------------------------------------------

struct registration {
    std::shared_ptr<spawned_process::state> child;
    int pidfd;
};

class watcher {
public:
    static result<watcher*> get() noexcept;
    std::error_code add(std::shared_ptr<spawned_process::state> child, int pidfd) noexcept;

private:
    explicit watcher(int epfd) noexcept : epfd_(epfd) {}
    [[noreturn]] void run() noexcept;
    int epfd_;
    // The children being watched. Owned here (not only through epoll's data
    // pointers) so that they stay reachable: a child still running when the
    // program ends is not a leak.
    std::mutex pending_mutex_;
    std::unordered_map<registration*, std::unique_ptr<registration>> pending_;
};

std::mutex watcher_mutex;
watcher* current_watcher = nullptr;  // deliberately never freed: lives as long as the process
pid_t watcher_owner = 0;

void atfork_prepare() noexcept { watcher_mutex.lock(); }
void atfork_parent() noexcept { watcher_mutex.unlock(); }
void atfork_child() noexcept { watcher_mutex.unlock(); }

result<watcher*> watcher::get() noexcept {
    static const int atfork_once = ::pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    (void)atfork_once;
    std::lock_guard lock(watcher_mutex);
    // A forked child inherits the pointer but not the thread: start its own.
    if (current_watcher && watcher_owner == ::getpid()) return current_watcher;
    unique_fd ep{::epoll_create1(EPOLL_CLOEXEC)};
    if (!ep) return last_errno();
    auto* w = new (std::nothrow) watcher(ep.get());
    if (!w) return errno_code(ENOMEM);
    // The thread must not take signals meant for the application.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    std::error_code ec;
    try {
        std::thread(&watcher::run, w).detach();
    } catch (const std::system_error& e) {
        ec = e.code();
    } catch (...) {
        ec = errno_code(ENOMEM);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (ec) {
        delete w;
        return ec;
    }
    (void)ep.release();
    current_watcher = w;
    watcher_owner = ::getpid();
    return w;
}

std::error_code watcher::add(std::shared_ptr<spawned_process::state> child, int pidfd) noexcept {
    try {
        auto r = std::make_unique<registration>(registration{std::move(child), pidfd});
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = r.get();
        std::lock_guard lock(pending_mutex_);
        registration* key = r.get();
        pending_.emplace(key, std::move(r));
        if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, pidfd, &ev) != 0) {
            const int err = errno;
            pending_.erase(key);  // the caller keeps ownership of the pidfd on failure
            return errno_code(err);
        }
        return {};
    } catch (...) {
        return errno_code(ENOMEM);
    }
}

}  // namespace

// The watcher's work for one exited child.
struct spawn_reaper {
    static void reap(spawned_process::state& p, int pidfd) noexcept {
        const instant when = realtime_now();
        std::unique_lock lock(p.mutex);
        // The zombie still answers: its main thread's final sample, and the
        // process's own, in case someone else reaps it before us.
        if (auto t = p.main.times()) p.main_final = *t;
        auto before = p.proc.times();

        siginfo_t si{};
        rusage ru{};
        long rc;
        do {
            rc = ::syscall(SYS_waitid, p_pidfd, pidfd, &si, WEXITED, &ru);
        } while (rc < 0 && errno == EINTR);

        child_exit e;
        e.when = when;
        if (rc == 0) {
            e.how = si.si_code;
            e.status = si.si_status;
            e.final_times = true;
            p.final_kernel = from_timeval(ru.ru_stime);
            p.final_user = from_timeval(ru.ru_utime);
            const nanoseconds tick{1'000'000'000 / clock_ticks_per_second()};
            p.final_precision = {microseconds{1}, microseconds{1}, tick, cpu_source::wait_rusage};
        } else if (before) {
            // ECHILD: reaped elsewhere after our sample; keep the sample.
            e.final_times = true;
            p.final_kernel = before->kernel;
            p.final_user = before->user;
            p.final_precision = before->precision;
        }
        p.exit = e;
        // Nothing reads the live handles any more: close their descriptors
        // (and the pidfd) before waking the waiters, so that a caller who
        // waited sees every descriptor of the child gone.
        process old_proc = std::move(p.proc);
        thread old_main = std::move(p.main);
        lock.unlock();
        old_proc = process{};
        old_main = thread{};
        ::close(pidfd);
        p.exited.notify_all();
    }
};

namespace {

void watcher::run() noexcept {
    epoll_event events[16];
    for (;;) {
        const int n = ::epoll_wait(epfd_, events, 16, -1);
        if (n < 0) {
            if (errno != EINTR) ::usleep(10'000);  // cannot happen with a valid epfd; do not spin
            continue;
        }
        for (int i = 0; i < n; ++i) {
            auto* r = static_cast<registration*>(events[i].data.ptr);
            ::epoll_ctl(epfd_, EPOLL_CTL_DEL, r->pidfd, nullptr);
            spawn_reaper::reap(*r->child, r->pidfd);  // closes the pidfd
            std::lock_guard lock(pending_mutex_);
            pending_.erase(r);
        }
    }
}

// ---- registry of spawned children by pid ------------------------------------------

std::mutex registry_mutex;
std::map<pid_t, std::weak_ptr<spawned_process>>& registry() {
    static auto* m = new std::map<pid_t, std::weak_ptr<spawned_process>>;  // never destroyed: see watcher
    return *m;
}

// Kills and reaps a child we could not take charge of.
void abandon(pid_t pid) noexcept {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

struct spawn_attrs {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    bool attr_ok = false, actions_ok = false;
    ~spawn_attrs() {
        if (attr_ok) ::posix_spawnattr_destroy(&attr);
        if (actions_ok) ::posix_spawn_file_actions_destroy(&actions);
    }
};

result<pid_t> start(const spawn_options& o) {
    auto program = resolve_program(o);
    if (!program) return program.error();

    std::vector<std::string> args = o.argv.empty() ? std::vector<std::string>{o.program} : o.argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings;
    std::vector<char*> envp;
    if (o.environment) {
        env_strings = *o.environment;
        for (auto& e : env_strings) envp.push_back(e.data());
        envp.push_back(nullptr);
    }

    spawn_attrs s;
    if (int e = ::posix_spawnattr_init(&s.attr)) return errno_code(e);
    s.attr_ok = true;
    if (int e = ::posix_spawn_file_actions_init(&s.actions)) return errno_code(e);
    s.actions_ok = true;
    sigset_t none, all;
    ::sigemptyset(&none);
    ::sigfillset(&all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    ::posix_spawnattr_setsigmask(&s.attr, &none);
    ::posix_spawnattr_setsigdefault(&s.attr, &all);
    if (o.new_process_group) {
        flags |= POSIX_SPAWN_SETPGROUP;
        ::posix_spawnattr_setpgroup(&s.attr, 0);
    }
    ::posix_spawnattr_setflags(&s.attr, flags);
    if (!o.working_directory.empty()) {
        if (int e = ::posix_spawn_file_actions_addchdir_np(&s.actions, o.working_directory.c_str())) return errno_code(e);
    }
    pid_t pid = -1;
    const int err = ::posix_spawn(&pid, program->c_str(), &s.actions, &s.attr, argv.data(),
                                  o.environment ? envp.data() : environ);
    if (err != 0) return errno_code(err);
    return pid;
}

}  // namespace

spawned_process::spawned_process(std::shared_ptr<state> s) noexcept : s_(std::move(s)) {}

spawned_process::~spawned_process() {
    std::lock_guard lock(registry_mutex);
    auto& reg = registry();
    if (auto it = reg.find(s_->pid); it != reg.end() && it->second.expired()) reg.erase(it);
}

result<std::shared_ptr<spawned_process>> spawned_process::spawn(const spawn_options& options) noexcept {
    try {
        auto w = watcher::get();
        if (!w) return w.error();
        auto pid = start(options);
        if (!pid) return pid.error();

        unique_fd pidfd{pidfd_open(*pid, 0)};
        if (!pidfd) {
            const auto ec = last_errno();
            abandon(*pid);
            return ec.value() == ENOSYS ? make_error_code(errc::not_supported) : ec;
        }
        auto proc = process::open(*pid);
        auto main = proc ? thread::open(*pid, *pid) : result<thread>(proc.error());
        if (!proc || !main) {
            abandon(*pid);
            return proc ? main.error() : proc.error();
        }
        auto st = std::make_shared<state>(std::move(*proc), std::move(*main));
        auto child = std::make_shared<spawned_process>(st);
        {
            std::lock_guard lock(registry_mutex);
            registry()[*pid] = child;
        }
        if (auto ec = (*w)->add(std::move(st), pidfd.get())) {
            abandon(*pid);
            return ec;
        }
        (void)pidfd.release();  // the watcher owns it now
        return child;
    } catch (const std::bad_alloc&) {
        return errno_code(ENOMEM);
    } catch (const std::system_error& e) {
        return e.code();
    } catch (...) {
        return errno_code(EFAULT);
    }
}

std::shared_ptr<spawned_process> spawned_process::find(pid_t pid) noexcept {
    std::lock_guard lock(registry_mutex);
    auto& reg = registry();
    auto it = reg.find(pid);
    if (it == reg.end()) return nullptr;
    auto p = it->second.lock();
    if (p && p->s_->owner_pid != ::getpid()) return nullptr;  // inherited through fork: not our child
    return p;
}

pid_t spawned_process::id() const noexcept { return s_->pid; }
instant spawned_process::creation() const noexcept { return s_->created; }
const process_identity& spawned_process::identity() const noexcept { return s_->identity; }

result<process_times> spawned_process::times() const noexcept {
    const state& s = *s_;
    std::lock_guard lock(s.mutex);
    process_times t;
    if (s.exit) {
        if (!s.exit->final_times) return errc::no_such_process;
        t.creation = s.created;
        t.exit = s.exit->when;
        t.kernel = s.final_kernel;
        t.user = s.final_user;
        t.precision = s.final_precision;
    } else {
        // Under the lock the watcher cannot reap the child, so the handle's
        // descriptors still answer.
        auto r = s.proc.times();
        if (!r) return r.error();
        t = *r;
    }
    const auto ku = s.process_guard.apply(t.cpu(), static_cast<std::uint64_t>(t.user.count()),
                                          static_cast<std::uint64_t>(t.kernel.count()));
    t.kernel = ku.kernel;
    t.user = ku.user;
    return t;
}

result<thread_times> spawned_process::main_thread_times() const noexcept {
    const state& s = *s_;
    std::lock_guard lock(s.mutex);
    thread_times t;
    if (s.exit) {
        if (!s.main_final) return errc::no_such_thread;
        t = *s.main_final;
        t.exit = s.exit->when;
    } else {
        auto r = s.main.times();
        if (!r) return r.error();
        t = *r;
    }
    const auto ku = s.thread_guard.apply(t.cpu(), static_cast<std::uint64_t>(t.user.count()),
                                         static_cast<std::uint64_t>(t.kernel.count()));
    t.kernel = ku.kernel;
    t.user = ku.user;
    return t;
}

std::optional<child_exit> spawned_process::exit_info() const noexcept {
    std::lock_guard lock(s_->mutex);
    return s_->exit;
}

bool spawned_process::wait_for(std::chrono::nanoseconds timeout) const noexcept {
    const state& s = *s_;
    std::unique_lock lock(s.mutex);
    if (timeout.count() < 0) {
        s.exited.wait(lock, [&s] { return s.exit.has_value(); });
        return true;
    }
    return s.exited.wait_for(lock, timeout, [&s] { return s.exit.has_value(); });
}

}  // namespace proctimes::detail
