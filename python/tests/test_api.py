# SPDX-License-Identifier: MIT
"""The proctimes Python API: values against the C++ library (through the
`proctimes show` command on the same process) and against clocks sampled
around the query; exits, threads, errors, FILETIME conversions."""
import errno
import math
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

import proctimes
from conftest import TICK_NS, cli_show


def burn(seconds):
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


# ---- the calling process and thread ---------------------------------------------

def test_own_process_total_is_bracketed_by_the_process_cpu_clock():
    burn(0.05)
    p = proctimes.Process()
    assert p.pid == os.getpid()
    before = proctimes.process_time_ns()
    t = p.times()
    after = proctimes.process_time_ns()
    # The caller itself is read as the calling process is (getrusage: the
    # scheduler's exact total, truncated to 1 µs), between the two samples.
    assert before - 1000 < t.kernel_ns + t.user_ns <= after
    assert t.precision.total_resolution_ns == 1000
    assert t.precision.source == "rusage"
    assert t.state == "running" and t.exit is None and t.exit_ns is None
    assert before >= 50_000_000


def test_times_fields_agree_with_each_other():
    t = proctimes.Process().times()
    assert isinstance(t, proctimes.Times) and isinstance(t, tuple)
    assert t.creation.tzinfo is not None and t.creation.utcoffset() == timedelta(0)
    since = t.creation - datetime(1970, 1, 1, tzinfo=timezone.utc)
    assert since // timedelta(microseconds=1) == t.creation_ns // 1000  # floored to the microsecond
    assert t.kernel == t.kernel_ns / 1e9 and t.user == t.user_ns / 1e9
    assert t.creation_ns <= t.sampled_at_ns <= time.time_ns()
    assert t.precision.creation_resolution_ns == TICK_NS


def test_this_process_and_thread_times_bracketed_by_their_clocks():
    burn(0.02)
    before = proctimes.thread_time_ns()
    t = proctimes.this_thread_times()
    after = proctimes.thread_time_ns()
    # The calling thread: total from its thread CPU clock (1 ns, current),
    # only the split from getrusage.
    assert before <= t.kernel_ns + t.user_ns <= after
    assert t.precision.source == "thread_clock+rusage" and t.precision.total_resolution_ns == 1
    before = proctimes.process_time_ns()
    p = proctimes.this_process_times()
    after = proctimes.process_time_ns()
    assert before - 2000 <= p.kernel_ns + p.user_ns <= after
    assert p.creation_ns == proctimes.Process().times().creation_ns  # bit-identical creation


def test_clocks_never_go_backwards_and_thread_is_part_of_process():
    a, b = proctimes.thread_time_ns(), proctimes.process_time_ns()
    burn(0.01)
    c, d = proctimes.thread_time_ns(), proctimes.process_time_ns()
    assert a <= b and c <= d
    assert c - a >= 10_000_000 and d - b >= 10_000_000


def test_threads_have_creation_times_after_their_process():
    p = proctimes.Process()
    started = threading.Event()
    stop = threading.Event()
    before = time.time_ns()

    def body():
        started.set()
        stop.wait()

    th = threading.Thread(target=body)
    th.start()
    started.wait()
    after = time.time_ns()
    try:
        tids = p.thread_ids()
        assert th.native_id in tids
        handles = {t.tid: t for t in p.threads()}
        assert set(handles) == set(tids)
        t = handles[th.native_id].times()
        # Floored to the 10 ms start tick: up to one tick before the real start.
        assert before - TICK_NS - 1_000_000 <= t.creation_ns <= after
        assert t.creation_ns >= p.times().creation_ns
        assert handles[th.native_id].pid == os.getpid()
        own = proctimes.Thread()
        assert own.tid == threading.get_native_id()
        assert own.times().creation_ns == proctimes.this_thread_times().creation_ns
    finally:
        stop.set()
        th.join()


