// SPDX-License-Identifier: MIT
// run_tree's ptrace recorder: the event loop (tree_trace.hpp).
//
// Every task of the command's tree is a tracee of the recording thread,
// attached by the kernel at its creation (PTRACE_O_TRACEFORK/VFORK/CLONE on
// a PTRACE_SEIZE'd command). No syscall stops: only fork, exec and exit
// events, the first stop of each new task, group-stops and signal-delivery-
// stops, which are all resumed at once with what the command would have got
// untraced (the signal re-injected, a group-stop kept with PTRACE_LISTEN).
//
// Ends: each wait first looks (waitid WNOWAIT) before it takes. A traced
// zombie is visible to its tracer alone until the tracer waits for it, so
// the recorder reads its final CPU (process CPU clock, 1 ns; the split from
// stat ticks) from the zombie, then waits, which hands it to its real
// parent as if untraced — or reaps it, when the real parent is this process
// (the command itself, through child::wait, and orphans reparented to the
// subreaper). Instants are CLOCK_REALTIME stamps taken by the recorder when
// it meets a task and when it finds it ended.
#include <algorithm>
#include <cerrno>
#include <csignal>

#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.hpp"
#include "clock_ns.hpp"
#include "linux/sys.hpp"
#include "linux/task.hpp"
#include "linux/tree_trace.hpp"

namespace proctimes::inline v1::detail {

namespace {

constexpr long trace_options = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC |
                               PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
// Until the command's exec: no exit stop, so that a failed exec's _exit is
// waited for by child::spawn without a stop in between.
constexpr long seize_options = trace_options & ~PTRACE_O_TRACEEXIT;

constexpr int wait_flags = __WALL | __WNOTHREAD;  // this thread's tracees and children only

bool is_stop_signal(int sig) noexcept { return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU; }

std::optional<exit_status> status_of(const siginfo_t& si) noexcept {
    exit_status st;
    if (si.si_code == CLD_EXITED) {
        st.code = si.si_status;
    } else if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
        st.signal = si.si_status;
        st.core_dumped = si.si_code == CLD_DUMPED;
    } else {
        return std::nullopt;
    }
    return st;
}

}  // namespace

bool tree_tracer::seize(pid_t pid) noexcept {
    if (::ptrace(PTRACE_SEIZE, pid, nullptr, seize_options) != 0) return false;
    command_pid_ = pid;
    return true;
}

std::size_t tree_tracer::add_process(pid_t pid, std::int64_t parent, instant now) {
    tree_process p;
    p.pid = pid;
    p.parent_index = parent;
    p.created = now;
    if (parent >= 0) {
        const auto& up = tree_.processes[static_cast<std::size_t>(parent)];
        p.parent_pid = up.pid;
        if (!up.programs.empty()) {
            tree_program first = up.programs.back();  // forked as its parent's program
            first.started = now;
            p.programs.push_back(std::move(first));
        }
    }
    tree_.processes.push_back(std::move(p));
    live_threads_.push_back(0);
    last_alive_.push_back(now);
    const std::size_t i = tree_.processes.size() - 1;
    procs_[pid] = i;
    return i;
}

std::size_t tree_tracer::meet(pid_t tid, pid_t forker_tgid, instant now, bool clone_event) {
    task_kin kin;
    if (read_task_kin(tid, kin)) {
        // Gone already (killed at birth): a clone is most likely a thread of
        // the forker's, a fork or vfork a process it forked.
        kin = clone_event ? task_kin{forker_tgid, 0} : task_kin{tid, forker_tgid};
    }
    std::size_t proc;
    if (kin.tgid != tid) {
        auto it = procs_.find(kin.tgid);
        proc = it != procs_.end() ? it->second : add_process(kin.tgid, -1, now);
        ++tree_.processes[proc].threads;
    } else {
        // Its parent: the forker when its event came first, else its parent
        // by /proc (the fork event corrects it if it differs).
        auto it = procs_.find(forker_tgid > 0 ? forker_tgid : kin.ppid);
        proc = add_process(tid, it != procs_.end() ? static_cast<std::int64_t>(it->second) : -1, now);
        if (tree_.processes[proc].parent_index < 0) tree_.processes[proc].parent_pid = kin.ppid;
    }
    ++live_threads_[proc];
    tasks_[tid] = task{proc, false};
    return proc;
}

void tree_tracer::resume(pid_t tid, int sig) noexcept {
    // ESRCH: killed (SIGKILL) meanwhile; its end is reported by a wait.
    if (detaching_) {
        (void)::ptrace(PTRACE_DETACH, tid, nullptr, sig);
        tasks_.erase(tid);
    } else {
        (void)::ptrace(PTRACE_CONT, tid, nullptr, sig);
    }
}

