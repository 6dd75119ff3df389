#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What `proctimes serve` costs a user, against prometheus-process-exporter.

Both exporters run side by side in one run, started the same way (the same
process-exporter flags and config, nothing else: serve takes process-exporter's
defaults with them, -threads and -gather-smaps included), and are scraped like
Prometheus does: every --interval seconds (1 s), with Prometheus' Accept and
Accept-Encoding headers, for --seconds (30 s). The figure is each exporter's
whole-process CPU over the run (every thread, background ones and ended ones
included: serve's exit-record and HTTP threads, Go's garbage collector),
divided by the scrapes. The exporters run as a service manager runs them
(--layout service, the default): reparented to init, not descendants of the
bench or of the shell that started it. Started as the bench's children
(--layout shell) they are members of any group that takes a shell's children
(the README config's `comm: [bash]`, process-exporter's default -children):
each exporter then reads both exporters and the bench at every scrape, the
moment they are busiest. The CPU is read from a cgroup of the exporter's own where
one can be made (root; cgroup v2's cpu.stat or v1's cpuacct.usage, exact to a
microsecond), else from utime + stime of /proc/<pid>/stat (10 ms ticks). The
output names which. Start-up (until both answered a first scrape) is not in it.
Each exporter is scraped over one connection kept open, as Prometheus keeps
its connections to a target (idle ones for 5 minutes), opened again when the
exporter closed it (--connection keep-alive, the default); --connection new
opens one for every scrape.

Two settings:
  stock   Debian's stock config (process_names: [{name: "{{.Comm}}",
          cmdline: ['.+']}], /usr/share/doc/prometheus-process-exporter/
          examples/all.yaml), with the machine brought to --tasks tasks (2,100)
          by idle load: --load threads (serve_load: one process of idle
          threads), processes (idle `sleep` processes) or mixed (half each).
  configs the machine as it is (about 100 tasks on an idle VM), with each of
          the reference configs of the side-by-side test: the README's, Debian's
          all.yaml, a mix of comm, exe and cmdline rules with templates.

    bench/serve_compare.py [--build build] [--setting stock|configs|both]
                           [--load threads|processes|mixed] [--runs 1]
                           [--layout service|shell] [--connection keep-alive|new]
                           [--flag=-gather-smaps=false]   (a flag given to both)

Prints, per run, each exporter's CPU per scrape and serve's share of
process-exporter's, and the median share over --runs; exits 1 when a median
is above --target (0.1). The two exporters share the machine, so a busy
machine raises both; compare shares of one run, not figures across runs.
"""
import argparse
import http.client
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

PE_BIN = "/usr/bin/prometheus-process-exporter"
STOCK = "process_names:\n  - name: \"{{.Comm}}\"\n    cmdline:\n    - '.+'\n"
# The reference configs of tests/serve/side_by_side_test.cpp.
CONFIGS = {
    "readme": "process_names:\n  - comm:\n    - bash\n  - exe:\n    - postgres\n    - /usr/local/bin/prometheus\n"
              "  - name: \"{{.ExeFull}}:{{.Matches.Cfgfile}}\"\n    exe:\n    - /usr/local/bin/process-exporter\n"
              "    cmdline:\n    - -config.path\\s+(?P<Cfgfile>\\S+)\n",
    "all": STOCK,
    "mix": "process_names:\n"
           "  - name: \"burner-{{.Comm}}\"\n    exe: [sbs-burn]\n"
           "  - name: \"{{.ExeBase}}\"\n    comm: [pt_threads]\n"
           "  - name: \"churn:{{.Matches.n}}\"\n    cmdline: ['short (?P<n>\\d+) ']\n"
           "  - name: \"loop-{{.Comm}}\"\n    comm: [sh]\n    cmdline: ['sbs-loop']\n"
           "  - name: \"{{.Comm}}\"\n    comm: [bash]\n"
           "  - name: \"kernel-{{.Comm}}\"\n    comm: [kthreadd]\n",
}
# What Prometheus 2.x sends.
HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
              "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
    "User-Agent": "Prometheus/2.42.0",
    "X-Prometheus-Scrape-Timeout-Seconds": "10",
}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_ticks(pid):
    """utime + stime of the whole process (every thread, ended ones included), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15