def test_a_thread_that_ended_still_answers():
    go = threading.Event()

    def body():
        go.wait()
        burn(0.02)

    th = threading.Thread(target=body)
    th.start()
    h = proctimes.Thread(th.native_id)
    first = h.times()
    creation = first.creation_ns
    assert h.wait(0.01) is False
    released = time.time_ns()
    go.set()
    try:
        assert h.wait(30) is True  # a thread pidfd (Linux >= 6.9)
    except proctimes.Error as e:
        if e.errno == errno.EOPNOTSUPP:
            pytest.skip("no thread pidfds on this kernel (before Linux 6.9)")
        raise
    th.join()
    t = h.times()
    assert t.state in ("exited", "exited_partial") and t.creation_ns == creation
    assert t.exit_ns is not None and released <= t.exit_ns <= time.time_ns()
    if t.state == "exited":  # final values (exit records, as root with taskstats)
        assert t.kernel_ns + t.user_ns >= 20_000_000
    else:  # the last values sampled, and said so: never passed off as final
        assert t.sampled_at_ns < t.exit_ns
        assert t.kernel_ns + t.user_ns >= first.kernel_ns + first.user_ns


# ---- another process, against the C++ API (the proctimes command) --------------

def test_another_process_agrees_with_the_cpp_api(idle_child):
    child = idle_child(threads=3, burn=0.05)
    p = proctimes.Process(child.pid)
    t = child.wait_idle(p)
    rec = cli_show(child.pid, threads=True)
    # Creation instants are bit-identical between processes using the library.
    assert rec["creation_filetime"] == proctimes.filetime_from_time(t.creation_ns)
    assert proctimes.time_from_filetime(rec["creation_filetime"]) // 100 == t.creation_ns // 100
    # An idle process: its exact total does not change between the two reads.
    t2 = p.times()
    assert rec["kernel_ns"] + rec["user_ns"] == t2.kernel_ns + t2.user_ns
    assert rec["source"] == t2.precision.source
    assert rec["total_resolution_ns"] == t2.precision.total_resolution_ns
    # Threads: same ids, same creation instants, same totals.
    ours = {th.tid: th.times() for th in p.threads()}
    theirs = {r["tid"]: r for r in rec["threads"]}
    assert set(ours) == set(theirs) and len(ours) >= 4
    for tid, tt in ours.items():
        assert theirs[tid]["creation_filetime"] == proctimes.filetime_from_time(tt.creation_ns)
        assert theirs[tid]["kernel_ns"] + theirs[tid]["user_ns"] == tt.kernel_ns + tt.user_ns
        assert tt.creation_ns >= t.creation_ns
        assert tt.precision.source == "schedstat+stat"


def test_creation_is_bracketed_by_the_spawn(idle_child):
    child = idle_child()
    t = proctimes.Process(child.pid).times()
    assert child.before_ns - TICK_NS - 1_000_000 <= t.creation_ns <= child.after_spawn_ns
    assert proctimes.Process(child.pid).create_time() == t.creation_ns / 1e9


def test_thread_of_another_process(idle_child):
    child = idle_child(threads=2)
    p = proctimes.Process(child.pid)
    tids = p.thread_ids()
    assert len(tids) == 3
    th = proctimes.Thread(tids[-1], pid=child.pid)
    assert th.pid == child.pid and th.tid == tids[-1]
    assert th.times().creation_ns >= p.times().creation_ns
    assert proctimes.Thread(tids[-1]).identity() == th.identity()
    with pytest.raises(proctimes.NoSuchProcess):
        proctimes.Thread(tids[-1], pid=os.getpid())  # not one of ours


def test_identity_and_equality(idle_child):
    child = idle_child()
    a, b = proctimes.Process(child.pid), proctimes.Process(child.pid)
    assert a == b and hash(a) == hash(b)
    assert a != proctimes.Process()
    ident = a.identity()
    assert ident.id == child.pid and ident.start_ticks > 0
    assert len(ident.boot) == 36
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert ident.boot == f.read().strip()


# ---- exits --------------------------------------------------------------------------

