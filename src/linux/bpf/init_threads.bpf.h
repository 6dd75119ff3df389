// SPDX-License-Identifier: MIT OR GPL-2.0-only
/* How the snapshot programs (task_walk.bpf.c, task_iter.bpf.c) reach the
 * init process (global pid 1) on kernels that keep it out of what BPF
 * programs are given: the task iterators pass over it and bpf_task_from_pid(1)
 * finds nothing, though it is on the task list and /proc lists it. The
 * process is the top of the calling task's ancestry (the last task before the
 * idle task, pid 0), and its threads are on its signal_struct's thread list.
 * Every pointer is a read-only view (bpf_rdonly_cast, 6.2+): a load through
 * one that faults reads as 0; the caller holds the RCU read lock (or runs in
 * an iterator, under it), which keeps the lists safe to follow. Loops are
 * bounded with the open-coded number iterator (6.4+). Include after vmlinux.h
 * and the libbpf headers. */
#ifndef PROCTIMES_INIT_THREADS_BPF_H
#define PROCTIMES_INIT_THREADS_BPF_H

extern void* bpf_rdonly_cast(const void* obj, __u32 btf_id) __weak __ksym;
extern int bpf_iter_num_new(struct bpf_iter_num* it, int start, int end) __weak __ksym;
extern int* bpf_iter_num_next(struct bpf_iter_num* it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num* it) __weak __ksym;

/* The most generations followed up the ancestry, and the most threads of the
 * init process followed (bounds for the verifier, far above real ones). */
#define PT_ANCESTRY_MAX 4096
#define PT_INIT_THREADS_MAX 65536

#define pt_task_view(p) ((struct task_struct*)bpf_rdonly_cast((p), bpf_core_type_id_kernel(struct task_struct)))

/* A thread of the init process, as the top of the calling task's ancestry;
 * null when that top is not in thread group 1 (a task the kernel started
 * under kthreadd) or is out of reach. */
static __always_inline struct task_struct* pt_init_thread(void) {
    struct task_struct* t = pt_task_view(bpf_get_current_task_btf());
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
        p = pt_task_view(p);
        if (p->pid == 0) break;
        t = p;
    }
    bpf_iter_num_destroy(&it);
    return t && t->tgid == 1 ? t : NULL;
}

/* The head of the init process's thread list (its signal_struct's
 * thread_head), or null. Its entries are task_structs' thread_node. */
static __always_inline struct list_head* pt_init_thread_head(void) {
    struct task_struct* t = pt_init_thread();
    struct signal_struct* sig;

    if (!t) return NULL;
    sig = t->signal;
    if (!sig) return NULL;
    sig = bpf_rdonly_cast(sig, bpf_core_type_id_kernel(struct signal_struct));
    return &sig->thread_head;
}

/* The entry after `pos` on a thread list, as a read-only view. */
static __always_inline struct list_head* pt_list_next(struct list_head* pos) {
    pos = bpf_rdonly_cast(pos, bpf_core_type_id_kernel(struct list_head));
    return pos->next;
}

/* The task whose thread_node is `pos`. */
static __always_inline struct task_struct* pt_thread_of(struct list_head* pos) {
    return pt_task_view((void*)pos - bpf_core_field_offset(struct task_struct, thread_node));
}

#endif