void tree_tracer::on_event(pid_t tid, unsigned event, instant now) {
    const std::size_t at = tasks_[tid].proc;  // indices: add_process may move the vector
    const pid_t pid = tree_.processes[at].pid;
    unsigned long msg = 0;
    (void)::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg);
    switch (event) {
        case PTRACE_EVENT_FORK:
        case PTRACE_EVENT_VFORK:
        case PTRACE_EVENT_CLONE: {
            const auto child = static_cast<pid_t>(msg);
            if (child <= 0) break;
            if (auto early = early_.find(child); early != early_.end()) {
                // Its first stop (perhaps its whole life) came before this
                // event: it is the forker's.
                auto& p = tree_.processes[early->second];
                if (p.pid == child && p.parent_index != static_cast<std::int64_t>(at)) {
                    p.parent_pid = pid;
                    p.parent_index = static_cast<std::int64_t>(at);
                }
                early_.erase(early);
            } else if (tasks_.find(child) == tasks_.end()) {
                (void)meet(child, pid, now, event == PTRACE_EVENT_CLONE);
            }
            break;
        }
        case PTRACE_EVENT_EXEC: {
            // tid is now the process's id; msg the id it had (a thread other
            // than the leader that called exec: every other thread is gone).
            const auto former = static_cast<pid_t>(msg);
            if (former != tid && former > 0) tasks_.erase(former);
            for (auto it = tasks_.begin(); it != tasks_.end();) {
                if (it->second.proc == at && it->first != tid)
                    it = tasks_.erase(it);
                else
                    ++it;
            }
            tasks_[tid] = task{at, true};
            live_threads_[at] = 1;
            auto& p = tree_.processes[at];
            p.programs.push_back(read_program(tid, options_.max_argv_bytes, now));
            if (tid == command_pid_ && !command_options_set_)
                command_options_set_ = ::ptrace(PTRACE_SETOPTIONS, tid, nullptr, trace_options) == 0;
            break;
        }
        case PTRACE_EVENT_EXIT:
            // Not final yet (the exit has only begun): kept should the zombie
            // be missed; the zombie's values replace them.
            if (tid == pid && !tree_.processes[at].final_times) (void)read_process_cpu(tid, tree_.processes[at]);
            break;
        default:
            break;
    }
}

void tree_tracer::on_stop(pid_t tid, int status) {
    const instant now = realtime_now();
    const int sig = WSTOPSIG(status);
    const unsigned event = static_cast<unsigned>(status) >> 16;
    auto it = tasks_.find(tid);
    if (it == tasks_.end() && detaching_) {
        // Born while the tree is being let go (attached by the kernel: let
        // go at its first stop), or an orphan let go already, reporting a
        // stop to its parent, this process (not traced: nothing to do).
        if (::ptrace(PTRACE_DETACH, tid, nullptr, 0) != 0) return;
        const std::size_t proc = meet(tid, 0, now);
        early_[tid] = proc;
        tasks_.erase(tid);
        auto& p = tree_.processes[proc];
        p.outlived_command = true;
        if (p.pid == tid) (void)read_process_cpu(tid, p);
        return;
    }
    if (it == tasks_.end()) {
        early_[tid] = meet(tid, 0, now);
        it = tasks_.find(tid);
    }
    last_alive_[it->second.proc] = now;  // stopped: its process has not ended
    if (!it->second.started) {
        it->second.started = true;
        // A new task's first stop (auto-attached: PTRACE_EVENT_STOP, SIGSTOP).
        if (event == PTRACE_EVENT_STOP) {
            resume(tid, 0);
            return;
        }
    }
    if (event == PTRACE_EVENT_STOP) {
        if (is_stop_signal(sig) && !detaching_) {
            // A group-stop: stay stopped as untraced, but report what comes next.
            (void)::ptrace(PTRACE_LISTEN, tid, nullptr, 0);
            return;
        }
        if (detaching_ && !is_stop_signal(sig) && ending_signal_pending(tid)) {
            // Stopped by PTRACE_INTERRUPT with a signal pending that ends it
            // (a Ctrl-C that reached the whole process group with the
            // command): it ended with the command, not after it. Resumed
            // still traced, it takes the signal (a signal-delivery-stop,
            // below), then its exit is recorded as any other.
            (void)::ptrace(PTRACE_CONT, tid, nullptr, 0);
            return;
        }
        if (detaching_ && tid == tree_.processes[it->second.proc].pid) {
            auto& p = tree_.processes[it->second.proc];
            if (!p.final_times) (void)read_process_cpu(tid, p);
        }
        resume(tid, 0);  // PTRACE_INTERRUPT's stop, or a group-stop to leave as it is on detach
        return;
    }
    if (event != 0) {
        on_event(tid, event, now);
        if (detaching_ && event == PTRACE_EVENT_EXIT) {
            // Ending: kept traced, so that its zombie comes to the recorder.
            (void)::ptrace(PTRACE_CONT, tid, nullptr, 0);
            return;
        }
        resume(tid, 0);
        return;
    }
    // A signal-delivery-stop: deliver it, as untraced. While the tree is let
    // go, a signal that ends the process is delivered with the task still
    // traced (and stopped again should it survive it after all, to be let go
    // then): its end is recorded rather than lost.
    if (detaching_ && signal_ends_process(tid, sig)) {
        (void)::ptrace(PTRACE_CONT, tid, nullptr, sig);
        (void)::ptrace(PTRACE_INTERRUPT, tid, nullptr, 0);
        return;
    }
    resume(tid, sig);
}

