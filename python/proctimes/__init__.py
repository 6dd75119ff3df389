# SPDX-License-Identifier: MIT
"""proctimes: the Windows process and thread timing model on Linux, from Python.

Creation and exit instants, kernel and user CPU times of any process or
thread -- as precise as the kernel allows (1 ns totals, 10 ms creation
ticks, never built on /proc/stat's whole-second btime) -- through handles that
are safe against pid reuse and keep answering after their process exits.

    >>> import proctimes
    >>> p = proctimes.Process(pid)          # None: this process
    >>> t = p.times()
    >>> t.creation, t.exit, t.kernel, t.user      # datetimes and float seconds
    >>> t.creation_ns, t.kernel_ns + t.user_ns    # exact integers
    >>> p.cpu_times(), p.create_time()            # psutil's shapes
    >>> p.wait(5.0)                               # any process, not only children
    >>> [th.times() for th in p.threads()]        # threads have creation times
    >>> proctimes.snapshot(threads=True)          # every process and thread
    >>> c = proctimes.spawn(["make", "-j2"]); c.wait().times
    >>> proctimes.run_tree(["make", "-j2"]).tree.processes   # every process it ran

Errors are exceptions psutil users know: NoSuchProcess (a ProcessLookupError)
and AccessDenied (a PermissionError), both proctimes.Error (an OSError) with
pid and errno. A value is never guessed: fields that are not known are None.

Calls that block or walk /proc release the GIL; objects may be shared between
threads. What differs from psutil, field by field: docs/PYTHON.md.
"""
from ._types import (AccessDenied, ChildExit, Counters, CpuTimes, Error, ExitStatus, Identity, Memory,
                     NoSuchProcess, Precision, Snapshot, SnapshotFailure, SnapshotProcess, SnapshotThread, Times,
                     TreeProcess, TreeProgram, TreeRun, ProcessTree)
from ._proctimes import (Child, Process, Snapshotter, Thread, datetime_from_filetime, duration_from_filetime,
                         exit_monitor_enabled, exit_records_enabled, filetime_from_duration, filetime_from_time,
                         process_time_ns, run_tree, set_exit_monitor_enabled, set_exit_records_enabled, snapshot, spawn,
                         this_process_times, this_thread_times, thread_time_ns, time_from_filetime)

__all__ = [
    "Process", "Thread", "Child", "spawn", "run_tree", "snapshot", "Snapshotter",
    "this_process_times", "this_thread_times", "process_time_ns", "thread_time_ns",
    "filetime_from_time", "time_from_filetime", "datetime_from_filetime",
    "filetime_from_duration", "duration_from_filetime",
    "set_exit_monitor_enabled", "exit_monitor_enabled", "set_exit_records_enabled", "exit_records_enabled",
    "Error", "NoSuchProcess", "AccessDenied",
    "Times", "Precision", "Identity", "ExitStatus", "CpuTimes", "ChildExit",
    "Snapshot", "SnapshotProcess", "SnapshotThread", "SnapshotFailure", "Counters", "Memory",
    "ProcessTree", "TreeProcess", "TreeProgram", "TreeRun",
]

# Shown by help(proctimes) and in tracebacks as proctimes.X, not proctimes._types.X.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith("proctimes."):
        try:
            _obj.__module__ = "proctimes"
        except (AttributeError, TypeError):
            pass
del _name, _obj
