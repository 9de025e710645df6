"""A backend column's failures as the page shows them: each failing result's view, the column's
failure groups (rngcheck.results.groups: what the failures share, the smallest case) with the
failures of each, and the pictures of both.

    fill(column)          # column["failures"], ["diagnoses"] (the groups), ["detailed_failures"], ...
    draw(columns)         # the groups' element x bit strips and the numbers failures' ULP histograms

A column's first GROUPS_SHOWN groups (the largest) open the page, the rest folded under them.
A group's first example (its smallest case) is shown in full, open; the rest of the group is
folded on the page: up to MORE_PER_GROUP more in full, the others as compact rows, and no column
shows more than DETAILED_FAILURES in full. A failing result that no group names (a damaged
document whose statuses the groups read otherwise) joins a group of its status.

Pictures (matplotlib, reports.figures; only when the page draws figures):
  strip       per group shown open whose results list their wrong words (mismatch rows with
              expected and actual): the elements (x) by bit 0..31 (y), marked where expected xor
              actual has the bit, over the group's first STRIP_RESULTS results; STRIPS a page
  histogram   per numbers failure shown in full: its ULP histogram against its bound; HISTOGRAMS a page
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..results.groups import FailureGroup
from ..results.records import ResultRecord
from ..results.statuses import BROKEN, effective
from ..results.text import anatomy_lines, mismatch_fields
from .fields import anchor_part as _anchor_part
from .fields import as_dict as _dict
from .fields import as_int as _int
from .fields import as_list as _list
from .fields import number as _number
from .fields import optional_float as _float
from .fields import text as _text
from .figures import draw as _figure

DETAILED_FAILURES = 40      # per backend column: full sections (each group's first example first); the rest rows
MORE_PER_GROUP = 3          # full sections of a group beyond its first example (folded on the page)
MISMATCH_ROWS = 16          # first mismatching elements shown per case
GROUPS_SHOWN = 4            # a column's groups shown open at the top of the page (the largest); the rest folded
STRIPS = 8                  # element x bit strips a page (of the groups shown open, in page order)
STRIP_RESULTS = 64          # results of a group whose wrong words a strip reads
STRIP_ELEMENTS = 48         # wrong elements a strip draws (the lowest indices)
HISTOGRAMS = 12             # ULP histograms a page (numbers failures shown in full, in page order)
UNDIAGNOSED = {  # a failure without a diagnosis, by status
    "failed": "no known bug class matches",
    "error": "the backend raised an exception or broke the protocol",
    "crashed": "the backend's process died",
    "timeout": "the backend did not answer in time",
}


def fill(column: dict) -> None:
    """The column's failures (each group's, in group order) and its groups (``column["groups"]``:
    rngcheck.results.groups' of its backend), as the page shows them."""
    failures = [failure_view(column, case_id, result) for case_id, result in column["results"].items()
                if effective(result.status, result.required) in BROKEN]
    groups = _group_views(column, failures)
    _mark_detailed(groups)
    ordered = [f for g in groups for f in [g["first"]] + g["rest"]]
    column.update({
        "failures": ordered,
        "detailed_failures": [f for f in ordered if f["detailed"]],
        "brief_failures": [f for f in ordered if not f["detailed"]],
        "diagnoses": groups,
        "groups_shown": groups[:GROUPS_SHOWN],
        "groups_folded": groups[GROUPS_SHOWN:],
    })


def _group_views(column: dict, failures: list[dict]) -> list[dict]:
    """The column's groups, each with its first example and the rest of its failures; a failure no
    group names joins a group of its status."""
    by_case = {failure["case"]: failure for failure in failures}
    taken: set[str] = set()
    groups: list[dict] = []
    for found in column["groups"]:
        members = [by_case[case] for case in dict.fromkeys(_text(c, 300) for c in found.cases)
                   if case in by_case and case not in taken]
        if not members:
            continue
        example = by_case.get(_text(found.example.get("case"), 300))
        first = example if example in members else members[0]
        taken.update(member["case"] for member in members)
        groups.append(_group_view(column, len(groups), found, first, members))
    left: dict[str, list[dict]] = {}
    for failure in failures:
        if failure["case"] not in taken:
            left.setdefault(failure["status"], []).append(failure)
    for status, members in left.items():
        found = FailureGroup(column["name"], status, "", "", [m["case"] for m in members], {},
                             members[0]["reproduce_command"])
        groups.append(_group_view(column, len(groups), found, members[0], members))
    return groups


def _group_view(column: dict, number: int, found: FailureGroup, first: dict, members: list[dict]) -> dict:
    alternatives: list[str] = []
    for member in members:
        for alternative in member["alternatives"]:
            if alternative not in alternatives:
                alternatives.append(alternative)
    return {"id": found.diagnosis if first["diagnosis_id"] else "", "summary": _text(found.summary, 500),
            "pattern": _text(found.pattern), "label": UNDIAGNOSED.get(first["status"], UNDIAGNOSED["failed"]),
            "text": _text(found.label()), "reproduce": _text(found.reproduce), "alternatives": alternatives,
            "closest": _text(found.weighing(), 500),
            "count": max(found.count, len(members)), "first": first, "cases": [_text(c, 300) for c in found.cases],
            "rest": [m for m in members if m is not first], "anchor": f"group-{column['anchor']}-{number + 1}",
            "words": _wrong_words([column["results"][m["case"]] for m in members[:STRIP_RESULTS]], len(members)),
            "strip": None}


def _mark_detailed(groups: list[dict]) -> None:
    """Each group's first example in full, then up to MORE_PER_GROUP more of each group; no more than
    DETAILED_FAILURES in full a column."""
    budget = DETAILED_FAILURES
    for group in groups:
        group["first"]["detailed"] = budget > 0
        budget -= 1
    for group in groups:
        for number, failure in enumerate(group["rest"]):
            failure["detailed"] = number < MORE_PER_GROUP and budget > 0
            budget -= failure["detailed"]
        group["rest_detailed"] = [f for f in group["rest"] if f["detailed"]]
        group["rest_brief"] = [f for f in group["rest"] if not f["detailed"]]


def _word(value: Any) -> int | None:
    try:
        word = int(str(value), 0)
    except (TypeError, ValueError):
        return None
    return word if 0 <= word < 1 << 64 else None


def _wrong_words(results: list[ResultRecord], members: int) -> dict | None:
    """What a strip draws: per wrong element (the lowest STRIP_ELEMENTS indices) and bit, how many of
    the results had that bit of that element wrong (``members``: the group's failures, of which
    ``results`` are read); None when no result lists its wrong words."""
    marks: Counter[tuple[int, int]] = Counter()
    counted, width = 0, 32
    for result in results:
        rows = [_dict(row) for row in result.mismatches]
        found = False
        for row in rows:
            expected, actual, index = _word(row.get("expected")), _word(row.get("actual")), _int(row.get("index"), -1)
            if expected is None or actual is None or index < 0:
                continue
            found = True
            mask = expected ^ actual
            width = max(width, 64 if mask >> 32 else 32)
            marks.update((index, bit) for bit in range(mask.bit_length()) if mask >> bit & 1)
        counted += found
    if not counted:
        return None
    wrong = sorted({index for index, _ in marks})
    # every element up to one past the last wrong one when that is few (the wrong ones in their
    # place), else the lowest STRIP_ELEMENTS wrong ones
    elements = list(range(wrong[-1] + 2)) if wrong and wrong[-1] + 2 <= STRIP_ELEMENTS else wrong[:STRIP_ELEMENTS]
    return {"elements": elements, "bits": width, "results": counted, "of": members,
            "counts": [[marks[(index, bit)] for index in elements] for bit in range(width)]}


def failure_view(column: dict, case_id: str, result: ResultRecord) -> dict:
    diagnosis = _dict(result.diagnosis)
    mismatches = [{key: _text(value) for key, value in mismatch_fields(m).items()}
                  for m in result.mismatches[:MISMATCH_ROWS]]
    returned = result.returned_state
    return {
        "column": column["label"],
        "case": case_id,
        "anchor": f"case-{column['anchor']}-{_anchor_part(case_id)}",
        "status": effective(result.status, result.required),
        "message": _text(result.message),
        "diagnosis_id": _text(diagnosis.get("id"), 200),
        "diagnosis_summary": _text(diagnosis.get("summary"), 500),
        "alternatives": [_text(a, 200) for a in _list(diagnosis.get("alternatives"))],
        "anatomy": [_text(line.removeprefix("anatomy: "), 1000) for line in anatomy_lines(diagnosis)],
        "mismatches": mismatches,
        "mismatch_count": result.mismatch_count or len(mismatches),
        "mismatches_listed": len(result.mismatches),
        "observations": [_text(o) for o in result.observations],
        "returned_state": ", ".join(_text(w) for w in returned) if returned is not None else "",
        "reproduce_command": _text(result.reproduce_command),
        "detail": _text(result.detail),
        "seconds": _number(result.seconds),
        "numbers": numbers_view(result),
        "figure": None,
    }


def _bin_start(label: str) -> float | None:
    """The first distance of a histogram bin's label ("0", "2-3", ">=65536"), or None."""
    return _float(label.removeprefix(">=").split("-")[0])


def _sort_start(label: str) -> float:
    start = _bin_start(label)
    return start if start is not None and start == start else float("inf")


def numbers_view(result: ResultRecord) -> dict | None:
    """A numbers result's bound, ULP histogram and worst element, as text (everything escaped)."""
    found = _dict(result.numbers)
    if not found:
        return None
    worst = _dict(found.get("worst"))
    bins = [(_text(k, 20), _int(v, 0)) for k, v in _dict(found.get("histogram")).items()]
    bins.sort(key=lambda b: _sort_start(b[0]))   # in order of distance (a document lists them so)
    return {
        "request": _text(" ".join(f"{k}={v}" for k, v in _dict(found.get("request")).items())),
        "bound": _text(found.get("bound_ulps")), "why": _text(found.get("bound")),
        "histogram": ", ".join(f"{label}: {count}" for label, count in bins),
        "bins": bins, "bound_ulps": _float(found.get("bound_ulps")),
        "worst": _text(f"element {worst.get('index')}: expected {worst.get('expected')}, got {worst.get('actual')} "
                       f"({worst.get('ulps')} ULP)") if worst else "",
        "over": _int(found.get("over"), 0), "count": _int(found.get("count"), 0),
        "worst_ulps": _int(worst.get("ulps"), 0) if worst else 0,
        "rows": [{key: _text(_dict(row).get(key)) for key in ("index", "expected", "actual", "ulps")}
                 for row in _list(found.get("mismatches"))[:MISMATCH_ROWS]],
    }


def draw(columns: list[dict]) -> None:
    """The pictures of the failures: an element x bit strip per group that lists its wrong words
    (STRIPS a page), a ULP histogram per numbers failure shown in full (HISTOGRAMS a page)."""
    strips = histograms = 0
    for column in columns:
        for group in column["groups_shown"]:
            words = group["words"]
            if words and words["elements"] and strips < STRIPS:
                group["strip"] = _figure("bit_strip", words["elements"], words["counts"], words["results"], words["of"])
                strips += 1
        for failure in column["detailed_failures"]:
            numbers = failure["numbers"]
            if numbers and numbers["bins"] and histograms < HISTOGRAMS:
                failure["figure"] = _figure("ulp_histogram", numbers["bins"], numbers["bound_ulps"])
                histograms += 1
