#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Coverage of `proctimes top` against `top -b` and atop, side by side in one
run, while `make -j2` builds a generated C project of 300 small files
(tests/fixtures/make_c_project.py) over and over: many short compiler
processes, most of which start and end between two refreshes.

Running together, each at a 1 s interval:
  proctimes root    `proctimes top -b -d 1 --format json`
  proctimes nobody  the same under `setpriv --reuid=65534 --regid=65534
                    --clear-groups` (no exit records: children times)
  top               `top -b -d 1`, every process listed (batch mode has no
                    screen limit); CPU shown = sum of %CPU x the interval
  atop              `atop -P PRC 1`: utime + stime ticks of every process in
                    the sample, the exited ones atop reads from process
                    accounting (state E) included

For each frame, coverage = CPU shown / the machine's busy CPU over the same
interval (user + nice + system + irq + softirq + steal of /proc/stat, read by
this script as each frame arrives). CPU shown by a proctimes frame = the sum
over its "processes" of interval_kernel_ns + interval_user_ns +
interval_children_kernel_ns + interval_children_user_ns; its own ledger's
busy_ns (the same interval exactly, from its own /proc/stat reads) is the
second denominator. The first frame of top and of atop (since their start or
since boot) is not counted.

Goals (issue 37): proctimes >= 99 % as root and >= 95 % unprivileged, every
frame, against its ledger's busy CPU and against this script's /proc/stat
(the latter to within its tick granularity: a frame boundary read a few ms
apart from the tool's own read, 1 tick of 10 ms per CPU, is allowed for with
--stat-slack, 1 point by default); and no frame above 110 % of its ledger's
busy CPU (--ceiling: a frame that counts an ended process's CPU both in its
row and in its parent's children times shows far more than the machine
used; /proc/stat's own tick sampling moves a 1 s frame by a few %). The
peers' figures are printed beside, with no goal. Exit status 0 when every goal held, 1 when one was missed, 77 when
not run as root or the proctimes command has no `top`.

  bench/top_coverage.py [--quick] [--seconds 150] [--proctimes build/bin/proctimes]
                        [--files 300] [--frames]
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "tests", "fixtures", "make_c_project.py")
HZ = os.sysconf("SC_CLK_TCK")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def stat_busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (10 - len(v))
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]  # user nice system irq softirq steal


def stamp():
    return time.monotonic(), stat_busy_ticks()


class Monitor:
    """One tool's output, read line by line on a thread of its own. A frame is
    stamped (monotonic time, /proc/stat busy ticks) as its first line arrives."""

    def __init__(self, label, argv, env=None, cwd="/"):
        self.label = label
        self.argv = argv
        self.frames = []  # dicts: t, busy (ticks), shown_ns, and tool-specific fields
        self.err = ""
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     errors="replace", env=env, cwd=cwd, start_new_session=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        self.err_thread = threading.Thread(target=self._read_err, daemon=True)
        self.err_thread.start()

    def _read_err(self):
        self.err = self.proc.stderr.read()

    def _read(self):
        for line in self.proc.stdout:
            self.line(line)
        self.finish()

    def line(self, line):
        raise NotImplementedError

    def finish(self):
        pass

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.thread.join(timeout=10)
        self.err_thread.join(timeout=10)


class ProctimesMonitor(Monitor):
    """`proctimes top -b --format json`: one frame object per line."""

    def line(self, line):
        t, busy = stamp()
        line = line.strip()
        if not line.startswith("{"):
            return
        try:
            fr = json.loads(line)
        except ValueError:
            self.err += f"unreadable frame: {line[:120]}\n"
            return
        if fr.get("record", "frame") != "frame":
            return
        shown = 0
        ended = 0
        for p in fr.get("processes") or []:
            shown += sum(int(p.get(k) or 0) for k in ("interval_kernel_ns", "interval_user_ns",
                                                      "interval_children_kernel_ns", "interval_children_user_ns"))
            ended += 1 if p.get("ended") else 0
        led = fr.get("ledger") or None
        self.frames.append({"t": t, "busy": busy, "shown_ns": shown, "ended_rows": ended,
                            "ledger_busy_ns": led.get("busy_ns") if led else None,
                            "ledger_unattributed_ns": led.get("unattributed_ns") if led else None,
                            "ended_source": fr.get("ended_source", "")})


