// SPDX-License-Identifier: MIT
// The exit monitor: one thread per process, started on first use, asleep in
// epoll_wait(2) over the pidfds of open handles. A pidfd becomes readable when
// its process (or, with PIDFD_THREAD, its thread) exits; the monitor then
// stamps the exit instant and reads the zombie's final CPU values before the
// parent reaps it. Costs nothing while nothing exits: one epoll_ctl(2) when a
// handle opens and one when it closes.
//
// With exit records enabled (and CAP_NET_ADMIN), its epoll set also holds a
// taskstats listener socket (linux/exit/taskstats.hpp). The kernel queues a task's
// record before its pidfd becomes readable, so the monitor drains the socket
// before it handles any exit, and hands each record to the watched tasks with
// that id. A handle registered later can never receive an earlier task's
// record: registration drains the socket first, and a pid is not reused
// before its task's record has been sent.
//
// No failure passes in silence: each one caught here is counted by kind
// (exit/failures.hpp; exit_records_status(failures), proctimes doctor). A
// closed child's reap request that the monitor's set refuses is kept and
// retried by the monitor thread (or the child reaped at once if it has
// already ended); only one that cannot even be kept is lost, and counted.
#include "linux/exit/monitor.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <unordered_map>
#include <vector>

#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "exit/failures.hpp"
#include "linux/exit/kept_reaps.hpp"
#include "linux/exit/recent.hpp"
#include "linux/exit/taskstats.hpp"
#include "linux/task.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/linux.hpp"

namespace proctimes::inline v1 {
namespace detail {
namespace {

// The switches are portable (src/exit/settings.cpp).
bool records_bpf_allowed() noexcept { return exit_records_bpf_wanted(); }
bool records_enabled() noexcept { return exit_records_enabled(); }

// The epoll keys of the records socket and of the wake-up eventfd (task keys
// start at 1 and count up).
constexpr std::uint64_t records_key = 0;
constexpr std::uint64_t wake_key = ~std::uint64_t{0};

// The monitor's next additions that fail as if epoll_ctl had
// (exit_monitor_fail_next_adds: tests).
std::atomic<unsigned> g_failing_adds{0};

bool injected_add_failure() noexcept {
    unsigned n = g_failing_adds.load(std::memory_order_relaxed);
    while (n != 0 && !g_failing_adds.compare_exchange_weak(n, n - 1, std::memory_order_relaxed)) {
    }
    return n != 0;
}

class monitor {
public:
    monitor() : ep_(::epoll_create1(EPOLL_CLOEXEC)), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
        if (!ep_.valid() || !wake_.valid()) return;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = wake_key;
        wake_ok_ = ::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, wake_.get(), &ev) == 0;
    }

    bool ok() const noexcept { return ep_.valid() && wake_ok_; }

    /// Wakes the monitor thread, to retry the kept reap requests.
    void wake() noexcept {
        const std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof one);
    }

    /// add(), with its failures (a refused epoll_ctl, no memory) as false;
    /// each caller counts a false by its kind (watch, reap_deferred).
    bool try_add(const std::shared_ptr<task_core>& c) noexcept {
        constexpr bool add_failed = false;
        try {
            return add(c);
        } catch (...) {
            return add_failed;
        }
    }

    void start() {
        std::thread([this] {
            // A name to find it by in /proc/<pid>/task/*/comm, top -H and gdb.
            ::pthread_setname_np(::pthread_self(), "proctimes-exit");
            loop();
        }).detach();
    }

