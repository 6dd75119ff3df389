# SPDX-License-Identifier: MIT
"""Waits and signals: a wait under a signal every 100 ms still times out after
about its timeout, and Ctrl-C (SIGINT) raises KeyboardInterrupt in every wait
-- Process, Thread, Child, with or without a timeout -- as it does in
time.sleep and subprocess.Popen.wait.

Each case runs in a Python subprocess, so that a wait that never returns
fails the test at a deadline instead of hanging it."""
import os
import signal
import subprocess
import sys
import time

import pytest

# Generous: a loaded 2-core machine delays wake-ups, but not by seconds.
BOUND_S = 5.0

# What each case waits on, given `target` (a `sleep 60` process) in the script.
WAITS = {
    "process": "proctimes.Process(target.pid).wait()",
    "process_timeout": "proctimes.Process(target.pid).wait(30)",
    "thread": "proctimes.Thread(target.pid, pid=target.pid).wait()",
    "thread_timeout": "proctimes.Thread(target.pid, pid=target.pid).wait(30)",
    "child": "target.wait()",
    "child_timeout": "target.wait(30)",
}

PRELUDE = """
import errno, os, signal, subprocess, sys, time
import proctimes
kind = sys.argv[1]
if kind.startswith("child"):
    target = proctimes.spawn(["sleep", "60"])
else:
    target = subprocess.Popen(["sleep", "60"])
def thread_waits_unsupported():
    try:
        proctimes.Thread(target.pid, pid=target.pid).wait(0)
    except proctimes.Error as e:
        return e.errno == errno.EOPNOTSUPP
    return False
if kind.startswith("thread") and thread_waits_unsupported():
    print("unsupported", flush=True)
    os.kill(target.pid, signal.SIGKILL)
    sys.exit(0)
"""


def run_script(body, kind):
    return subprocess.Popen([sys.executable, "-c", PRELUDE + body, kind], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc, deadline_s):
    try:
        out, err = proc.communicate(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the wait did not return within {deadline_s} s: {out!r} {err!r}")
    return out, err


@pytest.mark.parametrize("kind", ["process", "thread", "child"])
def test_a_timeout_ends_the_wait_under_a_signal_every_100_ms(kind):
    call = WAITS[kind].replace("()", "(0.5)")
    body = f"""
hits = []
signal.signal(signal.SIGALRM, lambda *a: hits.append(1))
signal.setitimer(signal.ITIMER_REAL, 0.1, 0.1)
t0 = time.monotonic()
r = {call}
took = time.monotonic() - t0
signal.setitimer(signal.ITIMER_REAL, 0, 0)
os.kill(target.pid, signal.SIGKILL)
print(repr(r), took, len(hits), flush=True)
"""
    proc = run_script(body, kind)
    out, err = finish(proc, 30)
    assert proc.returncode == 0, err
    if out.strip() == "unsupported":
        pytest.skip("no thread pidfds on this kernel (Linux < 6.9)")
    result, took, hits = out.split()
    assert result in ("False", "None"), out  # still running: a timeout
    assert 0.5 <= float(took) < BOUND_S, out
    assert int(hits) >= 2, out  # the handler ran during the wait


@pytest.mark.parametrize("kind", sorted(WAITS))
def test_ctrl_c_raises_keyboard_interrupt(kind):
    body = f"""
print("ready", flush=True)
try:
    {WAITS[kind]}
    print("returned", flush=True)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
finally:
    os.kill(target.pid, signal.SIGKILL)
"""
    proc = run_script(body, kind)
    line = proc.stdout.readline().strip()
    if line == "unsupported":
        proc.communicate(timeout=30)
        pytest.skip("no thread pidfds on this kernel (Linux < 6.9)")
    assert line == "ready", proc.stderr.read()
    time.sleep(0.3)  # into the wait
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc, 30)
    assert proc.returncode == 0, err
    words = out.split()
    assert words and words[0] == "interrupted", (out, err)
    assert float(words[1]) - sent < BOUND_S, out


def test_an_exception_from_a_signal_handler_ends_the_wait(idle_child):
    """What the handler raises comes out of the wait, as from time.sleep."""
    import proctimes
    c = idle_child()

    class Alarm(Exception):
        pass

    def raise_alarm(*_):
        raise Alarm

    old = signal.signal(signal.SIGALRM, raise_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        t0 = time.monotonic()
        with pytest.raises(Alarm):
            proctimes.Process(c.pid).wait(30)
        assert time.monotonic() - t0 < BOUND_S
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
