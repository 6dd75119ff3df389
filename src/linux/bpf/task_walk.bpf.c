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
 * no task of thread group 1 therefore reaches that process as the top of the
 * caller's ancestry and follows its thread list itself (read-only loads,
 * under the same RCU read section), so that every kernel lists it exactly
 * once (docs/BPF.md "The task walk"). */
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
/* For the init process: a read-only view of a kernel address as a type
 * (6.2+) and a bounded loop (6.4+); every kernel with the open-coded task
 * iterator has them. */
extern void* bpf_rdonly_cast(const void* obj, __u32 btf_id) __weak __ksym;
extern int bpf_iter_num_new(struct bpf_iter_num* it, int start, int end) __weak __ksym;
extern int* bpf_iter_num_next(struct bpf_iter_num* it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num* it) __weak __ksym;

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

/* The most threads of the init process followed (a bound for the verifier;
 * far above what an init process runs). */
#define PT_INIT_THREADS_MAX 65536

/* One record for `t` into the ring buffer; false when it had no room. */
static __always_inline bool pt_put(struct task_struct* t) {
    struct pt_task_record* r = bpf_ringbuf_reserve(&records, sizeof *r, 0);
    if (!r) return false;
    pt_fill_task_record(r, t);
    bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
    return true;
}

/* The task (any thread) at the top of the calling task's ancestry: the last
 * one before the idle task (pid 0). For a process started from user space
 * that is a thread of the init process (global pid 1), in whatever pid
 * namespace the caller runs; null past PT_ANCESTRY_MAX generations. */
#define PT_ANCESTRY_MAX 4096
static __always_inline struct task_struct* pt_top_ancestor(void) {
    struct task_struct *t = bpf_rdonly_cast(bpf_get_current_task_btf(), bpf_core_type_id_kernel(struct task_struct));
    struct task_struct* p;
    struct bpf_iter_num it;
    int* i;

    bpf_iter_num_new(&it, 0, PT_ANCESTRY_MAX);
    while ((i = bpf_iter_num_next(&it))) {
        p = t->real_parent;
        if (!p) {
            t = NULL;
            break;
        }
        p = bpf_rdonly_cast(p, bpf_core_type_id_kernel(struct task_struct));
        if (p->pid == 0) break;
        t = p;
    }
    bpf_iter_num_destroy(&it);
    return t && t->real_parent && t->tgid == 1 ? t : NULL;
}

/* Puts every thread of the init process (global pid 1), reached as the top
 * of the caller's ancestry and followed along its signal_struct's thread
 * list, and counts them into *n (records) and *m (no room). Called only when
 * the iterator gave no task of thread group 1, so no task is put twice. The
 * pointers are read-only views (bpf_rdonly_cast): a load from one that
 * faults reads as 0, and the caller's RCU read section keeps the list safe to
 * follow. */
static __always_inline void pt_put_init_threads(unsigned long long* n, unsigned long long* m) {
    struct task_struct *top, *t;
    struct signal_struct* sig;
    struct list_head *head, *pos;
    struct bpf_iter_num it;
    unsigned long long added = 0;
    unsigned long off;
    int* i;

    top = pt_top_ancestor();
    if (!top) return;
    sig = top->signal;
    if (!sig) return;
    sig = bpf_rdonly_cast(sig, bpf_core_type_id_kernel(struct signal_struct));
    off = bpf_core_field_offset(struct task_struct, thread_node);
    head = &sig->thread_head;
    pos = head->next;
    bpf_iter_num_new(&it, 0, PT_INIT_THREADS_MAX);
    while ((i = bpf_iter_num_next(&it))) {
        if (!pos || pos == head) break;
        t = bpf_rdonly_cast((void*)pos - off, bpf_core_type_id_kernel(struct task_struct));
        if (t->tgid == 1 && t->pid != 0) {
            if (pt_put(t)) {
                (*n)++;
                added++;
            } else {
                (*m)++;
            }
        }
        pos = bpf_rdonly_cast(pos, bpf_core_type_id_kernel(struct list_head));
        pos = pos->next;
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
