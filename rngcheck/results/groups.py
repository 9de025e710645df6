"""What a backend's failures share: its results that fail, grouped, each group said once.

One fault usually fails many cases the same way (a bit flipped in one element fails every case
with more than five elements). A person wants the pattern first and one case to reproduce, then
the rest. The terminal summary, the JUnit file, the markdown summary and the HTML page all say a
backend's failures through :func:`failure_groups`, so the groups read the same wherever shown.

1. A failing result is a required, broken one (statuses.is_failure), taken from a result document.
2. Its signature: its diagnosis id (or, undiagnosed, its status), and where the words it got wrong
   are known in full (a mismatch row per wrong word: rngcheck.results.text.MISMATCH_FIELDS), which
   elements they are (when at most ELEMENTS_SHOWN) and how each differs (expected xor actual, when
   at most MASKS_SHOWN distinct masks). Results with one signature are one group.
3. A group's pattern says what every result of it shares: "only element 5", "bit 0 flipped"
   (one mask of one bit), "always xor 0x...", else the anatomy finding every result of a group of
   several has, else nothing beyond the diagnosis.
4. A group's example is its smallest case (the case record's ``size``: the values the call
   produces), the first of equals; its reproduce line is the result's ``reproduce_command``, else
   ``rngcheck run --backend SPEC --case ID``.
5. Groups are ordered by size, largest first, then by first appearance.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .records import as_dict, as_int, as_list
from .statuses import is_failure
from .text import anatomy_lines, mismatch_line, numbers_lines

ELEMENTS_SHOWN = 4    # wrong elements named in a signature (more: "elements vary")
MASKS_SHOWN = 2       # distinct xor masks named in a signature (more: another function, not a bit fault)


@dataclass
class FailureGroup:
    """Results of one backend that fail the same way (rules 2-4)."""

    backend: str
    diagnosis: str                 # the diagnosis id, or the status of an undiagnosed failure
    summary: str                   # the diagnosis's summary (of the first result)
    pattern: str                   # what every result shares beyond the diagnosis (rule 3), or ""
    cases: list[str] = field(default_factory=list)
    example: dict[str, Any] = field(default_factory=dict)   # the result of the smallest case (rule 4)
    reproduce: str = ""

    @property
    def count(self) -> int:
        return len(self.cases)

    def label(self) -> str:
        """``N cases: DIAGNOSIS (pattern)``, as every surface says a group."""
        plural = "s" if self.count != 1 else ""
        return f"{self.count} case{plural}: {self.diagnosis}" + (f" ({self.pattern})" if self.pattern else "")


def _word(text: object) -> int | None:
    try:
        return int(str(text), 0)
    except (TypeError, ValueError):
        return None


def _wrong_words(result: dict[str, Any]) -> tuple[frozenset[int] | None, frozenset[int] | None]:
    """(the wrong element indices, the xor masks) when the result lists every wrong word, else (None, None)."""
    rows = [as_dict(r) for r in as_list(result.get("mismatches"))]
    count = as_int(result.get("mismatch_count"), len(rows))
    if not rows or count != len(rows):
        return None, None
    indices = frozenset(as_int(r.get("index"), -1) for r in rows)
    masks = set()
    for row in rows:
        expected, actual = _word(row.get("expected")), _word(row.get("actual"))
        if expected is None or actual is None:
            return indices, None
        masks.add(expected ^ actual)
    return indices, frozenset(masks)


Signature = tuple[str, frozenset[int] | None, frozenset[int] | None]


def _signature(result: dict[str, Any]) -> Signature:
    diagnosis = as_dict(result.get("diagnosis")).get("id") or str(result.get("status"))
    indices, masks = _wrong_words(result)
    if indices is not None and len(indices) > ELEMENTS_SHOWN:
        indices = None
    if masks is not None and len(masks) > MASKS_SHOWN:
        masks = None
    return str(diagnosis), indices, masks


def _mask_text(masks: frozenset[int]) -> str:
    if len(masks) == 1:
        (mask,) = masks
        if mask and mask & (mask - 1) == 0:
            return f"bit {mask.bit_length() - 1} flipped"
        return f"always xor 0x{mask:08x}"
    return "xor " + " or ".join(f"0x{m:08x}" for m in sorted(masks))


def _shared_finding(results: list[dict[str, Any]]) -> str:
    """The anatomy finding every result has (rule 3's last resort), or ""."""
    sets = [set(as_list(as_dict(as_dict(r.get("diagnosis")).get("anatomy")).get("findings"))) for r in results]
    shared = set.intersection(*sets) if sets else set()
    first = as_list(as_dict(as_dict(results[0].get("diagnosis")).get("anatomy")).get("findings"))
    for finding in first:
        if finding in shared:
            return str(finding)
    return ""


def _pattern(indices: frozenset[int] | None, masks: frozenset[int] | None, results: list[dict[str, Any]]) -> str:
    parts = []
    if indices is not None:
        listed = sorted(indices)
        parts.append(f"only element {listed[0]}" if len(listed) == 1 else
                     "only elements " + ", ".join(map(str, listed)))
    if masks is not None:
        parts.append(_mask_text(masks))
    # (a finding every result has says something of a group of several; of one, its anatomy says it)
    return ", ".join(parts) or (_shared_finding(results) if len(results) > 1 else "")


def _reproduce(result: dict[str, Any], spec: str) -> str:
    command = result.get("reproduce_command")
    if command:
        return str(command)
    return shlex.join(["rngcheck", "run", "--backend", spec, "--case", str(result.get("case"))])


def failure_groups(document: dict[str, Any]) -> dict[str, list[FailureGroup]]:
    """Each backend's failure groups (rules 1-5), by backend name; a backend without failures has none."""
    sizes = {str(c.get("id")): as_int(c.get("size"), 0) for c in as_list(document.get("cases")) if isinstance(c, dict)}
    specs = {str(b.get("name")): str(b.get("spec") or b.get("name")) for b in as_list(document.get("backends"))
             if isinstance(b, dict)}
    grouped: dict[str, dict[Signature, list[dict[str, Any]]]] = {}
    for result in as_list(document.get("results")):
        if isinstance(result, dict) and is_failure(result.get("status"), result.get("required")):
            grouped.setdefault(str(result.get("backend")), {}).setdefault(_signature(result), []).append(result)
    out: dict[str, list[FailureGroup]] = {}
    for backend, by_signature in grouped.items():
        groups = []
        for (diagnosis, indices, masks), results in by_signature.items():
            example = min(results, key=lambda r: sizes.get(str(r.get("case")), 0) or 1 << 62)
            summary = str(as_dict(results[0].get("diagnosis")).get("summary") or "")
            groups.append(FailureGroup(backend, diagnosis, summary, _pattern(indices, masks, results),
                                       [str(r.get("case")) for r in results], example,
                                       _reproduce(example, specs.get(backend, backend))))
        out[backend] = sorted(groups, key=lambda g: -g.count)
    return out


def group_lines(groups: Iterable[FailureGroup], *, shown: int | None = None, mismatches: int = 2,
                anatomy: int = 2) -> list[str]:
    """The groups as text lines: the label, the summary, the example case with its first ``mismatches``
    wrong elements (or numbers) and ``anatomy`` lines of its anatomy (rngcheck.results.text: said as
    everywhere else), and its reproduce line."""
    lines = []
    for group in list(groups)[:shown]:
        lines.append(group.label())
        if group.summary:
            lines.append(f"  {group.summary}")
        more = f" (and {group.count - 1} more)" if group.count > 1 else ""
        lines.append(f"  smallest: {group.example.get('case')}{more}: {str(group.example.get('message'))[:120]}")
        rows = as_list(group.example.get("mismatches"))[:mismatches]
        lines += [f"    {mismatch_line(row)}" for row in rows]
        lines += [f"    {line}" for line in numbers_lines(group.example, mismatches)]
        lines += [f"    {line}" for line in anatomy_lines(group.example.get("diagnosis"), anatomy)]
        lines.append(f"  reproduce: {group.reproduce}")
    return lines
