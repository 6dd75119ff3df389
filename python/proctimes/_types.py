# SPDX-License-Identifier: MIT
"""The exception and named-tuple types of proctimes.

Only declarations live here: every value is computed by the C++ library and
filled in by the compiled extension (proctimes._proctimes), which builds these
types directly.
"""
from datetime import datetime
from typing import List, NamedTuple, Optional

__all__ = [
    "Error", "NoSuchProcess", "AccessDenied",
    "Precision", "Times", "Identity", "ExitStatus", "CpuTimes", "ChildExit",
    "Counters", "Memory", "SnapshotThread", "SnapshotProcess", "SnapshotFailure", "Snapshot",
    "TreeProgram", "TreeProcess", "ProcessTree", "TreeRun",
]


class Error(OSError):
    """Base class of the errors proctimes raises about a process or thread.

    An OSError: ``errno`` is the errno the kernel gave (or the one closest to
    the library's own conclusion), ``strerror`` says what happened; ``pid``
    (and ``tid`` for a thread) name the task, or are None.
    """

    def __init__(self, errno: int, strerror: str, *, pid: Optional[int] = None, tid: Optional[int] = None):
        super().__init__(errno, strerror)
        self.pid = pid
        self.tid = tid
        self.msg = strerror  # psutil's name for the message

    def __str__(self) -> str:
        if self.tid is not None:
            who = f"tid {self.tid}" + (f" of pid {self.pid}" if self.pid is not None else "")
        elif self.pid is not None:
            who = f"pid {self.pid}"
        else:
            return str(self.strerror)
        return f"{self.strerror} ({who})"

    def __reduce__(self):
        return (_rebuild, (type(self), self.errno, self.strerror, self.pid, self.tid))


def _rebuild(cls, errno, strerror, pid, tid):
    return cls(errno, strerror, pid=pid, tid=tid)


class NoSuchProcess(Error, ProcessLookupError):
    """The process (or thread) does not exist, or has exited and been reaped
    without anything recording its end. errno is ESRCH.

    A handle whose process is gone raises this; it never answers for another
    process that was given the same pid.
    """


class AccessDenied(Error, PermissionError):
    """The process exists, but the system hides it from this caller (/proc
    mounted with hidepid, an LSM). errno is EACCES or EPERM."""


class Precision(NamedTuple):
    """How precise the values of one Times are (all in nanoseconds).

    source, where the CPU times came from: "rusage" (this_process_times:
    getrusage), "thread_clock+rusage" (this_thread_times), "cpu_clock+stat" (a
    process or thread CPU clock, split by stat's ticks), "schedstat+stat" (a
    thread of another process), "stat" (ticks only), "wait_rusage" (a spawned
    child's wait), "exit_record" (the kernel's taskstats exit record), "bpf"
    (a Snapshotter's eBPF task walk) or "bpf_exit" (the eBPF exit stream:
    final values read after the task's last switch-out).

    exit_source, where the exit instant came from: "none" (running),
    "observed" (stamped when the end was seen), "exit_record" (creation + the
    kernel's elapsed time) or "bpf_exit" (the instant the task ran do_exit,
    exact to 1 ns).
    """
    resolution_ns: int
    """Granularity of kernel and of user, each on its own."""
    total_resolution_ns: int
    """Granularity of kernel + user (finer when the total comes from a ns clock)."""
    creation_resolution_ns: int
    """Granularity of the creation instant (10 ms: one start tick, floored)."""
    source: str
    """Where the CPU times came from: "rusage", "thread_clock+rusage", "cpu_clock+stat",
    "schedstat+stat", "stat", "wait_rusage", "exit_record", "bpf" or "bpf_exit"."""
    exit_source: str
    """Where the exit instant came from: "none" (running), "observed" (stamped
    when the end was seen: it ended no later than exit, no earlier than
    exit_earliest), "exit_record" (creation + the kernel's elapsed time) or
    "bpf_exit" (when the task ran do_exit, 1 ns: exit_earliest equals exit)."""
    exit_resolution_ns: int
    """How far the real end can be from exit (0 while running)."""


