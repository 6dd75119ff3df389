// SPDX-License-Identifier: MIT
/* The records the proctimes BPF programs hand to user space: one layout,
 * included by the BPF programs (C, compiled with clang -target bpf) and by
 * the C++ parser (src/parse/bpf_records.cpp). Fixed size, native byte order,
 * no padding holes (every field is naturally aligned and the sizes are
 * asserted on the C++ side). Times are nanoseconds of CLOCK_BOOTTIME (the
 * kernel's start_boottime and bpf_ktime_get_boot_ns()) or of CPU time
 * (se.sum_exec_runtime, utime, stime: the kernel's u64 nanosecond counters). */
#ifndef PROCTIMES_BPF_RECORDS_H
#define PROCTIMES_BPF_RECORDS_H

#define PT_COMM_LEN 16
#define PT_TASK_RECORD_VERSION 1

/* One task (thread) as the task iterator saw it. The group_* fields are the
 * thread group's signal_struct totals of its threads that already ended
 * (signal->sum_sched_runtime, ->utime, ->stime); a process's total is those
 * plus the live threads' own values, exactly what the process CPU clock and
 * /proc/<pid>/stat add up. children_* are the CPU of the children it reaped
 * (and of theirs), as wait(2) added them: /proc/<pid>/stat's cutime and
 * cstime, in nanoseconds rather than ticks. The thread group's fields
 * (group_*, children_*, ppid, euid, nr_threads) are filled in the leader's
 * record only, and 0 in the other threads'. */
struct pt_task_record {
    unsigned long long start_boottime; /* task->start_boottime, ns since boot */
    unsigned long long runtime;        /* task->se.sum_exec_runtime, ns */
    unsigned long long utime;          /* task->utime, ns (tick-sampled) */
    unsigned long long stime;          /* task->stime, ns (tick-sampled) */
    unsigned long long group_runtime;  /* task->signal->sum_sched_runtime */
    unsigned long long group_utime;    /* task->signal->utime */
    unsigned long long group_stime;    /* task->signal->stime */
    unsigned long long children_utime; /* task->signal->cutime: reaped children, waited-for, ns */
    unsigned long long children_stime; /* task->signal->cstime */
    unsigned int tgid;
    unsigned int pid;
    unsigned int ppid;       /* task->real_parent->tgid */
    unsigned int euid;       /* task->real_cred->euid (objective) */
    unsigned int flags;      /* task->flags (PF_KTHREAD = 0x00200000) */
    unsigned int state;      /* task->__state */
    unsigned int exit_state; /* task->exit_state */
    int nr_threads;          /* task->signal->nr_threads */
    char comm[PT_COMM_LEN];
    /* This task's own counters, as /proc/<pid>/task/<tid>/ shows them: */
    unsigned long long min_flt;     /* task->min_flt (stat field 10) */
    unsigned long long maj_flt;     /* task->maj_flt (stat field 12) */
    unsigned long long nvcsw;       /* task->nvcsw (status voluntary_ctxt_switches) */
    unsigned long long nivcsw;      /* task->nivcsw (status nonvoluntary_ctxt_switches) */
    unsigned long long read_bytes;  /* task->ioac.read_bytes (io read_bytes) */
    unsigned long long write_bytes; /* task->ioac.write_bytes (io write_bytes) */
    unsigned int counters;          /* PT_COUNTERS_*: which of the above the kernel has */
    unsigned int reserved;
    /* Leader only: what the group's ended threads left (task->signal), which
     * /proc/<pid>/stat and io add to the live threads' own: */
    unsigned long long group_min_flt;     /* signal->min_flt */
    unsigned long long group_maj_flt;     /* signal->maj_flt */
    unsigned long long group_read_bytes;  /* signal->ioac.read_bytes (with PT_COUNTERS_IO) */
    unsigned long long group_write_bytes; /* signal->ioac.write_bytes */
    /* Leader only (with PT_COUNTERS_MEMORY): its address space's counters
     * (task->mm), in pages, as /proc/<pid>/stat and status state them: */
    unsigned long long rss_pages;  /* MM_FILEPAGES + MM_ANONPAGES + MM_SHMEMPAGES (stat rss) */
    unsigned long long swap_pages; /* MM_SWAPENTS (status VmSwap) */
    unsigned long long total_vm;   /* mm->total_vm (stat vsize / the page size) */
    /* Leader only (with PT_COUNTERS_LIMIT): */
    unsigned long long nofile_cur; /* signal->rlim[RLIMIT_NOFILE].rlim_cur (prlimit(2); ~0: unlimited) */
};
/* pt_task_record.counters */
#define PT_COUNTERS_FAULTS_SWITCHES 0x1u /* min_flt, maj_flt, nvcsw, nivcsw */
#define PT_COUNTERS_IO 0x2u              /* read_bytes, write_bytes (CONFIG_TASK_IO_ACCOUNTING) */
#define PT_COUNTERS_MEMORY 0x4u          /* rss_pages, swap_pages, total_vm (a leader with an mm) */
#define PT_COUNTERS_LIMIT 0x8u           /* nofile_cur (a leader) */

/* One task's end, emitted from sched_process_free: the task has been reaped
 * (released) and has switched out for the last time, so its counters are
 * final. A process's record is its leader's, emitted when the whole group has
 * been released; its group_* fields then hold the totals of every thread. */
