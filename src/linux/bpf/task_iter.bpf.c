// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The snapshot source on kernels without open-coded task iterators (before
 * 6.7; task_walk.bpf.c otherwise): a bpf_iter/task program that writes one
 * pt_task_record per task into the seq_file that user space reads. One
 * read(2) of the iterator's file returns the whole system; the kernel walks
 * its task list under RCU, so no /proc file is generated. */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "task_record.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

SEC("iter/task")
int proctimes_tasks(struct bpf_iter__task* ctx) {
    struct seq_file* seq = ctx->meta->seq;
    struct task_struct* t = ctx->task;
    struct pt_task_record r;

    if (!t) return 0;
    pt_fill_task_record(&r, t);
    bpf_seq_write(seq, &r, sizeof r);
    return 0;
}
