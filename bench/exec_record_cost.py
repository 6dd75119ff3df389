#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the exit stream's exec program costs each exec on the machine.

exit_stream (and so `proctimes serve`) loads a program on sched_process_exec
that copies each new program's argument area into the exit ring buffer
(docs/BPF.md). This starts `proctimes serve` with a rule that needs the
command line (so its exit stream is open, with that program), turns on the
kernel's BPF run-time statistics for the run (kernel.bpf_stats_enabled, put
back afterwards), execs /bin/true N times with a short and with a 4 KiB
argument area, and prints the program's own run time per exec (the kernel's
count, 1 ns) next to what one fork + exec + wait of /bin/true took here, with
and without the stream, measured in the same run.

    sudo bench/exec_record_cost.py --cli build/bin/proctimes [--execs 2000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def spawn_many(n, argv):
    t0 = time.perf_counter()
    for _ in range(n):
        pid = os.posix_spawn(argv[0], argv, os.environ)
        os.waitpid(pid, 0)
    return (time.perf_counter() - t0) / n


def prog_stats(name):
    out = subprocess.run(["bpftool", "-j", "prog", "show", "name", name], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        return None
    progs = json.loads(out.stdout)
    if isinstance(progs, dict):
        progs = [progs]
    cnt = sum(p.get("run_cnt", 0) for p in progs)
    ns = sum(p.get("run_time_ns", 0) for p in progs)
    return cnt, ns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/bin/proctimes")
    ap.add_argument("--execs", type=int, default=2000)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("exec_record_cost.py: needs root (the eBPF exit stream, kernel.bpf_stats_enabled)")
    short = ["/bin/true", "a", "b", "c"]
    long_ = ["/bin/true", "x" * 4000]
    spawn_many(200, short)  # warm
    base_short = spawn_many(a.execs, short)
    base_long = spawn_many(a.execs, long_)

    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "all.yaml")
        with open(cfg, "w") as f:
            f.write("process_names:\n  - name: '{{.Comm}}'\n    cmdline: ['.+']\n")
        port_file = os.path.join(d, "port")
        serve = subprocess.Popen([a.cli, "serve", "--listen", "127.0.0.1:0", "--port-file", port_file,
                                  "-config.path", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if os.path.exists(port_file) and prog_stats("proctimes_exec"):
                    break
                time.sleep(0.1)
            else:
                sys.exit("exec_record_cost.py: serve did not load the exec program (no eBPF exit stream here?)")
            with open("/proc/sys/kernel/bpf_stats_enabled") as f:
                was = f.read().strip()
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write("1")
            try:
                c0, n0 = prog_stats("proctimes_exec")
                with_short = spawn_many(a.execs, short)
                c1, n1 = prog_stats("proctimes_exec")
                with_long = spawn_many(a.execs, long_)
                c2, n2 = prog_stats("proctimes_exec")
            finally:
                with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                    f.write(was)
        finally:
            serve.terminate()
            serve.wait()

    print(f"{a.execs} execs of /bin/true each way, {os.cpu_count()} CPUs")
    def area(argv):
        return sum(len(x) + 1 for x in argv)

    for label, base, withs, cnt, ns in ((f"argument area of {area(short)} bytes", base_short, with_short, c1 - c0,
                                         n1 - n0),
                                        (f"argument area of {area(long_)} bytes", base_long, with_long, c2 - c1,
                                         n2 - n1)):
        per = ns / cnt if cnt else float("nan")
        print(f"{label}: the program ran {cnt} times, {per:,.0f} ns per exec "
              f"({per / (base * 1e9) * 100:.2f} % of one spawn + exec + wait, {base * 1e6:,.0f} us without the "
              f"stream, {withs * 1e6:,.0f} us with it)")


if __name__ == "__main__":
    main()
