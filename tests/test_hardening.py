"""Hardening (issue 13): backends that hang every worker, processes left behind, resources a backend
can exhaust, files that are not what they claim, outputs that destroy data, misleading verdicts.

Tests with processes poll with generous limits; none depends on a fixed sleep."""

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from helpers import sigint_as_a_terminal_sends_it
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


def living_in_group(group: int) -> list[int]:
    """The processes of a process group that are not zombies (one reparented to an init that
    has not reaped it yet is dead all the same)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(entry))
    return found


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


def run_args(tmp_path, *extra, backend="numpy", case="kat"):
    return rngcheck("run", "--backend", backend, "--case", case, *extra)


# -- runs that never end, through the command ---------------------------------------------------

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


# -- files that are not what they claim ---------------------------------------------------------

def _hostile_files(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    binary_journal = tmp_path / "bad.journal.jsonl"
    header = json.dumps({"journal": "rngcheck-journal", "version": 1, "document": {"cases": []},
                         "run": {"profile": "quick"}})
    binary_journal.write_bytes(header.encode() + b"\n\xff\xfe not utf-8\n{}\n")
    return {"deep": str(deep), "zero": "/dev/zero", "urandom": "/dev/urandom", "journal": str(binary_journal)}


@pytest.mark.parametrize("which", ["deep", "zero", "urandom", "journal"])
def test_a_hostile_document_is_one_line_exit_2(tmp_path, which, monkeypatch):
    import rngcheck.jsonfile as jsonfile
    path = _hostile_files(tmp_path)[which]
    from rngcheck import cli
    monkeypatch.setattr(jsonfile, "MAX_BYTES", 8 << 20)  # /dev/zero: refused after the limit, not memory
    code = cli.main(["report", path])
    assert code == 2


@pytest.mark.parametrize("which", ["deep", "zero", "journal"])
def test_a_hostile_file_through_the_command_is_one_line(tmp_path, which):
    path = _hostile_files(tmp_path)[which]
    one_line_error(rngcheck("report", path), 2)
    one_line_error(rngcheck("run", "--resume", path), 2)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_before_it_is_read(device, monkeypatch):
    """An endless device is refused from its file type, not after reading up to the size limit
    (the limit is left at its 512 MiB default here: a read would take seconds and memory)."""
    from rngcheck.errors import RngcheckError
    from rngcheck.jsonfile import read_bytes_limited
    with pytest.raises(RngcheckError, match="a device, not a file"):
        read_bytes_limited(device, what="document")


def test_a_document_through_a_pipe_is_still_read(tmp_path):
    """A pipe is not a device: ``... | rngcheck report /dev/stdin`` reads the document."""
    document = tmp_path / "doc.json"
    assert rngcheck("run", "--backend", "numpy", "--case", "vectors/*", "--json", str(document),
                    "--quiet").returncode == 0
    done = rngcheck("report", "/dev/stdin", "--html", str(tmp_path / "r.html"), input=document.read_text())
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r.html").stat().st_size > 0


def _journal_with(tmp_path, **run):
    """A journal of an unfinished run of the kat cases on numpy, its settings updated with ``run``."""
    settings = {"profile": "quick", "seed": 0, "select": ["kat"], "backends": ["numpy"], "timeout": 120.0,
                "stats": None}
    settings.update(run)
    from rngcheck.conformance.runner import RunOptions, select_cases
    from rngcheck.results import document as D
    from rngcheck.results import journal as J
    path = tmp_path / "run.journal.jsonl"
    journal = J.Journal(path)
    journal.start(D.new_document("quick", 0, ["run", "--case", "kat"], select_cases(RunOptions(select=["kat"])),
                                 ["kat"]), settings)
    journal.close()
    return path


@pytest.mark.parametrize("field, value, words", [
    ("timeout", "soon", "timeout"), ("timeout", -1, "timeout"), ("backends", [1, 2], "backends"),
    ("stats", "galactic", "stats"), ("profile", "ultra", "profile"), ("seed", "x", "seed"),
    ("outputs", {"html": "/etc/passwd"}, "outputs"),
])
def test_resume_validates_every_header_field(tmp_path, field, value, words):
    path = _journal_with(tmp_path, **{field: value})
    one_line_error(rngcheck("run", "--resume", str(path)), 2, words)


def test_resume_refuses_an_exec_backend_the_user_did_not_name(tmp_path):
    marker = tmp_path / "ran"
    spec = f"exec:touch {marker}"
    path = _journal_with(tmp_path, backends=[spec])
    one_line_error(rngcheck("run", "--resume", str(path)), 2, "--trust-journal", spec)
    assert not marker.exists()
    # named again by the user, it is started (and fails its handshake: one line)
    again = rngcheck("run", "--resume", str(path), "--backend", spec)
    assert again.returncode == 2 and marker.exists() and "Traceback" not in again.stderr


# -- outputs that destroy data ------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    ["--json", "{d}/a", "--junit", "{d}/a"], ["--json", "{d}/a", "--html", "{d}/./a"],
    ["--json", "{d}/a.json", "--journal", "{d}/a.json"], ["--junit", "{d}/x", "--html", "{d}/x"],
])
def test_one_path_for_two_outputs_is_refused_before_anything_runs(tmp_path, options):
    result = run_args(tmp_path, *[o.format(d=tmp_path) for o in options])
    one_line_error(result, 2, "same file")
    assert not list(tmp_path.iterdir())


def test_report_refuses_to_write_over_its_input(tmp_path):
    doc = tmp_path / "a.json"
    assert run_args(tmp_path, "--json", str(doc)).returncode == 0
    before = doc.read_bytes()
    one_line_error(rngcheck("report", str(doc), "--html", str(doc)), 2, "refusing to overwrite")
    assert doc.read_bytes() == before


def test_an_unwritable_output_is_refused_before_the_run(tmp_path):
    start = time.monotonic()
    result = run_args(tmp_path, "--junit", "/proc/rngcheck-junit.xml", backend=f"{FAULTS}:Slow", case="mapping")
    one_line_error(result, 2, "cannot write --junit /proc/rngcheck-junit.xml")
    assert time.monotonic() - start < 60


def test_a_write_failing_after_the_run_still_prints_the_verdict(tmp_path, monkeypatch, capsys):
    from rngcheck import cli
    from rngcheck.reports import junit

    def full_disk(document, path):
        raise cli.RngcheckError(f"cannot write {path}: No space left on device")
    monkeypatch.setattr(junit, "write", full_disk)
    code = cli.main(["run", "--backend", "numpy", "--case", "kat", "--junit", str(tmp_path / "j.xml"),
                     "--json", str(tmp_path / "r.json")])
    captured = capsys.readouterr()
    assert code == 2 and "rngcheck: PASS" in captured.out
    assert captured.err.strip().splitlines() == [f"rngcheck: error: cannot write {tmp_path / 'j.xml'}: "
                                                 f"No space left on device"]
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["verdict"] == "pass"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from rngcheck import jsonfile
    target = tmp_path / "junit.xml"
    target.write_text("<old/>")

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(jsonfile.os, "fsync", broken_fsync)
    with pytest.raises(jsonfile.RngcheckError, match="No space left"):
        jsonfile.atomic_write(target, "<new/>" * 1000)
    assert target.read_text() == "<old/>" and [p.name for p in tmp_path.iterdir()] == ["junit.xml"]


def test_a_second_writer_of_the_same_journal_is_refused(tmp_path):
    out = tmp_path / "r.json"
    first = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:HangsEveryCall",
                              "--case", "mapping", "--timeout", "600", "--json", str(out), "--quiet"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from rngcheck.results import journal as J
        journal = J.journal_path_for(out)
        wait_until(lambda: journal.exists() and '"backend"' in journal.read_text(), what="the first run's start")
        second = rngcheck("run", "--backend", "numpy", "--case", "kat", "--json", str(out))
        one_line_error(second, 2, "another rngcheck")   # its --json (locked first) or journal is being written
        assert '"spec":"numpy"' not in journal.read_text() and not out.exists()
        assert first.poll() is None  # the first run was not disturbed
    finally:
        first.kill()
        first.wait(timeout=60)


def test_resume_rewrites_every_output_and_an_interrupted_junit_says_so(tmp_path):
    out, junit_path, html_path = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "r.html"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:Slow",
                                "--case", "mapping", "--json", str(out), "--junit", str(junit_path),
                                "--html", str(html_path), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    from rngcheck.results import journal as J
    journal = J.journal_path_for(out)
    wait_until(lambda: journal.exists() and journal.read_text().count('"result"') >= 3, what="three results")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=120) == 130
    import xml.etree.ElementTree as ET
    interrupted = ET.parse(junit_path).getroot()
    assert interrupted.find(".//testcase[@name='run-complete']/error") is not None
    assert interrupted.find(".//property[@name='rngcheck.complete']").get("value") == "false"
    badge = '<span class="badge s-SUSPECT">incomplete</span>'
    assert badge in html_path.read_text()
    # the journal's --junit and --html are rewritten when trusted (tests/test_output_files.py: not otherwise)
    resumed = rngcheck("run", "--resume", str(journal), "--backend", f"{FAULTS}:Slow", "--trust-journal")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {journal} with {FAULTS}:Slow" in resumed.stderr
    final = ET.parse(junit_path).getroot()
    assert final.find(".//testcase[@name='run-complete']") is None
    assert int(final.get("tests")) == len(json.loads(out.read_text())["cases"])
    assert badge not in html_path.read_text()


# -- misleading verdicts ----------------------------------------------------------------------

@pytest.mark.parametrize("strides", ["0,0", "0,1", "1,1"])
def test_repro_of_an_aliasing_description_is_implementation_defined(strides):
    result = rngcheck("repro", "--backend", "numpy", "--state", "0,0,0,0,1,2", "--sizes", "2,3",
                      "--strides", strides)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "implementation-defined" in result.stdout and "key-words-swapped" not in result.stdout


def test_a_short_stream_s_verdict_is_incomplete(tmp_path):
    stream = tmp_path / "short.bin"
    stream.write_bytes(np.random.default_rng(1).integers(0, 1 << 32, 1 << 18, dtype=np.uint32).tobytes())
    out = tmp_path / "s.json"
    result = rngcheck("stats", "--input", str(stream), "--tier", "smoke", "--json", str(out))
    document = json.loads(out.read_text())
    assert document["complete"] is False and document["verdict"] == "INCOMPLETE"
    assert result.returncode == 2


@pytest.mark.parametrize("count", ["0", "-3"])
def test_stats_refuses_a_worker_count_below_one(count):
    one_line_error(rngcheck("stats", "--backend", "numpy", "--workers", count), 2, "--workers")


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


def test_bidi_and_zero_width_characters_in_names_are_shown_escaped(tmp_path):
    from rngcheck.reports import html
    from rngcheck.reports.terminal import printable
    from rngcheck.results import document as D
    doc = tmp_path / "a.json"
    assert run_args(tmp_path, "--json", str(doc)).returncode == 0
    data = json.loads(doc.read_text())
    evil = "numpy\u202eLIAF\u200b"
    data["backends"][0]["name"] = evil
    for r in data["results"]:
        r["backend"] = evil
    page = html.render([D.finish(data)])
    assert "\u202e" not in page and "\u200b" not in page and "\\u202e" in page
    assert "\u202e" not in printable(evil) and "\\u200b" in printable(evil)
    stats = {"p_display": "0.5\u202e1"}
    assert html.p_text(stats) == "0.5\\u202e1"
    from rngcheck.reports import junit
    for r in data["results"]:
        r["message"] = "refused: <b>\x1b[2J\u202eLIAF"
    xml = ET.tostring(junit.to_junit(D.finish(data)).getroot(), encoding="unicode")
    assert "\u202e" not in xml and "\x1b" not in xml and "\\u202e" in xml and "\\x1b" in xml and "<b>" not in xml


@pytest.mark.parametrize("record", [{"backend": {"name": 1}}, {"backend": {"name": "a"}},
                                    {"result": {"backend": "a", "case": 7}}, {"result": {"case": "x"}}])
def test_a_journal_record_of_the_wrong_shape_is_one_line_on_resume_and_report(tmp_path, record):
    path = _journal_with(tmp_path)
    with open(path, "a") as journal:
        journal.write(json.dumps(record) + "\n" + json.dumps({"result": {}}) + "\n")
    one_line_error(rngcheck("run", "--resume", str(path)), 2, "line 2")
    one_line_error(rngcheck("report", str(path)), 2, "line 2")
