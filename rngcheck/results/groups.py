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
6. A diagnosis names a cause only when it reproduces every failure it could explain. A model
   search's answer is a diagnosis that carries ``alternatives``: its id and every other id that
   reproduces the case (an ``unknown...`` id reproduces nothing); a check that needs no model (a
   crash, a broken contract, a write outside the extent) gives none. Answers are weighed within a
   *part*: the backend, the case record's ``layer``, and what was wrong (the output, when wrong
   elements are counted; else the returned state).
   a. An id every answer of a part contains is the part's cause: its results are one group, signed
      with the cause alone, even where a case's first match was a narrower class.
   b. Otherwise a group's id reproduces k of the part's n answered results and is only the
      closest, said "closest: ID, explains k of n; the other n - k: ..." with what the others are
      (their ids, and the finding they share when no model reproduces them).
   c. A model's id is one group however its wrong elements move; rule 2's elements and masks are
      said only where every result of the group has the same. An ``unknown`` id and a check's keep
      rule 2's signature.
   d. Ids are weighed, not parameters: a family's parameters may be read off each case (the element
      a fault starts from, the key a state gives).
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
    explains: int = 0              # rule 6: the failures of its layer its id reproduces (0: not weighed)
    weighed: int = 0               # rule 6: the failures of its layer with a model search's answer
    others: str = ""               # rule 6: what the failures it does not reproduce are

    @property
    def closest(self) -> bool:
        """Rule 6: the id reproduces some of the layer's failures, not all: not a cause."""
        return 0 < self.weighed and self.explains < self.weighed

    @property
    def count(self) -> int:
        return len(self.cases)

    def label(self) -> str:
        """``N cases: DIAGNOSIS (pattern)``, as every surface says a group."""
        plural = "s" if self.count != 1 else ""
        named = f"closest: {self.diagnosis}, {self.weighing()}" if self.closest else self.diagnosis
        return f"{self.count} case{plural}: {named}" + (f" ({self.pattern})" if self.pattern else "")

    def weighing(self) -> str:
        """Rule 6 said: "explains k of n; the other n - k: ..." for the closest, else ""."""
        if not self.closest:
            return ""
        return f"explains {self.explains} of {self.weighed}; the other {self.weighed - self.explains}: {self.others}"


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


def _signature(result: dict[str, Any], cause: str | None = None) -> Signature:
    diagnosis = cause or as_dict(result.get("diagnosis")).get("id") or str(result.get("status"))
    indices, masks = _wrong_words(result)
    if indices is not None and len(indices) > ELEMENTS_SHOWN:
        indices = None
    if masks is not None and len(masks) > MASKS_SHOWN:
        masks = None
    return str(diagnosis), indices, masks


def _shared_words(results: list[dict[str, Any]]) -> tuple[frozenset[int] | None, frozenset[int] | None]:
    """Rule 3: the wrong elements and the masks every result of a group has alike (None where they differ)."""
    signatures = {_signature(result)[1:] for result in results}
    if len(signatures) == 1:
        (words,) = signatures
        return words
    return None, None


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


def _answer(result: dict[str, Any]) -> frozenset[str] | None:
    """Rule 6: the ids that reproduce the result (its diagnosis and alternatives), or None where no
    model search answered."""
    diagnosis = as_dict(result.get("diagnosis"))
    if "alternatives" not in diagnosis:
        return None
    first = str(diagnosis.get("id") or "")
    if not first or first.startswith("unknown"):
        return frozenset()
    return frozenset([first, *(str(a) for a in as_list(diagnosis.get("alternatives")))])


def _others(results: list[dict[str, Any]]) -> str:
    """Rule 6: what the results an id does not reproduce are: their ids by count, largest first, and
    the finding shared by those no model reproduces."""
    counts: dict[str, int] = {}
    for result in results:
        diagnosis = str(as_dict(result.get("diagnosis")).get("id") or result.get("status"))
        counts[diagnosis] = counts.get(diagnosis, 0) + 1
    said = ", ".join(f"{d} ({n})" for d, n in sorted(counts.items(), key=lambda item: -item[1]))
    unexplained = [r for r in results if not _answer(r)]
    finding = _shared_finding(unexplained) if unexplained else ""
    return said + (f"; they share: {finding}" if finding else "")


