// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The exit stream. sched_process_exit stamps the instant a task runs
 * do_exit() (in a hash map); sched_process_free, which fires once the
 * task has been released and its last context switch is behind it (an RCU
 * callback after release_task()), sends its final counters through a ring
 * buffer. A full ring buffer is never silent: each record that did not fit is
 * counted in `dropped`, which user space reads and reports, and the task's
 * identity goes through a second, small ring buffer of lost tasks, so that a
 * reader waiting for one task knows whether its end was lost. */
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
} proctimes_exit_ring SEC(".maps");

/* Identities of tasks whose end was lost (struct pt_lost_task): 4,096 of
 * them in flight. One that does not fit either is counted in `lost_unnamed`. */
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 64 * 1024);
} proctimes_lost_ring SEC(".maps");

/* Exit instants by task (its address), from do_exit() until its free. A hash
 * map, not task-local storage: with task storage written at exit, the free
 * program silently stopped running for a few tasks in 10,000 during a storm
 * (kernel 6.18; measured, tests/bpf), and those ends were lost uncounted.
 * Preallocated, so updates never allocate in the tracepoint.
 *
 * Two maps: a small one that takes every stamp while it has room, and a
 * large one for the stamps of a storm (131,072 more tasks between exit and
 * free). User space reads a map whole to find the stamps whose free never
 * ran (the sweep), and that read costs a look at every bucket, full or
 * empty: 131,072 took 0.5-0.8 ms each sweep (a perf profile); with 4,096
 * read instead, the whole reader thread took 14-20 us a second. On a machine where anything ends, some task is nearly
 * always between its exit and its free (the free waits for an RCU grace period, which a lazy-RCU kernel batches), so a
 * sweep is due every few seconds; the large map is read only while it holds a stamp. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1 << 12);
    __type(key, __u64);
    __type(value, struct pt_exit_stamp);
} proctimes_exit_stamp SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 1 << 17);
    __type(key, __u64);
    __type(value, struct pt_exit_stamp);
} proctimes_exit_stamp_more SEC(".maps");

/* Records lost to a full ring buffer, and ends whose exit instant was not
 * stamped (the task-local storage could not be allocated). */
__u64 dropped = 0;
__u64 unstamped = 0;
/* Runs of each program, and records submitted (diagnostics: free_runs ==
 * submitted + dropped). */
__u64 exit_runs = 0;
__u64 free_runs = 0;
__u64 submitted = 0;
/* Stamps user space had already counted as lost (their task was gone for
 * seconds without its free running) whose free then ran after all: their
 * records were delivered, so they come off the loss count. */
__u64 found_after_sweep = 0;
/* Stamps in each map now, as the programs made and deleted them (user space
 * subtracts its sweeps' deletes): none means a sweep has nothing to find
 * there, and reading every bucket of that map is skipped. */
__s64 stamps_live = 0;
__s64 stamps_live_more = 0;
/* Stamps found at a new task's address: ends whose free never ran. */
__u64 freed_unseen = 0;
/* Lost ends whose identity did not fit in proctimes_lost_ring either. */
__u64 lost_unnamed = 0;

static __always_inline void report_lost(__u32 tgid, __u32 pid, __u64 start_boottime) {
    struct pt_lost_task* l = bpf_ringbuf_reserve(&proctimes_lost_ring, sizeof *l, 0);
    if (!l) {
        __sync_fetch_and_add(&lost_unnamed, 1);
        return;
    }
    l->start_boottime = start_boottime;
    l->tgid = tgid;
    l->pid = pid;
    bpf_ringbuf_submit(l, 0);
}

/* sched_process_exit's arguments changed in 2025 (a group_dead flag was
 * added); the current task is the one exiting on every kernel. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proctimes_exit) {
    struct task_struct* t = bpf_get_current_task_btf();
    __u64 key = (__u64)t;
    struct pt_exit_stamp now = {};

    __sync_fetch_and_add(&exit_runs, 1);
    now.exit_boottime = bpf_ktime_get_boot_ns();
    now.start_boottime = t->start_boottime;
    now.tgid = t->tgid;
    now.pid = t->pid;
    /* A stamp already at this address (in either map) is a task that was
     * freed without the free program running for it (its memory is now this
     * task's): that end was lost, and is counted here. The new stamp takes
     * its place, and the map's count stands. */
    struct pt_exit_stamp* old = bpf_map_lookup_elem(&proctimes_exit_stamp, &key);
    struct pt_exit_stamp* old_more = old ? 0 : bpf_map_lookup_elem(&proctimes_exit_stamp_more, &key);
    struct pt_exit_stamp* found = old ? old : old_more;
    if (found && found->exit_boottime) {
        __sync_fetch_and_add(&freed_unseen, 1);
        report_lost(found->tgid, found->pid, found->start_boottime);
    }
    /* An update fails when both maps are full (135,168 tasks between exit and
     * free) or busy on this CPU: that end comes without its instant, and is
     * counted. */
    if (old) {
        if (bpf_map_update_elem(&proctimes_exit_stamp, &key, &now, BPF_ANY) != 0) __sync_fetch_and_add(&unstamped, 1);
    } else if (old_more) {
        if (bpf_map_update_elem(&proctimes_exit_stamp_more, &key, &now, BPF_ANY) != 0)
            __sync_fetch_and_add(&unstamped, 1);
    } else if (bpf_map_update_elem(&proctimes_exit_stamp, &key, &now, BPF_NOEXIST) == 0) {
        __sync_fetch_and_add(&stamps_live, 1);
    } else if (bpf_map_update_elem(&proctimes_exit_stamp_more, &key, &now, BPF_NOEXIST) == 0) {
        __sync_fetch_and_add(&stamps_live_more, 1);
    } else {
        __sync_fetch_and_add(&unstamped, 1);
    }
    return 0;
}

