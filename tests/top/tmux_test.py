#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`proctimes top` in a real terminal: tmux starts it, sends keys and reads the
screen back with capture-pane.

    tmux_test.py CASE PROGRAM CHILD [ARGS...]

runs one case (the names are the functions below, case_*) against PROGRAM
(build/bin/proctimes, whose `top` is run, or the scripted screen driver, run
as it is when its name says so) with CHILD (top_test_child) to start the
processes to look for. Exit 0: passed, 1: failed (what the screen showed is
printed), 77: tmux is not installed. Each case ends within its deadline:
every wait is bounded, and the tmux server and the children are killed on
every way out.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
PROMPT = "PTPROMPT$ "


class Failure(Exception):
    pass


class Skip(Exception):
    pass


class Pane:
    """A tmux server of its own (a unique socket), one window with a shell."""

    def __init__(self, width=100, height=30):
        self.socket = f"pt-top-{os.getpid()}-{time.monotonic_ns()}"
        self.dir = tempfile.mkdtemp(prefix="pt-top-")
        env = dict(os.environ, PS1=PROMPT, TERM="xterm-256color", LC_ALL="C.UTF-8")
        env.pop("NO_COLOR", None)
        env.pop("TMUX", None)
        self.tmux("-f", "/dev/null", "new-session", "-d", "-x", str(width), "-y", str(height),
                  f"env PS1='{PROMPT}' bash --norc --noprofile", env=env)
        # The size stays as asked whatever clients attach (none do).
        self.tmux("set-option", "-g", "window-size", "manual", check=False)
        self.wait_for(lambda s: PROMPT.strip() in s, "the shell's prompt", 5)

    def tmux(self, *args, env=None, check=True):
        r = subprocess.run(["tmux", "-L", self.socket, *args], env=env, capture_output=True, text=True,
                           timeout=10)
        if check and r.returncode != 0:
            raise Failure(f"tmux {' '.join(args)}: {r.stderr.strip()}")
        return r.stdout

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def type(self, text):
        self.tmux("send-keys", "-l", text)

    def screen(self):
        return self.tmux("capture-pane", "-p")

    def lines(self):
        return self.screen().split("\n")

    def wait_for(self, test, what, seconds):
        end = time.monotonic() + seconds
        while True:
            s = self.screen()
            if test(s):
                return s
            if time.monotonic() > end:
                # The wait is named after the screen too: a log's tail then says which one ran out.
                raise Failure(f"waited {seconds} s for {what}; the screen:\n{s}\n"
                              f"(the screen after {seconds} s of waiting for {what})")
            time.sleep(0.1)

    def wait_settled(self, test, what, seconds):
        """wait_for, and the screen then the same in two captures in a row: a
        capture taken while the terminal was half redrawn is not kept as a
        screen the view showed."""
        earlier = None
        def settled(s):
            nonlocal earlier
            same = s == earlier
            earlier = s
            return same and test(s)
        return self.wait_for(settled, what, seconds)

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


class Top:
    """The view running in a pane; its pid, exit status and terminal settings before and after."""

    def __init__(self, pane, program, args=(), prefix=()):
        self.pane = pane
        self.pidfile = os.path.join(pane.dir, "pid")
        self.status = os.path.join(pane.dir, "status")
        self.stty_before = os.path.join(pane.dir, "stty.before")
        self.stty_after = os.path.join(pane.dir, "stty.after")
        base = os.path.basename(program)
        command = [program, "--interval", "0.5"] if "driver" in base else [program, "top", "-d", "0.5"]
        command = list(prefix) + command + list(args)
        quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in command)
        pane.type(f"stty -a > {self.stty_before}; sh -c 'echo $$ > {self.pidfile}; exec \"$0\" \"$@\"' {quoted}; "
                  f"echo $? > {self.status}; stty -a > {self.stty_after}")
        pane.keys("Enter")
        pane.wait_for(lambda s: "proctimes top" in s, "the view to start", 8)

    def pid(self):
        with open(self.pidfile) as f:
            return int(f.read())

    def wait_exit(self, seconds=5):
        end = time.monotonic() + seconds
        while not os.path.exists(self.stty_after) or os.path.getsize(self.stty_after) == 0:
            if time.monotonic() > end:
                raise Failure(f"the view did not end within {seconds} s; the screen:\n{self.pane.screen()}")
            time.sleep(0.1)
        time.sleep(0.2)
        with open(self.status) as f:
            return int(f.read())

    def check_restored(self):
        with open(self.stty_before) as a, open(self.stty_after) as b:
            if a.read() != b.read():
                raise Failure("the terminal's settings (stty -a) differ after the view ended")
        s = self.pane.wait_for(lambda s: PROMPT.strip() in s, "the shell's prompt after the view", 5)
        if any(l.startswith("proctimes top  ") for l in s.split("\n")) or "KERNEL" in s:
            raise Failure(f"the view's screen is still shown after it ended:\n{s}")


