"""The results journal: JSON Lines written case by case, so a killed run loses nothing.

Line 1: {"journal": "rngcheck-journal", "version": 1, "document": <result document without
results>, "run": {profile, seed, select, keyword, backends: [spec], timeout, ...}}. Then one line per event:
{"backend": <backend entry>} when a backend starts, {"result": <result entry>} per case,
{"end": <summary>} when the run finished. Each line is flushed as it is written; a last
line cut by a kill is ignored when the journal is read.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
from pathlib import Path
from typing import Any, NoReturn

from ..errors import RngcheckError
from ..jsonfile import parse_json, read_bytes_limited
from ..outputs import fitting_name

JOURNAL = "rngcheck-journal"
JOURNAL_VERSION = 1


def journal_path_for(json_path: str | Path) -> Path:
    """``NAME.journal.jsonl`` beside ``NAME.json``; for a name too long for that, a shortened one
    (``rngcheck.outputs.fitting_name``: the name's start, ``~`` and a hash). Only for a --json that
    is a regular file or new: a device or a pipe gets no journal beside it (the run says so)."""
    path = Path(json_path)
    return path.with_name(fitting_name(path.parent, path.stem, suffix=".journal.jsonl"))


def json_path_for(journal_path: str | Path) -> Path:
    path = Path(journal_path)
    name = path.name[:-len(".journal.jsonl")] if path.name.endswith(".journal.jsonl") else path.stem
    return path.with_name(name + ".json")


class Journal:
    def __init__(self, path: str | Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self.append, self.started = append, False
        self.existed = self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")
        except OSError as error:
            raise RngcheckError(f"cannot write the journal {self.path}: {error.strerror or error}") from None
        try:
            # One writer per journal: a second run writing the same --json would interleave lines.
            fcntl.flock(self.file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.file.close()
            raise RngcheckError(f"{self.path}: another rngcheck run is writing this journal (it is locked); "
                                f"give this run another --json or --journal") from None
        if append:
            try:
                drop_cut_line(self.path)
            except OSError as error:
                self.file.close()
                raise RngcheckError(f"cannot write the journal {self.path}: {error.strerror or error}") from None

    def write(self, record: dict[str, Any]) -> None:
        self.file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def start(self, document: dict[str, Any], run: dict[str, Any]) -> None:
        """The header line. A previous journal at this path is emptied only now, once the run
        has its backends: a run that ends before (a backend that does not load) loses nothing."""
        header = copy.deepcopy(document)
        header["results"], header["backends"] = [], []
        self.file.truncate(0)
        self.started = True
        self.write({"journal": JOURNAL, "version": JOURNAL_VERSION, "document": header, "run": run})

    def close(self) -> None:
        """Close; a journal this run created and never started (it ended before its first line)
        is removed, so a refused run leaves no empty file behind."""
        if not (self.started or self.append or self.existed):
            with contextlib.suppress(OSError):
                if self.path.stat().st_size == 0:
                    self.path.unlink()
        self.file.close()


def drop_cut_line(path: Path) -> None:
    """Cut the file back to its last line that is JSON: a kill may have left half a line, and a
    last line that is not JSON (``read`` ignores it) would otherwise sit in the middle of the
    journal once a resumed run appends after it, and no reader would take the journal any more."""
    data = path.read_bytes()
    keep = len(data)
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
    start = data.rfind(b"\n", 0, max(keep - 1, 0)) + 1
    if keep > start:  # the last whole line kept: is it JSON?
        try:
            json.loads(data[start:keep].decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            keep = start if start > 0 else keep   # (a header that is not JSON: read refuses the journal)
    if keep != len(data):
        with open(path, "r+b") as file:
            file.truncate(keep)


# The fields a resumed run and a report read from each record, and their types.
BACKEND_FIELDS = {"name": str, "spec": str}
RESULT_FIELDS = {"backend": str, "case": str, "status": str, "required": bool, "message": str,
                 "output_sha256": (str, type(None))}


def _check_fields(path: str | Path, number: int, record: dict[str, Any], fields: dict[str, Any]) -> None:
    for field, kind in fields.items():
        if not isinstance(record.get(field), kind):
            raise RngcheckError(f"{path}: line {number}: {field} is {str(record.get(field))[:40]!r}, not what a run "
                                f"writes")


def is_journal(path: str | Path) -> bool:
    try:
        with open(path, "rb") as file:
            first = file.readline(1 << 20)
        return bool(json.loads(first.decode("utf-8")).get("journal") == JOURNAL)
    except (OSError, ValueError, AttributeError, UnicodeDecodeError, RecursionError):
        return False


def read(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(document, run settings) rebuilt from a journal; complete only if it has its end line."""
    path = Path(path)
    lines = read_bytes_limited(path, what="journal").split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    records: list[Any] = []
    for number, line in enumerate(lines):
        try:
            records.append(parse_json(line, f"{path}: line {number + 1}", what="journal line"))
        except RngcheckError:
            if number == len(lines) - 1 and number > 0:
                break  # the line a kill cut short
            raise
    if not records or not isinstance(records[0], dict) or records[0].get("journal") != JOURNAL:
        raise RngcheckError(f"{path}: not an rngcheck journal")
    if records[0].get("version") != JOURNAL_VERSION:
        raise RngcheckError(f"{path}: journal version {records[0].get('version')!r} is not supported")
    document = records[0].get("document")
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise RngcheckError(f"{path}: a damaged journal (its header carries no result document)")
    if not all(isinstance(case, dict) and isinstance(case.get("id"), str) for case in document["cases"]) \
            or not isinstance(document.get("command", []), list):
        raise RngcheckError(f"{path}: a damaged journal (its header's cases or command are not what a run writes)")
    document["backends"], document["results"] = [], []
    ended = False
    for number, record in enumerate(records[1:], 2):
        if not isinstance(record, dict):
            raise RngcheckError(f"{path}: line {number} is not a journal record")
        if isinstance(record.get("backend"), dict):
            _check_fields(path, number, record["backend"], BACKEND_FIELDS)
            document["backends"].append(record["backend"])
        elif isinstance(record.get("result"), dict):
            _check_fields(path, number, record["result"], RESULT_FIELDS)
            document["results"].append(record["result"])
        elif "end" in record:
            ended = True
        else:
            raise RngcheckError(f"{path}: line {number} is not a journal record")
    document["complete"] = ended
    run = records[0].get("run")
    return document, run if isinstance(run, dict) else {}


PROFILES = ("quick", "full", "strict", "huge")
STATS_TIERS = ("smoke", "standard", "deep")
# The --case patterns a journal's header may carry: each pattern is tried against every case of the
# profile (about 0.3 ms a pattern over the quick profile's cases, 1.2 s at this cap), and past 32,768
# patterns fnmatch's cache no longer holds them and selecting the cases takes hours.
MAX_SELECT = 4096


def run_settings(path: str | Path, run: dict[str, Any]) -> dict[str, Any]:
    """The header's run settings, every field checked (a journal is a data file that people pass
    around: a field of the wrong type is one line naming it, not a traceback later)."""
    where = f"{path}: the journal's run settings"

    def bad(field: str, wanted: str) -> NoReturn:
        raise RngcheckError(f"{where}: {field} is {str(run.get(field))[:60]!r}, not {wanted}")

    settings = dict(run)
    if run.get("profile") not in PROFILES:
        bad("profile", "one of " + ", ".join(PROFILES))
    if type(run.get("seed")) is not int:
        bad("seed", "an integer")
    for field in ("select", "backends"):
        value = run.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            bad(field, "a list of strings")
    if len(run.get("select", [])) > MAX_SELECT:
        raise RngcheckError(f"{where}: select holds {len(run['select'])} --case patterns, more than a journal "
                            f"may carry ({MAX_SELECT})")
    if not run.get("backends"):
        bad("backends", "a non-empty list of backend specs")
    if run.get("keyword") is not None and not (isinstance(run["keyword"], str) and run["keyword"]):
        bad("keyword", "a -k expression or null")
    timeout = run.get("timeout")
    if (type(timeout) is not int and type(timeout) is not float) or not 0 < timeout < float("inf"):
        bad("timeout", "a positive number of seconds")
    if run.get("stats") is not None and run.get("stats") not in STATS_TIERS:
        bad("stats", "one of " + ", ".join(STATS_TIERS))
    restarts = run.get("max_worker_restart", 3)
    if type(restarts) is not int or restarts < 1:
        bad("max_worker_restart", "a positive integer")
    outputs = run.get("outputs", {})
    if not isinstance(outputs, dict) or not all(
            key in ("junit", "html") and isinstance(name, str) and name and "/" not in name and "\\" not in name
            and name not in (".", "..") for key, name in outputs.items()):
        bad("outputs", "file names (beside the journal) for junit and html")
    settings.setdefault("select", [])
    settings.setdefault("keyword", None)
    settings["max_worker_restart"] = restarts
    settings["outputs"] = outputs
    return settings