def test_spawned_child_gives_its_final_times():
    before = time.time_ns()
    c = proctimes.spawn([sys.executable, "-c",
                         "import time\nend = time.process_time() + 0.1\nwhile time.process_time() < end: pass\n"
                         "raise SystemExit(7)"])
    e = c.wait()
    after = time.time_ns()
    assert e.status == proctimes.ExitStatus(7, 0, False, 7)
    t = e.times
    assert t.state == "exited"
    assert before - TICK_NS - 1_000_000 <= t.creation_ns <= t.exit_ns <= after
    # What the exit instant promises: stamped when seen, or from the kernel's record.
    assert t.precision.exit_source in ("observed", "exit_record")
    assert t.creation_ns <= t.exit_earliest_ns <= t.exit_ns
    running = proctimes.Process().times()
    assert running.precision.exit_source == "none" and running.exit_earliest_ns is None
    assert t.kernel_ns + t.user_ns >= 100_000_000
    # The handle keeps answering after the reap, with the same final values.
    again = c.process.times()
    assert (again.kernel_ns, again.user_ns, again.exit_ns) == (t.kernel_ns, t.user_ns, t.exit_ns)
    assert c.wait() == e
    assert c.exit_status() == e.status
    ct = c.cpu_times()
    assert ct.user == t.user and ct.system == t.kernel and ct.children_user == 0.0


def test_exit_status_is_never_made_up_when_sigchld_is_ignored():
    # The kernel reaps children itself when SIGCHLD is ignored: the status is
    # then unknown (None, or NoSuchProcess when nothing was recorded first),
    # never a made-up exit code 0.
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        c = proctimes.spawn(["sh", "-c", "exit 4"])
        try:
            e = c.wait(30)
        except proctimes.NoSuchProcess:
            return
        assert e is not None
        assert e.status is None or e.status.code == 4
    finally:
        signal.signal(signal.SIGCHLD, old)


def test_spawn_reports_children_apart():
    c = proctimes.spawn(["sh", "-c", f"{sys.executable} -c 'import time\nend=time.process_time()+0.1\n"
                                     "while time.process_time()<end: pass'"])
    e = c.wait()
    assert e.children_kernel_ns + e.children_user_ns >= 100_000_000
    assert e.times.kernel_ns + e.times.user_ns < 100_000_000  # children excluded


def test_signalled_child_status():
    c = proctimes.spawn(["sleep", "100"])
    assert c.wait(0.05) is None
    os.kill(c.pid, signal.SIGKILL)
    e = c.wait(30)
    assert e.status.signal == signal.SIGKILL and e.status.shell_code == 128 + signal.SIGKILL


def test_a_process_reaped_by_its_parent_still_answers(idle_child):
    child = idle_child(burn=0.05)
    p = proctimes.Process(child.pid)
    running = child.wait_idle(p)
    child.stop()  # subprocess reaps it: not a proctimes child
    assert p.wait(30) is True
    t = p.times()
    assert t.state in ("exited", "exited_partial")
    assert t.exit_ns is not None and t.creation_ns <= t.exit_ns <= time.time_ns()
    assert t.kernel_ns + t.user_ns >= running.kernel_ns + running.user_ns
    assert p.is_running() is False
    with pytest.raises(proctimes.NoSuchProcess):
        p.threads()  # no live threads, and none opened by its old number
    # Reaped at once by its parent: the status is known when the monitor read
    # it from the zombie in time, else refused -- never made up.
    try:
        status = p.exit_status()
    except proctimes.Error as e:
        assert e.errno == errno.EOPNOTSUPP
    else:
        assert status == proctimes.ExitStatus(0, 0, False, 0)


def test_wait_times_out_then_sees_the_end(idle_child):
    child = idle_child()
    p = proctimes.Process(child.pid)
    t0 = time.monotonic()
    assert p.wait(0.05) is False
    assert time.monotonic() - t0 >= 0.05
    assert p.exit_status() is None and p.is_running()
    os.kill(child.pid, signal.SIGKILL)  # not reaped yet: the zombie shows its status
    assert p.wait() is True
    assert p.exit_status().signal == signal.SIGKILL
    assert p.times().state == "exited"


def test_wait_releases_the_gil(idle_child):
    child = idle_child()
    p = proctimes.Process(child.pid)
    waiter = threading.Thread(target=p.wait, args=(20,))
    waiter.start()
    # Python code runs while the other thread waits: with the GIL held, this
    # loop could only run after the wait ended (20 s, the child being killed after it).
    time.sleep(0.05)
    spins = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.2:
        spins += 1
    assert waiter.is_alive() and spins > 100
    child.kill()
    waiter.join(30)
    assert not waiter.is_alive()