struct pt_exit_record {
    unsigned long long start_boottime; /* ns since boot */
    unsigned long long exit_boottime;  /* when do_exit() ran (sched_process_exit), ns since boot; 0 if unseen */
    unsigned long long free_boottime;  /* when the record was made (sched_process_free), ns since boot */
    unsigned long long runtime;        /* this thread's final se.sum_exec_runtime */
    unsigned long long utime;
    unsigned long long stime;
    unsigned long long group_runtime; /* leader only: the group's final totals */
    unsigned long long group_utime;
    unsigned long long group_stime;
    unsigned int tgid;
    unsigned int pid;
    unsigned int ppid;
    unsigned int euid;
    unsigned int flags;   /* task->flags */
    int exit_code;        /* wait status: (code << 8) | signal (| 0x80 core) */
    unsigned int version; /* PT_TASK_RECORD_VERSION */
    unsigned int reserved;
    char comm[PT_COMM_LEN];
};

/* The exit program's stamp of a task, kept in a hash map by the task's
 * address until the free program takes it. User space reads the ones left
 * behind (a task gone without its free running) to count them as lost. */
struct pt_exit_stamp {
    unsigned long long exit_boottime;  /* when do_exit() ran, ns since boot */
    unsigned long long start_boottime; /* ns since boot */
    unsigned int tgid;
    unsigned int pid;
};
/* A task whose end was lost, as far as the programs know who it was: sent
 * through a second, small ring buffer when its record did not fit in the
 * first, and when a task's stamp is found left behind (its free program never
 * ran). User space hands the identity on, so that a reader waiting for one
 * task's end knows whether that end was lost. */
struct pt_lost_task {
    unsigned long long start_boottime; /* ns since boot */
    unsigned int tgid;
    unsigned int pid;
};
/* A process's exec, sent by the exit stream's exec program through the same
 * ring buffer as the exit records, so that it always comes before the
 * process's end: the new program's argument area, as /proc/<pid>/cmdline
 * reads it. A sample is the 32-byte header and argv_len bytes, padded with
 * zeros to at least PT_EXEC_RECORD_MIN bytes: never the size of a
 * pt_exit_record, which is how a reader tells the two apart. An argument area
 * longer than PT_EXEC_ARGV_MAX is not copied (argv_len 0, argv_total its
 * size): the command line is then unknown, never cut. */
#define PT_EXEC_RECORD_MAGIC 0x63657870u /* "pxec" */
#define PT_EXEC_ARGV_MAX 8192
#define PT_EXEC_RECORD_MIN 128
struct pt_exec_record {
    unsigned long long start_boottime; /* the process's start (an exec keeps its leader's) */
    unsigned long long boottime;       /* when it exec'd, ns since boot */
    unsigned int magic;                /* PT_EXEC_RECORD_MAGIC */
    unsigned int tgid;
    unsigned int argv_len;       /* bytes of the argument area that follow (0: not copied) */
    unsigned int argv_total;     /* bytes of the whole argument area */
    char argv[PT_EXEC_ARGV_MAX]; /* NUL-separated, argv_len bytes */
};
/* The record's `reserved` word: flags about the thread group (leader only). */
#define PT_GROUP_HAD_THREADS 0x1u /* signal->stats was allocated: another thread ended while one lived */
#define PT_GROUP_KNOWN 0x2u       /* the kernel has that field (CONFIG_TASKSTATS) */
#define PT_EXEC_LOST 0x4u         /* the process's last exec record did not fit in the ring buffer */
/* run_tree's eBPF source (tree.bpf.c): one event of a tracked process. */
#define PT_TREE_FORK 1   /* a process forked by a tracked one (tgid: the child; ppid: the forker) */
#define PT_TREE_THREAD 2 /* a thread started in a tracked process */
#define PT_TREE_EXEC 3   /* a tracked process exec'd (a pt_tree_exec_event) */
#define PT_TREE_EXIT 4   /* its last thread ran do_exit(): the exit instant, CPU as a lower bound */
#define PT_TREE_FREE 5   /* its leader was freed, after its last switch: the group's final CPU */
#define PT_TREE_ARGV_MAX 4096
#define PT_TREE_PATH_MAX 256
struct pt_tree_event {
    unsigned long long boottime;       /* when the program ran, ns since boot */
    unsigned long long start_boottime; /* the process's start (fork: the child's) */
    unsigned long long runtime;        /* exit, free: the group's CPU, ns (signal_struct totals) */
    unsigned long long utime;          /* exit, free: tick-sampled split, ns */
    unsigned long long stime;
    unsigned long long exe_ino; /* exec: the executable's inode */
    unsigned int exe_dev;       /* exec: its file system (kernel dev_t: major << 20 | minor) */
    unsigned int kind;          /* PT_TREE_* */
    unsigned int tgid;
    unsigned int ppid;       /* fork, thread: the forker's tgid; else the real parent's */
    int exit_code;           /* exit, free: wait status */
    unsigned int argv_len;   /* exec: bytes of argv copied (0: unreadable) */
    unsigned int argv_total; /* exec: bytes of the whole argument area */
    unsigned int reserved;
    char comm[PT_COMM_LEN];
};
struct pt_tree_exec_event {
    struct pt_tree_event head;
    char path[PT_TREE_PATH_MAX]; /* the interpreter or the file exec'd, as given (NUL-terminated) */
    char argv[PT_TREE_ARGV_MAX]; /* the argument area, NUL-separated, argv_len bytes */
};

#endif
