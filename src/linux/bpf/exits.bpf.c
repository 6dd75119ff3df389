// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The exit stream. sched_process_exit stamps the instant a task runs
 * do_exit() (in task-local storage); sched_process_free, which fires once the
 * task has been released and its last context switch is behind it (an RCU
 * callback after release_task()), sends its final counters through a ring
 * buffer. A full ring buffer is never silent: each record that did not fit is
 * counted in `dropped`, which user space reads and reports. */
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

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, __u64);
} proctimes_exit_stamp SEC(".maps");

/* Records lost to a full ring buffer, and ends whose exit instant was not
 * stamped (the task-local storage could not be allocated). */
__u64 dropped = 0;
__u64 unstamped = 0;

/* sched_process_exit's arguments changed in 2025 (a group_dead flag was
 * added); the current task is the one exiting on every kernel. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(proctimes_exit) {
    struct task_struct* t = bpf_get_current_task_btf();
    __u64* stamp = bpf_task_storage_get(&proctimes_exit_stamp, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

    if (stamp)
        *stamp = bpf_ktime_get_boot_ns();
    else
        __sync_fetch_and_add(&unstamped, 1);
    return 0;
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(proctimes_free, struct task_struct* t) {
    struct pt_exit_record* r;
    __u64* stamp;
    unsigned int sigflags;

    r = bpf_ringbuf_reserve(&proctimes_exit_ring, sizeof *r, 0);
    if (!r) {
        __sync_fetch_and_add(&dropped, 1);
        return 0;
    }
    __builtin_memset(r, 0, sizeof *r);
    r->free_boottime = bpf_ktime_get_boot_ns();
    stamp = bpf_task_storage_get(&proctimes_exit_stamp, t, 0, 0);
    if (stamp) {
        r->exit_boottime = *stamp;
        bpf_task_storage_delete(&proctimes_exit_stamp, t);
    }
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
    }
    r->version = PT_TASK_RECORD_VERSION;
    BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
    bpf_ringbuf_submit(r, 0);
    return 0;
}
