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
    struct pt_task_record r = {};

    if (!t) return 0;
    r.start_boottime = BPF_CORE_READ(t, start_boottime);
    r.runtime = BPF_CORE_READ(t, se.sum_exec_runtime);
    r.utime = BPF_CORE_READ(t, utime);
    r.stime = BPF_CORE_READ(t, stime);
    r.group_runtime = BPF_CORE_READ(t, signal, sum_sched_runtime);
    r.group_utime = BPF_CORE_READ(t, signal, utime);
    r.group_stime = BPF_CORE_READ(t, signal, stime);
    r.nr_threads = BPF_CORE_READ(t, signal, nr_threads);
    r.tgid = BPF_CORE_READ(t, tgid);
    r.pid = BPF_CORE_READ(t, pid);
    r.ppid = BPF_CORE_READ(t, real_parent, tgid);
    r.euid = BPF_CORE_READ(t, real_cred, euid.val);
    r.flags = BPF_CORE_READ(t, flags);
    r.state = BPF_CORE_READ(t, __state);
    r.exit_state = BPF_CORE_READ(t, exit_state);
    BPF_CORE_READ_STR_INTO(&r.comm, t, comm);
    bpf_seq_write(seq, &r, sizeof r);
    return 0;
}