Part = tuple[str, str]


def _part(result: dict[str, Any], layers: dict[str, str]) -> Part:
    """Rule 6: the layer of the result's case and what was wrong: its output, or its returned state."""
    wrong = "output" if as_int(result.get("mismatch_count"), 0) > 0 else "state"
    return layers.get(str(result.get("case")), ""), wrong


def _causes(results: list[dict[str, Any]], layers: dict[str, str]) -> dict[Part, str]:
    """Rule 6: each part's cause, where an id is in every answer of it (of several such, the one most
    results gave first)."""
    answers: dict[Part, list[tuple[str, frozenset[str]]]] = {}
    for result in results:
        answer = _answer(result)
        if answer is not None:
            first = str(as_dict(result.get("diagnosis")).get("id"))
            answers.setdefault(_part(result, layers), []).append((first, answer))
    causes = {}
    for part, given in answers.items():
        shared = frozenset.intersection(*(answer for _, answer in given))
        if shared:
            firsts = [first for first, _ in given if first in shared]
            causes[part] = max(dict.fromkeys(firsts or sorted(shared)), key=firsts.count)
    return causes


def _weigh(groups: list[FailureGroup], results: list[dict[str, Any]], layers: dict[str, str]) -> None:
    """Rule 6 for one backend's groups, given its failing results and each case's layer."""
    answered: dict[Part, list[tuple[dict[str, Any], frozenset[str]]]] = {}
    for result in results:
        answer = _answer(result)
        if answer is not None:
            answered.setdefault(_part(result, layers), []).append((result, answer))
    for group in groups:
        if not _answer(group.example):
            continue
        part = answered.get(_part(group.example, layers), [])
        missed = [result for result, ids in part if group.diagnosis not in ids]
        group.weighed, group.explains = len(part), len(part) - len(missed)
        group.others = _others(missed)


def failure_groups(document: dict[str, Any]) -> dict[str, list[FailureGroup]]:
    """Each backend's failure groups (rules 1-6), by backend name; a backend without failures has none."""
    records = [c for c in as_list(document.get("cases")) if isinstance(c, dict)]
    sizes = {str(c.get("id")): as_int(c.get("size"), 0) for c in records}
    layers = {str(c.get("id")): str(c.get("layer") or "") for c in records}
    specs = {str(b.get("name")): str(b.get("spec") or b.get("name")) for b in as_list(document.get("backends"))
             if isinstance(b, dict)}
    failing: dict[str, list[dict[str, Any]]] = {}
    for result in as_list(document.get("results")):
        if isinstance(result, dict) and is_failure(result.get("status"), result.get("required")):
            failing.setdefault(str(result.get("backend")), []).append(result)
    out: dict[str, list[FailureGroup]] = {}
    for backend, mine in failing.items():
        causes = _causes(mine, layers)
        by_signature: dict[Signature, list[dict[str, Any]]] = {}
        for result in mine:
            cause = causes.get(_part(result, layers))
            answer = _answer(result)
            if cause in (answer or ()):
                signature: Signature = (str(cause), None, None)   # one fault, one group (rule 6)
            elif answer:
                signature = (_signature(result)[0], None, None)    # one model, one group (rule 6)
            else:
                signature = _signature(result)
            by_signature.setdefault(signature, []).append(result)
        groups = []
        for (diagnosis, _, _), results in by_signature.items():
            indices, masks = _shared_words(results)
            example = min(results, key=lambda r: sizes.get(str(r.get("case")), 0) or 1 << 62)
            said = [r for r in results if as_dict(r.get("diagnosis")).get("id") == diagnosis] or results
            summary = str(as_dict(said[0].get("diagnosis")).get("summary") or "")
            groups.append(FailureGroup(backend, diagnosis, summary, _pattern(indices, masks, results),
                                       [str(r.get("case")) for r in results], example,
                                       _reproduce(example, specs.get(backend, backend))))
        _weigh(groups, mine, layers)
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