    /// Watches `c`; false when its pidfd could not join the epoll set.
    bool add(const std::shared_ptr<task_core>& c) {
        std::lock_guard lock(mutex_);
        open_records_locked();
        deliver_locked();  // records of earlier tasks with this id go elsewhere or nowhere
        const std::uint64_t key = next_key_++;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = key;
        if (injected_add_failure() || ::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, c->pidfd.get(), &ev) != 0) return false;
        tasks_.emplace(key, c);
        keys_.emplace(c.get(), key);
        by_id_.emplace(c->id, c.get());
        if (bpf_)
            c->life.begin_watch(records_enabled(), 0, true);  // losses are matched by identity
        else
            c->life.begin_watch(records_ && records_enabled(), losses_);
        return true;
    }

    /// await_exit_record (task.hpp): waits while a record for `c` is expected.
    void await_record(task_core& c) {
        bpf_recent_exits* bpf = nullptr;
        {
            std::lock_guard lock(mutex_);
            bpf = bpf_.get();
        }
        if (bpf) {
            await_final(*bpf, c);
            return;
        }
        const auto deadline = std::chrono::steady_clock::now() + record_wait_limit;
        for (;;) {
            int fd = -1;
            {
                std::lock_guard lock(mutex_);
                deliver_locked();
                if (!record_expected_locked(c)) return;
                fd = records_->fd();
            }
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return;
            pollfd p{fd, POLLIN, 0};
            // The monitor thread may drain the socket first: the next round
            // then finds the record delivered, or waits out the rest.
            if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 5))) < 0 && errno != EINTR) return;
        }
    }

    /// Hands pending exit records to the watched tasks.
    void deliver() {
        std::lock_guard lock(mutex_);
        deliver_locked();
    }

    /// Whether the records listener is registered, or why not (trying to
    /// register it if records are enabled and it was not tried yet).
    std::error_code records_status() {
        std::lock_guard lock(mutex_);
        open_records_locked();
        if (records_ || bpf_) return {};
        if (records_error_) return records_error_;
        return make_error_code(errc::not_supported);  // not enabled
    }

    bool uses_bpf() {
        std::lock_guard lock(mutex_);
        return bpf_ != nullptr;
    }

    std::uint64_t bpf_lost() {
        std::lock_guard lock(mutex_);
        return bpf_ ? bpf_->dropped() : 0;
    }

    void remove(const std::shared_ptr<task_core>& c) {
        std::lock_guard lock(mutex_);
        auto k = keys_.find(c.get());
        if (k == keys_.end()) return;
        ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, c->pidfd.get(), nullptr);
        tasks_.erase(k->second);
        keys_.erase(k);
        forget_id_locked(c.get());
    }