def test_objects_are_safe_from_several_threads(idle_child):
    child = idle_child(threads=2)
    p = proctimes.Process(child.pid)
    th = p.threads()[-1]
    snapper = proctimes.Snapshotter(threads=True)
    errors = []
    creation = p.times().creation_ns

    def hammer():
        try:
            for _ in range(200):
                assert p.times().creation_ns == creation
                assert th.times().creation_ns >= creation
                assert len(p.thread_ids()) == 3
            for _ in range(3):
                assert snapper.take().failures is not None
                assert any(e.pid == child.pid for e in proctimes.snapshot(threads=False))
        except Exception as e:  # reported below, with the thread's traceback lost but its message kept
            errors.append(repr(e))

    workers = [threading.Thread(target=hammer) for _ in range(6)]
    [w.start() for w in workers]
    [w.join() for w in workers]
    assert errors == []
    # close() while another thread waits: the wait finishes, later calls are refused.
    waiter = threading.Thread(target=p.wait, args=(0.3,))
    waiter.start()
    p.close()
    waiter.join()
    assert p.closed
    with pytest.raises(ValueError):
        p.times()


# ---- errors -------------------------------------------------------------------------

def unused_pid():
    with open("/proc/sys/kernel/pid_max") as f:
        top = int(f.read())
    for pid in range(top - 1, 1, -1):
        if not os.path.exists(f"/proc/{pid}"):
            return pid
    pytest.skip("no unused pid")


def test_no_such_process_carries_pid_and_errno():
    pid = unused_pid()
    with pytest.raises(proctimes.NoSuchProcess) as ei:
        proctimes.Process(pid)
    e = ei.value
    assert isinstance(e, ProcessLookupError) and isinstance(e, proctimes.Error) and isinstance(e, OSError)
    assert e.pid == pid and e.errno == errno.ESRCH
    assert str(pid) in str(e)
    with pytest.raises(proctimes.NoSuchProcess) as ei:
        proctimes.Thread(pid)
    assert ei.value.errno == errno.ESRCH
    import pickle
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is proctimes.NoSuchProcess and again.pid == pid and again.errno == errno.ESRCH


@pytest.mark.parametrize("bad", [0, -1, -5, 2**31, 2**80])
def test_bad_pids_are_value_errors(bad):
    with pytest.raises(ValueError):
        proctimes.Process(bad)


def test_non_ints_are_type_errors():
    for bad in ("1", 1.0, True):
        with pytest.raises(TypeError):
            proctimes.Process(bad)


def test_a_thread_id_is_not_a_process():
    stop = threading.Event()
    th = threading.Thread(target=stop.wait)
    th.start()
    try:
        with pytest.raises(ValueError):
            proctimes.Process(th.native_id)
    finally:
        stop.set()
        th.join()


@pytest.mark.parametrize("bad", [-1, -0.5, math.nan])
def test_bad_timeouts(bad):
    with pytest.raises(ValueError):
        proctimes.Process().wait(bad)


def test_closed_handles_refuse_queries():
    with proctimes.Process() as p:
        assert p.times().state == "running"
    assert p.closed
    for call in (p.times, p.cpu_times, p.identity, p.threads, p.wait):
        with pytest.raises(ValueError):
            call()
    th = proctimes.Thread()
    th.close()
    with pytest.raises(ValueError):
        th.times()


def test_spawn_errors():
    with pytest.raises(proctimes.Error) as ei:
        proctimes.spawn(["/nonexistent/program"])
    assert ei.value.errno == errno.ENOENT
    with pytest.raises(TypeError):
        proctimes.spawn("echo hi")
    with pytest.raises(ValueError):
        proctimes.spawn([])
    with pytest.raises(ValueError):
        proctimes.spawn(["echo", "a\0b"])  # exec would cut it: refused, as subprocess does
    with pytest.raises(ValueError):
        proctimes.snapshot(proc_root="/proc\0/x")


# ---- FILETIME ---------------------------------------------------------------------

