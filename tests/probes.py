"""A hostile user's tools, shared by the tests of what rngcheck survives: run the command, wait for a
condition, check a one-line error, find processes left behind, make a journal or a fault backend file,
edit a copy of a document. Each test file is named by its subject (process ends, journal trust, output
files, hostile documents, resource bounds, verdict trust, command-line values)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

TESTS = Path(__file__).parent
FAULTS = str(TESTS / "faults.py")
FAULTS_RESOURCES = str(TESTS / "faults_resources.py")
EXEC_CHILD = [sys.executable, str(TESTS / "exec_child.py")]
TRIGGER_CASE = "mapping/elements-7"

HOSTILE = ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1)", "\uff1d1+1", "a\x1b[31mb", "n\x00ul",
           "rev\u202eersed", "zero\u200bwidth"]

INVISIBLE = "imp\u202el\u200b\x1b\x00"

NOT_APPLICABLE_BACKEND = """
from rngcheck.backends.contract import Backend
from rngcheck.errors import NotApplicable


class Backend(Backend):
    name = "driver-update"
    validates = True

    def random_generator(self, state, sizes, strides, buffer, **kw):
        raise NotApplicable("this driver supports nothing any more")
"""


def rngcheck(*args, timeout=300, env=None, **kw):
    """The command, from any working directory (this checkout's package first on the path)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS.parent)] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, "-m", "rngcheck", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)


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


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def run_args(tmp_path, *extra, backend="numpy", case="kat"):
    return rngcheck("run", "--backend", backend, "--case", case, *extra)


def _hostile_files(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    binary_journal = tmp_path / "bad.journal.jsonl"
    header = json.dumps({"journal": "rngcheck-journal", "version": 1, "document": {"cases": []},
                         "run": {"profile": "quick"}})
    binary_journal.write_bytes(header.encode() + b"\n\xff\xfe not utf-8\n{}\n")
    return {"deep": str(deep), "zero": "/dev/zero", "urandom": "/dev/urandom", "journal": str(binary_journal)}


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


def backend_file(tmp_path, cls: str) -> str:
    """A fault backend of tests/faults.py as a file spec unique to this test."""
    path = tmp_path / f"fault_{cls.lower()}.py"
    path.write_text(f"import sys; sys.path.insert(0, {str(TESTS)!r})\nfrom faults import {cls} as Backend\n")
    return f"{path}:Backend"


def edited_copy(source: Path, target: Path, edit) -> Path:
    document = json.loads(source.read_text())
    document["created"] = "2001-01-01T00:00:00+00:00"   # another run, not the same one given twice
    edit(document)
    target.write_text(json.dumps(document))
    return target


def _checkpoint(tmp_path):
    from rngcheck.stats.checkpoint import Checkpoint
    directory = tmp_path / "ck"
    with Checkpoint(directory, {"run": 1}) as checkpoint:
        checkpoint.save(0, [{"n": 1}])
    return directory


def _living(pattern: str) -> list[int]:
    """Processes whose command line holds ``pattern``, zombies left out."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if pattern in command and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found