/* The exec program's record is built here (it is larger than the BPF stack). */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct pt_exec_record);
} proctimes_exec_scratch SEC(".maps");

/* Exec records sent, and those the ring buffer had no room for. */
__u64 execs_sent = 0;
__u64 execs_dropped = 0;
/* Of those, the ones that could not be marked in proctimes_exec_lost
 * either: user space can no longer tell which command lines are stale. */
__u64 execs_unmarked = 0;
/* An exec record was sent without waking the reader. Waking it is the
 * costly part of sending a record (17 us of a 19 us run, measured on a VM:
 * a self-IPI and the wake-up); an exec record needs no hurry, since its
 * process's end comes after it. But the ring buffer's adaptive wake-up
 * only wakes a reader that has read everything before the new record, so
 * the next end record forces the wake-up instead. */
__u32 exec_unwoken = 0;
/* Set by a reader that takes records itself when it reads (user space's
 * `on_read`): an end record wakes it only once this many bytes wait in the
 * ring buffer (a quarter of it); 0: every record wakes a reader that has
 * caught up (the ring buffer's own rule). */
__u64 lazy_wakeup = 0;

/* Processes whose latest exec record did not fit in the ring buffer, by tgid
 * (the value: the process's start_boottime). The free program marks the
 * process's end record with PT_EXEC_LOST, so that its reader does not take
 * an earlier exec's command line for the last one. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 4096);
    __type(key, __u32);
    __type(value, __u64);
} proctimes_exec_lost SEC(".maps");

/* Takes a task's exit instant from its stamp in `map` and deletes the stamp.
 * Marked consumed first: should the delete fail because the map is busy on
 * this CPU, the stamp left behind is never counted as a loss (the sweep
 * removes it later). If it fails because user space's sweep deleted it
 * first, the sweep counted this end as lost, and this record takes that
 * back. */