def rows_below_heading(screen):
    """The process rows: below the headings, above the bottom (key) line."""
    lines = screen.rstrip("\n").split("\n")
    for i, line in enumerate(lines):
        if "COMMAND" in line and "PID" in line:
            return [l for l in lines[i + 1:-1] if l.strip()]
    return []


def child(path, *args):
    """top_test_child started as "c" (its command line short enough to be seen whole)."""
    return subprocess.Popen(["c", *args, "--seconds", "25"], executable=path, stdin=subprocess.DEVNULL)


def first_pid(screen):
    rows = rows_below_heading(screen)
    return rows[0].split()[0] if rows else None


# ---- the cases -----------------------------------------------------------------


def case_header(pane, program, child_path):
    """The header: the title, the CPU bars, the ledger line (from the second frame), load, memory, tasks."""
    Top(pane, program)
    s = pane.wait_for(lambda s: "attributed" in s and "unattributed" in s, "the ledger line", 6)
    for want in ("proctimes top", "CPU", "load ", "mem ", "tasks ", "PID", "CPU%", "KERNEL", "COMMAND"):
        if want not in s:
            raise Failure(f"{want!r} missing from the header:\n{s}")
    if not any(w in s for w in ("exit stream", "children accounting", "scripted feed")):
        raise Failure(f"the header does not say how ended processes are known:\n{s}")


def case_burner_first(pane, program, child_path):
    """A process burning CPU is the first row, sorted by CPU; > and < move the sort and back."""
    # Three burning threads: on a loaded machine, CFS gives it three shares to any one-thread process's one.
    burner = child(child_path, "--name", "ptburner", "--burn", "--threads", "2")
    try:
        Top(pane, program)
        pane.wait_for(lambda s: first_pid(s) == str(burner.pid), "the burner on the first row", 8)
        pane.keys(">")
        pane.wait_for(lambda s: "\u25bcKERNEL" in s, "the sort on KERNEL", 3)
        pane.keys("<")
        pane.wait_for(lambda s: "\u25bcCPU%" in s and first_pid(s) == str(burner.pid),
                      "the sort back on CPU% with the burner first", 5)
        pane.keys("I")
        pane.wait_for(lambda s: "\u25b2CPU%" in s, "the order inverted", 3)
    finally:
        burner.kill()
        burner.wait()


def case_filter(pane, program, child_path):
    """The filter (\\) narrows the rows to those that hold the text typed; Esc clears it."""
    sleeper = child(child_path, "--name", "ptfiltered")
    try:
        Top(pane, program)
        pane.keys("\\")
        pane.type("ptfilter")
        pane.keys("Enter")
        s = pane.wait_for(lambda s: len(rows_below_heading(s)) == 1 and first_pid(s) == str(sleeper.pid),
                          "only the filtered process listed", 5)
        if "[filter: ptfilter]" not in s:
            raise Failure(f"the title does not show the filter:\n{s}")
        pane.keys("Escape")
        pane.wait_for(lambda s: len(rows_below_heading(s)) > 1, "every process listed again", 5)
    finally:
        sleeper.kill()
        sleeper.wait()