class CpuMeter:
    """The whole CPU of one process (every thread, ended ones included), in ms.

    Where a cgroup can be made (root, with cgroup v2's cpu controller or v1's
    cpuacct), the process is moved into a group of its own and the group's
    usage is read: exact to the microsecond or nanosecond. Otherwise it is
    utime + stime of /proc/<pid>/stat, in clock ticks (10 ms each: a run must
    be long for a figure of a few ms per scrape to be exact)."""

    V2 = "/sys/fs/cgroup"
    V1 = "/sys/fs/cgroup/cpuacct"

    def __init__(self, pid, label):
        self.pid = pid
        self.group = None
        self.kind = "ticks"
        name = f"proctimes-bench-{os.getpid()}-{label}"
        for root, kind in ((self.V2, "v2"), (self.V1, "v1")):
            usage = "cpu.stat" if kind == "v2" else "cpuacct.usage"
            marker = "cgroup.controllers" if kind == "v2" else "cpuacct.usage"
            if not os.path.exists(os.path.join(root, marker)):
                continue
            group = os.path.join(root, name)
            try:
                os.mkdir(group)
                with open(os.path.join(group, "cgroup.procs"), "w") as f:
                    f.write(str(pid))
                if not os.path.exists(os.path.join(group, usage)):
                    raise OSError("no usage file")
            except OSError:
                self._remove(group)
                continue
            self.group, self.kind = group, kind
            break

    def ms(self):
        if self.kind == "v2":
            with open(os.path.join(self.group, "cpu.stat")) as f:
                for line in f:
                    k, v = line.split()
                    if k == "usage_usec":
                        return int(v) / 1000.0
        if self.kind == "v1":
            with open(os.path.join(self.group, "cpuacct.usage")) as f:
                return int(f.read()) / 1e6
        return cpu_ticks(self.pid) * 1000.0 / os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _remove(group):
        try:
            os.rmdir(group)
        except OSError:
            pass

    def close(self):
        """After the process ended (an empty group can be removed)."""
        if self.group:
            for _ in range(50):
                try:
                    os.rmdir(self.group)
                    return
                except OSError:
                    time.sleep(0.1)


def tasks_now():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


def get(url):
    req = urllib.request.Request(url, headers=HEADERS)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def wait_up(url, limit=30):
    end = time.time() + limit
    while time.time() < end:
        try:
            get(url)
            return True
        except OSError:
            time.sleep(0.2)
    return False


class ServiceProcess:
    """A process started as a service manager starts one: not a descendant of
    the bench (a shell forks it in a session of its own and exits at once, so
    that it is reparented to init). A config that groups a shell's children
    (process-exporter's default -children with `comm: [bash]`) then does not
    count the exporters, nor the bench that scrapes them, among its members.
    Stopped by pid, as the bench cannot wait for it."""

    def __init__(self, argv):
        sh = subprocess.run(["/bin/sh", "-c", '"$@" </dev/null >/dev/null 2>&1 & echo $!', "sh"] + argv,
                            stdout=subprocess.PIPE, text=True, start_new_session=True, check=True)
        self.pid = int(sh.stdout.strip())

    def _gone(self):
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    def terminate(self):
        try:
            os.kill(self.pid, 15)
        except ProcessLookupError:
            pass

    def kill(self):
        try:
            os.kill(self.pid, 9)
        except ProcessLookupError:
            pass

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while not self._gone():
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.05)


class Exporter:
    """One exporter on a free loopback port, started as `layout` says: "service",
    as a service manager does (what a user's machine runs), or "shell", as a
    child of the bench. Scraped over one connection kept open, as Prometheus
    scrapes (its client keeps idle connections 5 minutes), opened again when
    the exporter closed it (`connection` "keep-alive"); or over a new
    connection each time ("new")."""

    def __init__(self, label, argv, layout="service", connection="keep-alive"):
        self.label = label
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/metrics"
        argv = argv + ["-web.listen-address", f"127.0.0.1:{self.port}"]
        if layout == "service":
            self.proc = ServiceProcess(argv)
        else:
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.keep = connection == "keep-alive"
        self.conn = None
        self.reconnects = 0
        self.failed = 0
        self.size = 0

    def _get_kept(self):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.reconnects += 1
            try:
                self.conn.request("GET", "/metrics", headers=HEADERS)
                r = self.conn.getresponse()
                body = r.read()
                if r.will_close:
                    self.conn.close()
                    self.conn = None
                return body
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # Closed by the exporter while idle: a client sends again on a new one.
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        return b""

    def scrape(self):
        try:
            self.size = len(self._get_kept() if self.keep else get(self.url))
        except (OSError, http.client.HTTPException):
            self.failed += 1

    def stop(self):
        if self.conn is not None:
            self.conn.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_once(proctimes, cfg, seconds, interval, flags, layout="service", connection="keep-alive"):
    """Both exporters with config `cfg`, scraped together every `interval` s: CPU ms per scrape of each."""
    common = ["-config.path", cfg] + flags
    ex = [Exporter("serve", [proctimes, "serve"] + common, layout, connection),
          Exporter("process-exporter", [PE_BIN] + common, layout, connection)]
    meters = []
    try:
        if not all(wait_up(e.url) for e in ex):
            raise RuntimeError("an exporter did not start")
        meters += [CpuMeter(e.proc.pid, e.label.replace(" ", "-")) for e in ex]
        time.sleep(interval)
        for e in ex:  # the first scrape of each (a full read of everything) is start-up
            e.scrape()
        c0 = [m.ms() for m in meters]
        n = max(1, int(round(seconds / interval)))
        next_at = time.monotonic() + interval
        for _ in range(n):
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at += interval
            # Both at once, as two Prometheus jobs with the same interval would.
            ts = [threading.Thread(target=e.scrape) for e in ex]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        time.sleep(interval / 2)  # each finishes what it does after answering
        c1 = [m.ms() for m in meters]
        per = [(b - a) / n for a, b in zip(c0, c1)]
        if any(e.failed for e in ex):  # a scrape that timed out on a loaded machine: said, and the run kept
            print("    failed scrapes: " + ", ".join(f"{e.label} {e.failed}" for e in ex))
        if connection == "keep-alive" and any(e.reconnects > 1 for e in ex):  # closed by the exporter while idle
            print("    connections opened: " + ", ".join(f"{e.label} {e.reconnects}" for e in ex))
        return per, [e.size for e in ex], meters[0].kind
    finally:
        for e in ex:
            e.stop()
        for m in meters:
            m.close()


