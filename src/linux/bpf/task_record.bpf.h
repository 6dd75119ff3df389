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
    }
}

#endif