private:
    // The eBPF end of `c` comes once it has been released and an RCU grace
    // period has passed: looked up by identity until it is there, the end of
    // this very task is reported lost, or the wait's bound passes (called for
    // a task that is gone, so released). A loss of some other task never stops
    // the wait; a loss whose task is unknown (the kernel skipped the program)
    // shortens the bound to bpf_record_unnamed_loss_wait, as it may be this
    // one's.
    static void await_final(bpf_recent_exits& bpf, task_core& c) {
        const auto start = std::chrono::steady_clock::now();
        const std::uint64_t unnamed = bpf.unnamed_lost();
        for (;;) {
            if (auto e = bpf.find(c.id, c.identity.start_ticks)) {
                task_lifecycle::final_values f;
                if (c.is_thread || !e->is_process()) {
                    f.kernel = e->kernel;
                    f.user = e->user;
                } else {
                    f.kernel = e->group_kernel;
                    f.user = e->group_user;
                }
                f.exit = e->exit;
                if (!c.is_thread) f.status = e->status;
                c.life.offer_final_values(f);
                return;
            }
            if (!c.life.record_expected(0) || bpf.lost(c.id, c.identity.start_ticks)) return;
            const auto waited = std::chrono::steady_clock::now() - start;
            if (waited >= bpf_record_wait_limit) return;
            if (bpf.unnamed_lost() != unnamed && waited >= bpf_record_unnamed_loss_wait) return;
            std::this_thread::sleep_for(std::chrono::milliseconds{2});
        }
    }

    // A record for `c` should be on its way: the listener watched it and
    // still runs, no record with its id came, and none was lost since.
    bool record_expected_locked(task_core& c) {
        if (!records_ || !records_enabled()) return false;
        bool listed = false;
        auto [first, last] = by_id_.equal_range(c.id);
        for (auto it = first; it != last; ++it) listed = listed || it->second == &c;
        if (!listed) return false;
        return c.life.record_expected(losses_);
    }

    void open_records_locked() {
        if (records_tried_ || !records_enabled()) return;
        records_tried_ = true;
        if (records_bpf_allowed()) {
            if (auto b = bpf_recent_exits::start()) {
                bpf_ = std::move(*b);
                return;
            }
        }
        auto r = exit_records::open(records_error_);
        if (!r) return;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = records_key;
        if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, r->fd(), &ev) != 0) {
            records_error_ = last_errno();
            return;
        }
        records_ = std::move(r);
    }

    // A process gets a record only when it stands for the whole process: the
    // group's end (AGROUP) with no group record beside it. The kernel keeps
    // group statistics, and sends that record, once any thread has ended
    // while another was alive; without them the group only ever had the one
    // thread whose record this is.
    //
    // A kernel without delay accounting (CONFIG_TASK_DELAY_ACCT) leaves the
    // exact run time 0; such records are not used. Records disabled again
    // (set_exit_records_enabled(false)) are drained and dropped.
    void deliver_locked() {
        if (!records_) return;
        batch_.clear();
        if (!records_->drain(batch_)) ++losses_;  // lost records: those tasks keep their last values
        if (!records_enabled()) return;
        for (const auto& e : batch_) {
            if (e.run_ns == 0 && e.sampled_run_ns != 0) continue;
            const exit_record rec = to_exit_record(e);
            auto [first, last] = by_id_.equal_range(static_cast<pid_t>(e.pid));
            for (auto it = first; it != last; ++it) {
                task_core* c = it->second;
                c->life.offer_exit_record(rec, c->is_thread || (e.group_dead && !e.group_record));
            }
        }
    }

    void forget_id_locked(const task_core* c) {
        auto [first, last] = by_id_.equal_range(c->id);
        for (auto it = first; it != last; ++it)
            if (it->second == c) {
                by_id_.erase(it);
                return;
            }
    }

    void loop() {
        epoll_event events[32];
        for (;;) {
            // Kept reap requests join the set (kept_reaps.hpp); while some
            // are kept, a round every 20 ms retries them.
            retry_kept_reaps([this](const std::shared_ptr<task_core>& c) { return try_add(c); });
            const int timeout = kept_reaps_waiting() ? 20 : -1;
            const int n = ::epoll_wait(ep_.get(), events, 32, timeout);
            if (n < 0) {
                if (errno == EINTR) continue;
                return;  // the epoll fd is gone: nothing more to watch
            }
            const instant seen = realtime_now();
            {
                // Before any exit is handled: its record came first.
                std::lock_guard lock(mutex_);
                deliver_locked();
            }
            for (int i = 0; i < n; ++i) {
                if (events[i].data.u64 == records_key) continue;  // drained above
                if (events[i].data.u64 == wake_key) {
                    std::uint64_t v = 0;
                    (void)!::read(wake_.get(), &v, sizeof v);
                    continue;  // the kept reap requests: retried at the top
                }
                std::shared_ptr<task_core> c;
                {
                    std::lock_guard lock(mutex_);
                    auto it = tasks_.find(events[i].data.u64);
                    if (it == tasks_.end()) continue;  // closed meanwhile
                    c = std::move(it->second);
                    tasks_.erase(it);
                    keys_.erase(c.get());
                    ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, c->pidfd.get(), nullptr);
                }
                record_exit(*c, seen);
                {
                    // Still listed by id until now, so that a record that
                    // comes while record_exit waits for it is delivered.
                    std::lock_guard lock(mutex_);
                    forget_id_locked(c.get());
                }
                if (c->life.end_watch()) {
                    siginfo_t si{};
                    ::syscall(SYS_waitid, P_PIDFD, c->pidfd.get(), &si, WEXITED, nullptr);
                }
            }
        }
    }

    unique_fd ep_;
    unique_fd wake_;  // an eventfd: a reap request was kept
    bool wake_ok_ = false;
    std::mutex mutex_;
    std::uint64_t next_key_ = 1;
    std::unordered_map<std::uint64_t, std::shared_ptr<task_core>> tasks_;
    std::unordered_map<const task_core*, std::uint64_t> keys_;
    std::unordered_multimap<pid_t, task_core*> by_id_;  // the watched tasks by id (all in tasks_)
    bool records_tried_ = false;
    std::unique_ptr<exit_records> records_;
    std::unique_ptr<bpf_recent_exits> bpf_;  // the eBPF exit stream, when it is the listener
    std::error_code records_error_;
    std::vector<parse::taskstats_exit> batch_;
    std::uint64_t losses_ = 0;  // bursts of lost records (ENOBUFS) since the listener started
};

