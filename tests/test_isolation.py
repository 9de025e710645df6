"""A suite that survives the implementation it tests: crashes, hangs, garbage, kills, resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import sigint_as_a_terminal_sends_it
from rngcheck.results import document as D
from rngcheck.results import journal as J

TESTS = Path(__file__).parent
FAULTS = str(TESTS / "faults.py")
EXEC_CHILD = f"exec:{sys.executable} {TESTS / 'exec_child.py'}"
TRIGGER_CASE = "mapping/elements-7"


def rngcheck(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "rngcheck", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def run_mapping(backend, tmp_path, *extra):
    out = tmp_path / "result.json"
    result = rngcheck("run", "--backend", backend, "--case", "mapping", "--timeout", "4", "--json", str(out),
                      "--junit", str(tmp_path / "junit.xml"), *extra)
    return result, json.loads(out.read_text())


def by_case(document):
    return {r["case"]: r for r in document["results"]}


@pytest.mark.parametrize("backend, status, words", [
    (f"{FAULTS}:Segfaults", "crashed", "signal 11 (SIGSEGV)"),
    (f"{FAULTS}:Aborts", "crashed", "SIGABRT"),
    (f"{FAULTS}:Exits", "crashed", "exit code 7"),
    (f"{FAULTS}:SleepsForever", "timeout", "did not answer within 4 s"),
    (f"{FAULTS}:RaisesArbitrary", "error", "KeyError: 'cache miss in the driver'"),
    (f"{EXEC_CHILD} noise", "error", "noise on stdout"),
    (f"{EXEC_CHILD} exit-mid", "crashed", "exited mid-protocol"),
    (f"{EXEC_CHILD} short-buffer", "error", "returned a buffer of"),
    (f"{EXEC_CHILD} deaf", "crashed", "closed its output and was ended"),
    (f"{EXEC_CHILD} grandchild", "timeout", "did not answer within 4 s"),
    (f"{EXEC_CHILD} bad-reject", "error", "RJCT payload is not a JSON object"),
])
def test_a_fault_is_that_case_s_status_and_later_cases_still_run(tmp_path, backend, status, words):
    result, document = run_mapping(backend, tmp_path)
    assert result.returncode == 1, result.stderr
    results = by_case(document)
    assert results[TRIGGER_CASE]["status"] == status
    assert words in results[TRIGGER_CASE]["message"]
    later = [r for case, r in results.items() if case != TRIGGER_CASE]
    assert len(later) == len(document["cases"]) - 1
    assert all(r["status"] == "passed" for r in later), [(r["case"], r["message"]) for r in later
                                                        if r["status"] != "passed"]
    journal, _ = J.read(tmp_path / "result.journal.jsonl")
    assert len(journal["results"]) == len(document["results"]) and journal["complete"]
    assert (tmp_path / "junit.xml").is_file()
    assert "Traceback" not in result.stderr
    if "grandchild" in backend:  # what the child started went with it
        assert subprocess.run(["pgrep", "-f", "sleep 301"], capture_output=True).returncode == 1
    report = rngcheck("report", str(tmp_path / "result.json"), "--html", str(tmp_path / "report.html"))
    assert report.returncode == 1 and f'id="case-{TRIGGER_CASE}"' in (tmp_path / "report.html").read_text()


@pytest.mark.parametrize("kind", ["float-state", "short-state", "none-state", "text-state", "negative-state"])
def test_garbage_in_place_of_the_state_fails_that_case_only(tmp_path, kind):
    (tmp_path / "garbage.py").write_text(
        f"import sys; sys.path.insert(0, {str(TESTS)!r})\nfrom faults import ReturnsGarbage\n"
        f"def make():\n    return ReturnsGarbage({kind!r})\n")
    result, document = run_mapping(f"{tmp_path / 'garbage.py'}:make", tmp_path)
    assert result.returncode == 1
    results = by_case(document)
    assert results[TRIGGER_CASE]["status"] == "failed"
    assert results[TRIGGER_CASE]["diagnosis"]["id"] == "contract"
    assert sum(r["status"] == "passed" for r in results.values()) == len(results) - 1


def test_a_backend_printing_to_stdout_does_not_disturb_the_protocol(tmp_path):
    result, document = run_mapping(f"{FAULTS}:PrintsNoise", tmp_path)
    assert result.returncode == 0
    assert document["summary"]["verdict"] == "pass"


@pytest.mark.parametrize("mode, words", [("no-hello", "no handshake"), ("bad-version", "speaks protocol 99"),
                                         ("hello-list", "handshake is not a JSON object")])
def test_a_child_that_cannot_shake_hands_is_one_line_exit_2(mode, words):
    result = rngcheck("run", "--backend", f"{EXEC_CHILD} {mode}", "--case", "kat", "--timeout", "3")
    assert result.returncode == 2
    assert words in result.stderr and "Traceback" not in result.stderr


def test_a_worker_whose_backend_cannot_run_says_so_in_its_handshake(tmp_path):
    """The worker's HELO for a backend that cannot run is the documented one (docs/exec-protocol.md,
    the form rngcheck/backends/directml/bridge/dml_exec.c writes), byte for byte; the runner raises it as
    BackendUnavailable, and a spec that names nothing loadable as BackendSpecError."""
    import struct

    from rngcheck.backends.exec_backend import isolated
    from rngcheck.errors import BackendSpecError, BackendUnavailable
    (tmp_path / "absent.py").write_text(
        "from rngcheck.errors import BackendUnavailable\n"
        "class Absent:\n"
        "    def __init__(self):\n"
        "        raise BackendUnavailable('no such device here')\n"
        "    def random_generator(self, *args, **options):\n"
        "        pass\n")
    spec = f"{tmp_path / 'absent.py'}:Absent"
    worker = subprocess.run([sys.executable, "-m", "rngcheck.backends.worker", spec], stdin=subprocess.DEVNULL,
                            capture_output=True, timeout=120)
    assert worker.returncode == 2
    tag, length = struct.unpack("<4sI", worker.stdout[:8])
    assert tag == b"HELO" and length == len(worker.stdout) - 8
    assert worker.stdout[8:] == b'{"protocol": 1, "error": "no such device here", "unavailable": true}'
    with pytest.raises(BackendUnavailable) as caught:
        isolated(spec, timeout=60)
    assert str(caught.value) == "no such device here"
    with pytest.raises(BackendSpecError) as caught:
        isolated(f"{tmp_path / 'absent.py'}:Nothing", timeout=60)
    assert "Nothing" in str(caught.value) and not isinstance(caught.value, BackendUnavailable)


def test_exec_runs_no_shell():
    result = rngcheck("run", "--backend", "exec:echo hi; touch /tmp/rngcheck-shell-was-used", "--case", "kat",
                      "--timeout", "3")
    assert result.returncode == 2
    assert not Path("/tmp/rngcheck-shell-was-used").exists()


def wait_for_results(journal: Path, count: int, process, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count('"result"') >= count:
            return
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    raise AssertionError("no progress in the journal")


def test_sigkill_leaves_a_valid_journal_that_renders_and_resumes(tmp_path):
    out = tmp_path / "killed.json"
    journal = J.journal_path_for(out)
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:Slow",
                                "--case", "mapping", "--case", "kat", "--json", str(out), "--quiet"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for_results(journal, 5, process)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    document = D.load(journal)
    assert document["complete"] is False and document["summary"]["verdict"] == "incomplete"
    finished = len(document["results"])
    assert finished >= 5
    assert not out.exists()
    rendered = rngcheck("report", str(journal), "--html", str(tmp_path / "killed.html"))
    assert rendered.returncode == 1, rendered.stderr  # incomplete is not a pass
    assert "INCOMPLETE" in (tmp_path / "killed.html").read_text()
    resumed = rngcheck("run", "--resume", str(journal), "--backend", f"{FAULTS}:Slow")  # a file spec: named again
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = json.loads(out.read_text())
    assert final["complete"] and final["summary"]["verdict"] == "pass"
    cases = [r["case"] for r in final["results"]]
    assert len(cases) == len(set(cases)) == len(final["cases"]) > finished


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc (pid -> ppid)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(stat.parent.name)] = int(fields[1])
    return found


def _descendants(pid: int) -> list[int]:
    parents, found, todo = _parents(), [], [pid]
    while todo:
        parent = todo.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        todo += children
    return found


def _alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_cleanly_with_a_partial_report(tmp_path, signum):
    out = tmp_path / "partial.json"
    process = subprocess.Popen([sys.executable, "-m", "rngcheck", "run", "--backend", f"{FAULTS}:Slow",
                                "--case", "mapping", "--json", str(out), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_as_a_terminal_sends_it)
    wait_for_results(J.journal_path_for(out), 3, process)
    workers = _descendants(process.pid)   # this run's own (other tests run Slow workers at the same time)
    assert workers, "the run's backend worker was not found"
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    document = json.loads(out.read_text())
    assert document["complete"] is False and document["summary"]["verdict"] == "incomplete"
    assert 3 <= len(document["results"]) < len(document["cases"])
    assert not [pid for pid in workers if _alive(pid)], "a worker outlived the interrupted run"


def test_the_c_example_passes_the_full_profile_through_exec(tmp_path):
    binary = tmp_path / "philox_exec"
    source = TESTS.parent / "examples" / "exec-c" / "philox_exec.c"
    build = subprocess.run(["gcc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(source)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    result = rngcheck("run", "--backend", f"exec:{binary}", "--profile", "full", "--json", str(tmp_path / "c.json"))
    assert result.returncode == 0, result.stdout[-3000:]
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["backends"][0]["validates"] is True
    assert document["summary"]["counts"]["passed"] >= 115
    validation = [r for r in document["results"] if r["case"].startswith("validation/")]
    assert validation and all(r["status"] == "passed" for r in validation)


@pytest.mark.parametrize("isolation", [[], ["--in-process"]])
def test_not_applicable_cases_are_n_a_with_the_reason(tmp_path, isolation):
    """rngcheck.NotApplicable (over the exec protocol: FAIL with not_applicable) is neither a pass
    nor a failure; every other case is still judged."""
    target = tmp_path / "r.json"
    done = rngcheck("run", "--backend", f"{FAULTS}:LowCounterOnly", "--case", "counter", "--case", "kat",
                    "--json", str(target), *isolation)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(target.read_text())["results"]
    skipped = [r for r in results if r["status"] == "n/a"]
    assert skipped and all(r["message"].startswith("not applicable: counter words 2, 3 =") for r in skipped)
    assert any(r["status"] == "passed" for r in results)
    assert {r["status"] for r in results} <= {"passed", "n/a"}