class Times(NamedTuple):
    """The four values of Windows' GetProcessTimes/GetThreadTimes.

    Instants are timezone-aware UTC datetimes (microseconds, floored) and exact
    integers of nanoseconds since the Unix epoch (*_ns); CPU times are float
    seconds and exact integer nanoseconds.
    """
    creation: datetime
    """When the process/thread was created (floored to its 10 ms start tick)."""
    exit: Optional[datetime]
    """When it exited; None while it runs."""
    kernel: float
    """CPU seconds in the kernel on its behalf (a process: all threads, exited
    ones included, children excluded)."""
    user: float
    """CPU seconds in user mode (same scope)."""
    creation_ns: int
    exit_ns: Optional[int]
    kernel_ns: int
    user_ns: int
    state: str
    """"running"; "exited" (kernel and user are final); or "exited_partial"
    (released before its final values could be read: they are the last ones
    sampled, at sampled_at_ns)."""
    precision: Precision
    sampled_at_ns: int
    """When kernel and user were read (CLOCK_REALTIME, ns since the epoch)."""
    exit_earliest_ns: Optional[int] = None
    """The earliest instant the exit can have happened (see
    precision.exit_source); None while it runs."""


class Identity(NamedTuple):
    """An exact identity that survives pid reuse and compares no wall-clock
    values. Two handles of the same task have equal identities."""
    boot: str
    """The kernel boot id (/proc/sys/kernel/random/boot_id)."""
    id: int
    """The pid (or tid)."""
    start_ticks: int
    """The kernel's start time, clock ticks since boot."""
    serial: int
    """A number the system never gives another task during the boot (Linux >=
    6.9: the pidfd's inode number); 0 where unknown (always 0 in snapshots)."""


class ExitStatus(NamedTuple):
    """How a process ended."""
    code: int
    """The exit code, when it exited normally (else 0)."""
    signal: int
    """The signal that ended it, else 0."""
    core_dumped: bool
    shell_code: int
    """The shell's convention: the exit code, or 128 + the signal."""


class CpuTimes(NamedTuple):
    """psutil's pcputimes: seconds, with psutil's field names.

    user and system are the library's values (see Times.precision). The
    fields the library does not know for this object are None, never a
    guess: children_* are known only for a spawned child after wait();
    iowait is never provided.
    """
    user: float
    system: float
    children_user: Optional[float]
    children_system: Optional[float]
    iowait: Optional[float]


class ChildExit(NamedTuple):
    """What is known once a spawned child has been waited for."""
    status: Optional[ExitStatus]
    """How it ended; None when that is unknown (something else reaped it first,
    e.g. the kernel because SIGCHLD is ignored)."""
    times: Times
    """Its own times (children excluded), final; see times_error."""
    children_kernel_ns: int
    """CPU time of the descendants it waited for, kernel side."""
    children_user_ns: int
    max_rss_kib: int
    """Peak resident set size of it and its waited-for descendants, KiB."""
    times_error: Optional[str]
    """None when times are its own final values; else why they could not be read
    (no descriptor or no /proc for its handle): times then hold only the wait's
    rusage, which includes the descendants it waited for."""


class Counters(NamedTuple):
    """A task's own counters as the kernel keeps them, read with its CPU (the
    values of its /proc stat, status and io files)."""
    minor_faults: int
    """Faults served without I/O (stat field 10)."""
    major_faults: int
    """Faults that read storage (stat field 12)."""
    voluntary_switches: int
    """Times it gave up the CPU (status voluntary_ctxt_switches)."""
    involuntary_switches: int
    """Times it was preempted (status nonvoluntary_ctxt_switches)."""
    read_bytes: Optional[int]
    """Bytes it made storage read (io read_bytes); None where the kernel does
    not count them."""
    write_bytes: Optional[int]
    """Bytes it made storage write (io write_bytes); None likewise."""


class Memory(NamedTuple):
    """A process's memory in bytes, as its /proc stat (rss, vsize) and status
    (VmSwap) state it: psutil's memory_info().rss and .vms, and
    memory_full_info().swap."""
    rss: int
    vms: int
    swap: int


class SnapshotThread(NamedTuple):
    """A thread as a snapshot saw it."""
    tid: int
    pid: int
    name: str
    """comm, decoded as UTF-8 with surrogateescape."""
    state: str
    """The proc(5) state letter."""
    times: Times
    identity: Identity
    counters: Optional[Counters] = None
    """Its faults, switches and storage I/O, where the snapshot's source reads
    them with its CPU (the eBPF task walk of a Snapshotter); None from /proc."""


