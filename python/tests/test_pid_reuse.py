# SPDX-License-Identifier: MIT
"""A handle whose pid is given to a new process answers for its own process
(its recorded end) or raises NoSuchProcess -- never for the new one. Forcing
the reuse needs root: /proc/sys/kernel/ns_last_pid, written under its flock
(as tests/system/pid_reuse_test.cpp does)."""
import fcntl
import os
import signal
import subprocess
import time

import pytest

import proctimes
from conftest import is_root

NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"


def spawn_with_pid(want):
    """A `sleep 100` that got pid `want`, or None when the kernel gave another."""
    for _ in range(20):
        with open(NS_LAST_PID, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(str(want - 1))
            f.flush()
            p = subprocess.Popen(["sleep", "100"])
            fcntl.flock(f, fcntl.LOCK_UN)
        if p.pid == want:
            return p
        p.kill()
        p.wait()
    return None


@pytest.fixture
def reuse_allowed():
    if not is_root():
        pytest.skip("needs root to write /proc/sys/kernel/ns_last_pid")
    if not os.access(NS_LAST_PID, os.W_OK):
        pytest.skip(f"{NS_LAST_PID} is not writable here")


@pytest.mark.parametrize("monitor", [True, False], ids=["exit-monitor", "no-exit-monitor"])
def test_reused_pid_never_answers_for_the_new_process(reuse_allowed, monitor):
    was = proctimes.exit_monitor_enabled()
    proctimes.set_exit_monitor_enabled(monitor)  # for handles opened from now on
    try:
        old = subprocess.Popen(["sleep", "100"])
        h = proctimes.Process(old.pid)
        th = proctimes.Thread(old.pid)
        identity, creation = h.identity(), h.times().creation_ns
        old.kill()
        old.wait()  # reaped: the pid is free
        time.sleep(0.02)  # a creation tick later, so that the new process differs in start_ticks too
        new = spawn_with_pid(old.pid)
        if new is None:
            pytest.skip(f"could not get pid {old.pid} again")
        try:
            assert proctimes.Process(new.pid).identity() != identity  # it IS a different process
            try:
                t = h.times()
            except proctimes.NoSuchProcess as e:
                assert not monitor, "the exit monitor recorded the end: the handle must answer"
                assert e.pid == old.pid
            else:
                assert t.creation_ns == creation
                assert t.state in ("exited", "exited_partial") and t.exit_ns is not None
            assert h.identity() == identity
            assert h.is_running() is False and h.wait(0) is True
            with pytest.raises(proctimes.NoSuchProcess):
                h.threads()
            try:
                status = h.exit_status()
            except proctimes.Error:
                pass  # reaped before its status could be read: refused, not made up
            else:
                assert status is not None and status.signal == signal.SIGKILL  # the old one's, never None (running)
            try:
                tt = th.times()
            except proctimes.NoSuchProcess:
                pass
            else:
                assert tt.creation_ns == creation and tt.state != "running"
        finally:
            new.kill()
            new.wait()
    finally:
        proctimes.set_exit_monitor_enabled(was)
