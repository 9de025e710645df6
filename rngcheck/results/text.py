"""One way to say an outcome: the mismatch line, the failure text and the properties of a result.

The terminal summary (reports.terminal), the JUnit file (reports.junit), the HTML report's
mismatch table (reports.html) and the pytest test (conformance.test_conformance) all say a
result through these functions, so a wrong element reads the same wherever it is shown:

  element 5 (1, 1) at offset 9: expected 0x1b5e3c2a, got 0x0e6cd0f2 (counter 0x...01, lane 1)

and a wrong answer's anatomy reads the same too (anatomy_lines: "anatomy: ..." lines).

A result here is a result document's result (a dict: rngcheck.results.records.RESULT_ORDER);
its mismatches are rows {index, coordinates, offset, expected, actual, philox_counter, lane}.
A damaged document (a field missing or of the wrong type) is said too: "?" stands for what is
missing; nothing here raises on a document's content.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .statuses import PASSED, effective

MISMATCH_FIELDS = ("index", "coordinates", "offset", "expected", "actual", "philox_counter", "lane")
UNKNOWN = "?"


def printable(text: object) -> str:
    """Backend text on one line with control characters made visible."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"
                   if ord(c) < 0x10000 else f"\\U{ord(c):08x}" for c in str(text))


# Controls, and the invisible format characters: bidirectional overrides, embeddings and isolates
# (a name could render rngcheck's own verdict reversed), zero-width spaces and joiners, the BOM and
# the soft hyphen (two backends could look identical), and the noncharacters U+FFFE and U+FFFF (a
# byte-order mark read backwards: no text holds them).
_FORMAT = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ufffe\uffff"
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_FORMAT}]|[\\ud800-\\udfff]")