class SnapshotProcess(NamedTuple):
    """A process as a snapshot saw it. times.exit is always None (a snapshot
    does not know exit instants); times.state is "exited" for a zombie."""
    pid: int
    ppid: int
    uid: Optional[int]
    """Effective uid (the owner of /proc/<pid>), None when unknown."""
    name: str
    state: str
    kernel_thread: bool
    thread_count: int
    times: Times
    identity: Identity
    threads: List[SnapshotThread]
    """Its threads; empty unless the snapshot was taken with threads=True."""
    children_kernel_ns: Optional[int] = None
    """CPU of the children it waited for (and of theirs), in the kernel: stat's
    cstime (10 ms ticks from /proc, 1 ns from the eBPF walk). None when unread."""
    children_user_ns: Optional[int] = None
    """The same in user mode (stat's cutime)."""
    counters: Optional[Counters] = None
    """Faults and storage I/O of all its threads (ended ones included), switches
    of its main thread, as its own /proc files state them; read with its CPU by
    the eBPF task walk, None from /proc."""
    memory: Optional[Memory] = None
    """Its memory, read with its CPU by the eBPF task walk; None from /proc and
    for a process without an address space (a kernel thread)."""
    open_files_limit: Optional[int] = None
    """Its soft limit of open files (RLIMIT_NOFILE; resource.RLIM_INFINITY when
    unlimited), read by the eBPF task walk; None from /proc."""


class SnapshotFailure(NamedTuple):
    """A process or thread a snapshot could not read."""
    pid: int
    tid: int
    """0 unless item is "thread"."""
    item: str
    """"process" (missing from the snapshot), "owner" (uid unknown),
    "thread_list" (its threads missing) or "thread" (that thread missing)."""
    errno: int
    strerror: str


class Snapshot(list):
    """A list of SnapshotProcess, ascending by pid, with what the walk knew
    about itself as attributes."""
    taken_ns: int
    """When the walk started (ns since the epoch, on the creation instants' scale)."""
    walk_duration_ns: int
    failures: List[SnapshotFailure]
    """What could not be read (access denied, ...), ascending by (pid, tid)."""
    vanished: int
    """Processes and threads that exited during the walk and were skipped."""
    reused_threads: int
    """Thread entries a Snapshotter copied because their process had not run."""
    workers: int
    """How many threads walked /proc (1 for the eBPF source)."""


class TreeProgram(NamedTuple):
    """One program a process of a tree ran (run_tree). A forked process's first
    program is its parent's; each exec adds one; the command's first is its
    first exec."""
    executable: str
    """/proc/PID/exe at the exec ("" when unreadable)."""
    argv: List[str]
    """/proc/PID/cmdline at the exec, cut at max_argv_bytes."""
    argv_truncated: bool
    started: datetime
    """The fork (the first program) or the exec, stamped by the recorder."""
    started_ns: int


class TreeProcess(NamedTuple):
    """One process of a command's tree (run_tree). Field for field the C++
    proctimes::tree_process (docs/TREE.md); durations also as float seconds."""
    pid: int
    parent_pid: int
    """The process that forked it (0 for the command)."""
    parent_index: int
    """Index of the parent in ProcessTree.processes; -1 for the command."""
    programs: List[TreeProgram]
    created: datetime
    """Stamped when the recorder met it (its parent's fork event or its own
    first stop); the command's: its kernel start time (10 ms tick)."""
    created_ns: int
    exited: Optional[datetime]
    """Stamped when the recorder found it ended; None when it outlived the command."""
    exited_ns: Optional[int]
    kernel: float
    """Its own CPU seconds in the kernel, all threads, children excluded."""
    user: float
    kernel_ns: int
    user_ns: int
    precision: Precision
    final_times: bool
    """True: kernel/user are final (read from its zombie). False: the last
    values read (its exit began, or it outlived the command)."""
    status: Optional[ExitStatus]
    """How it ended; None when not seen ending."""
    threads: int
    """Threads it had over its life, the main one included."""
    outlived_command: bool
    """Still running when the command ended (let go, not waited for)."""


class ProcessTree(NamedTuple):
    """What run_tree recorded, and what it could not."""
    source: str
    """"ptrace", "bpf" or "none" (the command alone: no source could see its
    descendants; source_note says why)."""
    source_note: str
    processes: List[TreeProcess]
    """The command first, then every descendant in creation order."""
    unseen_processes: int
    rusage_cpu_ns: int
    """The command's wait rusage (its own CPU and its waited-for descendants')
    plus that of orphans the recorder reaped: what the tree must account for."""
    orphans_rusage_cpu_ns: int
    unaccounted_cpu_ns: int
    """rusage_cpu_ns minus the sum of every final own CPU (negative when the
    tree saw more than the rusage holds)."""


class TreeRun(NamedTuple):
    """run_tree's result: the command as Child.wait() gives it, and its tree."""
    command: ChildExit
    tree: ProcessTree
