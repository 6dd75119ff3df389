// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* run_tree's eBPF source (tree.hpp, docs/TREE.md). User space puts the
 * command's pid in `proctimes_tree_tracked` while the command is held before
 * its exec; from then on every process it forks, at any depth, is added by
 * the fork program before it can run, and only the tracked processes produce
 * events: a fork (or a thread), each exec with its program and arguments, the
 * last thread's do_exit() (the exit instant), and the leader's release
 * (sched_process_free: the group's final CPU). The rest of the machine costs
 * one hash lookup per fork, exec and exit. A full ring buffer is never
 * silent: each event that did not fit is counted in `tree_dropped`. */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf_record_layout.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define SIGNAL_GROUP_EXIT 0x00000004 /* include/linux/sched/signal.h */

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 4 * 1024 * 1024);
} proctimes_tree_ring SEC(".maps");

/* The processes of the tree (tgid -> its leader's start_boottime), until
 * released. The start time is compared on every lookup, so that a process
 * whose release was never seen cannot make a later one with its pid a
 * member. Preallocated: updates in the fork program never allocate. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1 << 16);
    __type(key, __u32);
    __type(value, __u64);
} proctimes_tree_tracked SEC(".maps");

/* Events that did not fit in the ring buffer; processes that could not be
 * tracked (the map full). */
__u64 tree_dropped = 0;
__u64 tree_untracked = 0;

/* Submitted without waking the reader, which looks every 100 ms (a wake-up
 * per event cost the reader more CPU than all else it does for a build);
 * woken at once when a quarter of the ring is filled. */