static __always_inline __u64 consume_stamp(void* map, __s64* live, struct pt_exit_stamp* stamp, __u64 key) {
    __u64 exit_boottime = stamp->exit_boottime;
    stamp->exit_boottime = 0;
    stamp->start_boottime = bpf_ktime_get_boot_ns();
    if (bpf_map_delete_elem(map, &key) == 0)
        __sync_fetch_and_sub(live, 1);
    else if (!bpf_map_lookup_elem(map, &key))
        __sync_fetch_and_add(&found_after_sweep, 1);
    return exit_boottime;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(proctimes_free, struct task_struct* t) {
    struct pt_exit_record* r;
    struct pt_exit_stamp* stamp;
    __u64 key, exit_boottime = 0;
    unsigned int sigflags;

    __sync_fetch_and_add(&free_runs, 1);
    key = (__u64)t;
    /* The stamp is taken (and consumed) first, so that a record that does
     * not fit leaves no stamp behind to be counted a second time. */
    stamp = bpf_map_lookup_elem(&proctimes_exit_stamp, &key);
    if (stamp)
        exit_boottime = consume_stamp(&proctimes_exit_stamp, &stamps_live, stamp, key);
    else if ((stamp = bpf_map_lookup_elem(&proctimes_exit_stamp_more, &key)))
        exit_boottime = consume_stamp(&proctimes_exit_stamp_more, &stamps_live_more, stamp, key);
    r = bpf_ringbuf_reserve(&proctimes_exit_ring, sizeof *r, 0);
    if (!r) {
        __sync_fetch_and_add(&dropped, 1);
        report_lost(BPF_CORE_READ(t, tgid), BPF_CORE_READ(t, pid), BPF_CORE_READ(t, start_boottime));
        return 0;
    }
    __builtin_memset(r, 0, sizeof *r);
    r->free_boottime = bpf_ktime_get_boot_ns();
    r->exit_boottime = exit_boottime;
    r->start_boottime = BPF_CORE_READ(t, start_boottime);
    r->runtime = BPF_CORE_READ(t, se.sum_exec_runtime);
    r->utime = BPF_CORE_READ(t, utime);
    r->stime = BPF_CORE_READ(t, stime);
    r->tgid = BPF_CORE_READ(t, tgid);
    r->pid = BPF_CORE_READ(t, pid);
    r->ppid = BPF_CORE_READ(t, real_parent, tgid);
    r->euid = BPF_CORE_READ(t, real_cred, euid.val);
    r->flags = BPF_CORE_READ(t, flags);
    r->exit_code = BPF_CORE_READ(t, exit_code);
    if (r->tgid == r->pid) {
        r->group_runtime = BPF_CORE_READ(t, signal, sum_sched_runtime);
        r->group_utime = BPF_CORE_READ(t, signal, utime);
        r->group_stime = BPF_CORE_READ(t, signal, stime);
        sigflags = BPF_CORE_READ(t, signal, flags);
        /* What wait(2) reports for the process (wait_task_zombie()). */
        if (sigflags & SIGNAL_GROUP_EXIT) r->exit_code = BPF_CORE_READ(t, signal, group_exit_code);
        if (bpf_core_field_exists(t->signal->stats)) {
            r->reserved = PT_GROUP_KNOWN;
            if (BPF_CORE_READ(t, signal, stats)) r->reserved |= PT_GROUP_HAD_THREADS;
        }
        {
            __u32 tgid = r->tgid;
            __u64* lost = bpf_map_lookup_elem(&proctimes_exec_lost, &tgid);
            if (lost && *lost == r->start_boottime) {
                r->reserved |= PT_EXEC_LOST;
                bpf_map_delete_elem(&proctimes_exec_lost, &tgid);
            }
        }
    }
    r->version = PT_TASK_RECORD_VERSION;
    BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
    if (lazy_wakeup) {
        bpf_ringbuf_submit(r, bpf_ringbuf_query(&proctimes_exit_ring, BPF_RB_AVAIL_DATA) >= lazy_wakeup
                                  ? BPF_RB_FORCE_WAKEUP
                                  : BPF_RB_NO_WAKEUP);
    } else if (exec_unwoken) {
        exec_unwoken = 0;
        bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
    } else {
        bpf_ringbuf_submit(r, 0);
    }
    __sync_fetch_and_add(&submitted, 1);
    return 0;
}

/* A process's exec, with its new command line: what the rules of a reader
 * that groups processes by command line need for a process it never sees
 * alive. Loaded only when the reader asks for command lines. The argument
 * area has just been written to the new program's stack by the kernel, so
 * reading it does not fault. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(proctimes_exec, struct task_struct* p, pid_t old_pid, struct linux_binprm* bprm) {
    __u32 zero = 0;
    struct pt_exec_record* x = bpf_map_lookup_elem(&proctimes_exec_scratch, &zero);
    struct mm_struct* mm = p->mm;
    unsigned long start, end, len;
    __u64 size;

    if (!x) return 0;
    x->start_boottime = p->start_boottime;
    x->boottime = bpf_ktime_get_boot_ns();
    x->magic = PT_EXEC_RECORD_MAGIC;
    x->tgid = p->tgid;
    x->argv_len = 0;
    start = mm ? mm->arg_start : 0;
    end = mm ? mm->arg_end : 0;
    len = end > start ? end - start : 0;
    x->argv_total = len > 0xffffffffUL ? 0xffffffffU : (__u32)len;
    /* Too long to copy whole: sent without it (unknown, never cut). */
    if (len > PT_EXEC_ARGV_MAX) len = 0;
    /* The padding of a short record is zeros, not an earlier exec's bytes. */
    __builtin_memset(x->argv, 0, PT_EXEC_RECORD_MIN);
    if (len && bpf_probe_read_user(x->argv, len, (const void*)start) == 0)
        x->argv_len = (__u32)len;
    else
        len = 0;
    size = __builtin_offsetof(struct pt_exec_record, argv) + len;
    if (size < PT_EXEC_RECORD_MIN) size = PT_EXEC_RECORD_MIN;
    if (bpf_ringbuf_output(&proctimes_exit_ring, x, size, BPF_RB_NO_WAKEUP) != 0) {
        __u32 tgid = x->tgid;
        __u64 start_boottime = x->start_boottime;
        __sync_fetch_and_add(&execs_dropped, 1);
        if (bpf_map_update_elem(&proctimes_exec_lost, &tgid, &start_boottime, BPF_ANY) != 0)
            __sync_fetch_and_add(&execs_unmarked, 1);
        return 0;
    }
    __sync_fetch_and_add(&execs_sent, 1);
    if (!exec_unwoken) exec_unwoken = 1;
    return 0;
}