void tree_tracer::on_exited(pid_t tid, const siginfo_t& si, bool peeked, child& command,
                            result<child_exit>& command_exit) {
    const instant now = realtime_now();
    auto it = tasks_.find(tid);
    if (tid == command_pid_) {
        command_exit = command.wait();  // the zombie's own values, then reaped (child::wait)
        command_done_ = true;
    } else if (it != tasks_.end() && tree_.processes[it->second.proc].pid == tid && peeked) {
        auto& p = tree_.processes[it->second.proc];
        pid_t ppid = 0;
        if (!read_process_cpu(tid, p, &ppid)) p.final_times = true;
        p.status = status_of(si);
        p.exited = now;
        siginfo_t w{};
        rusage ru{};
        if (waitid_retrying(P_PID, tid, w, WEXITED | wait_flags, &ru) == 0 && ppid == ::getpid())
            orphans_rusage_ += to_ns(ru.ru_utime) + to_ns(ru.ru_stime);  // reaped here: an orphan
    } else {
        if (peeked) {
            siginfo_t w{};
            (void)waitid_retrying(P_PID, tid, w, WEXITED | wait_flags, nullptr);
        }
        if (it != tasks_.end()) {
            auto& p = tree_.processes[it->second.proc];
            if (p.pid == tid) {  // ended while its stop was being taken: no zombie read
                p.status = status_of(si);
                p.exited = now;
            }
        }
    }
    if (it == tasks_.end()) return;
    const std::size_t proc = it->second.proc;
    tasks_.erase(it);
    if (live_threads_[proc] > 0) --live_threads_[proc];
    auto& p = tree_.processes[proc];
    if (p.pid == tid) {
        procs_.erase(tid);
        if (!p.exited) p.exited = now;
        p.outlived_command = false;  // seen ending: it did not outlive the recording
    }
}

void tree_tracer::run(child& command, result<child_exit>& command_exit) {
    const instant start = realtime_now();
    tree_.processes.clear();
    early_.clear();
    live_threads_.clear();
    last_alive_.clear();
    (void)add_process(command_pid_, -1, start);
    live_threads_[0] = 1;
    tasks_[command_pid_] = task{0, true};  // seized before its exec: no first stop
    while (!tasks_.empty()) {
        if (command_done_ && !detaching_) detach_all();
        if (tasks_.empty()) break;
        siginfo_t si{};
        if (waitid_retrying(P_ALL, 0, si, WEXITED | WSTOPPED | WNOWAIT | wait_flags, nullptr) != 0) break;  // ECHILD
        const pid_t tid = si.si_pid;
        if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
            on_exited(tid, si, true, command, command_exit);
            continue;
        }
        // A stop: take it (it may have turned into an end meanwhile: SIGKILL).
        int status = 0;
        pid_t w;
        do {
            w = ::wait4(tid, &status, wait_flags | WUNTRACED, nullptr);  // WUNTRACED: an untraced orphan's stop too
        } while (w < 0 && errno == EINTR);
        if (w != tid) continue;
        if (WIFSTOPPED(status)) {
            on_stop(tid, status);
        } else {
            siginfo_t end{};
            end.si_code = WIFEXITED(status) ? CLD_EXITED : (WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED);
            end.si_status = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
            if (tid == command_pid_) {
                // Reaped by this wait4: child::wait reports what it still can.
                command_exit = command.wait();
                command_done_ = true;
            }
            on_exited(tid, end, false, command, command_exit);
        }
    }
    if (!command_done_) {
        command_exit = command.wait();
        command_done_ = true;
    }
    set_exit_precision();
}

void tree_tracer::set_exit_precision() {
    // A descendant's exit is stamped when the recorder finds it ended: no
    // later than the real end, and no earlier than the last instant one of
    // its tasks was seen stopped (its exit stop, when it had one). The
    // command's comes from child::wait.
    for (std::size_t i = 1; i < tree_.processes.size(); ++i) {
        auto& p = tree_.processes[i];
        if (!p.exited) {
            p.precision.exit_source = exit_source::none;
            p.precision.exit_resolution = {};
            continue;
        }
        const instant earliest = std::min(*p.exited, std::max(p.created, last_alive_[i]));
        p.precision.exit_source = exit_source::observed;
        p.precision.exit_resolution = *p.exited - earliest;
    }
}

void tree_tracer::detach_all() {
    // The command has ended: what still runs outlived it. Each of its tasks
    // is stopped (PTRACE_INTERRUPT) and let go at that stop with its
    // pending signal; a task born meanwhile is let go at its first stop.
    detaching_ = true;
    for (auto& [tid, t] : tasks_) {
        auto& p = tree_.processes[t.proc];
        p.outlived_command = true;
        (void)::ptrace(PTRACE_INTERRUPT, tid, nullptr, 0);
    }
}

}  // namespace proctimes::inline v1::detail
