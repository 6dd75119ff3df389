// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* The snapshot source on kernels with open-coded task iterators (6.7+): one
 * run of this program (BPF_PROG_RUN from user space) walks every thread of
 * the system with bpf_iter_task_new(BPF_TASK_ITER_ALL_THREADS) under RCU and
 * puts one pt_task_record per task into a ring buffer. Unlike the
 * bpf_iter/task program (task_iter.bpf.c), whose kernel side looks each task
 * up by pid and goes through a seq_file, this follows the task list itself:
 * about a quarter of the kernel time for the same records (docs/BPF.md).
 *
 * Some kernels keep the init process (global pid 1) out of what BPF programs
 * are given: the task iterators pass over it and bpf_task_from_pid(1) finds
 * nothing, though it is on the task list and /proc lists it. A walk that met
 * no task of thread group 1 therefore reaches that process itself
 * (init_threads.bpf.h), under the same RCU read section, so that every kernel
 * lists it exactly once (docs/BPF.md "The task walk"). */
// vmlinux.h first: the libbpf headers use its kernel types.
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "init_threads.bpf.h"
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
/* Of `walked`: the records of the init process's threads that the task
 * iterator did not give and the walk added itself. */
unsigned long long init_added = 0;

/* One record for `t` into the ring buffer; false when it had no room. */
static __always_inline bool pt_put(struct task_struct* t) {
    struct pt_task_record* r = bpf_ringbuf_reserve(&records, sizeof *r, 0);
    if (!r) return false;
    pt_fill_task_record(r, t);
    bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
    return true;
}

/* Puts every thread of the init process (init_threads.bpf.h) and counts them
 * into *n (records) and *m (no room). Called only when the iterator gave no
 * task of thread group 1, so no task is put twice. */
static __always_inline void pt_put_init_threads(unsigned long long* n, unsigned long long* m) {
    struct list_head *head = pt_init_thread_head(), *pos;
    struct task_struct* t;
    struct bpf_iter_num it;
    unsigned long long added = 0;
    int* i;

    if (!head) return;
    pos = pt_list_next(head);
    bpf_iter_num_new(&it, 0, PT_INIT_THREADS_MAX);
    while ((i = bpf_iter_num_next(&it))) {
        if (!pos || pos == head) break;
        t = pt_thread_of(pos);
        if (t->tgid == 1 && t->pid != 0) {
            if (pt_put(t)) {
                (*n)++;
                added++;
            } else {
                (*m)++;
            }
        }
        pos = pt_list_next(pos);
    }
    bpf_iter_num_destroy(&it);
    init_added = added;
}

SEC("syscall")
int proctimes_walk(void* ctx) {
    struct bpf_iter_task it;
    struct task_struct* t;
    unsigned long long n = 0, m = 0;
    bool init_seen = false;

    bpf_rcu_read_lock();
    bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_THREADS);
    while ((t = bpf_iter_task_next(&it))) {
        if (t->pid == 0) continue; /* the idle task: /proc does not list it */
        if (t->tgid == 1) init_seen = true;
        if (pt_put(t))
            n++;
        else
            m++;
    }
    bpf_iter_task_destroy(&it);
    init_added = 0;
    if (!init_seen) pt_put_init_threads(&n, &m);
    bpf_rcu_read_unlock();
    walked = n;
    missed = m;
    return 0;
}