class TopMonitor(Monitor):
    """procps `top -b`: a frame starts with its "top - " summary line; rows
    under the "PID USER ..." header carry %CPU (of one CPU, over top's own
    interval)."""

    def __init__(self, *a, **kw):
        self.cur = None
        self.col = None
        super().__init__(*a, **kw)

    def line(self, line):
        if line.startswith("top - "):
            self._close()
            t, busy = stamp()
            self.cur = {"t": t, "busy": busy, "pcpu": 0.0, "rows": 0}
            self.col = None
            return
        if self.cur is None:
            return
        f = line.split()
        if not f:
            return
        if f[0] == "PID" and "%CPU" in f:
            self.col = f.index("%CPU")
            return
        if self.col is not None and f[0].isdigit() and len(f) > self.col:
            try:
                self.cur["pcpu"] += float(f[self.col].replace(",", "."))
                self.cur["rows"] += 1
            except ValueError:
                pass

    def _close(self):
        if self.cur is not None and self.col is not None:
            self.frames.append(self.cur)
        self.cur = None

    def finish(self):
        self._close()
        # CPU shown: %CPU x the interval, the interval taken as the time
        # between the frames' arrival.
        for a, b in zip(self.frames, self.frames[1:]):
            b["shown_ns"] = b["pcpu"] / 100.0 * (b["t"] - a["t"]) * 1e9


# atop 2.8 parseable PRC: host epoch date time interval pid (name) state
# ticks-per-second utime stime nice prio rtprio policy curcpu sleepavg tgid
# is-process ...
PRC = re.compile(r"^PRC \S+ \d+ \S+ \S+ (\d+) (\d+) \((.*?)\) ([A-Z]) (\d+) (\d+) (\d+) (?:-?\d+ ){6}(\d+) ([yn])")


class AtopMonitor(Monitor):
    """`atop -P PRC 1`: a sample's PRC lines, then SEP (RESET before the
    first, since boot)."""

    def __init__(self, *a, **kw):
        self.cur = None
        super().__init__(*a, **kw)

    def line(self, line):
        if line.startswith("SEP") or line.startswith("RESET"):
            if self.cur is not None:
                self.frames.append(self.cur)
            self.cur = None
            return
        m = PRC.match(line)
        if not m:
            return
        if self.cur is None:
            t, busy = stamp()
            self.cur = {"t": t, "busy": busy, "ticks": 0, "exited_ticks": 0, "rows": 0, "exited": 0,
                        "interval": int(m.group(1))}
        if m.group(9) != "y":  # a thread's line; its process's line holds the totals
            return
        hz = int(m.group(5)) or HZ
        ticks = (int(m.group(6)) + int(m.group(7))) * HZ // hz
        self.cur["ticks"] += ticks
        self.cur["rows"] += 1
        if m.group(4) == "E":
            self.cur["exited"] += 1
            self.cur["exited_ticks"] += ticks

    def finish(self):
        if self.cur is not None:
            self.frames.append(self.cur)
            self.cur = None
        for f in self.frames:
            f["shown_ns"] = f["ticks"] * 1e9 / HZ


def pct(a, b):
    return 100.0 * a / b if b else float("nan")


def coverage(mon, skip_first):
    """Per frame: (frame index, shown / busy of /proc/stat read here, shown / ledger busy or None)."""
    out = []
    fr = mon.frames
    for i in range(len(fr)):
        f = fr[i]
        if "shown_ns" not in f:
            continue
        if i == 0 and skip_first:
            continue
        stat = None
        if i > 0:
            busy_ns = (f["busy"] - fr[i - 1]["busy"]) * 1e9 / HZ
            stat = pct(f["shown_ns"], busy_ns)
        led = pct(f["shown_ns"], f["ledger_busy_ns"]) if f.get("ledger_busy_ns") else None
        out.append((i, stat, led, f))
    return out


def summary(values):
    v = [x for x in values if x is not None]
    if not v:
        return "-", "-", "-"
    return f"{min(v):.1f}", f"{statistics.median(v):.1f}", f"{max(v):.1f}"


