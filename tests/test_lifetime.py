"""rngcheck.backends.lifetime: ending a backend leaves none of its marked processes in /proc."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rngcheck.backends import lifetime

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the marks are found in /proc (Linux)")

# eight children holding 256 MiB of touched memory each: after SIGKILL the kernel takes a while to
# run their exits, and until then each is in /proc with its environment readable (kill_marked that
# only sent the signal a few times, as before, left some of them listed in every try)
_BIG = "import sys; b = bytearray(1 << 28); b[::4096] = b'x' * (1 << 16); print('ready', flush=True); sys.stdin.read()"


def test_kill_marked_returns_when_no_marked_process_is_left():
    owner = lifetime.new_owner_mark()
    env = {**os.environ, lifetime.OWNER_VARIABLE: owner}
    children = [subprocess.Popen([sys.executable, "-c", _BIG], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE) for _ in range(8)]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        assert sorted(lifetime.marked(owner)) == sorted(c.pid for c in children)
        lifetime.kill_marked(owner)
        assert lifetime.marked(owner) == []        # killed and gone, not only sent the signal
    finally:
        for child in children:
            child.kill()
            child.wait()
