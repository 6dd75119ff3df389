#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One warm scrape of `proctimes serve` against one of prometheus-process-exporter.

Same machine, same moment, same load: every process grouped by its name (comm),
plus one process with 2,000 extra idle threads. proctimes is also measured with
process-exporter's families on (--namedprocess; with --threads; with --gather-smaps).
For each exporter: the wall time
of a GET /metrics as the scraper sees it, and the exporter's own CPU time for it
(the sum of /proc/<pid>/task/*/schedstat run times, 1 ns, read before and after).
Each figure is the median of N warm scrapes (after 3 unmeasured ones), 0.3 s
apart (proctimes shares one collection between scrapes closer than 0.1 s).

    bench/serve_compare.py [--build build] [--scrapes 7]

process-exporter is run with the config that groups every process by name
(process_names: [{name: "{{.Comm}}", cmdline: [".+"]}]) and -threads=false (no
per-thread-name series, as proctimes serve has none by default); its default
(-threads=true) is measured too and printed.

Every family on, like for like: `proctimes serve` started with process-exporter's
own flags and config (-config.path, -threads: every namedprocess_* family,
threads_wchan and process_* included, as the config brings them) against
process-exporter with -threads and -gather-smaps=false; and both with smaps
(process-exporter's default -gather-smaps=true, serve's -gather-smaps). The
target: serve's CPU per scrape at most 1/10 of process-exporter's.
"""
import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cpu_ns(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended: its time is in the process's, not lost to the sum's others
    return total


def wait_up(url, limit=20):
    end = time.time() + limit
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=5).read()
            return True
        except OSError:
            time.sleep(0.2)
    return False


def measure(name, pid, url, n):
    for _ in range(3):  # warm: caches, the first walk, Go's heap
        urllib.request.urlopen(url, timeout=30).read()
        time.sleep(0.3)
    walls, cpus, size = [], [], 0
    for _ in range(n):
        c0 = cpu_ns(pid)
        t0 = time.perf_counter()
        body = urllib.request.urlopen(url, timeout=30).read()
        wall = time.perf_counter() - t0
        time.sleep(0.05)  # let the exporter finish its own bookkeeping after the reply
        cpus.append((cpu_ns(pid) - c0) / 1e6)
        walls.append(wall * 1e3)
        size = len(body)
        time.sleep(0.25)
    w, c = statistics.median(walls), statistics.median(cpus)
    print(f"  {name:<44} wall {w:8.2f} ms   own CPU {c:8.2f} ms   ({size} bytes)")
    return w, c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--scrapes", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2000)
    a = ap.parse_args()
    proctimes = os.path.join(a.build, "bin", "proctimes")
    load = os.path.join(a.build, "bin", "serve_load")
    pe_bin = "/usr/bin/prometheus-process-exporter"
    for p in (proctimes, load, pe_bin):
        if not os.access(p, os.X_OK):
            print(f"skipped: {p} is absent (build serve_load; Debian package prometheus-process-exporter)")
            return 0

    tmp = tempfile.mkdtemp(prefix="proctimes-serve-bench-")
    cfg = os.path.join(tmp, "pe.yml")
    with open(cfg, "w") as f:
        f.write('process_names:\n  - name: "{{.Comm}}"\n    cmdline:\n    - \'.+\'\n')
    procs = []
    try:
        procs.append(subprocess.Popen([load, "threads", str(a.threads), "600"]))
        p1, p2, p3 = free_port(), free_port(), free_port()
        pt = subprocess.Popen([proctimes, "serve", "--listen", f"127.0.0.1:{p1}", "--group-by", "name"],
                              stdout=subprocess.DEVNULL)
        # The same with process-exporter's families (--namedprocess), and with its thread families.
        variants = [("proctimes serve --namedprocess", ["--namedprocess"]),
                    ("proctimes serve --namedprocess --threads", ["--namedprocess", "--threads"]),
                    ("proctimes serve --namedprocess --gather-smaps", ["--namedprocess", "--gather-smaps"])]
        vprocs = []
        for _, extra in variants:
            port = free_port()
            vprocs.append((subprocess.Popen([proctimes, "serve", "--listen", f"127.0.0.1:{port}", "--group-by",
                                             "name"] + extra, stdout=subprocess.DEVNULL),
                           f"http://127.0.0.1:{port}/metrics"))
        procs += [v for v, _ in vprocs]
        pe = subprocess.Popen([pe_bin, "-web.listen-address", f"127.0.0.1:{p2}", "-config.path", cfg,
                               "-threads=false"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pe_default = subprocess.Popen([pe_bin, "-web.listen-address", f"127.0.0.1:{p3}", "-config.path", cfg],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Every family on, started as a process-exporter user would (its flags, its config).
        compat = []
        # With the config, serve takes process-exporter's families and defaults (-threads, -gather-smaps).
        for label, smaps in (("proctimes serve, process-exporter's flags, -threads -gather-smaps=false", False),
                             ("proctimes serve, process-exporter's flags, -threads -gather-smaps", True)):
            port = free_port()
            argv = [proctimes, "serve", "-web.listen-address", f"127.0.0.1:{port}", "-config.path", cfg,
                    "-threads", "-children=false", "-gather-smaps" if smaps else "-gather-smaps=false"]
            compat.append((label, subprocess.Popen(argv, stdout=subprocess.DEVNULL),
                           f"http://127.0.0.1:{port}/metrics"))
        p4 = free_port()
        pe_nosmaps = subprocess.Popen([pe_bin, "-web.listen-address", f"127.0.0.1:{p4}", "-config.path", cfg,
                                       "-threads", "-gather-smaps=false", "-children=false"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs += [pt, pe, pe_default, pe_nosmaps] + [c for _, c, _ in compat]
        urls = [f"http://127.0.0.1:{p}/metrics" for p in (p1, p2, p3)]
        if not all(wait_up(u) for u in urls):
            print("an exporter did not start")
            return 1
        ntasks = sum(len(os.listdir(f"/proc/{d}/task")) for d in os.listdir("/proc") if d.isdigit()
                     and os.path.isdir(f"/proc/{d}/task"))
        print(f"one warm scrape, median of {a.scrapes}; {ntasks} tasks on the machine "
              f"({a.threads} idle threads in one process), {os.cpu_count()} CPUs")
        w1, c1 = measure("proctimes serve --group-by name", pt.pid, urls[0], a.scrapes)
        for (label, _), (vp, vurl) in zip(variants, vprocs):
            if wait_up(vurl):
                measure(label, vp.pid, vurl, a.scrapes)
        w2, c2 = measure("process-exporter, all by {{.Comm}}, -threads=false", pe.pid, urls[1], a.scrapes)
        w3, c3 = measure("process-exporter, all by {{.Comm}} (default -threads)", pe_default.pid, urls[2], a.scrapes)
        print(f"ratio process-exporter / proctimes: wall {w2 / w1:.1f}x, own CPU {c2 / max(c1, 1e-3):.1f}x "
              f"(target >= 3x); against its default: wall {w3 / w1:.1f}x, CPU {c3 / max(c1, 1e-3):.1f}x")
        pe_url = f"http://127.0.0.1:{p4}/metrics"
        if all(wait_up(u) for _, _, u in compat) and wait_up(pe_url):
            print("every family on, the same config and flags:")
            cs = [measure(label, cp.pid, url, a.scrapes)[1] for label, cp, url in compat]
            c4 = measure("process-exporter -threads -gather-smaps=false", pe_nosmaps.pid, pe_url, a.scrapes)[1]
            for label, c, pe_c in (("without smaps", cs[0], c4), ("with smaps", cs[1], c3)):
                r = c / max(pe_c, 1e-3)
                print(f"  {label}: serve's CPU per scrape is {r:.3f} of process-exporter's "
                      f"({'within' if r <= 0.1 else 'ABOVE'} the 1/10 target)")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        subprocess.run(["rm", "-rf", tmp])
    return 0


if __name__ == "__main__":
    sys.exit(main())
