# SPDX-License-Identifier: MIT
"""A Snapshotter shared across os.fork(): the parent and the child take
snapshots at the same time, many times, each through its copy. Each sees its
own pid and about as many processes as /proc lists, every time -- with the
/proc walk (Snapshotter(workers=...)) and with the default source (the eBPF
task walk as root, where it can be loaded)."""
import os
import threading
import time

import pytest

import proctimes

ROUNDS = 300


def proc_listing():
    return sum(1 for n in os.listdir("/proc") if n.isdigit())


def take_many(s):
    """"" when every take was complete, else what was wrong with the first.
    The takes follow each other closely (/proc is listed once, before), so
    that the two sides' walks overlap as much as they can."""
    me = os.getpid()
    listed = proc_listing()
    snaps = []
    for i in range(ROUNDS):
        try:
            snaps.append(s.take())
        except Exception as e:  # noqa: BLE001 -- reported, not raised, from the child
            return f"take {i} raised {e!r}"
    for i, snap in enumerate(snaps):
        if me not in {p.pid for p in snap}:
            return f"take {i} lacks the caller's pid {me} ({len(snap)} processes)"
        if len(snap) * 10 < listed * 9:  # processes may end meanwhile: most, not all
            return f"take {i}: {len(snap)} processes, /proc listed {listed} before"
    return ""


def on_both_sides(s):
    """Forks; both sides run take_many(s) at once. (parent's, child's) findings."""
    go_r, go_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(go_w)
            os.close(rep_r)
            os.read(go_r, 1)
            found = take_many(s)
            os.write(rep_w, found.encode() or b"-")
        finally:
            os._exit(0)
    os.close(go_r)
    os.close(rep_w)
    os.write(go_w, b"g")
    os.close(go_w)
    mine = take_many(s)
    theirs = b""
    while chunk := os.read(rep_r, 4096):
        theirs += chunk
    os.close(rep_r)
    os.waitpid(pid, 0)
    theirs = theirs.decode()
    return mine, "" if theirs == "-" else (theirs or "the child reported nothing")


# Without threads for the /proc walk: shorter takes, so more of the time is
# spent where the two sides' directory reads can interleave.
@pytest.mark.parametrize("kwargs", [{}, {"workers": 1, "threads": False}, {"workers": 2}],
                         ids=["default", "proc", "proc2"])
def test_a_snapshotter_on_both_sides_of_fork(kwargs):
    s = proctimes.Snapshotter(**kwargs)
    assert len(s.take()) > 0  # descriptors, buffers, eBPF objects exist before the fork
    parent, child = on_both_sides(s)
    assert parent == ""
    assert child == ""
    assert take_many(s) == ""


def test_a_fork_during_a_take_in_another_thread_leaves_the_child_a_working_snapshotter():
    """A thread of the parent keeps taking while the main thread forks: the
    child's copy may be mid-take (its mutex held by a thread that does not
    exist in the child), and must still take, not hang."""
    s = proctimes.Snapshotter(workers=1)
    stop = threading.Event()

    def keep_taking():
        while not stop.is_set():
            s.take()

    t = threading.Thread(target=keep_taking)
    t.start()
    try:
        for _ in range(20):
            time.sleep(0.01)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    snap = s.take()
                    code = 0 if os.getpid() in {p.pid for p in snap} else 2
                finally:
                    os._exit(code)
            deadline = time.monotonic() + 30
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    pytest.fail("the forked child's take hung")
                time.sleep(0.01)
            assert os.waitstatus_to_exitcode(status) == 0
    finally:
        stop.set()
        t.join()
