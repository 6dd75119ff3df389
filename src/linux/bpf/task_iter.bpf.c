// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The snapshot source: a bpf_iter/task program that writes one
 * pt_task_record per task into the seq_file that user space reads. One
 * read(2) of the iterator's file returns the whole system; the kernel walks
 * its task list under RCU, so no /proc file is generated. */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf_record_layout.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("iter/task")
int proctimes_tasks(struct bpf_iter__task* ctx) {
    struct seq_file* seq = ctx->meta->seq;
    struct task_struct* t = ctx->task;
    struct signal_struct* sig;
    struct pt_task_record r = {};

    if (!t) return 0;
    /* Direct loads through the task's BTF pointer (CO-RE relocated by
     * vmlinux.h's preserve_access_index): the verifier checks them once, and
     * each is one instruction, where a bpf_probe_read_kernel() call costs a
     * helper call and a fault-safe copy (most of this program's time when it
     * used them, docs/BPF.md "What it costs"). A fault on a pointer the
     * kernel freed meanwhile reads as 0. */
    r.start_boottime = t->start_boottime;
    r.runtime = t->se.sum_exec_runtime;
    r.utime = t->utime;
    r.stime = t->stime;
    r.tgid = t->tgid;
    r.pid = t->pid;
    r.flags = t->flags;
    r.state = t->__state;
    r.exit_state = t->exit_state;
    BPF_CORE_READ_STR_INTO(&r.comm, t, comm);
    /* What belongs to the process (its thread group), read once, from the
     * leader's record; other threads leave these 0 (user space reads them
     * from the leader only). */
    if (r.pid == r.tgid) {
        sig = t->signal;
        r.group_runtime = sig->sum_sched_runtime;
        r.group_utime = sig->utime;
        r.group_stime = sig->stime;
        r.children_utime = sig->cutime;
        r.children_stime = sig->cstime;
        r.nr_threads = sig->nr_threads;
        r.ppid = t->real_parent->tgid;
        r.euid = t->real_cred->euid.val;
    }
    bpf_seq_write(seq, &r, sizeof r);
    return 0;
}