def test_filetime_known_values():
    # Windows' own conversions (SystemTimeToFileTime).
    dt = datetime(2002, 7, 26, 11, 55, 32, 123000, tzinfo=timezone.utc)
    assert proctimes.filetime_from_time(dt) == 0x01C2349B580716B0
    assert proctimes.datetime_from_filetime(0x01C2349B580716B0) == dt
    assert proctimes.filetime_from_time(datetime(1980, 1, 1, tzinfo=timezone.utc)) == 0x01A8E79FE1D58000
    assert proctimes.filetime_from_time(0) == 116_444_736_000_000_000
    assert proctimes.time_from_filetime(116_444_736_000_000_000) == 0
    assert proctimes.filetime_from_time(-1) == 116_444_735_999_999_999  # floored
    assert proctimes.datetime_from_filetime(0) == datetime(1601, 1, 1, tzinfo=timezone.utc)
    assert proctimes.filetime_from_duration(timedelta(seconds=1)) == 10_000_000
    assert proctimes.filetime_from_duration(199) == 1
    assert proctimes.duration_from_filetime(123) == 12_300
    other = timezone(timedelta(hours=2))
    assert proctimes.filetime_from_time(dt.astimezone(other)) == 0x01C2349B580716B0


def test_filetime_range_errors():
    with pytest.raises(ValueError):
        proctimes.filetime_from_time(datetime(2002, 7, 26))  # naive
    with pytest.raises(ValueError):
        proctimes.time_from_filetime(0)  # 1601: outside int64 nanoseconds
    with pytest.raises(ValueError):
        proctimes.datetime_from_filetime(-1)
    with pytest.raises(ValueError):
        proctimes.datetime_from_filetime(0x8000000000000000)
    with pytest.raises(OverflowError):
        proctimes.datetime_from_filetime(0x7FFFFFFFFFFFFFFF)  # year 30828: beyond datetime
    with pytest.raises(ValueError):
        proctimes.filetime_from_duration(-1)
    with pytest.raises(ValueError):
        proctimes.filetime_from_time(2**70)
    with pytest.raises(TypeError):
        proctimes.filetime_from_time(1.5)


# ---- snapshots -------------------------------------------------------------------

def test_snapshot_agrees_with_handles(idle_child):
    child = idle_child(threads=2)
    h = proctimes.Process(child.pid)
    t = child.wait_idle(h)
    before = proctimes.process_time_ns()
    snap = proctimes.snapshot(threads=True)
    after = proctimes.process_time_ns()
    assert isinstance(snap, list) and isinstance(snap, proctimes.Snapshot)
    assert [e.pid for e in snap] == sorted(e.pid for e in snap)
    entry = next(e for e in snap if e.pid == child.pid)
    assert entry.times.creation_ns == t.creation_ns
    assert entry.identity == h.identity()._replace(serial=0)
    assert entry.times.kernel_ns + entry.times.user_ns == t.kernel_ns + t.user_ns  # idle: exact total unchanged
    assert [th.tid for th in entry.threads] == h.thread_ids()
    assert entry.ppid == os.getpid() and entry.uid == os.geteuid() and entry.thread_count == 3
    assert all(th.times.creation_ns >= entry.times.creation_ns for th in entry.threads)
    me = next(e for e in snap if e.pid == os.getpid())
    assert before <= me.times.kernel_ns + me.times.user_ns <= after
    assert snap.taken_ns >= t.creation_ns and snap.walk_duration_ns > 0
    assert isinstance(snap.failures, list) and snap.vanished >= 0
    without = proctimes.snapshot(threads=False)
    assert all(e.threads == [] for e in without)


def test_snapshotter_and_precise_threads(idle_child):
    child = idle_child(threads=2)
    h = proctimes.Process(child.pid)
    child.wait_idle(h)
    s = proctimes.Snapshotter(threads=True, precise=True, reuse_idle_threads_for=10.0)
    first, second = s.take(), s.take()
    for snap in (first, second):
        entry = next(e for e in snap if e.pid == child.pid)
        for th in entry.threads:
            assert th.times.precision.source == "schedstat+stat"
            assert th.times.kernel_ns + th.times.user_ns == (lambda x: x.kernel_ns + x.user_ns)(
                proctimes.Thread(th.tid, pid=child.pid).times())
    assert second.reused_threads > 0  # the idle child's threads were copied
    with pytest.raises(ValueError):
        proctimes.Snapshotter(reuse_idle_threads_for=math.nan)


def test_snapshot_of_a_missing_proc_root_is_an_error():
    with pytest.raises(proctimes.Error) as ei:
        proctimes.snapshot(proc_root="/nonexistent")
    assert ei.value.errno == errno.ENOENT


