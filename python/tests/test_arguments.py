# SPDX-License-Identifier: MIT
"""Arguments the Python module refuses as the standard library does (timeouts,
spawn's environment and arguments), requests it cuts to what the machine can
run (snapshot workers), and the documentation every public name carries."""
import inspect
import math
import os
import resource
import subprocess
import sys
import time

import pytest

import proctimes


# ---- timeouts -------------------------------------------------------------------

def timeout_takers(idle_child):
    """Every call that takes a timeout, on a process that keeps running."""
    c = idle_child()
    p = proctimes.Process(c.pid)
    th = proctimes.Thread(c.pid, pid=c.pid)
    child = proctimes.spawn(["sleep", "30"])
    return [p.wait, th.wait, child.wait], child


@pytest.mark.parametrize("bad", ["1", b"1", [1], object(), 1j])
def test_a_timeout_that_is_not_a_number_is_a_type_error(idle_child, bad):
    calls, child = timeout_takers(idle_child)
    try:
        for call in calls:
            with pytest.raises(TypeError):
                call(bad)
            with pytest.raises(TypeError):
                call(timeout=bad)
    finally:
        os.kill(child.pid, 9)
        child.wait()


@pytest.mark.parametrize("bad", [-1, -0.001, -math.inf, math.nan])
def test_a_negative_or_nan_timeout_is_a_value_error(idle_child, bad):
    calls, child = timeout_takers(idle_child)
    try:
        for call in calls:
            with pytest.raises(ValueError):
                call(bad)
    finally:
        os.kill(child.pid, 9)
        child.wait()


def test_numbers_of_any_kind_are_timeouts(idle_child):
    import fractions
    calls, child = timeout_takers(idle_child)
    try:
        for call in calls:
            for ok in (0, 0.0, False, fractions.Fraction(1, 100), 0.01):
                assert not call(ok)
    finally:
        os.kill(child.pid, 9)
        child.wait()


def test_snapshotter_reuse_period_must_be_a_number():
    with pytest.raises(TypeError):
        proctimes.Snapshotter(reuse_idle_threads_for="1")
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError):
            proctimes.Snapshotter(reuse_idle_threads_for=bad)


# ---- spawn: environment and arguments ---------------------------------------------

@pytest.mark.parametrize("env", [{"A=B": "C"}, {b"A=B": b"C"}, {"=A": "B"}, {"": "x"}])
def test_an_environment_name_with_an_equals_sign_is_refused(env):
    # os.execve raises ValueError for a name containing '=' (which would
    # reach the child as A='B=C') and for an empty one.
    with pytest.raises(ValueError, match="environment variable name"):
        proctimes.spawn(["true"], env=env)


@pytest.mark.parametrize("env", [{"A\0B": "C"}, {"A": "B\0C"}, {b"A": b"\0"}])
def test_a_nul_in_the_environment_is_refused(env):
    with pytest.raises(ValueError, match="null"):
        proctimes.spawn(["true"], env=env)


@pytest.mark.parametrize("kw", [{"args": ["echo", "a\0b"]}, {"args": ["ec\0ho"]},
                                {"args": ["echo"], "program": "/bin/e\0cho"},
                                {"args": ["echo"], "cwd": "/\0tmp"}])
def test_a_nul_in_arguments_is_refused(kw):
    with pytest.raises(ValueError, match="null"):
        proctimes.spawn(**kw)


def test_a_good_environment_reaches_the_child_exactly(tmp_path):
    out = tmp_path / "env"
    with open(out, "w") as f:
        c = proctimes.spawn(["env"], env={"A": "B=C", "D": "", b"E": b"\xff"}, stdout=f)
        assert c.wait(30).status.code == 0
    lines = out.read_bytes().split(b"\n")
    assert b"A=B=C" in lines and b"D=" in lines and b"E=\xff" in lines


# ---- snapshot workers -----------------------------------------------------------------

def cap():
    return min(4 * len(os.sched_getaffinity(0)), 64)


def test_a_huge_worker_count_is_cut():
    # Memory is limited in a subprocess: a walk that allocated per requested
    # worker (2**31 of them) fails there instead of growing to gigabytes.
    code = (
        "import resource, proctimes, os\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "s = proctimes.snapshot(workers=2**31)\n"
        "t = proctimes.Snapshotter(workers=2**32 - 1).take()\n"
        "print(s.workers, len(s), t.workers, len(t), os.getpid() in {p.pid for p in s})\n"
    )
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    sw, sn, tw, tn, me = r.stdout.split()
    assert 1 <= int(sw) <= cap() and 1 <= int(tw) <= cap()
    assert int(sn) > 0 and int(tn) > 0 and me == "True"
    assert time.monotonic() - t0 < 60


def test_workers_within_the_cap_all_run():
    s = proctimes.snapshot(workers=min(2, cap()))
    assert s.workers == min(2, cap())


# ---- documentation ------------------------------------------------------------------

def own_doc(obj):
    """The docstring without pybind11's generated signature lines."""
    doc = inspect.getdoc(obj) or ""
    name = getattr(obj, "__name__", "")
    lines = [ln for ln in doc.splitlines() if not (name and ln.startswith(name + "("))]
    return "\n".join(lines).strip()


def public_callables():
    for name in proctimes.__all__:
        obj = getattr(proctimes, name)
        yield name, obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(member, property) or callable(member) or type(member).__name__ == "instancemethod":
                    yield f"{name}.{attr}", getattr(obj, attr) if not isinstance(member, property) else member


def test_every_public_callable_has_a_docstring():
    missing = [name for name, obj in public_callables() if not own_doc(obj)]
    assert missing == []


def test_precision_sources_are_all_documented():
    text = proctimes.Precision.__doc__ + "".join(
        str(getattr(proctimes.Precision, f).__doc__) for f in proctimes.Precision._fields)
    for source in ("rusage", "thread_clock+rusage", "cpu_clock+stat", "schedstat+stat", "stat", "wait_rusage",
                   "exit_record", "bpf", "bpf_exit"):
        assert f'"{source}"' in text, source
    for exit_source in ("none", "observed", "exit_record", "bpf_exit"):
        assert f'"{exit_source}"' in text, exit_source
