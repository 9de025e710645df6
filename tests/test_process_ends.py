"""A backend's process, however it ends: crashes, hangs, restarts, floods, processes left behind,
signals (hardening rounds 2 to 4)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import require, sigint_as_a_terminal_sends_it
from probes import (
    EXEC_CHILD,
    FAULTS,
    FAULTS_RESOURCES,
    TESTS,
    _living,
    _not_zombie,
    alive,
    backend_file,
    call,
    living_in_group,
    rngcheck,
    wait_until,
)
from rngcheck.backends.exec_backend import STDERR_KEPT, ExecBackend, isolated


def test_a_stderr_flood_is_kept_as_a_bounded_tail(tmp_path):
    backend = isolated(f"{FAULTS}:FloodsStderr", timeout=300)
    try:
        call(backend, (7,))
        call(backend, (8,))
        tail = backend.child.stderr_tail()
        assert len(backend.child.stderr.kept) <= STDERR_KEPT
        # nothing of the flood is held in a file either (it used to grow an unlinked temporary file)
        for fd in os.listdir("/proc/self/fd"):
            try:
                assert os.fstat(int(fd)).st_size < (8 << 20), os.readlink(f"/proc/self/fd/{fd}")
            except (OSError, ValueError):
                continue
    finally:
        backend.close()
    wait_until(lambda: "the last line of the flood" in backend.child.stderr.tail(), what="the flood's end in the tail")
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


@pytest.mark.parametrize("mode, error_name, words", [
    ("noise", "BackendProtocolError", "where a protocol message should start (noise on stdout?)"),
    ("bad-reject", "BackendProtocolError", ": the RJCT payload is not a JSON object"),
    ("huge-done", "BackendProtocolError", "announced a DONE of 4294967295 bytes"),
    ("exit-mid", "BackendCrashed", "exited mid-protocol: exit code 0"),
    ("deaf", "BackendCrashed", "closed its output and was ended"),
    ("grandchild", "BackendTimeout", "did not answer within 5 s"),
])
def test_every_failed_call_ends_the_child_and_carries_its_stderr_tail(mode, error_name, words):
    """Whichever way a call fails in the child, the error names it, carries the tail of the child's
    stderr, and the child and its process group are gone; the next call gets a fresh child.
    (The time limit, which a child's start counts against, is short only where the timeout is the
    fault: a loaded machine can take seconds to start Python and numpy.)"""
    from rngcheck import errors
    backend = ExecBackend(EXEC_CHILD + [mode], timeout=5 if mode == "grandchild" else 120)
    try:
        call(backend, (8,))  # a good call first: the child's stderr line has been drained
        child = backend.child.process.pid
        with pytest.raises(errors.BackendProcessFailed) as caught:
            call(backend, (7,))
        assert type(caught.value).__name__ == error_name and words in str(caught.value)
        assert f"exec-child {mode}: started" in caught.value.stderr_tail
        assert backend.child.process is None  # the leader was reaped; the group, grandchildren included, ends:
        wait_until(lambda: not living_in_group(child), limit=30, what=f"the end of process group {child}")
        state, returned = call(backend, (8,))
        assert returned is not None and backend.child.process.pid != child
    finally:
        backend.close()


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


def test_a_hung_worker_dies_with_a_runner_killed_by_sigkill(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
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


def test_sigterm_while_a_backend_shakes_hands_is_130_one_line_and_no_worker_left(tmp_path):
    spec = backend_file(tmp_path, "HangsBeforeHandshake")
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


def test_a_backend_whose_every_worker_hangs_ends_not_run_and_the_run_goes_on(tmp_path):
    out = tmp_path / "r.json"
    start = time.monotonic()
    result = rngcheck("run", "--backend", f"{FAULTS}:HangsEveryCall", "--backend", "numpy", "--case", "mapping",
                      "--timeout", "2", "--max-worker-restart", "2", "--json", str(out), "--quiet")
    assert result.returncode == 1, result.stderr
    document = json.loads(out.read_text())
    hung = [r for r in document["results"] if r["backend"] == "hangs-every-call"]
    statuses = [r["status"] for r in hung]
    assert statuses[:2] == ["timeout", "timeout"] and set(statuses[2:]) == {"not-run"}, statuses
    assert all("backend stopped answering" in r["message"] for r in hung[2:])
    assert all(r["status"] == "passed" for r in document["results"] if r["backend"] == "numpy")
    assert document["complete"] and document["summary"]["counts"]["not-run"] == len(hung) - 2
    assert time.monotonic() - start < 200  # two time limits, not one per case


def test_deadline_ends_the_run_cleanly_with_the_rest_not_run(tmp_path):
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", f"{FAULTS}:Slow", "--case", "mapping", "--deadline", "1",
                      "--json", str(out), "--junit", str(tmp_path / "j.xml"), "--quiet")
    assert result.returncode == 1, result.stderr
    assert "--deadline of 1 s passed" in result.stderr and "Traceback" not in result.stderr
    document = json.loads(out.read_text())
    assert document["complete"] and len(document["results"]) == len(document["cases"])
    assert any(r["status"] == "not-run" and "--deadline" in r["message"] for r in document["results"])
    from rngcheck.results import journal as J
    journal, _ = J.read(J.journal_path_for(out))
    assert journal["complete"]


def test_sigterm_during_stats_writes_the_partial_document_and_ends_its_workers(tmp_path):
    out = tmp_path / "s.json"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "stats", "--backend", "numpy", "--tier", "deep",
                                "--bytes", "16G", "--workers", "2", "--json", str(out), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def children():
        found = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True)
        return [int(p) for p in found.stdout.split()]
    try:
        wait_until(lambda: len(children()) >= 2, what="the pool's workers")
        workers = children()
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 130, stderr
        assert stderr.strip().splitlines()[-1].startswith("rngcheck: interrupted") and "Traceback" not in stderr
        document = json.loads(out.read_text())
        assert document["interrupted"] and document["verdict"] == "INCOMPLETE"
        wait_until(lambda: not [p for p in workers if _not_zombie(p)], limit=30, what="the workers' end")
    finally:
        process.kill()


def test_a_second_interrupt_still_writes_the_partial_document(tmp_path):
    spec = backend_file(tmp_path, "HangsEveryCall")
    out = tmp_path / "out.json"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", spec, "--backend", "numpy",
                                "--case", "mapping", "--json", str(out), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    journal = tmp_path / "out.journal.jsonl"
    try:
        # the hanging backend's first call is under way once the journal names it
        wait_until(lambda: journal.exists() and '"backend"' in journal.read_text(),
                   what="the hanging backend's first case")
        process.send_signal(signal.SIGINT)
        time.sleep(1.0)   # the user presses Ctrl-C again a second later (the run is closing its backend)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 130, stderr
        assert "Traceback" not in stderr
        document = json.loads(out.read_text())
        assert document["interrupted"] and document["summary"]["verdict"] == "incomplete"
    finally:
        process.kill()


def test_a_backend_that_answers_once_then_hangs_in_every_worker_is_given_up():
    from rngcheck.errors import BackendStopped, BackendTimeout

    backend = isolated(f"{FAULTS_RESOURCES}:AnswersOnceThenHangs", timeout=2, max_restarts=2)
    outcomes = []
    try:
        for _ in range(8):
            try:
                call(backend)
                outcomes.append("answered")
            except BackendTimeout:
                outcomes.append("timeout")
            except BackendStopped as stopped:
                assert "calls hung" in str(stopped)
                outcomes.append("stopped")
    finally:
        backend.close()
    assert outcomes[:4] == ["answered", "timeout", "answered", "timeout"], outcomes
    assert set(outcomes[4:]) == {"stopped"}, outcomes  # two time limits in all, then nothing more


def test_a_non_validating_backend_that_crashes_on_invalid_descriptions_is_run_on_every_other_case(tmp_path):
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", f"{FAULTS_RESOURCES}:CrashesOnInvalid", "--case", "validation",
                      "--case", "mapping", "--case", "scale", "--timeout", "30", "--json", str(out), "--quiet")
    document = json.loads(out.read_text())
    statuses = {r["case"]: r["status"] for r in document["results"]}
    assert "not-run" not in statuses.values(), statuses
    assert [s for c, s in statuses.items() if c.startswith("validation/")].count("crashed") >= 3, statuses
    assert all(s == "passed" for c, s in statuses.items() if not c.startswith("validation/")), statuses
    assert result.returncode == 0, result.stderr[-2000:]


def test_nist_ends_on_sigterm_while_it_reads():
    feeder = subprocess.Popen(["sleep", "120"], stdout=subprocess.PIPE)  # a pipe that never ends nor writes
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "nist", "-", "--quiet"], stdin=feeder.stdout,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    feeder.stdout.close()
    try:
        time.sleep(3)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode in (2, 130) and "Traceback" not in stderr, stderr[-2000:]
        assert len(stderr.strip().splitlines()) == 1, stderr
    finally:
        process.kill()
        feeder.kill()
        feeder.wait()


def test_an_implementation_started_by_a_forking_wrapper_dies_with_a_sigkilled_rngcheck(tmp_path):
    marker = f"wrapped-{tmp_path.name}"
    child = f"{sys.executable} {TESTS / 'exec_child.py'} grandchild {marker}"
    wrapper = f"exec:sh -c '{child}; echo done'"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", wrapper,
                                "--case", "mapping", "--quiet", "--timeout", "600"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(TESTS.parent)})
    try:
        wait_until(lambda: _living("sleep 301"), 120, "the trigger case's hang")
        assert _living(marker)
        process.kill()
        process.wait(timeout=30)
        wait_until(lambda: not _living(marker), 30, "the wrapped implementation's end")
    finally:
        process.kill()
        for pid in _living(marker):
            os.kill(pid, signal.SIGKILL)
        for pid in _living("sleep 301"):
            os.kill(pid, signal.SIGKILL)


def test_nist_workers_die_with_a_sigkilled_rngcheck(tmp_path):
    bits = tmp_path / f"bits-{tmp_path.name}.bin"
    bits.write_bytes(np.random.default_rng(1).integers(0, 256, 40 * 125_000, dtype=np.uint8).tobytes())
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "nist", str(bits), "--workers", "2", "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: len(_living(str(bits))) >= 3, 120, "the pool's start")  # rngcheck and its two workers
        process.kill()
        process.wait(timeout=30)
        wait_until(lambda: not _living(str(bits)), 30, "the pool workers' end")
    finally:
        process.kill()
        for pid in _living(str(bits)):
            os.kill(pid, signal.SIGKILL)


def test_a_crashing_backend_gives_the_same_incomplete_document_with_dask(tmp_path):
    require("distributed")
    spec = f"{TESTS / 'faults.py'}:ExitsAtOnce"
    documents = []
    for extra in ([], ["--dask", "local:1"]):
        out = tmp_path / f"s{len(documents)}.json"
        result = rngcheck("stats", "--backend", spec, *extra, "--json", str(out), "--quiet", timeout=300)
        assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout, result.stderr[-2000:]
        documents.append(json.loads(out.read_text()))
    facts = [(d["complete"], d.get("backend_failed"), d["verdict"], d["results"]) for d in documents]
    assert facts[0] == facts[1] == (False, True, "INCOMPLETE", []), facts
    assert all("exit code 9" in d["message"] for d in documents)


def test_run_stats_on_a_backend_that_raises_mid_stream_is_an_incomplete_document_not_a_traceback(tmp_path):
    """``run --stats`` on a backend that raises while the battery reads its stream (in its worker:
    a RemoteError) is the battery's backend-failed case, as a crash or a hang is: the run's document
    is written with an INCOMPLETE stats entry that names the backend's error, exit 1, no traceback."""
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    out = tmp_path / "r.json"
    result = rngcheck("run", "--backend", "panel:Crashes", "--profile", "quick", "--case", "kat/*",
                      "--stats", "smoke", "--quiet", "--json", str(out), cwd=tmp_path, env=env)
    assert result.returncode == 1, (result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    stats = json.loads(out.read_text())["stats"]
    assert [entry["verdict"] for entry in stats] == ["INCOMPLETE"], stats
    assert stats[0]["backend_failed"] is True and "device lost" in stats[0]["message"], stats[0]["message"]


FINALIZER_PROBE = """
import signal, sys, time
from rngcheck import cli
class Finalized:
    def __del__(self):   # SIGTERM's handler called here, as when the signal lands in a finalizer
        cli._terminate_as_interrupt(signal.SIGTERM, sys._getframe())
try:
    Finalized()          # dropped at once: __del__ runs, and an exception raised in it would be ignored
    time.sleep(2)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_an_interrupt_landing_in_a_finalizer_is_raised_again_after_it():
    """A SIGTERM that lands in a weakref callback or __del__ (where Python ignores exceptions) still ends
    the command: CI saw `rngcheck report` run to exit 0 after SIGTERM, its KeyboardInterrupt 'ignored'
    inside a WeakKeyDictionary's callback."""
    result = subprocess.run([sys.executable, "-c", FINALIZER_PROBE], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
    assert result.stdout.strip() == "interrupted", result.stdout + result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
