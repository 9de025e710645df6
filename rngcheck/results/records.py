"""Typed records of the result document: dataclasses inside, JSON only at the file edge.

``to_json()`` gives the document's dict (the field order of the schema,
schemas/rngcheck-result.schema.json); ``from_json(value)`` reads one back, tolerant of a
damaged document: a missing field takes its default and a value of the wrong type is coerced
(or dropped), so a reader never fails on one bad field. The writer (results.document) and the
results table (results.tables) go through these records.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from .statuses import read_status


def _str(value: object, default: str = "") -> str:
    return default if value is None else str(value)


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def as_list(value: object) -> list[Any]:
    """A document's list (a copy), or [] where it holds something else."""
    return list(value) if isinstance(value, list) else []


def as_dict(value: object) -> dict[str, Any]:
    """A document's object (a copy), or {} where it holds something else."""
    return dict(value) if isinstance(value, dict) else {}


def _float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return number


def as_int(value: Any, default: int = 0) -> int:
    """A document's integer, or ``default`` where it holds something else."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return default


@dataclass
class CaseRecord:
    id: str
    category: str
    description: str
    rule: str
    source: str
    procedure: str
    note: str
    inputs: dict[str, Any]
    layer: str = ""     # what a backend that cannot run the case lacks (version 2; "" before)
    size: int = 0       # how many values the call produces (version 2; 0: not recorded)
    part: str = ""      # which of its axis's computations it exercises (rngcheck.results.groups rule 6)

    @classmethod
    def of(cls, case: Any) -> CaseRecord:  # a rngcheck.conformance.case.Case (conformance sits above results)
        """The record of a conformance case: its header, and its inputs as its axis records them."""
        return cls(case.id, case.category, case.description, case.rule, case.source, case.procedure, case.note,
                   dict(case.inputs()), case.layer, case.size(), case.part())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: object) -> CaseRecord:
        found = as_dict(value)
        return cls(id=_str(found.get("id")), category=_str(found.get("category")),
                   description=_str(found.get("description")), rule=_str(found.get("rule")),
                   source=_str(found.get("source")), procedure=_str(found.get("procedure")),
                   note=_str(found.get("note")), inputs=as_dict(found.get("inputs")),
                   layer=_str(found.get("layer")), size=as_int(found.get("size")), part=_str(found.get("part")))


@dataclass
class Verdict:
    """What the check of one case found: the fields a result shares with
    rngcheck.conformance.outcome.Outcome (which adds the execution it judged)."""

    status: str
    message: str = ""
    diagnosis: dict[str, Any] | None = None
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    mismatch_count: int = 0
    observations: list[str] = field(default_factory=list)
    output_sha256: str | None = None
    returned_state: list[Any] | None = None
    detail: str = ""
    reproduce: dict[str, Any] | None = None
    # The ``rngcheck repro`` arguments (after --backend SPEC) that rerun the call, as its axis says them.
    # Never in the result document: its reproduce_command is made from them.
    repro_arguments: list[str] | None = None
    # A numbers case (rngcheck.conformance.conventions): the request, the bound and its why, the ULP
    # histogram, the worst element and the first numbers past the bound.
    numbers: dict[str, Any] | None = None


RESULT_ORDER = ("backend", "case", "status", "required", "seconds", "message", "diagnosis", "mismatches",
                "mismatch_count", "observations", "output_sha256", "returned_state", "reproduce",
                "reproduce_command", "detail", "numbers")


@dataclass
class ResultRecord(Verdict):
    """One case on one backend: the verdict, and where and how long."""

    backend: str = ""
    case: str = ""
    required: bool = True
    seconds: float = 0.0
    reproduce_command: str | None = None

    @classmethod
    def of(cls, verdict: Verdict, **where: Any) -> ResultRecord:
        return cls(**{f.name: getattr(verdict, f.name) for f in fields(Verdict)}, **where)

    @property
    def diagnosis_id(self) -> str:
        return _str((self.diagnosis or {}).get("id"))

    def to_json(self) -> dict[str, Any]:
        value = asdict(self)
        return {key: value[key] for key in RESULT_ORDER}

    @classmethod
    def from_json(cls, found: object) -> ResultRecord:
        value = as_dict(found)
        status = value.get("status")
        diagnosis, reproduce = value.get("diagnosis"), value.get("reproduce")
        returned = value.get("returned_state")
        return cls(
            backend=_str(value.get("backend")), case=_str(value.get("case")),
            status=read_status(status, value.get("message")), required=value.get("required") is not False,
            seconds=_float(value.get("seconds") or 0.0), message=_str(value.get("message")),
            diagnosis=dict(diagnosis) if isinstance(diagnosis, dict) else None,
            mismatches=[m for m in as_list(value.get("mismatches")) if isinstance(m, dict)],
            mismatch_count=as_int(value.get("mismatch_count")),
            observations=[_str(o) for o in as_list(value.get("observations"))],
            output_sha256=_optional_str(value.get("output_sha256")),
            returned_state=list(returned) if isinstance(returned, list) else None,
            reproduce=dict(reproduce) if isinstance(reproduce, dict) else None,
            reproduce_command=_optional_str(value.get("reproduce_command")), detail=_str(value.get("detail")),
            numbers=dict(value["numbers"]) if isinstance(value.get("numbers"), dict) else None)
