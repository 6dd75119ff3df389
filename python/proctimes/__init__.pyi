# SPDX-License-Identifier: MIT
# Type stubs of the proctimes package: the types are declared in _types.py
# (inline annotations), the compiled functions and classes in _proctimes.pyi.
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
