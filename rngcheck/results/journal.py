"""The results journal: JSON Lines written case by case, so a killed run loses nothing.

Line 1: {"journal": "rngcheck-journal", "version": 1, "document": <result document without
results>, "run": {profile, seed, select, backends: [spec], timeout}}. Then one line per event:
{"backend": <backend entry>} when a backend starts, {"result": <result entry>} per case,
{"end": <summary>} when the run finished. Each line is flushed as it is written; a last
line cut by a kill is ignored when the journal is read.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from ..errors import RngcheckError

JOURNAL = "rngcheck-journal"
JOURNAL_VERSION = 1


def journal_path_for(json_path) -> Path:
    path = Path(json_path)
    return path.with_name(path.stem + ".journal.jsonl")


def json_path_for(journal_path) -> Path:
    path = Path(journal_path)
    name = path.name[:-len(".journal.jsonl")] if path.name.endswith(".journal.jsonl") else path.stem
    return path.with_name(name + ".json")


class Journal:
    def __init__(self, path, *, append: bool = False):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if append:
                drop_cut_line(self.path)
            self.file = open(self.path, "a" if append else "w", encoding="utf-8")
        except OSError as error:
            raise RngcheckError(f"cannot write the journal {self.path}: {error.strerror or error}") from None

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def start(self, document: dict, run: dict) -> None:
        header = copy.deepcopy(document)
        header["results"], header["backends"] = [], []
        self.write({"journal": JOURNAL, "version": JOURNAL_VERSION, "document": header, "run": run})

    def close(self) -> None:
        self.file.close()


def drop_cut_line(path: Path) -> None:
    """Cut the file back to its last complete line (a kill may have left half a line)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as file:
            file.truncate(data.rfind(b"\n") + 1)


def is_journal(path) -> bool:
    try:
        with open(path, encoding="utf-8") as file:
            first = file.readline()
        return json.loads(first).get("journal") == JOURNAL
    except (OSError, ValueError, AttributeError, UnicodeDecodeError):
        return False


def read(path) -> tuple[dict, dict]:
    """(document, run settings) rebuilt from a journal; complete only if it has its end line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise RngcheckError(f"cannot read journal {path}: {error.strerror}") from None
    records = []
    for number, line in enumerate(lines):
        try:
            records.append(json.loads(line))
        except ValueError:
            if number == len(lines) - 1:
                break  # the line a kill cut short
            raise RngcheckError(f"{path}: line {number + 1} is not JSON") from None
    if not records or not isinstance(records[0], dict) or records[0].get("journal") != JOURNAL:
        raise RngcheckError(f"{path}: not an rngcheck journal")
    if records[0].get("version") != JOURNAL_VERSION:
        raise RngcheckError(f"{path}: journal version {records[0].get('version')!r} is not supported")
    document = records[0].get("document")
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise RngcheckError(f"{path}: a damaged journal (its header carries no result document)")
    document["backends"], document["results"] = [], []
    ended = False
    for number, record in enumerate(records[1:], 2):
        if not isinstance(record, dict):
            raise RngcheckError(f"{path}: line {number} is not a journal record")
        if isinstance(record.get("backend"), dict):
            document["backends"].append(record["backend"])
        elif isinstance(record.get("result"), dict):
            document["results"].append(record["result"])
        elif "end" in record:
            ended = True
        else:
            raise RngcheckError(f"{path}: line {number} is not a journal record")
    document["complete"] = ended
    run = records[0].get("run")
    return document, run if isinstance(run, dict) else {}