def case_tree(pane, program, child_path):
    """t shows the tree: TREE% heading and line drawing before commands."""
    Top(pane, program)
    pane.keys("t")
    pane.wait_for(lambda s: "TREE%" in s and ("\u251c\u2500" in s or "\u2514\u2500" in s), "the tree", 5)
    pane.keys("t")
    pane.wait_for(lambda s: "TREE%" not in s and "CPU%" in s, "the flat view back", 5)


def case_threads(pane, program, child_path):
    """H lists the threads of the selected process: its main thread, 4 workers and its timer, 6 rows."""
    proc = child(child_path, "--name", "ptthreads", "--threads", "4")
    # Under ThreadSanitizer (PROCTIMES_SANITIZER=tsan) the child carries the runtime's thread too.
    extra = 1 if os.environ.get("PROCTIMES_SANITIZER") == "tsan" else 0
    try:
        # -H: the feed reads threads, each process listed with its threads under it.
        Top(pane, program, ["-H"])
        pane.keys("\\")
        pane.type("ptthreads")
        pane.keys("Enter")
        pane.wait_for(lambda s: len(rows_below_heading(s)) == 7 + extra and first_pid(s) == str(proc.pid),
                      f"the process and its {6 + extra} threads", 6)
        pane.keys("H")
        s = pane.wait_for(lambda s: f"[threads of {proc.pid}]" in s and len(rows_below_heading(s)) == 6 + extra,
                          f"its {6 + extra} threads", 6)
        tids = {int(r.split()[0]) for r in rows_below_heading(s)}
        if proc.pid not in tids:
            raise Failure(f"the main thread {proc.pid} is not listed:\n{s}")
        pane.keys("H")
        pane.wait_for(lambda s: "[threads of" not in s, "the process list back", 5)
    finally:
        proc.kill()
        proc.wait()


def ask_signal(pane, pid):
    """k, until the prompt names `pid` (a frame that could not read the process on a loaded machine
    lists no row for k to act on)."""
    refused = "select a running process first"
    for _ in range(3):
        pane.keys("k")
        s = pane.wait_for(lambda s: f"Signal to {pid}" in s or refused in s, "the signal prompt", 4)
        if f"Signal to {pid}" in s:
            return
        time.sleep(0.6)  # the next frame
    raise Failure(f"k never asked for a signal to {pid}:\n{pane.screen()}")


def case_signal(pane, program, child_path):
    """k asks for a signal and a confirmation: n sends nothing, y sends it (TERM by default)."""
    target = child(child_path, "--name", "ptsignal")
    try:
        Top(pane, program)
        pane.keys("\\")
        pane.type("ptsignal")
        pane.keys("Enter")
        pane.wait_for(lambda s: first_pid(s) == str(target.pid), "the process alone", 5)
        ask_signal(pane, target.pid)
        pane.keys("Enter")
        pane.wait_for(lambda s: f"Send SIGTERM to {target.pid}" in s, "the confirmation", 4)
        pane.keys("n")
        pane.wait_for(lambda s: "no signal sent" in s, "the refusal said", 4)
        time.sleep(0.3)
        if target.poll() is not None:
            raise Failure("the process ended though the signal was refused")
        ask_signal(pane, target.pid)
        pane.type("KILL")
        pane.keys("Enter")
        pane.wait_for(lambda s: f"Send SIGKILL to {target.pid}" in s, "the confirmation of KILL", 4)
        pane.keys("y")
        pane.wait_for(lambda s: f"sent SIGKILL to {target.pid}" in s, "the signal sent", 4)
        if target.wait(timeout=5) != -signal.SIGKILL:
            raise Failure(f"the process ended with {target.returncode}, not by SIGKILL")
    finally:
        target.kill()
        target.wait()


