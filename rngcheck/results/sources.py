"""Reading documents: result documents, stats documents and results journals, checked and labelled.

    sources_of(["a.json", "run.journal.jsonl", stats_dict]) -> [Source, ...]

A document of a newer schema version, not JSON, or not an rngcheck document is refused with
one line (RngcheckError). A journal without its end line, an interrupted run (``complete``
false), or the same run given twice are accepted and labelled: ``Source.problems`` says, in
words, why what it holds is incomplete; ``Source.notes`` says what else a reader should know.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import RngcheckError
from ..jsonfile import read_json
from . import document as D
from . import journal, nist_document

STATS_SCHEMA = "rngcheck-stats"
STATS_SCHEMA_VERSION = 1     # what stats.battery writes


@dataclass
class Source:
    """One input document: a result document (possibly rebuilt from a journal) or a stats document."""

    kind: str                 # "result" | "stats"
    doc: dict[str, Any]
    name: str = ""            # the file it came from, or "document N"
    problems: list[str] = field(default_factory=list)   # why the report is incomplete, in words
    notes: list[str] = field(default_factory=list)      # labels that do not make it incomplete

    @property
    def complete(self) -> bool:
        return not self.problems


def _version_check(doc: dict[str, Any], schema: str, supported: int, where: str) -> None:
    version = doc.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RngcheckError(f"{where}: {schema} document without a valid schema_version ({version!r})")
    if version > supported:
        raise RngcheckError(f"{where}: {schema} schema_version {version} is newer than this rngcheck reads "
                            f"({supported}); upgrade rngcheck (this is {__version__})")


def classify(doc: object, where: str = "document") -> Source:
    """A parsed document as a Source (raises RngcheckError with one line)."""
    if not isinstance(doc, dict):
        raise RngcheckError(f"{where}: not an rngcheck result or stats document (a JSON {type(doc).__name__})")
    schema = doc.get("schema")
    if schema == D.SCHEMA:
        _version_check(doc, schema, D.SCHEMA_VERSION, where)
        source = Source("result", D.upgraded(doc), where)
        if doc.get("complete") is False or doc.get("interrupted"):
            source.problems.append("the run was interrupted before every case ran")
        source.problems += D.result_problems(doc, where)  # counted: a document's "complete" is not trusted
        return source
    if schema == STATS_SCHEMA:
        _version_check(doc, schema, STATS_SCHEMA_VERSION, where)
        source = Source("stats", doc, where)
        if doc.get("complete") is False:
            message = doc.get("message")
            source.problems.append(" ".join(str(message).split())[:500] if message
                                   else "the stream ended before the tier's size")
        return source
    if schema == nist_document.SCHEMA:  # rngcheck nist --json: shown as a statistics section
        _version_check(doc, schema, nist_document.SCHEMA_VERSION, where)
        return Source("stats", nist_document.as_stats_document(doc), where)
    raise RngcheckError(f"{where}: not an rngcheck result or stats document (schema {schema!r})")


def read(path: str | Path) -> Source:
    """A result document, stats document or journal from a file (raises RngcheckError, one line)."""
    path = Path(path)
    if path.is_file() and journal.is_journal(path):
        return _from_journal(path)
    return classify(read_json(path, what="document"), str(path))


def _from_journal(path: Path) -> Source:
    """The result document a run's journal holds (``results.journal.read``), marked
    incomplete when the run did not write its end line."""
    document, _ = journal.read(path)   # a damaged journal: RngcheckError, one line
    source = classify(document, str(path))
    if not document.get("complete"):
        results = document.get("results")
        source.problems = [p for p in source.problems if "interrupted" not in p]
        source.problems.append(f"a journal of a run that did not finish: "
                               f"{len(results) if isinstance(results, list) else 0} results recorded")
        if _last_line_cut(path):
            source.problems.append("the journal's last line was cut off (the runner was stopped while writing it)")
    return source


def _last_line_cut(path: Path) -> bool:
    """Whether the journal's last line is not JSON (``journal.read`` ignores it: a kill cut it short)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        json.loads(lines[-1])
    except (OSError, UnicodeDecodeError, IndexError):
        return False
    except ValueError:
        return True
    return False


def run_key(doc: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """What tells one run from another: when it was made, by which command, and its results.
    The same run given twice (a document and its journal, or one file twice) has the same key."""
    listed = doc.get("results")
    results = listed if isinstance(listed, list) else []
    outcomes = [(r.get("backend"), r.get("case"), r.get("status"), r.get("output_sha256"))
                for r in results if isinstance(r, dict)]
    return (str(doc.get("created")), json.dumps(doc.get("command"), sort_keys=True), str(doc.get("seed")),
            str(doc.get("profile")), json.dumps(outcomes, default=str))


def sources_of(documents: Iterable[object], *, dedupe: bool = True) -> list[Source]:
    """Sources from in-memory documents (dicts), paths, or Sources; stats documents embedded in a
    result document (``run --stats``) come along. The same run given twice is kept once, with a
    note naming the copy left out (``dedupe``); result documents of other rngcheck versions or
    schema versions than the rest are labelled in ``notes``."""
    out: list[Source] = []
    seen: dict[tuple[str, str, str, str, str], Source] = {}
    for number, item in enumerate(documents, 1):
        if isinstance(item, Source):
            source = item
        elif isinstance(item, (str, Path)):
            source = read(item)
        else:
            source = classify(item, f"document {number}")
        if dedupe and source.kind == "result":
            key = run_key(source.doc)
            if key in seen:
                seen[key].notes.append(f"the same run was also given as {source.name}; it is shown once")
                continue
            seen[key] = source
        out.append(source)
        embedded = source.doc.get("stats") if source.kind == "result" else None
        for index, stats_doc in enumerate(embedded if isinstance(embedded, list) else []):
            out.append(classify(stats_doc, f"{source.name or number}, stats {index + 1}"))  # run --stats
    results = [s for s in out if s.kind == "result"]
    for what, member in (("rngcheck", "rngcheck_version"), ("schema version", "schema_version")):
        values = {str(s.doc.get(member)) for s in results}
        if len(values) > 1:
            for s in results:
                s.notes.append(f"written by {what} {s.doc.get(member)} (the runs compared differ in {what})")
    return out