std::mutex g_mutex;
monitor* g_monitor = nullptr;  // leaked on purpose: its thread outlives static destruction

void forget_after_fork() noexcept {
    // The child has no monitor thread; the parent's epoll instance is shared
    // with it, so it must never be touched here. Start afresh on next use.
    g_monitor = nullptr;
}

bool enabled() noexcept { return exit_monitor_enabled(); }

monitor* get_monitor() noexcept {
    std::lock_guard lock(g_mutex);
    if (!g_monitor) {
        static const int once = ::pthread_atfork(nullptr, nullptr, forget_after_fork);
        (void)once;
        try {
            auto m = std::make_unique<monitor>();
            if (!m->ok()) {
                count_exit_failure(exit_failure::monitor_start);
                return nullptr;
            }
            m->start();
            g_monitor = m.release();
        } catch (...) {  // no memory, or no thread
            count_exit_failure(exit_failure::monitor_start);
            return nullptr;
        }
    }
    return g_monitor;
}

}  // namespace

void linux_exit_backend::deliver() noexcept {
    monitor* m;
    {
        std::lock_guard lock(g_mutex);
        m = g_monitor;
    }
    if (!m) return;
    try {
        m->deliver();
    } catch (...) {  // the records stay queued for the next delivery
        count_exit_failure(exit_failure::deliver);
    }
}

void linux_exit_backend::await(task_core& c) noexcept {
    monitor* m;
    {
        std::lock_guard lock(g_mutex);
        m = g_monitor;
    }
    if (!m) return;
    try {
        m->await_record(c);
    } catch (...) {  // the task keeps what was recorded of it
        count_exit_failure(exit_failure::await);
    }
}

void linux_exit_backend::watch(const task_core_ptr& c) noexcept {
    if (!c->pidfd || !enabled()) return;
    monitor* m = get_monitor();  // a monitor that cannot start is counted there
    if (m && !m->try_add(c)) count_exit_failure(exit_failure::watch);
}

void linux_exit_backend::unwatch(const task_core_ptr& c, bool reap) noexcept {
    monitor* m;
    {
        std::lock_guard lock(g_mutex);
        m = g_monitor;
    }
    if (reap && c->pidfd) {
        // Either it is still watched and the monitor reaps it when the exit
        // comes, or the monitor has already handled the exit (or never watched
        // it) and it is watched again, to be reaped at once if it has already
        // exited (the pidfd stays readable).
        if (c->life.request_reap() != reap_plan::watch_again) return;
        if (!m) m = get_monitor();
        // Refused: reaped now if it has ended, else kept for the monitor
        // thread to retry (kept_reaps.hpp); counted either way.
        if ((!m || !m->try_add(c)) && reap_later(c) == reap_fallback::kept && m) m->wake();
        return;
    }
    if (m) {
        try {
            m->remove(c);
        } catch (...) {  // it leaves the set at its end
            count_exit_failure(exit_failure::unwatch);
        }
    }
}

result<exit_stream_source> linux_exit_backend::records_source() noexcept {
    monitor* m = get_monitor();
    if (!m) return make_error_code(errc::not_supported);
    try {
        if (const std::error_code e = m->records_status()) return e;
        return m->uses_bpf() ? exit_stream_source::bpf : exit_stream_source::taskstats;
    } catch (...) {
        count_exit_failure(exit_failure::query);
        return errno_code(ENOMEM);
    }
}

void exit_monitor_fail_next_adds(unsigned n) noexcept { g_failing_adds.store(n, std::memory_order_relaxed); }

std::uint64_t exit_records_bpf_lost() noexcept {
    monitor* m = get_monitor();
    try {
        return m ? m->bpf_lost() : 0;
    } catch (...) {
        count_exit_failure(exit_failure::query);
        return 0;
    }
}

}  // namespace detail

}  // namespace proctimes::inline v1