def case_interval(pane, program, child_path):
    """+ and - step the refresh interval, d types it."""
    Top(pane, program)
    pane.wait_for(lambda s: "every 0.5 s" in s, "the interval of -d 0.5", 3)
    pane.keys("+")
    pane.wait_for(lambda s: "every 0.2 s" in s, "a faster refresh", 3)
    pane.keys("-", "-")
    pane.wait_for(lambda s: "every 1 s" in s, "a slower refresh", 3)
    pane.keys("d")
    pane.type("0.3")
    pane.keys("Enter")
    pane.wait_for(lambda s: "every 0.3 s" in s and "(last 0.3" in s, "frames every 0.3 s", 5)
    pane.keys("d")
    pane.type("0")
    pane.keys("Enter")
    pane.wait_for(lambda s: "from 0.1 to 3600" in s, "a bad interval refused", 3)


def case_unprivileged(pane, program, child_path):
    """Run as nobody: ended processes through the children accounting, said in the header; a
    parent's reaped children counted on it."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv to run the view as nobody")
    # A parent that keeps starting short children that burn a little CPU each.
    storm = subprocess.Popen(["sh", "-c", f"while :; do '{child_path}' --burn --seconds 0 >/dev/null; done"],
                             executable="/bin/sh", start_new_session=True)
    try:
        Top(pane, program, prefix=["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        pane.wait_for(lambda s: "children accounting" in s and "unattr" in s, "the ledger line as nobody", 6)
        pane.keys("\\")
        pane.type(str(storm.pid))
        pane.keys("Enter")
        s = pane.wait_for(lambda s: first_pid(s) == str(storm.pid), "the parent listed", 5)
        cpu = float(rows_below_heading(s)[0].split()[3])
        if cpu <= 0.0:
            raise Failure(f"the parent shows no CPU of the children it reaped:\n{s}")
    finally:
        os.killpg(storm.pid, signal.SIGKILL)
        storm.wait()


def case_fork_storm(pane, program, child_path):
    """Short processes by the hundred while the keys sort, tree, group and filter: the view stays."""
    storm = subprocess.Popen(["sh", "-c", "while :; do /bin/true; done"], start_new_session=True)
    try:
        top = Top(pane, program)
        for keys in ([">"] * 10, ["t", "<", "<", "g", "g", "g", "g", "I"], ["\\", "t", "r", "u", "e", "Escape"],
                     ["End", "Home", "PageDown", "Up"]):
            pane.keys(*keys)
            time.sleep(0.3)
        pane.wait_for(lambda s: "COMMAND" in s or "PROGRAM" in s, "the view still drawn", 5)
        os.kill(top.pid(), 0)
        pane.keys("q")
        if top.wait_exit() != 0:
            raise Failure("the view did not end cleanly after the storm")
    finally:
        os.killpg(storm.pid, signal.SIGKILL)
        storm.wait()


def case_mouse(pane, program, child_path):
    """A click selects the row under it (the detail pane names it); a click on a heading sorts by it."""
    Top(pane, program)

    def click(x, y):  # xterm's normal mouse encoding: press, then release
        return "".join("\x1b[M" + chr(32 + b) + chr(33 + x) + chr(33 + y) for b in (0, 3))

    s = pane.wait_for(lambda s: len(rows_below_heading(s)) >= 3, "three rows", 5)
    lines = s.split("\n")
    heading = next(i for i, l in enumerate(lines) if "COMMAND" in l and "PID" in l)
    pid = lines[heading + 3].split()[0]
    pane.keys("Enter")
    pane.type(click(3, heading + 3))
    pane.wait_for(lambda s: f"process {pid} " in s, f"the detail of the clicked row ({pid})", 5)
    pane.keys("Enter")
    pane.type(click(lines[heading].index("PID"), heading))
    pane.wait_for(lambda s: "\u25bcPID" in s, "the sort on the clicked heading", 5)


COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|4[0-7]|9[0-7]|10[0-7]|38;5;[0-9]+|48;5;[0-9]+)(?:;[0-9;]*)?m")


def case_colour(pane, program, child_path):
    """Colour by default; none with NO_COLOR, and ASCII line drawing where the locale is not UTF-8."""
    top = Top(pane, program)
    pane.wait_for(lambda s: "COMMAND" in s, "the view", 5)
    if not COLOUR.search(pane.tmux("capture-pane", "-p", "-e")):
        raise Failure("no colour on a colour terminal")
    pane.keys("q")
    top.wait_exit()
    top = Top(pane, program, prefix=["env", "NO_COLOR=1", "LC_ALL=C"])
    pane.keys("t")
    pane.wait_for(lambda s: "TREE%" in s and "`- " in s, "the tree in ASCII", 5)
    coloured = pane.tmux("capture-pane", "-p", "-e")
    if COLOUR.search(coloured):
        raise Failure(f"colour with NO_COLOR set: {COLOUR.search(coloured).group(0)!r}")
    if "\u2514" in coloured or "\u251c" in coloured:
        raise Failure("UTF-8 line drawing in the C locale")


def case_follow(pane, program, child_path):
    """-p PID follows the process; once it has ended and gone, the view says so and stops following."""
    target = child(child_path, "--name", "ptfollow")
    try:
        Top(pane, program, ["-p", str(target.pid)])
        pane.wait_for(lambda s: f"[follow {target.pid}]" in s and first_pid(s) == str(target.pid),
                      "the process followed", 5)
        target.kill()
        target.wait()
        pane.wait_for(lambda s: f"process {target.pid} is no longer listed" in s and "[follow" not in s,
                      "following ended", 6)
    finally:
        target.kill()
        target.wait()


def case_help(pane, program, child_path):
    """? shows the help; any key closes it."""
    Top(pane, program)
    pane.keys("?")
    pane.wait_for(lambda s: "this help" in s and "sort by" in s, "the help", 5)
    pane.keys("x")
    pane.wait_for(lambda s: "this help" not in s and "COMMAND" in s, "the rows back", 5)


def case_pause(pane, program, child_path):
    """p pauses: the screen stops changing; p again resumes."""
    Top(pane, program)
    pane.wait_for(lambda s: "attributed" in s, "the second frame", 6)
    pane.keys("p")
    first = pane.wait_settled(lambda s: "[paused]" in s, "the pause", 3)
    time.sleep(1.6)  # three intervals
    if pane.screen() != first:
        raise Failure("the screen changed while paused")
    title = first.split("\n")[0]
    pane.keys("p")
    pane.wait_for(lambda s: "[paused]" not in s and s.split("\n")[0] != title, "frames again", 5)


def case_resize(pane, program, child_path):
    """20x5 and back: no crash, what fits is drawn, the whole view again after."""
    top = Top(pane, program)
    pane.tmux("resize-window", "-x", "20", "-y", "5")
    s = pane.wait_for(lambda s: s.startswith("proctimes top") and "PID" in s, "the view at 20x5", 5)
    if any(len(l) > 20 for l in s.split("\n")):
        raise Failure(f"a line wider than 20 columns:\n{s}")
    pane.keys("t", "?", "x", "Enter", "Down", "End")
    time.sleep(0.7)
    pane.tmux("resize-window", "-x", "100", "-y", "30")
    pane.wait_for(lambda s: "load " in s and "COMMAND" in s, "the whole view at 100x30", 5)
    os.kill(top.pid(), 0)  # still running


def case_escaped_names(pane, program, child_path):
    """A name holding escape sequences is drawn escaped; the terminal interprets none (its title stays)."""
    evil = child(child_path, "--name", "\x1b]2;pwned\x07\x1b[2J")
    try:
        pane.tmux("select-pane", "-T", "untouched")
        Top(pane, program)
        pane.keys("\\")
        pane.type("pwned")
        pane.keys("Enter")
        pane.wait_for(lambda s: first_pid(s) == str(evil.pid) and "c --name \\x1b]2;pwned\\x07\\x1b[2J" in s,
                      "the command line escaped", 6)
        pane.keys("Enter")
        pane.wait_for(lambda s: "name      \\x1b]2;pwned\\x07\\x1b[2J" in s, "the name escaped in the detail", 5)
        title = pane.tmux("display-message", "-p", "#{pane_title}").strip()
        if title != "untouched":
            raise Failure(f"the terminal took a sequence from the name: its title is {title!r}")
    finally:
        evil.kill()
        evil.wait()


def case_quit(pane, program, child_path):
    """q ends the view with status 0 and gives the terminal back as it was."""
    top = Top(pane, program)
    pane.keys("q")
    if top.wait_exit() != 0:
        raise Failure("q did not end the view with status 0")
    top.check_restored()


def case_sigterm(pane, program, child_path):
    """SIGTERM ends the view (status 143) with the terminal restored."""
    top = Top(pane, program)
    os.kill(top.pid(), signal.SIGTERM)
    if top.wait_exit() != 128 + signal.SIGTERM:
        raise Failure("SIGTERM did not end the view with status 143")
    top.check_restored()


def case_sighup(pane, program, child_path):
    """SIGHUP to the process group ends the view (status 129) with the terminal restored."""
    top = Top(pane, program)
    os.killpg(os.getpgid(top.pid()), signal.SIGHUP)
    if top.wait_exit() != 128 + signal.SIGHUP:
        raise Failure("SIGHUP did not end the view with status 129")
    top.check_restored()


def case_ctrl_c(pane, program, child_path):
    """Ctrl-C ends the view (status 130) with the terminal restored."""
    top = Top(pane, program)
    pane.keys("C-c")
    if top.wait_exit() != 128 + signal.SIGINT:
        raise Failure("Ctrl-C did not end the view with status 130")
    top.check_restored()


def case_closed_terminal(pane, program, child_path):
    """The terminal closing under the view (the tmux server killed) ends it."""
    top = Top(pane, program)
    pid = top.pid()
    pane.close()
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise Failure(f"the view ({pid}) still runs 5 s after its terminal closed")


def case_not_a_terminal(pane, program, child_path):
    """Standard output a pipe: refused with status 2 and a pointer to -b."""
    base = os.path.basename(program)
    command = [program] if "driver" in base else [program, "top"]
    r = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10)
    if r.returncode != 2 or "-b" not in r.stderr:
        raise Failure(f"status {r.returncode}, stderr {r.stderr!r}")


def case_feed_fails(pane, program, child_path):
    """The feed failing (the scripted driver's --fail-after) ends the view with status 1, the
    terminal restored and the error written after it."""
    top = Top(pane, program, ["--fail-after", "3"])
    if top.wait_exit() != 1:
        raise Failure("a failed feed did not end the view with status 1")
    top.check_restored()
    s = pane.screen()
    if "proctimes top: the frame feed failed" not in s:
        raise Failure(f"the error is not shown after the view:\n{s}")


def case_crash(pane, program, child_path):
    """A fault (the scripted driver's --crash-after raises SIGSEGV in the feed) still gives the
    terminal back: the process dies of the signal, the settings and the screen as they were."""
    top = Top(pane, program, ["--crash-after", "3"])
    if top.wait_exit() != 128 + signal.SIGSEGV:
        raise Failure("the view did not die of SIGSEGV")
    top.check_restored()


NO_PANE = {"not_a_terminal"}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    name, program, child_path = sys.argv[1:4]
    case = globals().get("case_" + name)
    if case is None:
        print(f"no case {name}", file=sys.stderr)
        return 2
    if name in NO_PANE:
        pane = None
    else:
        if shutil.which("tmux") is None:
            print("tmux is not installed (Debian: apt-get install tmux); not run")
            return SKIP
        pane = Pane()
    try:
        case(pane, program, child_path)
    except Failure as e:
        print(f"{name}: FAILED: {e}")
        return 1
    except Skip as e:
        print(f"{name}: skipped: {e}")
        return SKIP
    finally:
        if pane is not None:
            pane.close()
    print(f"{name}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