def _stat_fields(path):
    """The fields of a stat file after the name: [0] is field 3 (the state)."""
    with open(path) as f:
        return f.read().rsplit(")", 1)[1].split()


def _status_value(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def test_snapshot_counters_memory_and_limit_are_those_of_the_process_files(idle_child):
    import resource
    child = idle_child(threads=1, burn=0.05)
    h = proctimes.Process(child.pid)
    child.wait_idle(h)
    resource.prlimit(child.pid, resource.RLIMIT_NOFILE, (77, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    snap = proctimes.Snapshotter(threads=True).take()
    entry = next(e for e in snap if e.pid == child.pid)
    stat = _stat_fields(f"/proc/{child.pid}/stat")
    # The CPU of the children this process waited for (earlier tests' children;
    # none is reaped meanwhile): stat's ticks, from either source.
    me = next(e for e in snap if e.pid == os.getpid())
    my_stat = _stat_fields("/proc/self/stat")
    assert (me.children_user_ns // TICK_NS, me.children_kernel_ns // TICK_NS) == (int(my_stat[13]), int(my_stat[14]))
    assert (entry.children_user_ns, entry.children_kernel_ns) == (0, 0)  # the child reaped none
    if entry.times.precision.source != "bpf":
        # The /proc walk reads none of them (not root, or no eBPF here): never a guessed 0.
        assert entry.counters is None and entry.memory is None and entry.open_files_limit is None
        assert all(th.counters is None for th in entry.threads)
        return
    # The child is blocked reading stdin: every value stands still.
    page = os.sysconf("SC_PAGE_SIZE")
    assert entry.memory == proctimes.Memory(rss=int(stat[21]) * page, vms=int(stat[20]),
                                            swap=_status_value(child.pid, "VmSwap") * 1024)
    assert entry.open_files_limit == 77
    c = entry.counters
    assert (c.minor_faults, c.major_faults) == (int(stat[7]), int(stat[9]))
    assert (c.voluntary_switches, c.involuntary_switches) == (
        _status_value(child.pid, "voluntary_ctxt_switches"), _status_value(child.pid, "nonvoluntary_ctxt_switches"))
    with open(f"/proc/{child.pid}/io") as f:
        io = dict(line.split(": ") for line in f.read().splitlines())
    assert (c.read_bytes, c.write_bytes) == (int(io["read_bytes"]), int(io["write_bytes"]))
    assert len(entry.threads) == 2
    for th in entry.threads:
        tstat = _stat_fields(f"/proc/{child.pid}/task/{th.tid}/stat")
        assert (th.counters.minor_faults, th.counters.major_faults) == (int(tstat[7]), int(tstat[9]))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert me.open_files_limit == soft  # resource.RLIM_INFINITY (-1) when unlimited, as the resource module says
    kernel = next(e for e in snap if e.kernel_thread)
    assert kernel.memory is None  # no address space

# ---- documentation ---------------------------------------------------------------

def test_help_reads_well():
    import pydoc
    text = pydoc.render_doc(proctimes, renderer=pydoc.plaintext)
    for word in ("class Process", "class NoSuchProcess", "snapshot(threads", "GetProcessTimes", "pid reuse"):
        assert word in text, word
    assert proctimes.NoSuchProcess.__module__ == "proctimes"
    assert "GIL" in proctimes.Process.wait.__doc__


def test_type_stubs_cover_the_compiled_module():
    import ast
    import pathlib
    from proctimes import _proctimes
    pkg = pathlib.Path(proctimes.__file__).parent
    assert (pkg / "py.typed").exists() and (pkg / "__init__.pyi").exists()
    tree = ast.parse((pkg / "_proctimes.pyi").read_text())
    stubbed = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    public = {n for n in dir(_proctimes) if not n.startswith("_")}
    assert set(stubbed) == public
    for name, node in stubbed.items():
        if isinstance(node, ast.ClassDef):
            methods = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
            actual = {m for m in dir(getattr(_proctimes, name)) if not m.startswith("_")}
            assert actual <= methods, (name, actual - methods)
    # The package stub re-exports exactly __all__.
    init = ast.parse((pkg / "__init__.pyi").read_text())
    names = {a.asname or a.name for n in init.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert names == set(proctimes.__all__)