def has_top(proctimes):
    if not os.access(proctimes, os.X_OK):
        return False
    r = subprocess.run([proctimes, "top", "--help"], capture_output=True, text=True)
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proctimes", default=os.path.join(HERE, "..", "build", "bin", "proctimes"))
    ap.add_argument("--seconds", type=float, default=None, help="measured time (150 s; --quick 45 s)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--stat-slack", type=float, default=1.0,
                    help="percentage points the goal allows against this script's own /proc/stat reads")
    ap.add_argument("--ceiling", type=float, default=110.0,
                    help="a proctimes frame above this %% of its ledger's busy CPU counts some CPU twice (goal)")
    ap.add_argument("--frames", action="store_true", help="print every frame")
    ap.add_argument("--peers-only", action="store_true", help="top and atop only")
    a = ap.parse_args()
    seconds = a.seconds if a.seconds is not None else (45.0 if a.quick else 150.0)
    if os.geteuid() != 0:
        print("skipped: run as root (the unprivileged run is started through setpriv; atop reads "
              "process accounting as root)")
        return 77
    proctimes = os.path.abspath(a.proctimes)
    with_proctimes = not a.peers_only and has_top(proctimes)
    if not a.peers_only and not with_proctimes:
        print(f"note: {proctimes} has no `top` command; measuring the peers only")
    for tool in ("top", "atop", "make", "gcc", "setpriv"):
        if not shutil.which(tool):
            print(f"skipped: {tool} is absent (Debian packages procps, atop, make, gcc, util-linux)")
            return 77

    tmp = tempfile.mkdtemp(prefix="proctimes-top-coverage-")
    os.chmod(tmp, 0o755)
    proj = os.path.join(tmp, "proj")
    subprocess.run([sys.executable, GENERATOR, proj, str(a.files)], check=True)
    home = os.path.join(tmp, "home")  # top and atop read no user's configuration
    os.makedirs(home)
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=home, LC_ALL="C", CCACHE_DISABLE="1")
    env.pop("MAKEFLAGS", None)
    build = subprocess.Popen(["sh", "-c", "while :; do make -s clean >/dev/null; "
                              "make -s -j2 CC=gcc >/dev/null 2>&1; done"],
                             cwd=proj, env=env, start_new_session=True)
    mons = []
    n = int(round(seconds / a.interval))
    d = f"{a.interval:g}"
    try:
        time.sleep(2)  # the build under way
        started = time.monotonic()
        if with_proctimes:
            cmd = [proctimes, "top", "-b", "-d", d, "-n", str(n), "--format", "json"]
            mons.append(ProctimesMonitor("proctimes root", cmd, env=env))
            mons.append(ProctimesMonitor("proctimes nobody", NOBODY + cmd, env=env))
        mons.append(TopMonitor("top -b", ["top", "-b", "-d", d, "-n", str(n + 1), "-w", "512"], env=env))
        mons.append(AtopMonitor("atop -P PRC", ["atop", "-P", "PRC", d, str(n + 1)], env=env))
        deadline = started + seconds + 20
        for m in mons:
            while m.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)
        load = os.getloadavg()
    finally:
        for m in mons:
            m.stop()
        os.killpg(build.pid, signal.SIGTERM)
        build.wait()
        subprocess.run(["rm", "-rf", tmp])

    print(f"load: make -j2 of {a.files} generated C files, rebuilt in a loop; {seconds:g} s at a "
          f"{a.interval:g} s interval; {os.cpu_count()} CPUs, load average {load[0]:.1f} at the end")
    ok = True
    rows = []
    for m in mons:
        if m.proc.returncode not in (0, -signal.SIGTERM) and not m.frames:
            print(f"{m.label}: failed ({m.proc.returncode}): {m.err.strip()[:300]}")
            ok = ok and not m.label.startswith("proctimes")
            continue
        is_pt = m.label.startswith("proctimes")
        cov = coverage(m, skip_first=not is_pt)
        rows.append((m, cov))
    print()
    print(f"{'':<17} {'':>6}  {'per frame, % of /proc/stat busy':^24}  {'whole':>6}  "
          f"{'per frame, % of ledger busy':^24}")
    print(f"{'tool':<17} {'frames':>6}  {'min':>7} {'median':>8} {'max':>7}  {'run %':>6}  "
          f"{'min':>7} {'median':>8} {'max':>7}  {'below':>5}  goal")
    for m, cov in rows:
        stat_v = [c[1] for c in cov if c[1] is not None]
        led_v = [c[2] for c in cov if c[2] is not None]
        smin, smed, smax = summary(stat_v)
        lmin, lmed, lmax = summary(led_v)
        busy_sum = sum((c[3]["busy"] - m.frames[c[0] - 1]["busy"]) for c in cov if c[0] > 0) * 1e9 / HZ
        whole = f"{pct(sum(c[3]['shown_ns'] for c in cov if c[0] > 0), busy_sum):.1f}" if busy_sum else "-"
        below = "-"
        if m.label.startswith("proctimes"):
            target = 95.0 if "nobody" in m.label else 99.0
            low = [c for c in cov if (c[2] is not None and c[2] < target)
                   or (c[1] is not None and c[1] < target - a.stat_slack)]
            over = [v for v in led_v if v > a.ceiling]
            below = str(len(low))
            complete = len(cov) >= max(1, n - 1)
            met = complete and bool(led_v) and bool(stat_v) and not low and not over
            ok = ok and met
            goal = f">= {target:g} % every frame: {'met' if met else 'MISSED'}"
            if not complete:
                goal += f" (only {len(cov)} of {n} frames)"
            if over:
                goal += f" ({len(over)} frames above {a.ceiling:g} %: CPU counted twice)"
        else:
            goal = "(none)"
        print(f"{m.label:<17} {len(cov):>6}  {smin:>7} {smed:>8} {smax:>7}  {whole:>6}  "
              f"{lmin:>7} {lmed:>8} {lmax:>7}  {below:>5}  {goal}")
    print("(coverage: CPU shown by a frame's rows / busy CPU of the machine over the frame; `below`: frames under "
          f"the goal, which allows {a.stat_slack:g} point for this script's own /proc/stat reads)")
    for m, cov in rows:
        if m.label.startswith("proctimes") and cov:
            f = cov[-1][3]
            ratio = [c[3]["ledger_busy_ns"] / ((c[3]["busy"] - m.frames[c[0] - 1]["busy"]) * 1e9 / HZ)
                     for c in cov if c[0] > 0 and c[3].get("ledger_busy_ns")
                     and c[3]["busy"] != m.frames[c[0] - 1]["busy"]]
            attr = [pct(c[3]["shown_ns"], c[3]["ledger_busy_ns"] - c[3]["ledger_unattributed_ns"])
                    for c in cov if c[3].get("ledger_busy_ns") and c[3].get("ledger_unattributed_ns") is not None
                    and c[3]["ledger_busy_ns"] != c[3]["ledger_unattributed_ns"]]
            ended = statistics.median([c[3]["ended_rows"] for c in cov])
            print(f"{m.label}: ended source {f['ended_source'] or '?'}, median {ended:g} ended rows per frame; "
                  f"its busy CPU / this script's: median "
                  f"{statistics.median(ratio) if ratio else float('nan'):.3f}; rows / its ledger's attributed CPU: "
                  f"{'%s to %s %%' % (summary(attr)[0], summary(attr)[2]) if attr else '-'}")
        if m.label.startswith("atop") and cov:
            ex = sum(c[3]["exited"] for c in cov)
            ext = sum(c[3]["exited_ticks"] for c in cov)
            tot = sum(c[3]["ticks"] for c in cov)
            print(f"{m.label}: {ex} exited processes from process accounting, {pct(ext, tot):.1f} % of the CPU "
                  "it shows")
        if m.label.startswith("top") and cov:
            print(f"{m.label}: median {statistics.median([c[3]['rows'] for c in cov]):g} rows per frame")
    if a.frames:
        print()
        width = max(len(cov) for _, cov in rows) if rows else 0
        print("frame  " + "  ".join(f"{m.label:>17}" for m, _ in rows) + "   (% vs /proc/stat, [% vs ledger])")
        for i in range(width):
            cells = []
            for m, cov in rows:
                if i < len(cov):
                    _, s, led, _f = cov[i]
                    cell = ("-" if s is None else f"{s:.1f}") + ("" if led is None else f" [{led:.1f}]")
                else:
                    cell = ""
                cells.append(f"{cell:>17}")
            print(f"{i + 1:>5}  " + "  ".join(cells))
    if not with_proctimes:
        return 77
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
