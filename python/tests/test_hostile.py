# SPDX-License-Identifier: MIT
"""Hostile environments, as tests/hostile/run_in.sh prepares them for the C++
tests: /proc mounted with hidepid=2 for user nobody, and no /proc at all.
Preparing them needs root (a mount namespace); the checks run in a child
/usr/bin/python3 that prints what it saw as JSON."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import is_root

PROBE = r"""
import errno, json, os, proctimes
out = {"uid": os.getuid()}
def attempt(name, fn):
    try:
        r = fn()
        out[name] = {"ok": repr(r)}
    except proctimes.Error as e:
        out[name] = {"exc": type(e).__name__, "errno": e.errno, "pid": e.pid,
                     "tid": e.tid, "permission": isinstance(e, PermissionError),
                     "lookup": isinstance(e, ProcessLookupError)}
attempt("process1", lambda: proctimes.Process(1).times())
attempt("thread1", lambda: proctimes.Thread(1).times())
attempt("missing", lambda: proctimes.Process(4000000))
attempt("self", lambda: proctimes.Process().times().kernel_ns + proctimes.Process().times().user_ns)
attempt("own_thread", lambda: proctimes.this_thread_times().state)
attempt("own_process", lambda: proctimes.this_process_times().state)
t0 = proctimes.thread_time_ns()
while proctimes.thread_time_ns() - t0 < 5_000_000: pass
out["thread_clock_ns"] = proctimes.thread_time_ns() - t0
try:
    snap = proctimes.snapshot(threads=True)
    out["snapshot_pids"] = [e.pid for e in snap]
except proctimes.Error as e:
    out["snapshot_error"] = e.errno
print(json.dumps(out))
"""

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def run_in(prefix):
    if not is_root():
        pytest.skip("needs root to mount /proc in a private mount namespace")
    for tool in ("unshare", "setpriv"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} (util-linux) is not installed")
    env = dict(os.environ)
    r = subprocess.run(prefix + [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_hidden_proc_gives_access_denied():
    out = run_in(["unshare", "-m", "--propagation", "private", "sh", "-c",
                  'mount -t proc -o hidepid=2 proc /proc && exec "$@"', "sh"] + NOBODY)
    assert out["uid"] == 65534
    # pid 1 exists, /proc hides it: AccessDenied (a PermissionError), not a zero.
    for key in ("process1", "thread1"):
        assert out[key]["exc"] == "AccessDenied", out[key]
        assert out[key]["permission"]
        assert out[key]["errno"] in (13, 1)  # EACCES / EPERM
    assert out["process1"]["pid"] == 1 and out["thread1"]["tid"] == 1
    assert out["missing"]["exc"] == "NoSuchProcess" and out["missing"]["lookup"]
    assert out["missing"]["errno"] == 3
    assert int(out["self"]["ok"]) > 0  # our own process stays visible, with real values
    assert out["own_thread"]["ok"] == "'running'" and out["own_process"]["ok"] == "'running'"
    # The snapshot sees only what /proc shows: this process, not pid 1.
    assert 1 not in out["snapshot_pids"]


def test_no_proc_gives_a_clear_error():
    out = run_in(["unshare", "-m", "--propagation", "private", "sh", "-c", 'umount -l /proc && exec "$@"', "sh"])
    assert out["process1"]["exc"] == "Error" and out["process1"]["errno"] == 2  # ENOENT: /proc unavailable
    assert out["snapshot_error"] == 2
    for key in ("self", "own_thread", "own_process"):  # creation instants need /proc
        assert out[key]["exc"] == "Error" and out[key]["errno"] == 2, key
    assert out["thread_clock_ns"] >= 5_000_000  # what needs no /proc still works