def start_load(load_bin, kind, count):
    procs = []
    if count <= 0:
        return procs
    n_threads = count if kind == "threads" else (count // 2 if kind == "mixed" else 0)
    n_procs = count - n_threads
    if n_threads > 0:
        procs.append(subprocess.Popen([load_bin, "threads", str(n_threads), "3600"]))
    for _ in range(n_procs):
        procs.append(subprocess.Popen(["sleep", "3600"]))
    return procs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--setting", choices=["stock", "configs", "both"], default="both")
    ap.add_argument("--load", choices=["threads", "processes", "mixed"], default="mixed")
    ap.add_argument("--tasks", type=int, default=2100, help="tasks on the machine in the stock setting")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.1)
    ap.add_argument("--layout", choices=["service", "shell"], default="service",
                    help="service: the exporters are reparented to init, as under a service manager; "
                         "shell: children of the bench (and members of a group of its shell's children)")
    ap.add_argument("--connection", choices=["keep-alive", "new"], default="keep-alive",
                    help="keep-alive: one connection per exporter kept open, as Prometheus scrapes; "
                         "new: a new connection for every scrape")
    ap.add_argument("--flag", action="append", default=[],
                    help="a process-exporter flag given to both, e.g. --flag=-gather-smaps=false (repeatable)")
    a = ap.parse_args()
    proctimes = os.path.join(a.build, "bin", "proctimes")
    load_bin = os.path.join(a.build, "bin", "serve_load")
    for p in (proctimes, PE_BIN) + ((load_bin,) if a.setting != "configs" and a.load != "processes" else ()):
        if not os.access(p, os.X_OK):
            print(f"skipped: {p} is absent (build proctimes_tool and serve_load; "
                  "Debian package prometheus-process-exporter)")
            return 0

    tmp = tempfile.mkdtemp(prefix="proctimes-serve-bench-")
    paths = {}
    for name, text in CONFIGS.items():
        paths[name] = os.path.join(tmp, name + ".yml")
        with open(paths[name], "w") as f:
            f.write(text)
    print(f"whole-process CPU over {a.seconds:g} s of scrapes every {a.interval:g} s, "
          f"{os.cpu_count()} CPUs, {a.runs} run(s), exporters started as {a.layout} processes, "
          f"connections: {a.connection}")
    worst = 0.0
    load = []
    try:
        cases = []
        if a.setting in ("configs", "both"):
            cases += [(f"configs: {name}", name, 0) for name in CONFIGS]
        if a.setting in ("stock", "both"):
            cases.append((f"stock: all.yaml, {a.tasks} tasks ({a.load})", "all", a.tasks))
        for label, cfg, want_tasks in cases:
            for p in load:
                p.kill()
                p.wait()
            load = []
            if want_tasks:
                load = start_load(load_bin, a.load, want_tasks - tasks_now())
                time.sleep(1)
            shares = []
            for run in range(a.runs):
                (s, pe), (s_size, pe_size), kind = run_once(proctimes, paths[cfg], a.seconds, a.interval, a.flag,
                                                                    a.layout, a.connection)
                share = s / pe if pe > 0 else float("inf")
                shares.append(share)
                print(f"  {label:<44} {tasks_now():5d} tasks  serve {s:7.3f} ms  process-exporter "
                      f"{pe:7.3f} ms per scrape  ({s_size}/{pe_size} bytes gzip, CPU by {kind})  share {share:.3f}",
                      flush=True)
            m = statistics.median(shares)
            worst = max(worst, m)
            print(f"  {label}: median share {m:.3f} "
                  f"({'within' if m <= a.target else 'ABOVE'} the {a.target:g} target)", flush=True)
    finally:
        for p in load:
            p.kill()
            p.wait()
        subprocess.run(["rm", "-rf", tmp])
    return 0 if worst <= a.target else 1


if __name__ == "__main__":
    sys.exit(main())
