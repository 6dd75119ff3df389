# SPDX-License-Identifier: MIT
"""proctimes.run_tree: every process of a command's tree, with its programs,
its end and its own final CPU, adding up to the command's wait rusage; and the
fallback to the command alone when ptrace is refused (a seccomp filter)."""
import ctypes
import errno
import os
import platform
import sys

import pytest

import proctimes


def final_sum(tree):
    return sum(p.kernel_ns + p.user_ns for p in tree.processes if p.final_times)


def test_fields_are_the_libraries():
    assert proctimes.TreeProcess._fields[:4] == ("pid", "parent_pid", "parent_index", "programs")
    for name in ("created", "exited", "kernel", "user", "precision", "final_times", "status", "threads",
                 "outlived_command"):
        assert name in proctimes.TreeProcess._fields
    assert proctimes.TreeProgram._fields[:3] == ("executable", "argv", "argv_truncated")
    assert proctimes.TreeRun._fields == ("command", "tree")


def check_source(tree, prefer):
    """ptrace as asked; bpf, or ptrace standing in with the reason (not root,
    no kernel BTF, a build without eBPF)."""
    if prefer == "ptrace":
        assert tree.source == "ptrace" and tree.source_note == "", tree.source_note
    elif tree.source == "bpf":
        assert tree.source_note == ""
    else:
        assert tree.source == "ptrace", tree.source_note
        assert tree.source_note.startswith("bpf: ") and tree.source_note.endswith("; ptrace used")
        assert os.geteuid() != 0 or "not built" in tree.source_note or "BTF" in tree.source_note, tree.source_note
        print("the eBPF source is not usable here:", tree.source_note)


@pytest.mark.parametrize("prefer", ["ptrace", "bpf"])
def test_a_shell_tree(prefer):
    script = "/bin/true; /bin/sh -c 'exec /bin/echo hi >/dev/null'; exit 3"
    r = proctimes.run_tree(["/bin/sh", "-c", script], stdout=None, prefer=prefer)
    t = r.tree
    check_source(t, prefer)
    assert r.command.status.code == 3
    cmd = t.processes[0]
    assert cmd.parent_index == -1 and cmd.status == r.command.status
    assert cmd.programs[0].argv == ["/bin/sh", "-c", script]
    for i, p in enumerate(t.processes[1:], 1):
        assert 0 <= p.parent_index < i
        assert t.processes[p.parent_index].pid == p.parent_pid
        assert p.created_ns >= t.processes[p.parent_index].created_ns
        assert p.exited_ns is not None and p.exited_ns <= cmd.exited_ns
        assert p.status.code == 0 and not p.outlived_command
        # bpf: the kernel runs no free program for about one process in 700;
        # that one keeps its exit's lower bound, not final (docs/TREE.md).
        assert p.final_times or t.source == "bpf"
    true = [p for p in t.processes if p.programs[-1].argv == ["/bin/true"]]
    assert len(true) == 1 and true[0].parent_index == 0
    echo = [p for p in t.processes if p.programs[-1].argv == ["/bin/echo", "hi"]]
    assert len(echo) == 1
    assert [prog.argv for prog in echo[0].programs] == [
        ["/bin/sh", "-c", script], ["/bin/sh", "-c", "exec /bin/echo hi >/dev/null"], ["/bin/echo", "hi"]]
    assert echo[0].programs[-1].executable.endswith("echo")
    started = [prog.started_ns for prog in echo[0].programs]
    assert started == sorted(started) and started[0] == echo[0].created_ns
    # The tree's final CPU is the command's wait rusage (1 %, and the µs cuts);
    # the lower bounds of processes without final values lie in the rest.
    assert t.unaccounted_cpu_ns == t.rusage_cpu_ns - final_sum(t)
    lower = sum(p.kernel_ns + p.user_ns for p in t.processes if not p.final_times)
    assert t.unaccounted_cpu_ns >= lower - 1_000_000
    assert abs(t.unaccounted_cpu_ns - lower) <= t.rusage_cpu_ns // 100 + 1_000_000 + (50_000_000 if lower else 0)


@pytest.mark.parametrize("prefer", ["ptrace", "bpf"])
def test_threads_are_counted(prefer):
    code = "import threading; ts = [threading.Thread(target=sum, args=([1],)) for _ in range(3)]; " \
           "[t.start() for t in ts]; [t.join() for t in ts]"
    r = proctimes.run_tree([sys.executable, "-c", code], prefer=prefer)
    check_source(r.tree, prefer)
    assert r.tree.processes[0].threads == 4
    assert r.command.status.code == 0


def test_bad_arguments():
    with pytest.raises(TypeError):
        proctimes.run_tree("/bin/true")
    with pytest.raises(ValueError):
        proctimes.run_tree(["/bin/true"], prefer="strace")
    with pytest.raises(proctimes.Error) as e:
        proctimes.run_tree(["/nonexistent/program"])
    assert e.value.errno == errno.ENOENT


def _deny_ptrace():
    """A seccomp filter making ptrace(2) fail with EPERM (x86-64)."""
    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]

    nr_ptrace, eperm = 101, 1
    insns = (SockFilter * 4)(
        SockFilter(0x20, 0, 0, 0),                   # ld [nr]
        SockFilter(0x15, 0, 1, nr_ptrace),           # jeq ptrace
        SockFilter(0x06, 0, 0, 0x00050000 | eperm),  # ret ERRNO(EPERM)
        SockFilter(0x06, 0, 0, 0x7fff0000))          # ret ALLOW
    prog = SockFprog(4, insns)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the filter names x86-64's ptrace number")
def test_ptrace_refused_falls_back_to_the_command():
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        msg = ""
        try:
            os.close(rd)
            _deny_ptrace()
            r = proctimes.run_tree(["/bin/sh", "-c", "/bin/true; exit 7"], prefer="ptrace")
            t = r.tree
            if t.source != "none" or "ptrace: Operation not permitted" not in t.source_note:
                msg = f"source {t.source} ({t.source_note})"
            elif len(t.processes) != 1 or r.command.status.code != 7:
                msg = f"processes {t.processes}"
            elif t.rusage_cpu_ns != (r.command.times.kernel_ns + r.command.times.user_ns +
                                     r.command.children_kernel_ns + r.command.children_user_ns):
                msg = "rusage"
        except Exception as e:  # noqa: BLE001 -- reported through the pipe
            msg = repr(e)
        os.write(wr, msg.encode() or b"ok")
        os._exit(0)
    os.close(wr)
    with os.fdopen(rd) as f:
        out = f.read()
    _, status = os.waitpid(pid, 0)
    assert out == "ok"
    assert os.waitstatus_to_exitcode(status) == 0