#define PT_TREE_WAKE_AT (1024 * 1024)
static __always_inline void submit(void* e) {
    __u64 filled = bpf_ringbuf_query(&proctimes_tree_ring, BPF_RB_AVAIL_DATA);
    bpf_ringbuf_submit(e, filled >= PT_TREE_WAKE_AT ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* A fixed-size event, zeroed, with its kind, process and the instant now;
 * NULL, counted in tree_dropped, when the ring buffer is full. */
static __always_inline struct pt_tree_event* reserve(__u32 kind, __u32 tgid, __u32 ppid, __u64 start_boottime) {
    struct pt_tree_event* e = bpf_ringbuf_reserve(&proctimes_tree_ring, sizeof *e, 0);
    if (!e) {
        __sync_fetch_and_add(&tree_dropped, 1);
        return 0;
    }
    __builtin_memset(e, 0, sizeof *e);
    e->kind = kind;
    e->boottime = bpf_ktime_get_boot_ns();
    e->start_boottime = start_boottime;
    e->tgid = tgid;
    e->ppid = ppid;
    return e;
}

static __always_inline int tracked(__u32 tgid, __u64 start_boottime) {
    __u64* v = bpf_map_lookup_elem(&proctimes_tree_tracked, &tgid);
    if (!v) return 0;
    /* 0: the command, put in by user space, which cannot see its start in
     * nanoseconds; it is user space's unreaped child, so its pid is its own. */
    if (*v == 0) *v = start_boottime;
    return *v == start_boottime;
}

/* The group's CPU as far as it is known while its last thread exits: what
 * ended threads left in signal_struct, this thread's own and the leader's
 * when the leader ended first. A lower bound: a thread still between its
 * own exit and release is not in it yet, nor is the exit work still ahead. */
static __always_inline void group_cpu_now(struct pt_tree_event* e, struct task_struct* t) {
    struct signal_struct* sig = t->signal;
    struct task_struct* leader = t->group_leader;

    e->runtime = sig->sum_sched_runtime + t->se.sum_exec_runtime;
    e->utime = sig->utime + t->utime;
    e->stime = sig->stime + t->stime;
    if (leader && leader != t) {
        e->runtime += leader->se.sum_exec_runtime;
        e->utime += leader->utime;
        e->stime += leader->stime;
    }
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proctimes_tree_fork, struct task_struct* parent, struct task_struct* child) {
    struct pt_tree_event* e;
    __u32 ptgid = parent->tgid;
    __u32 ctgid = child->tgid;
    __u64 start = child->start_boottime;

    if (!tracked(ptgid, parent->group_leader->start_boottime)) return 0;
    if (ctgid != child->pid) {
        /* A thread of a tracked process. */
        e = reserve(PT_TREE_THREAD, ctgid, ptgid, parent->group_leader->start_boottime);
        if (e) submit(e);
        return 0;
    }
    /* Before the child can run: it is woken after this tracepoint. */
    if (bpf_map_update_elem(&proctimes_tree_tracked, &ctgid, &start, BPF_ANY) != 0)
        __sync_fetch_and_add(&tree_untracked, 1);
    e = reserve(PT_TREE_FORK, ctgid, ptgid, start);
    if (!e) return 0;
    BPF_CORE_READ_STR_INTO(&e->comm, child, comm);
    submit(e);
    return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proctimes_tree_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm) {
    struct pt_tree_exec_event* x;
    struct mm_struct* mm;
    struct file* file;
    unsigned long start, end, len;
    __u32 tgid = p->tgid;

    if (!tracked(tgid, p->group_leader->start_boottime)) return 0;
    x = bpf_ringbuf_reserve(&proctimes_tree_ring, sizeof *x, 0);
    if (!x) {
        __sync_fetch_and_add(&tree_dropped, 1);
        return 0;
    }
    __builtin_memset(&x->head, 0, sizeof x->head);
    x->head.kind = PT_TREE_EXEC;
    x->head.boottime = bpf_ktime_get_boot_ns();
    x->head.start_boottime = p->start_boottime;
    x->head.tgid = tgid;
    x->head.ppid = p->real_parent->tgid;
    BPF_CORE_READ_STR_INTO(&x->head.comm, p, comm);
    file = bprm->file;
    if (file) {
        x->head.exe_ino = file->f_inode->i_ino;
        x->head.exe_dev = file->f_inode->i_sb->s_dev;
    }
    /* The interpreter for a script, else the file exec'd: the path as the
     * caller gave it (absolute after a PATH search). */
    if (bpf_probe_read_kernel_str(x->path, sizeof x->path, BPF_CORE_READ(bprm, interp)) < 0) x->path[0] = '\0';
    /* The new program's arguments, just written to its stack. */
    mm = p->mm;
    start = mm ? mm->arg_start : 0;
    end = mm ? mm->arg_end : 0;
    len = end > start ? end - start : 0;
    x->head.argv_total = len > 0xffffffffUL ? 0xffffffffU : (__u32)len;
    if (len > PT_TREE_ARGV_MAX) len = PT_TREE_ARGV_MAX;
    if (len && bpf_probe_read_user(x->argv, len, (const void*)start) == 0) x->head.argv_len = (__u32)len;
    submit(x);
    return 0;
}

/* The current task is the one exiting on every kernel (the tracepoint's
 * arguments changed in 2025). Only the last thread of a tracked process
 * reports: signal->live has reached 0 before this tracepoint. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proctimes_tree_exit) {
    struct task_struct* t = bpf_get_current_task_btf();
    struct pt_tree_event* e;
    __u32 tgid = t->tgid;
    unsigned int sigflags;

    if (!tracked(tgid, t->group_leader->start_boottime)) return 0;
    if (t->signal->live.counter != 0) return 0;
    e = reserve(PT_TREE_EXIT, tgid, t->real_parent->tgid, t->group_leader->start_boottime);
    if (!e) return 0;
    group_cpu_now(e, t);
    sigflags = t->signal->flags;
    e->exit_code = (sigflags & SIGNAL_GROUP_EXIT) ? t->signal->group_exit_code : t->exit_code;
    BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
    submit(e);
    return 0;
}

/* The leader's release: every thread has been released before it, and it
 * has switched out for the last time, so the signal_struct totals are the
 * group's final CPU to the last ns, exit work included. The kernel does not
 * run this for every task (docs/BPF.md, "Losses"): such a process keeps the
 * lower bound of its exit, and user space says its values are not final. */
SEC("tp_btf/sched_process_free")
int BPF_PROG(proctimes_tree_free, struct task_struct* t) {
    struct pt_tree_event* e;
    __u32 tgid = BPF_CORE_READ(t, tgid);
    unsigned int sigflags;

    if (tgid != BPF_CORE_READ(t, pid) || !tracked(tgid, BPF_CORE_READ(t, start_boottime))) return 0;
    (void)bpf_map_delete_elem(&proctimes_tree_tracked, &tgid);
    e = reserve(PT_TREE_FREE, tgid, BPF_CORE_READ(t, real_parent, tgid), BPF_CORE_READ(t, start_boottime));
    if (!e) return 0;
    e->runtime = BPF_CORE_READ(t, signal, sum_sched_runtime);
    e->utime = BPF_CORE_READ(t, signal, utime);
    e->stime = BPF_CORE_READ(t, signal, stime);
    e->exit_code = BPF_CORE_READ(t, exit_code);
    sigflags = BPF_CORE_READ(t, signal, flags);
    if (sigflags & SIGNAL_GROUP_EXIT) e->exit_code = BPF_CORE_READ(t, signal, group_exit_code);
    BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
    submit(e);
    return 0;
}
