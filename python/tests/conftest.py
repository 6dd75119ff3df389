# SPDX-License-Identifier: MIT
"""Shared helpers of the proctimes Python tests (run by CTest, label `python`:
/usr/bin/python3 -m pytest with PYTHONPATH=<build>/python)."""
import json
import os
import subprocess
import sys
import time

import pytest

import proctimes

TICK_NS = 10_000_000  # one USER_HZ tick: the stated resolution of splits and creation instants


class IdleChild:
    """A /usr/bin/python3 child that starts `threads` extra threads, says
    "ready", then blocks reading stdin until closed. burn: CPU seconds spent
    first (user mode)."""

    def __init__(self, threads=0, burn=0.0):
        code = (
            "import sys, threading, time\n"
            f"end = time.thread_time() + {burn!r}\n"
            "while time.thread_time() < end: pass\n"
            "ev = threading.Event()\n"
            f"ts = [threading.Thread(target=ev.wait, daemon=True) for _ in range({threads})]\n"
            "[t.start() for t in ts]\n"
            "print('ready', flush=True)\n"
            "sys.stdin.read()\n"
        )
        self.before_ns = time.time_ns()
        self.popen = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True)
        self.after_spawn_ns = time.time_ns()
        line = self.popen.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError("the child did not start")
        self.pid = self.popen.pid

    def wait_idle(self, handle=None):
        """Waits until the child's CPU clock stands still (every thread asleep)."""
        h = handle or proctimes.Process(self.pid)
        last = -1
        for _ in range(500):
            t = h.times()
            total = t.kernel_ns + t.user_ns
            if total == last:
                return t
            last = total
            time.sleep(0.02)
        raise RuntimeError("the child never became idle")

    def stop(self):
        if self.popen.poll() is None:
            self.popen.stdin.close()
            self.popen.wait(timeout=30)

    def kill(self):
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(timeout=30)


@pytest.fixture
def idle_child():
    children = []

    def make(threads=0, burn=0.0):
        c = IdleChild(threads, burn)
        children.append(c)
        return c

    yield make
    for c in children:
        c.kill()


def cli_show(pid, threads=False):
    """The `proctimes show PID --format json` record of pid (the C++ API as the
    command prints it), or skip when the command was not built."""
    cli = os.environ.get("PROCTIMES_CLI")
    if not cli or not os.access(cli, os.X_OK):
        pytest.skip("PROCTIMES_CLI (the proctimes command) not given: built with PROCTIMES_BUILD_TOOLS=OFF")
    argv = [cli, "show", str(pid), "--format", "json"] + (["--threads"] if threads else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]


def is_root():
    return os.geteuid() == 0
