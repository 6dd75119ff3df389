// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* What the snapshot programs (task_iter.bpf.c, task_walk.bpf.c) write for one
 * task: a pt_task_record filled from the task by direct loads through its BTF
 * pointer (CO-RE relocated by vmlinux.h's preserve_access_index). The
 * verifier checks them once, and each is one instruction, where a
 * bpf_probe_read_kernel() call costs a helper call and a fault-safe copy
 * (docs/BPF.md "What it costs"). A fault on a pointer the kernel freed
 * meanwhile reads as 0. Include after vmlinux.h and the libbpf headers. */
#ifndef PROCTIMES_TASK_RECORD_BPF_H
#define PROCTIMES_TASK_RECORD_BPF_H

#include "bpf_record_layout.h"

/* A process's address-space counters (get_mm_counter()): an array of
 * percpu_counter from Linux 6.2, a struct of atomic_long_t before. Both
 * flavours are named here, not taken from vmlinux.h, so that either builds
 * on either kernel's BTF; CO-RE keeps the one the running kernel has. */
struct pt_percpu_counter___new {
    long long count;
} __attribute__((preserve_access_index));
struct mm_struct___new {
    struct pt_percpu_counter___new rss_stat[4];
} __attribute__((preserve_access_index));
struct pt_atomic_long___old {
    long counter;
} __attribute__((preserve_access_index));
struct mm_rss_stat___old {
    struct pt_atomic_long___old count[4];
} __attribute__((preserve_access_index));
struct mm_struct___old {
    struct mm_rss_stat___old rss_stat;
} __attribute__((preserve_access_index));

/* MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES (include/linux/mm_types_task.h). */
#define PT_MM_FILE 0
#define PT_MM_ANON 1
#define PT_MM_SWAP 2
#define PT_MM_SHMEM 3
#define PT_RLIMIT_NOFILE 7 /* include/uapi/asm-generic/resource.h */
/* get_mm_counter(): a counter never reads below 0. */
#define PT_POSITIVE(v) ((v) < 0 ? 0ULL : (unsigned long long)(v))

static __always_inline void pt_fill_memory(struct pt_task_record* r, struct mm_struct* mm) {
    struct mm_struct___new* mn = (void*)mm;
    struct mm_struct___old* mo = (void*)mm;

    if (!mm) return; /* a kernel thread, a leader that exited: stat shows 0 */
    if (bpf_core_field_exists(mn->rss_stat)) {
        r->rss_pages = PT_POSITIVE(mn->rss_stat[PT_MM_FILE].count) + PT_POSITIVE(mn->rss_stat[PT_MM_ANON].count) +
                       PT_POSITIVE(mn->rss_stat[PT_MM_SHMEM].count);
        r->swap_pages = PT_POSITIVE(mn->rss_stat[PT_MM_SWAP].count);
    } else if (bpf_core_field_exists(mo->rss_stat)) {
        r->rss_pages = PT_POSITIVE(mo->rss_stat.count[PT_MM_FILE].counter) +
                       PT_POSITIVE(mo->rss_stat.count[PT_MM_ANON].counter) +
                       PT_POSITIVE(mo->rss_stat.count[PT_MM_SHMEM].counter);
        r->swap_pages = PT_POSITIVE(mo->rss_stat.count[PT_MM_SWAP].counter);
    } else {
        return;
    }
    r->total_vm = mm->total_vm;
    r->counters |= PT_COUNTERS_MEMORY;
}

static __always_inline void pt_fill_task_record(struct pt_task_record* r, struct task_struct* t) {
    struct signal_struct* sig;

    __builtin_memset(r, 0, sizeof *r);
    r->start_boottime = t->start_boottime;
    r->runtime = t->se.sum_exec_runtime;
    r->utime = t->utime;
    r->stime = t->stime;
    r->tgid = t->tgid;
    r->pid = t->pid;
    r->flags = t->flags;
    r->state = t->__state;
    r->exit_state = t->exit_state;
    BPF_CORE_READ_STR_INTO(&r->comm, t, comm);
    r->min_flt = t->min_flt;
    r->maj_flt = t->maj_flt;
    r->nvcsw = t->nvcsw;
    r->nivcsw = t->nivcsw;
    r->counters = PT_COUNTERS_FAULTS_SWITCHES;
    if (bpf_core_field_exists(t->ioac.read_bytes)) {
        r->read_bytes = t->ioac.read_bytes;
        r->write_bytes = t->ioac.write_bytes;
        r->counters |= PT_COUNTERS_IO;
    }
    /* What belongs to the process (its thread group), read once, from the
     * leader's record; other threads leave these 0 (user space reads them
     * from the leader only). */
    if (r->pid == r->tgid) {
        sig = t->signal;
        r->group_runtime = sig->sum_sched_runtime;
        r->group_utime = sig->utime;
        r->group_stime = sig->stime;
        r->children_utime = sig->cutime;
        r->children_stime = sig->cstime;
        r->nr_threads = sig->nr_threads;
        r->group_min_flt = sig->min_flt;
        r->group_maj_flt = sig->maj_flt;
        if (bpf_core_field_exists(sig->ioac.read_bytes)) {
            r->group_read_bytes = sig->ioac.read_bytes;
            r->group_write_bytes = sig->ioac.write_bytes;
        }
        r->ppid = t->real_parent->tgid;
        r->euid = t->real_cred->euid.val;
        pt_fill_memory(r, t->mm);
        r->nofile_cur = sig->rlim[PT_RLIMIT_NOFILE].rlim_cur;
        r->counters |= PT_COUNTERS_LIMIT;
    }
}

#endif
