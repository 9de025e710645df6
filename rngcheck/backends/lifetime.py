"""No process outlives rngcheck: how the children of a backend are tied to the run.

1. Every child rngcheck starts (an exec child, a Python worker, a stats pool worker) asks the
   kernel for SIGKILL when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), so a runner
   killed with SIGKILL takes its children with it.
2. Every exec child gets its own session (its process group is killed when the call ends) and
   a mark in its environment (``RNGCHECK_OWNER``), inherited by everything it starts. A
   descendant that leaves the group with ``setsid()`` still carries the mark, and is found by
   it in /proc and killed when its backend is ended.

3. A watchdog process (one per rngcheck process, started with its first exec child) holds the
   read end of a pipe whose write end only rngcheck holds, and is told each child's mark. When
   rngcheck dies, however (SIGKILL included), the pipe ends and the watchdog SIGKILLs every
   process carrying one of those marks: a wrapper's own children (``exec:sh -c 'impl; echo
   done'``: ``impl`` is not rngcheck's child, so step 1 does not reach it) die too.

What holds elsewhere: on systems without ``prctl`` (macOS, the BSDs) step 1 does nothing: a
runner killed with SIGKILL (which no handler sees) leaves a hung child running until it exits
by itself; every other ending (a crash, a timeout, Ctrl-C, SIGTERM) still kills it. Without
/proc, step 2 finds only the process group. A descendant that both leaves the session and clears its environment escapes
everywhere; on Linux, a cgroup (``systemd-run --user --scope rngcheck ...``) contains it too.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
import time
import uuid

OWNER_VARIABLE = "RNGCHECK_OWNER"
PR_SET_PDEATHSIG = 1


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def die_with_parent(parent: int | None = None) -> None:
    """In a child: be sent SIGKILL when the parent dies (Linux); exit at once when the parent is
    already gone (``parent``: the pid the child was started by)."""
    if _PRCTL is None:
        return
    _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before prctl took effect


def preexec(parent: int):
    """A ``preexec_fn`` for Popen: die with ``parent`` (async-signal-safe: one syscall and a compare)."""
    def run():
        die_with_parent(parent)
    return run


def new_owner_mark() -> str:
    return uuid.uuid4().hex


def marked(owner: str) -> list[int]:
    """The pids of live processes whose environment carries ``RNGCHECK_OWNER=owner`` (Linux /proc)."""
    needle = f"{OWNER_VARIABLE}={owner}".encode()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_marked(owner: str, wait: float = 5.0) -> None:
    """SIGKILL every process carrying the mark, and wait (at most ``wait`` seconds) until none is
    left: a killed process stays in /proc, its environment readable, until the kernel has run its
    exit, and one may fork while we look, so the kill is repeated until /proc shows no mark."""
    deadline = time.monotonic() + wait
    while True:
        pids = marked(owner)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if time.monotonic() >= deadline:
            return
        time.sleep(0.01)


# The watchdog of step 3: no rngcheck import, isolated (-I), its own session (Ctrl-C and a group kill
# of the terminal do not reach it; it ends when its pipe does). It reads marks, one a line, until
# EOF, then kills every process whose environment carries one of them.
_WATCHDOG_SOURCE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
marks = set()
for line in sys.stdin.buffer:
    marks.add(line.strip())
needles = {b"%s=" % NAME.encode() + m for m in marks if m}
for _ in range(3):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as environ:
                if needles & set(environ.read().split(b"\0")):
                    found.append(int(entry))
        except OSError:
            continue
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not found:
        break
"""

_WATCHDOG: dict = {}


def watch(owner: str) -> None:
    """Have the watchdog (step 3) kill the processes marked ``owner`` if rngcheck dies without ending
    them. Linux only (it reads /proc); starting it once costs one small Python process."""
    import subprocess

    if not sys.platform.startswith("linux"):
        return
    pid = os.getpid()
    if _WATCHDOG.get("pid") != pid:  # none yet, or a forked copy of rngcheck: its own watchdog
        try:
            process = subprocess.Popen([sys.executable, "-I", "-S", "-c",
                                        f"NAME = {OWNER_VARIABLE!r}\n" + _WATCHDOG_SOURCE],
                                       stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            return
        _WATCHDOG.update(pid=pid, process=process)
        atexit.register(_end_watchdog)
    try:
        stdin = _WATCHDOG["process"].stdin
        stdin.write(owner.encode() + b"\n")
        stdin.flush()
    except (OSError, ValueError):
        pass


def _end_watchdog(wait: float = 5.0) -> None:
    """At rngcheck's end (atexit): close the watchdog's pipe and wait (at most ``wait`` seconds)
    while it kills what is left marked and exits, so that no process of the run outlives it, the
    watchdog included (cli.entry ends the process as soon as the atexit handlers have run)."""
    import subprocess

    process = _WATCHDOG.get("process")
    if process is None or _WATCHDOG.get("pid") != os.getpid():
        return
    try:
        process.stdin.close()
        process.wait(timeout=wait)
    except (OSError, ValueError, subprocess.TimeoutExpired):  # the watchdog then ends by itself
        pass