def _escape_control(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return "\ufffd"
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 and char != "\u00ad" else f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """Backend text that may span lines (the HTML page, the markdown summary): control characters
    other than newline and tab shown as escapes ("\\x1b"), and the invisible format characters too
    ("\\u202e"), so a backend's NUL, terminal escape, bidirectional override or zero-width space
    cannot hide, reverse or restyle anything (a lone surrogate, which UTF-8 cannot encode, becomes
    U+FFFD). :func:`printable` is the one-line form (the terminal)."""
    return _CONTROL.sub(_escape_control, text)


def shown(value: object) -> object:
    """Every value a page template prints (Jinja2's ``finalize``): text through :func:`visible`;
    markup rngcheck made itself (the figures) and numbers as they are."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return visible(value)
    return value


def _or_unknown(value: object) -> str:
    return UNKNOWN if value is None else str(value)


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def mismatch_fields(mismatch: object) -> dict[str, str]:
    """The fields of one mismatch row as text; coordinates as a tuple, (d0, d1, ...)."""
    row = _dict(mismatch)
    fields = {key: UNKNOWN if row.get(key) is None else str(row[key]) for key in MISMATCH_FIELDS}
    coordinates = row.get("coordinates")
    if isinstance(coordinates, (list, tuple)):
        fields["coordinates"] = "(" + ", ".join(UNKNOWN if c is None else str(c) for c in coordinates) + ")"
    return fields


def mismatch_line(mismatch: object) -> str:
    """One wrong element: where it is (logical index, coordinates, buffer offset), the word
    expected and the word got, and the Philox counter and lane that made the expected word."""
    f = mismatch_fields(mismatch)
    return (f"element {f['index']} {f['coordinates']} at offset {f['offset']}: expected {f['expected']}, "
            f"got {f['actual']} (counter {f['philox_counter']}, lane {f['lane']})")


def diagnosis_line(diagnosis: object) -> str:
    """``diagnosis: ID: SUMMARY``, or "" when there is no diagnosis."""
    if not isinstance(diagnosis, dict):
        return ""
    return f"diagnosis: {_or_unknown(diagnosis.get('id'))}: {diagnosis.get('summary') or ''}".rstrip()


def anatomy_lines(diagnosis: object, limit: int = 4) -> list[str]:
    """A wrong answer's anatomy (rngcheck.conformance.directml.anatomy) in a few lines: ``anatomy: FINDING``
    (provenance, bits, state; at most ``limit``), ``indistinct: ...`` where other classes give the same
    output on the case, and for a changed answer ``repeated: ...``; the
    family a diagnosis names carries its parameters in its summary. [] without either."""
    found = _dict(diagnosis)
    findings = _dict(found.get("anatomy")).get("findings")
    lines = [f"anatomy: {f}" for f in (findings if isinstance(findings, list) else [])[:limit]]
    if found.get("indistinct"):   # the chain's search (issue 40): other classes give the same output here
        lines.append(f"indistinct: {str(found['indistinct'])[:500]}")
    repeats = _dict(found.get("repeats"))
    if repeats:
        difference = _dict(repeats.get("first_difference"))
        found_values = difference.get("values")
        values: list[Any] = found_values if isinstance(found_values, list) else []
        first = (f"; first difference at element {difference.get('index', UNKNOWN)}: "
                 f"{' then '.join(str(v) for v in values)} (expected {difference.get('expected', UNKNOWN)})"
                 if difference else "")
        lines.append(f"repeated: {repeats.get('executions', UNKNOWN)} executions of the same description, "
                     f"{repeats.get('right', UNKNOWN)} right, {repeats.get('distinct_outputs', UNKNOWN)} "
                     f"different outputs{first}")
    return lines


def search_lines(diagnosis: object, width: int = 240) -> list[str]:
    """What a diagnosis's search says beyond its id: ``step: STEP (PARAMETERS)``, the spec's step a
    named change is in and its parameters, and ``inference: ...``, what the search inferred where no
    change reproduced the case. [] without either."""
    found = _dict(diagnosis)
    parameters = found.get("parameters")
    said = ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in parameters.items()) \
        if isinstance(parameters, dict) else ""
    said = said if len(said) <= width else said[:width - 3] + "..."
    lines = []
    if found.get("step"):
        lines.append(f"step: {found['step']}" + (f" ({said})" if said else ""))
    if found.get("inference"):
        lines.append(f"inference: {found['inference']}")
    return lines


def rule_line(case: object) -> str:
    """``rule: RULE (SOURCE)`` of a result document's case entry, or "" without one."""
    case = _dict(case)
    return f"rule: {case.get('rule', '')} ({case.get('source', '')})" if case else ""


def reproduce_line(result: object) -> str:
    command = _dict(result).get("reproduce_command")
    return f"reproduce: {command}" if command else ""


def numbers_lines(result: object, rows: int | None = None) -> list[str]:
    """A numbers result: its bound, ULP histogram, worst element and first numbers past the bound."""
    found = _dict(_dict(result).get("numbers"))
    if not found:
        return []
    histogram = ", ".join(f"{k}: {v}" for k, v in _dict(found.get("histogram")).items())
    lines = [f"bound: {found.get('bound_ulps')} ULP ({found.get('bound')}); ULP histogram {histogram}"]
    found_rows = found.get("mismatches")
    listed = found_rows if isinstance(found_rows, list) else []
    for row in listed[:rows]:
        row = _dict(row)
        lines.append(f"number {row.get('index')}: expected {row.get('expected')}, got {row.get('actual')} "
                     f"({row.get('ulps')} ULP)")
    return lines


def detail_lines(result: object, case: object = None, mismatches: int | None = None,
                 diagnosis: bool = True) -> list[str]:
    """What follows a result's message: its diagnosis (unless ``diagnosis`` is False: the terminal
    tags its header line with the id instead), its mismatch lines (the first ``mismatches`` of
    them, or all the document lists), the case's rule (when ``case`` is given), the command that
    reproduces it."""
    result = _dict(result)
    rows = result.get("mismatches")
    rows = rows if isinstance(rows, list) else []
    return [line for line in [
        diagnosis_line(result.get("diagnosis")) if diagnosis else "",
        *search_lines(result.get("diagnosis")),
        *anatomy_lines(result.get("diagnosis")),
        *(mismatch_line(m) for m in rows[:mismatches]),
        *numbers_lines(result, mismatches),
        rule_line(case),
        reproduce_line(result),
    ] if line]


def failure_lines(result: object, case: object = None, mismatches: int | None = None) -> list[str]:
    """The text of a failing result: its message, then :func:`detail_lines`."""
    message = _dict(result).get("message")
    return ([str(message)] if message else []) + detail_lines(result, case, mismatches)


def properties(result: object) -> list[tuple[str, str]]:
    """Name and value pairs that say a result to a machine (JUnit ``<property>`` of a test case,
    pytest's ``record_property``): the effective status, the diagnosis, the first mismatch line,
    the mismatch count and the command that reproduces it. Empty for a result that passed."""
    result = _dict(result)
    status = effective(result.get("status"), result.get("required"))
    if status == PASSED:
        return []
    found = [("rngcheck.status", status)]
    diagnosis = result.get("diagnosis")
    if isinstance(diagnosis, dict):
        found += [("rngcheck.diagnosis", _or_unknown(diagnosis.get("id"))),
                  ("rngcheck.diagnosis.summary", str(diagnosis.get("summary") or ""))]
        found += [(f"rngcheck.diagnosis.{line.split(':')[0]}", line.split(": ", 1)[1])
                  for line in search_lines(diagnosis, width=1000)]
        found += [(f"rngcheck.anatomy.{i}", line) for i, line in enumerate(anatomy_lines(diagnosis))]
    rows = result.get("mismatches")
    if isinstance(rows, list) and rows:
        found += [("rngcheck.mismatch", mismatch_line(rows[0])),
                  ("rngcheck.mismatch_count", str(result.get("mismatch_count") or len(rows)))]
    if result.get("reproduce_command"):
        found.append(("rngcheck.reproduce", str(result["reproduce_command"])))
    return found
