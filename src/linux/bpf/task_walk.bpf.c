// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The snapshot source on kernels with open-coded task iterators (6.7+): one
 * run of this program (BPF_PROG_RUN from user space) walks every thread of
 * the system with bpf_iter_task_new(BPF_TASK_ITER_ALL_THREADS) under RCU and
 * puts one pt_task_record per task into a ring buffer. Unlike the
 * bpf_iter/task program (task_iter.bpf.c), whose kernel side looks each task
 * up by pid and goes through a seq_file, this follows the task list itself:
 * about a quarter of the kernel time for the same records (docs/BPF.md). */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "task_record.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* The kernel's open-coded task iterator and RCU kfuncs (libbpf 1.1's headers
 * do not declare them). */
extern int bpf_iter_task_new(struct bpf_iter_task* it, struct task_struct* task, unsigned int flags) __weak __ksym;
extern struct task_struct* bpf_iter_task_next(struct bpf_iter_task* it) __weak __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task* it) __weak __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;

/* Sized by user space before loading (at least 4 MiB). */
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 22);
} records SEC(".maps");

/* The last run's counts: records written, and tasks the full ring buffer had
 * no room for (then user space reads the whole system another way). */
unsigned long long walked = 0;
unsigned long long missed = 0;

SEC("syscall")
int proctimes_walk(void* ctx) {
    struct bpf_iter_task it;
    struct task_struct* t;
    struct pt_task_record* r;
    unsigned long long n = 0, m = 0;

    bpf_rcu_read_lock();
    bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
    while ((t = bpf_iter_task_next(&it))) {
        if (t->pid == 0) continue; /* the idle task: /proc does not list it */
        r = bpf_ringbuf_reserve(&records, sizeof *r, 0);
        if (!r) {
            m++;
            continue;
        }
        pt_fill_task_record(r, t);
        bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
        n++;
    }
    bpf_iter_task_destroy(&it);
    bpf_rcu_read_unlock();
    walked = n;
    missed = m;
    return 0;
}
