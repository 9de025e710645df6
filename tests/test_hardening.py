"""Hardening (issue 13): backends that hang every worker, processes left behind, resources a backend
can exhaust, files that are not what they claim, outputs that destroy data, misleading verdicts.

Tests with processes poll with generous limits; none depends on a fixed sleep."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rngcheck.backends.exec_backend import STDERR_KEPT, ExecBackend, isolated

TESTS = Path(__file__).parent
FAULTS = str(TESTS / "faults.py")
EXEC_CHILD = [sys.executable, str(TESTS / "exec_child.py")]
TRIGGER_CASE = "mapping/elements-7"


def rngcheck(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "rngcheck", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def one_line_error(result, code=2, *words):
    assert result.returncode == code, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def alive(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def wait_until(predicate, limit=120.0, what="the condition"):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {limit} s")


def call(backend, sizes=(8,)):
    state = np.array([0, 0, 0, 0, 1, 2], dtype=np.uint32)
    buffer = np.zeros(int(np.prod(sizes)) + 4, dtype=np.uint32)
    return state, backend.random_generator(state, sizes, None, buffer)


# -- resources a backend can exhaust ------------------------------------------------------------

def test_a_stderr_flood_is_kept_as_a_bounded_tail(tmp_path):
    backend = isolated(f"{FAULTS}:FloodsStderr", timeout=300)
    try:
        call(backend, (7,))
        call(backend, (8,))
        tail = backend._stderr_tail()
        assert len(backend.stderr.kept) <= STDERR_KEPT
        # nothing of the flood is held in a file either (it used to grow an unlinked temporary file)
        for fd in os.listdir("/proc/self/fd"):
            try:
                assert os.fstat(int(fd)).st_size < (8 << 20), os.readlink(f"/proc/self/fd/{fd}")
            except (OSError, ValueError):
                continue
    finally:
        backend.close()
    wait_until(lambda: "the last line of the flood" in backend.stderr.tail(), what="the flood's end in the tail")
    assert "driver: debug" in tail or "the last line" in tail


def test_a_done_larger_than_the_call_needs_is_refused_from_its_header():
    backend = ExecBackend(EXEC_CHILD + ["huge-done"], timeout=120)
    try:
        start = time.monotonic()
        from rngcheck.errors import BackendProtocolError
        with pytest.raises(BackendProtocolError, match="announced a DONE of 4294967295 bytes"):
            call(backend, (7,))
        assert time.monotonic() - start < 60  # at once, not after the call's time limit
        state, returned = call(backend, (8,))  # a fresh child answers the next call
        assert returned is not None
    finally:
        backend.close()


# -- misleading verdicts: the input state -------------------------------------------------------

@pytest.mark.parametrize("isolation", [[], ["--in-process"]])
def test_a_backend_writing_its_input_state_fails_input_state_modified(tmp_path, isolation):
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", f"{FAULTS}:WritesInputState", "--case", "mapping", "--json", str(out),
                      *isolation)
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    modified = [r for r in results if (r.get("diagnosis") or {}).get("id") == "input-state-modified"]
    assert modified and all(r["status"] == "failed" for r in modified)


def test_the_worker_reports_the_input_state_after_the_call():
    backend = isolated(f"{FAULTS}:WritesInputState")
    try:
        state, returned = call(backend, (8,))
        assert state.tolist() == np.asarray(returned).tolist() != [0, 0, 0, 0, 1, 2]
    finally:
        backend.close()
    honest = isolated(f"{FAULTS}:Correct")
    try:
        state, _ = call(honest, (8,))
        assert state.tolist() == [0, 0, 0, 0, 1, 2]
    finally:
        honest.close()


# -- runs that never end ----------------------------------------------------------------------

def test_restarts_are_capped_and_the_rest_is_not_run():
    from rngcheck.errors import BackendStopped, BackendTimeout

    backend = isolated(f"{FAULTS}:HangsEveryCall", timeout=2, max_restarts=3)
    try:
        for _ in range(3):
            with pytest.raises(BackendTimeout):
                call(backend)
        start = time.monotonic()
        with pytest.raises(BackendStopped, match="backend stopped answering"):
            call(backend)
        assert time.monotonic() - start < 1.0
    finally:
        backend.close()


def test_a_worker_that_hangs_before_its_handshake_is_a_timeout_not_unavailable(tmp_path):
    from rngcheck.errors import BackendCrashed, BackendStopped, BackendTimeout

    backend = isolated(f"{FAULTS}:HangsWhenRestarted", timeout=3, max_restarts=2,
                       env={"RNGCHECK_FAULT_MARKER": str(tmp_path / "marker")})
    try:
        call(backend, (8,))
        with pytest.raises(BackendCrashed):
            call(backend, (7,))
        with pytest.raises(BackendTimeout, match="before its handshake"):
            call(backend, (8,))
        with pytest.raises(BackendTimeout):
            call(backend, (8,))
        with pytest.raises(BackendStopped):
            call(backend, (8,))
    finally:
        backend.close()


# -- processes left behind --------------------------------------------------------------------

def test_a_grandchild_that_leaves_the_session_is_ended_with_its_backend():
    backend = ExecBackend(EXEC_CHILD + ["setsid"], timeout=3)
    try:
        from rngcheck.errors import BackendTimeout
        with pytest.raises(BackendTimeout):
            call(backend, (7,))
        wait_until(lambda: not alive("sleep 302"), limit=30, what="the setsid grandchild's end")
        call(backend, (8,))
    finally:
        backend.close()
    assert not alive("sleep 302")


def _backend_file(tmp_path, cls: str) -> str:
    """A backend spec unique to this test, so its worker can be found by its command line."""
    path = tmp_path / f"fault_{cls.lower()}.py"
    path.write_text(f"import sys; sys.path.insert(0, {str(TESTS)!r})\nfrom faults import {cls} as Backend\n")
    return f"{path}:Backend"


def test_a_hung_worker_dies_with_a_runner_killed_by_sigkill(tmp_path):
    spec = _backend_file(tmp_path, "HangsEveryCall")
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--case", "mapping",
                                "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: alive(f"rngcheck.backends.worker {spec}"), what="the worker's start")
        workers = alive(f"rngcheck.backends.worker {spec}")
        process.kill()  # the runner only, not its process group
        process.wait(timeout=60)
        wait_until(lambda: not any(Path(f"/proc/{p}").exists() and _not_zombie(p) for p in workers), limit=60,
                   what="the worker's end after the runner's SIGKILL")
    finally:
        for pid in alive(f"rngcheck.backends.worker {spec}"):
            os.kill(pid, signal.SIGKILL)


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigterm_while_a_backend_shakes_hands_is_130_one_line_and_no_worker_left(tmp_path):
    spec = _backend_file(tmp_path, "HangsBeforeHandshake")
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--case", "kat"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: alive(f"rngcheck.backends.worker {spec}"), what="the worker's start")
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert len(stderr.strip().splitlines()) == 1 and "interrupted" in stderr, stderr
        wait_until(lambda: not [p for p in alive(f"rngcheck.backends.worker {spec}") if _not_zombie(p)], limit=60,
                   what="the handshaking worker's end")
    finally:
        process.kill()
        for pid in alive(f"rngcheck.backends.worker {spec}"):
            os.kill(pid, signal.SIGKILL)
