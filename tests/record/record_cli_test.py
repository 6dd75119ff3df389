#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`proctimes record`, `report` and `top --replay` as a user runs them.

    record_cli_test.py CASE PROGRAM CHILD

runs one case (the functions case_* below) against PROGRAM (build/bin/proctimes)
with CHILD (top_test_child: a process that names itself and burns CPU). Exit
0: passed, 1: failed (with what was seen), 77: skipped. Every wait is bounded
and every process started is ended on every way out.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def run(program, *args, timeout=15):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=timeout)


class Recorder:
    """`proctimes record` in a process group of its own, ended by SIGINT to the group."""

    def __init__(self, program, store, *args):
        self.program = program
        self.store = store
        self.p = subprocess.Popen([program, "record", "--store", store, *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)

    def intervals(self):
        r = run(self.program, "report", "--store", self.store, "--from", "-1h", "--format", "json")
        if r.returncode != 0:
            return 0
        return json.loads(r.stdout)["intervals"]

    def wait_intervals(self, n, seconds):
        end = time.monotonic() + seconds
        while self.intervals() < n:
            if self.p.poll() is not None:
                raise Failure(f"the recorder ended ({self.p.returncode}): {self.p.stderr.read()}")
            if time.monotonic() > end:
                raise Failure(f"fewer than {n} intervals after {seconds} s")
            time.sleep(0.1)

    def stop(self):
        os.killpg(self.p.pid, signal.SIGINT)
        out, err = self.p.communicate(timeout=10)
        return self.p.returncode, out, err

    def kill(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait(timeout=5)


def report_json(program, store, *args):
    r = run(program, "report", "--store", store, "--from", "-1h", "--format", "json", "--all", *args)
    if r.returncode != 0:
        raise Failure(f"report failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout)


def row(report, key):
    for x in report["rows"]:
        if x["key"] == key:
            return x
    raise Failure(f"no row {key!r} in the report: {[x['key'] for x in report['rows']]}")


def case_workload(program, child, work):
    """A burner and five short children recorded at 0.5 s: the report's CPU
    matches each one's own rusage; as root the short ones are all listed."""
    store = os.path.join(work, "r.db")
    rec = Recorder(program, store, "--interval", "0.5s")
    try:
        rec.wait_intervals(1, 10)
        burner = subprocess.Popen([child, "--name", "ptrecburn", "--burn", "--seconds", "2"])
        shorts = []
        for _ in range(5):
            shorts.append(subprocess.Popen([child, "--name", "ptrecshort", "--burn", "--seconds", "0"]))
            time.sleep(0.05)
        truth_short = 0
        for s in shorts:
            _, status, ru = os.wait4(s.pid, 0)
            s.returncode = status
            truth_short += ru.ru_utime + ru.ru_stime
        _, _, ru = os.wait4(burner.pid, 0)
        burner.returncode = 0
        truth = ru.ru_utime + ru.ru_stime
        # Two more intervals: the burner's end is in a written interval.
        n = rec.intervals()
        rec.wait_intervals(n + 2, 10)
        status, out, err = rec.stop()
        if status != 0 or "stopped by SIGINT" not in out:
            raise Failure(f"SIGINT: status {status}, out {out!r}, err {err!r}")
        rep = report_json(program, store)
        got = row(rep, "ptrecburn")["cpu_ns"] / 1e9
        if os.environ.get("PROCTIMES_SANITIZER") == "tsan":
            # ThreadSanitizer's children carry its thread beside their own, and
            # its builds read ends from taskstats, whose records of a process
            # that had two threads give a lower bound of its last interval (the
            # ledger's account of ended processes, proctimes/ledger.hpp): never
            # more than the truth.
            if got > truth + max(0.01 * truth, 0.01) or got < 0.5 * truth:
                raise Failure(f"the burner used {truth:.4f} s (rusage), the report says {got:.4f} s")
        elif abs(got - truth) > max(0.01 * truth, 0.01):
            raise Failure(f"the burner used {truth:.4f} s (rusage), the report says {got:.4f} s")
        # One process, ended: or, under AddressSanitizer, two: LeakSanitizer's
        # check at exit runs in a short process of its own (a clone of the
        # program, under its name), ended too.
        b = row(rep, "ptrecburn")
        if b["ended"] < 1 or b["ended"] != b["processes"] or b["processes"] > 2:
            raise Failure(f"the burner's end is not counted: {row(rep, 'ptrecburn')}")
        if rep["busy_ns"] <= 0 or not 0.5 <= rep["attributed_share"] <= 1.1:
            raise Failure(f"busy {rep['busy_ns']} attributed share {rep['attributed_share']}")
        if os.geteuid() == 0:
            short = row(rep, "ptrecshort")
            images = b["processes"]  # processes per child: 1, or 2 with the leak checker's
            if short["processes"] != 5 * images or short["ended"] != 5 * images:
                raise Failure(f"five short children expected: {short}")
            if abs(short["cpu_ns"] / 1e9 - truth_short) > max(0.05 * truth_short, 0.02):
                raise Failure(f"the short children used {truth_short:.4f} s, the report says {short['cpu_ns'] / 1e9}")
        print(f"burner: rusage {truth:.4f} s, report {got:.4f} s; attributed {rep['attributed_share']:.4f}")
    finally:
        rec.kill()


def case_second_recorder(program, child, work):
    """A second recorder on the same store is refused (status 2) with the holder's pid."""
    store = os.path.join(work, "r.db")
    rec = Recorder(program, store, "--interval", "0.5s")
    try:
        rec.wait_intervals(1, 10)
        r = run(program, "record", "--store", store)
        if r.returncode != 2 or str(rec.p.pid) not in r.stderr or "another recorder" not in r.stderr:
            raise Failure(f"second recorder: status {r.returncode}, stderr {r.stderr!r}")
        status, _, _ = rec.stop()
        if status != 0:
            raise Failure(f"SIGINT: status {status}")
        # Once the first has ended, the store is free again.
        again = Recorder(program, store, "--interval", "0.5s")
        try:
            again.wait_intervals(rec.intervals() + 1, 10)
        finally:
            again.kill()
    finally:
        rec.kill()


def case_full_disk(program, child, work):
    """A store on a small tmpfs: once it fills, each lost interval is said on
    standard error and recording goes on; when space returns, intervals are
    written again, and every one written reads back."""
    if os.geteuid() != 0:
        raise Skip("mounting a tmpfs needs root")
    mnt = os.path.join(work, "mnt")
    os.mkdir(mnt)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True).returncode != 0:
        raise Skip("cannot mount a tmpfs here")
    errlog = os.path.join(work, "stderr")
    rec = None
    try:
        store = os.path.join(mnt, "r.db")
        with open(errlog, "w") as e:
            rec = subprocess.Popen([program, "record", "--quiet", "--store", store, "--interval", "0.2s"],
                                   stdout=subprocess.DEVNULL, stderr=e, start_new_session=True)
        probe = Recorder.__new__(Recorder)
        probe.program, probe.store, probe.p = program, store, rec
        probe.wait_intervals(2, 10)
        filler = os.path.join(mnt, "filler")
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        end = time.monotonic() + 10
        while "was not written" not in open(errlog).read():
            if time.monotonic() > end or rec.poll() is not None:
                raise Failure(f"no lost interval said on a full disk: {open(errlog).read()!r}")
            time.sleep(0.1)
        if rec.poll() is not None:
            raise Failure("the recorder ended on a full disk")
        before = probe.intervals()
        os.unlink(filler)
        probe.wait_intervals(before + 3, 10)
        os.killpg(rec.pid, signal.SIGINT)
        if rec.wait(timeout=10) != 0:
            raise Failure(f"SIGINT after a full disk: status {rec.returncode}")
        rep = report_json(program, store)
        if rep["intervals"] < before + 3:
            raise Failure(f"{rep['intervals']} intervals read back, {before + 3} written")
        print(f"full disk: {open(errlog).read().count('was not written')} intervals lost and said, "
              f"{rep['intervals']} written")
    finally:
        if rec is not None and rec.poll() is None:
            os.killpg(rec.pid, signal.SIGKILL)
            rec.wait(timeout=5)
        subprocess.run(["umount", mnt], capture_output=True)


def case_formats(program, child, work):
    """report's table, JSON and CSV agree; --group-by user; --top limits rows."""
    store = os.path.join(work, "r.db")
    rec = Recorder(program, store, "--interval", "0.5s")
    try:
        rec.wait_intervals(3, 10)
        rec.stop()
    finally:
        rec.kill()
    j = report_json(program, store)
    if j["intervals"] < 3 or j["group_by"] != "program" or not j["rows"]:
        raise Failure(f"JSON: {j}")
    for x in j["rows"]:
        if x["cpu_ns"] != x["kernel_ns"] + x["user_ns"] + x["children_kernel_ns"] + x["children_user_ns"]:
            raise Failure(f"cpu_ns is not the sum of its parts: {x}")
    if sum(x["cpu_ns"] for x in j["rows"]) != j["attributed_ns"]:
        raise Failure("the rows do not add up to attributed_ns")
    c = run(program, "report", "--store", store, "--from", "-1h", "--format", "csv", "--all")
    lines = c.stdout.strip().split("\n")
    if c.returncode != 0 or not lines[0].startswith("group_by,key,cpu_ns,") or len(lines) != len(j["rows"]) + 1:
        raise Failure(f"CSV ({c.returncode}): {c.stdout!r} {c.stderr!r}")
    t = run(program, "report", "--store", store, "--from", "-1h", "--top", "2")
    if t.returncode != 0 or "Machine busy CPU" not in t.stdout or "attributed to processes" not in t.stdout:
        raise Failure(f"table: {t.stdout!r}")
    rows = t.stdout.split("\n\n", 1)[1].strip().split("\n")
    if len(rows) != 3:  # heading + 2
        raise Failure(f"--top 2 gave {len(rows) - 1} rows:\n{t.stdout}")
    u = report_json(program, store, "--group-by", "user")
    if u["group_by"] != "user" or sum(x["cpu_ns"] for x in u["rows"]) != j["attributed_ns"]:
        raise Failure(f"by user: {u}")
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    w = run(program, "report", "--store", store, "--from", iso, "--to", "now", "--format", "json")
    if w.returncode != 0 or json.loads(w.stdout)["intervals"] != j["intervals"]:
        raise Failure(f"--from ISO: {w.stdout!r} {w.stderr!r}")
    b = run(program, "top", "-b", "--replay", "--store", store, "--format", "json", "--from", "-1h")
    frames = [json.loads(x) for x in b.stdout.strip().split("\n")] if b.returncode == 0 else []
    if len(frames) != j["intervals"] or not all("processes" in f and "ledger" in f for f in frames):
        raise Failure(f"top -b --replay gave {len(frames)} frames for {j['intervals']} intervals: {b.stderr!r}")
    two = run(program, "top", "-b", "--replay", "--store", store, "-n", "2")
    if two.returncode != 0 or two.stdout.count("proctimes top - ") != 2:
        raise Failure(f"top -b --replay -n 2: {two.stdout!r} {two.stderr!r}")
    empty = run(program, "report", "--store", store, "--from", "2001-01-01T00:00:00Z", "--to", "2001-01-02",
                "--format", "json")
    if empty.returncode != 0 or json.loads(empty.stdout)["intervals"] != 0:
        raise Failure(f"an empty window: {empty.stdout!r} {empty.stderr!r}")


def case_bad_values(program, child, work):
    """Bad durations, sizes, times and stores are refused with status 2 (1 for a missing store) and a clear message."""
    store = os.path.join(work, "r.db")
    cases = [
        (["record", "--interval", "5x"], 2, "not a duration"),
        (["record", "--interval", "-1s"], 2, "not a duration"),
        (["record", "--interval", "50ms"], 2, "outside 100ms to 1d"),
        (["record", "--interval", "2d"], 2, "outside 100ms to 1d"),
        (["record", "--retain", "10"], 2, "not a retention"),
        (["record", "--retain", "7d,3d"], 2, "not a retention"),
        (["record", "--retain", "5Q"], 2, "not a retention"),
        (["report", "--from", "yesterdayx"], 2, "not a time"),
        (["report", "--from", "2026-13-01"], 2, "not a time"),
        (["report", "--from", "-1h", "--to", "-2h", "--store", store], 2, "is before --from"),
        (["report", "--group-by", "exe"], 2, "not in {program,user,cgroup}"),
        (["report", "--top", "0"], 2, ""),
        (["report", "--store", os.path.join(work, "none.db")], 1, "none.db"),
        (["top", "--replay", "--store", store, "--at", "tomorrow"], 2, ""),
        (["top", "--at", "-1h"], 2, "--replay"),
        (["top", "-b", "--replay", "--store", store, "--from", "xx"], 2, "not a time"),
    ]
    for args, want, text in cases:
        r = run(program, *args)
        if r.returncode != want or text not in r.stderr:
            raise Failure(f"{args}: status {r.returncode} (want {want}), stderr {r.stderr!r} (want {text!r})")


def case_replay(program, child, work):
    """top --replay in tmux: opens paused on the first interval, REPLAY in the
    header; ] and Right step forward, [ back, j jumps; q restores the terminal."""
    if shutil.which("tmux") is None:
        raise Skip("tmux is not installed")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "top"))
    import tmux_test  # the tmux harness of the live view's tests

    store = os.path.join(work, "r.db")
    rec = Recorder(program, store, "--interval", "0.5s")
    try:
        rec.wait_intervals(4, 10)
        rec.stop()
    finally:
        rec.kill()
    frames = report_json(program, store)
    pane = tmux_test.Pane(width=120, height=30)
    try:
        top = tmux_test.Top(pane, program, ["--replay", "--store", store])
        title = lambda s: s.split("\n")[0]
        # Each title kept to be compared later is taken from a settled screen.
        s = pane.wait_settled(lambda s: "REPLAY" in title(s) and "[paused]" in title(s), "REPLAY, paused", 10)
        first = title(s)
        # The first interval's time, with its date.
        want = frames["first"][:10]
        if want not in first:
            raise Failure(f"the first interval ({frames['first']}) is not in the header: {first}")
        pane.keys("]")
        second = title(pane.wait_settled(lambda s: title(s) != first, "] to move", 10))
        pane.keys("Right")
        third = title(pane.wait_settled(lambda s: title(s) not in (first, second), "Right to move", 10))
        pane.keys("[")
        pane.wait_for(lambda s: title(s) == second, f"[ to go back to {second!r} from {third!r}", 10)
        pane.keys("Left")
        pane.wait_for(lambda s: title(s) == first, "Left to go back", 10)
        pane.keys("[")
        pane.wait_for(lambda s: "first recorded interval" in s and title(s) == first, "the first interval said", 10)
        pane.keys("j")
        pane.type("now")
        pane.keys("Enter")
        pane.wait_for(lambda s: title(s) not in (first, second), "j now to the last interval", 10)
        pane.keys("j")
        pane.type("nonsense")
        pane.keys("Enter")
        pane.wait_for(lambda s: "is not a time" in s, "a bad time said", 10)
        if third == first:
            raise Failure("stepping did not move")
        pane.keys("q")
        if top.wait_exit() != 0:
            raise Failure("q did not end the replay with status 0")
        top.check_restored()
    except tmux_test.Failure as e:
        raise Failure(str(e)) from None
    finally:
        pane.close()


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    name, program, child = sys.argv[1:4]
    case = globals().get("case_" + name)
    if case is None:
        print(f"no case {name}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="pt-record-")
    try:
        case(program, child, work)
    except Failure as e:
        print(f"{name}: FAILED: {e}")
        return 1
    except Skip as e:
        print(f"{name}: skipped: {e}")
        return SKIP
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
