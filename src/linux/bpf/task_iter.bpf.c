// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The snapshot source on kernels without open-coded task iterators (before
 * 6.7; task_walk.bpf.c otherwise): a bpf_iter/task program that writes one
 * pt_task_record per task into the seq_file that user space reads. One
 * read(2) of the iterator's file returns the whole system; the kernel walks
 * its task list under RCU, so no /proc file is generated.
 *
 * Two versions of the program: proctimes_tasks_init also lists the init
 * process (global pid 1) where the kernel keeps it out of the iterator
 * (init_threads.bpf.h): at the end of the walk, if no task of thread group 1
 * came by, it writes that process's threads itself. It needs kfuncs of 6.4;
 * user space loads proctimes_tasks where the kernel refuses it. */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "init_threads.bpf.h"
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

/* Whether the walk under way has given a task of thread group 1 (reset at
 * its first task). User space reads one walk at a time. */
unsigned int init_seen = 0;

SEC("iter/task")
int proctimes_tasks_init(struct bpf_iter__task* ctx) {
    struct seq_file* seq = ctx->meta->seq;
    struct task_struct* t = ctx->task;
    struct pt_task_record r;
    struct list_head *head, *pos;
    struct bpf_iter_num it;
    int* i;

    if (t) {
        if (ctx->meta->seq_num == 0) init_seen = 0;
        if (t->tgid == 1) init_seen = 1;
        pt_fill_task_record(&r, t);
        bpf_seq_write(seq, &r, sizeof r);
        return 0;
    }
    /* The end of the walk (the kernel runs the program once more, without a
     * task). What it writes here and does not fit the read is dropped, and
     * the next read(2) runs it again: never written twice. */
    if (init_seen) return 0;
    head = pt_init_thread_head();
    if (!head) return 0;
    pos = pt_list_next(head);
    bpf_iter_num_new(&it, 0, PT_INIT_THREADS_MAX);
    while ((i = bpf_iter_num_next(&it))) {
        if (!pos || pos == head) break;
        t = pt_thread_of(pos);
        if (t->tgid == 1 && t->pid != 0) {
            pt_fill_task_record(&r, t);
            if (bpf_seq_write(seq, &r, sizeof r) != 0) break;
        }
        pos = pt_list_next(pos);
    }
    bpf_iter_num_destroy(&it);
    return 0;
}
