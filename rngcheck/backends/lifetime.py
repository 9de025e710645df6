"""No process outlives rngcheck: how the children of a backend are tied to the run.

1. Every child rngcheck starts (an exec child, a Python worker, a stats pool worker) asks the
   kernel for SIGKILL when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), so a runner
   killed with SIGKILL takes its children with it.
2. Every exec child gets its own session (its process group is killed when the call ends) and
   a mark in its environment (``RNGCHECK_OWNER``), inherited by everything it starts. A
   descendant that leaves the group with ``setsid()`` still carries the mark, and is found by
   it in /proc and killed when its backend is ended.

What holds elsewhere: on systems without ``prctl`` (macOS, the BSDs) step 1 does nothing: a
runner killed with SIGKILL (which no handler sees) leaves a hung child running until it exits
by itself; every other ending (a crash, a timeout, Ctrl-C, SIGTERM) still kills it. Without
/proc, step 2 finds only the process group. A descendant that both leaves the session and clears its environment escapes
everywhere; on Linux, a cgroup (``systemd-run --user --scope rngcheck ...``) contains it too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
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


def kill_marked(owner: str, rounds: int = 3) -> None:
    """SIGKILL every process carrying the mark (a few rounds: one may fork while we look)."""
    for _ in range(rounds):
        pids = marked(owner)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
