# SPDX-License-Identifier: MIT
"""proctimes against psutil on the same processes, within the resolutions each
states: psutil's CPU times are 10 ms ticks, its create_time is built on
/proc/stat's whole-second btime; proctimes' totals are exact to 1 ns, each side
of its split within the two totals' difference of psutil's (under two ticks),
its creation to a 10 ms tick."""
import time

import pytest

import proctimes
from conftest import TICK_NS

psutil = pytest.importorskip("psutil", reason="python3-psutil is not installed (apt-get install python3-psutil)")


def test_cpu_times_field_names_are_psutils():
    ours = proctimes.Process().cpu_times()
    theirs = psutil.Process().cpu_times()
    assert list(ours._fields) == list(theirs._fields)
    assert ours.children_user is None and ours.iowait is None  # not known: never a guessed 0


def test_cpu_times_agree_with_psutils_ticks(idle_child):
    child = idle_child(burn=0.2)
    h = proctimes.Process(child.pid)
    t = child.wait_idle(h)
    ours = h.cpu_times()
    theirs = psutil.Process(child.pid).cpu_times()
    # psutil: each side truncated to its 10 ms tick; ours: the same tick ratio
    # scaled to the exact total. So each side of ours is psutil's times
    # total/their-sum: it differs from psutil's by at most what the two totals
    # differ by (below: less than two ticks), never by more.
    tick = TICK_NS / 1e9
    slack = abs((ours.user + ours.system) - (theirs.user + theirs.system)) + 1e-9
    assert abs(ours.user - theirs.user) <= slack
    assert abs(ours.system - theirs.system) <= slack
    # Our total is exact; psutil's is the truncated sum of two ticks.
    exact = (t.kernel_ns + t.user_ns) / 1e9
    assert 0 <= exact - (theirs.user + theirs.system) < 2 * tick
    assert exact >= 0.2


def test_create_time_within_btimes_second_and_ours_within_a_tick(idle_child):
    child = idle_child()
    ours = proctimes.Process(child.pid).create_time()
    theirs = psutil.Process(child.pid).create_time()
    # psutil adds start ticks to btime, a whole second truncated: up to 1 s early.
    assert abs(ours - theirs) <= 1.0 + TICK_NS / 1e9
    # Ours lies in the bracket of the spawn, to within its 10 ms tick.
    assert (child.before_ns - TICK_NS - 1_000_000) / 1e9 <= ours <= child.after_spawn_ns / 1e9


def test_threads_agree(idle_child):
    child = idle_child(threads=3, burn=0.05)
    h = proctimes.Process(child.pid)
    child.wait_idle(h)
    theirs = {t.id: t for t in psutil.Process(child.pid).threads()}
    ours = {th.tid: th.times() for th in h.threads()}
    assert set(ours) == set(theirs)
    for tid, t in ours.items():
        # psutil reads the raw tick counts; ours is the exact total split in
        # their ratio, so each side may move from its ticks by as much as the
        # two totals differ (on a busy machine, several ticks), plus a tick.
        theirs_total = theirs[tid].user_time + theirs[tid].system_time
        slack = TICK_NS / 1e9 + abs((t.user + t.kernel) - theirs_total) + 1e-9
        assert abs(t.user - theirs[tid].user_time) <= slack
        assert abs(t.kernel - theirs[tid].system_time) <= slack
        assert t.creation_ns >= h.times().creation_ns  # psutil has no thread creation time at all


def test_both_refuse_a_process_that_is_gone(idle_child):
    child = idle_child(burn=0.05)
    ours = proctimes.Process(child.pid)
    theirs = psutil.Process(child.pid)
    child.wait_idle(ours)
    child.stop()  # exits and is reaped by its parent
    with pytest.raises(psutil.NoSuchProcess):
        theirs.cpu_times()
    # psutil knows nothing after the end; the handle answers with the final values.
    t = ours.times()
    assert t.state in ("exited", "exited_partial") and t.exit_ns is not None
    assert t.kernel_ns + t.user_ns >= 50_000_000


def test_snapshot_agrees_with_psutil(idle_child):
    child = idle_child(threads=2)
    child.wait_idle()
    snap = {e.pid: e for e in proctimes.snapshot(threads=True)}
    p = psutil.Process(child.pid)
    entry = snap[child.pid]
    assert entry.ppid == p.ppid() and entry.name == p.name()
    assert sorted(th.tid for th in entry.threads) == sorted(t.id for t in p.threads())
    assert abs(entry.times.creation_ns / 1e9 - p.create_time()) <= 1.0 + TICK_NS / 1e9


def test_kernel_threads_have_kernel_time_only():
    # A kernel thread never runs in user mode, and the kernel's own tick
    # samples (taskstats' ac_utime) give none of them user time; stat, and so
    # psutil, can show some (cputime_adjust() gives a task's runtime to user
    # time while no system tick was sampled). Here all of it is kernel time:
    # psutil's two sides together, to within the totals' difference.
    tick = TICK_NS / 1e9
    seen = 0
    for pid in psutil.pids():
        try:
            with open(f"/proc/{pid}/stat") as f:
                flags = int(f.read().rsplit(")", 1)[1].split()[6])
            if not flags & 0x00200000:  # PF_KTHREAD
                continue
            theirs = psutil.Process(pid).cpu_times()
            ours = proctimes.Process(pid).cpu_times()
        except (OSError, psutil.Error, IndexError, ValueError):
            continue
        seen += 1
        assert ours.user == 0, pid
        # Ours is read after psutil's and is exact: never less than its
        # truncated sum; more by under two ticks plus what ran in between.
        assert -1e-9 <= ours.system - (theirs.user + theirs.system) < 2 * tick + 0.1, pid
    if seen == 0:
        pytest.skip("no kernel thread is visible here")
