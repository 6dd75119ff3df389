#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a refresh of `proctimes top` costs, against htop, btop and top (the
Debian packages), measured the same way in one run on a machine with about
2,000 more tasks: --procs (40) processes of --threads (50) sleeping tasks
each (a Python helper: a main thread and its threads waiting on an event).

Each viewer runs alone, in a detached tmux session of its own
(`tmux -L <socket> new-session -d -x 160 -y 50`), at a 1 s refresh, with no
user configuration (HOME and XDG_CONFIG_HOME point to an empty directory):
  htop                   `htop -d 10`: userland threads shown (its default)
  btop                   update_ms = 1000 in a btop.conf of its own: processes
  top                    `top -d 1`: processes
  proctimes top          `proctimes top -d 1`: processes
  proctimes top -H       `proctimes top -d 1 -H`: every thread
and, for reference without a goal (not in --quick), `proctimes top -b` and
`proctimes top -b -H` writing table frames to /dev/null: the frames alone,
without the screen. When `proctimes top` cannot start its full-screen view
(a build without it), `proctimes top -b -d 1` (table frames) is measured in
the pane instead, and the output says so.

After --warmup seconds (start-up: the first walk, loading eBPF programs), the
viewer's own CPU is read over --seconds: the sum over its threads of the
run time in /proc/<pid>/task/*/schedstat (nanoseconds) when its threads are
the same at both ends of the window, else utime + stime of /proc/<pid>/stat
(every thread, ended ones included; 10 ms ticks). CPU per refresh = that CPU
/ (window / 1 s). A viewer that sleeps a whole interval after each refresh
refreshes a little less often than once a second, so its figure is slightly
understated. RSS is VmRSS at the end of the window. CPU the kernel spends for
a viewer outside its threads (eBPF programs run by exiting tasks) is not in
these figures.

Goals (issue 37): `proctimes top -H` <= 1/5 of htop's CPU per refresh;
`proctimes top` (processes) <= top's. Exit status 0 when both held, 1 when
one was missed, 77 when a viewer or the proctimes command is absent.

  bench/top_cost.py [--quick] [--seconds 40] [--warmup 4] [--proctimes build/bin/proctimes]
                    [--procs 40] [--threads 50]
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HZ = os.sysconf("SC_CLK_TCK")
LOADER = ("import sys, threading, time\n"
          "ev = threading.Event()\n"
          "for _ in range(int(sys.argv[1]) - 1):\n"
          "    threading.Thread(target=ev.wait, daemon=True).start()\n"
          "print('ready', flush=True)\n"
          "ev.wait()\n")


def tasks_now():
    n = 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                n += len(os.listdir(f"/proc/{d}/task"))
            except OSError:
                pass
    return n


def ticks(pid):
    """utime + stime of the whole process (every thread, ended ones included), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15


def thread_runtimes(pid):
    """{tid: run time in ns} of the process's live threads (schedstat's first field)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return out


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Tmux:
    def __init__(self, env, conf):
        self.sock = f"proctimes-top-cost-{os.getpid()}"
        self.env = env
        self.conf = conf

    def run(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.sock, "-f", self.conf] + list(args), env=self.env,
                              capture_output=True, text=True, check=check)

    def start(self, name, argv):
        """A detached 160x50 session running argv directly (no shell); the pid of argv."""
        r = self.run("new-session", "-d", "-s", name, "-x", "160", "-y", "50", *argv, check=False)
        if r.returncode != 0:
            raise OSError(f"tmux new-session failed: {r.stderr.strip()}")
        return int(self.run("list-panes", "-t", name, "-F", "#{pane_pid}").stdout.split()[0])

    def alive(self, name):
        return self.run("has-session", "-t", name, check=False).returncode == 0

    def screen(self, name):
        return self.run("capture-pane", "-p", "-t", name, check=False).stdout

    def stop(self, name):
        self.run("kill-session", "-t", name, check=False)

    def close(self):
        self.run("kill-server", check=False)


def measure(tmux, name, argv, warmup, seconds):
    """CPU ms per second of the window and RSS KiB of argv in a tmux pane, or an error text."""
    try:
        pid = tmux.start(name, argv)
        time.sleep(warmup)
        dead = tmux.run("list-panes", "-t", name, "-F", "#{pane_dead}", check=False).stdout.strip()
        if dead != "0":
            return None, " ".join(tmux.screen(name).split())[:200] or "exited"
        t0, c0, r0 = time.monotonic(), ticks(pid), thread_runtimes(pid)
        time.sleep(seconds)
        t1, c1, r1 = time.monotonic(), ticks(pid), thread_runtimes(pid)
        rss = rss_kib(pid)
        screen = tmux.screen(name)
    except (OSError, ValueError) as e:
        return None, f"read failed: {e}"
    finally:
        tmux.stop(name)
    window = t1 - t0
    if set(r0) == set(r1):
        cpu_ms = (sum(r1.values()) - sum(r0.values())) / 1e6
        how = "schedstat"
    else:
        cpu_ms = (c1 - c0) * 1000.0 / HZ
        how = "stat ticks"
    return {"cpu_ms_per_s": cpu_ms / window, "rss_kib": rss, "threads": len(r1), "how": how,
            "screen": screen}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--proctimes", default=os.path.join(HERE, "..", "build", "bin", "proctimes"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seconds", type=float, default=None, help="measured window per viewer (40 s; --quick 10 s)")
    ap.add_argument("--warmup", type=float, default=None, help="start-up left out (4 s; --quick 3 s)")
    ap.add_argument("--procs", type=int, default=40)
    ap.add_argument("--threads", type=int, default=50, help="tasks per load process")
    ap.add_argument("--peers-only", action="store_true", help="htop, btop and top only")
    a = ap.parse_args()
    seconds = a.seconds if a.seconds is not None else (10.0 if a.quick else 40.0)
    warmup = a.warmup if a.warmup is not None else (3.0 if a.quick else 4.0)
    interval = 1.0
    for tool in ("tmux", "htop", "btop", "top"):
        if not shutil.which(tool):
            print(f"skipped: {tool} is absent (Debian packages tmux, htop, btop, procps)")
            return 77
    proctimes = os.path.abspath(a.proctimes)
    with_proctimes = not a.peers_only
    if with_proctimes:
        r = subprocess.run([proctimes, "top", "--help"], capture_output=True, text=True) \
            if os.access(proctimes, os.X_OK) else None
        if r is None or r.returncode != 0:
            print(f"note: {proctimes} has no `top` command; measuring the peers only")
            with_proctimes = False

    tmp = tempfile.mkdtemp(prefix="proctimes-top-cost-")
    os.makedirs(os.path.join(tmp, "btop"))
    with open(os.path.join(tmp, "btop", "btop.conf"), "w") as f:
        f.write(f"update_ms = {int(interval * 1000)}\n")
    env = dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp, LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.pop("TMUX", None)
    env.pop("NO_COLOR", None)
    conf = os.path.join(tmp, "tmux.conf")
    with open(conf, "w") as f:
        # A viewer that exits leaves its last screen to read; the server stays
        # between viewers.
        f.write("set -g remain-on-exit on\nset -s exit-empty off\n")
    tmux = Tmux(env, conf)
    load = []
    results = []
    try:
        for _ in range(a.procs):
            load.append(subprocess.Popen([sys.executable, "-c", LOADER, str(a.threads)],
                                         stdout=subprocess.PIPE, text=True))
        for p in load:
            p.stdout.readline()
        time.sleep(0.5)
        ntasks = tasks_now()
        print(f"{ntasks} tasks on the machine ({a.procs} x {a.threads} sleeping ones added), "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; each viewer alone in tmux "
              f"160x50, {interval:g} s refresh, {seconds:g} s measured after {warmup:g} s of start-up")
        viewers = [("htop", "htop (every thread)", ["htop", "-d", str(int(interval * 10))]),
                   ("btop", "btop (processes)", ["btop"]),
                   ("top", "top (processes)", ["top", "-d", f"{interval:g}"])]
        batch = False
        if with_proctimes:
            # The full-screen view where the build has it, else batch table
            # frames written into the pane.
            probe, err = measure(tmux, "probe", [proctimes, "top", "-d", f"{interval:g}"], 1.5, 0.1)
            batch = probe is None or "not built" in probe["screen"]
            mode = ["-b", "--format", "table"] if batch else []
            viewers += [("pt", "proctimes top (processes)", [proctimes, "top", *mode, "-d", f"{interval:g}"]),
                        ("pt-H", "proctimes top -H (every thread)",
                         [proctimes, "top", *mode, "-H", "-d", f"{interval:g}"])]
            if not batch and not a.quick:
                # For reference (no goal): the frames alone, without the
                # screen, written as tables to /dev/null.
                for key, flag, what in (("pt-b", [], "processes"), ("pt-bH", ["-H"], "every thread")):
                    cmd = shlex.join([proctimes, "top", "-b", *flag, "-d", f"{interval:g}"])
                    viewers.append((key, f"proctimes top -b{' -H' if flag else ''} ({what}, no screen)",
                                    ["sh", "-c", f"exec {cmd} >/dev/null"]))
            if not batch:
                print("proctimes top: its full-screen view (ncurses)")
            else:
                print("note: the full-screen view of `proctimes top` did not start "
                      f"({(err or 'not built')[:100]}); measured `proctimes top -b` writing table frames "
                      "into the pane")
        for key, label, argv in viewers:
            m, err = measure(tmux, key, argv, warmup, seconds)
            if m is None:
                print(f"  {label}: did not run: {err}")
            results.append((key, label, m))
    finally:
        tmux.close()
        for p in load:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    print()
    print(f"{'viewer':<46} {'ms CPU per refresh':>18} {'RSS MiB':>8} {'threads':>7}  CPU read from")
    by = {}
    for key, label, m in results:
        if m is None:
            print(f"{label:<46} {'-':>18}")
            continue
        by[key] = m["cpu_ms_per_s"] * interval
        print(f"{label:<46} {by[key]:>18.2f} {m['rss_kib'] / 1024:>8.1f} {m['threads']:>7}  {m['how']}")
    if not with_proctimes:
        return 77
    ok = True
    goals = [("pt-H", "htop", 0.2, "proctimes top -H <= 1/5 of htop"),
             ("pt", "top", 1.0, "proctimes top (processes) <= top")]
    print()
    for mine, peer, share, text in goals:
        if mine not in by or peer not in by:
            print(f"goal {text}: not measured")
            ok = False
            continue
        met = by[mine] <= share * by[peer]
        ok = ok and met
        print(f"goal {text}: {by[mine]:.2f} ms against {share * by[peer]:.2f} ms "
              f"({by[mine] / by[peer]:.2f} x {peer}'s): {'met' if met else 'MISSED'}")
    if batch:
        print("(proctimes measured in batch mode, not its full-screen view)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
