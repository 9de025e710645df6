"""Baselines and regressions: what changed between a baseline run and new runs, and expected failures.

    expected = read_expected("expected-failures.txt")     # known failures, each with its reason
    change = compare(table(["baseline.json"]), table(["new.json"]), expected)
    change.regressions   # newly failing: exit 1

Results are matched by (backend, case). When each side has exactly one backend and their names
differ (one driver against another), that one pair is matched. A backend's identity is its
registered name without options (``directml`` for ``directml:lib=0.2.0``), else its whole spec
(``exec:./philox_exec``, ``file.py:Class``). A result's outcome is its effective status
(rngcheck.results.statuses); of two outcomes:
  regression   it fails now and did not in the baseline (or the baseline did not have the case),
               or a required case that passed in the baseline is n/a or skipped now on the same
               backend identity (a driver version that answers NotApplicable to everything passes
               nothing), and no expected-failures entry names it
  n/a          not comparable: a case that passed in the baseline is n/a now on another backend
               identity (a reference run against an implementation of part of it: what the
               implementation does not implement). Counted and said once, never a regression
  fixed        it failed in the baseline and passes now
  changed      it passes on both sides but the output words' digest differs
  still        it fails on both sides (a known failure the baseline already had)
  xfail        it fails and an expected-failures entry names it (with the reason)
  xpass        an expected-failures entry names it and it passes (an "unexpected pass")
  added / removed   the case is only in the new runs / only in the baseline (removed is "not
               run" when the new run did not finish)

Expected-failures file: one entry a line, ``PATTERN  # reason``; PATTERN is an fnmatch pattern
on the case id, optionally ``BACKEND::PATTERN`` for one backend (also a pattern). Blank lines
and lines starting with ``#`` are comments. An entry without a reason is refused.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import RngcheckError
from .statuses import BROKEN, NOT_APPLICABLE, PASSED, SKIPPED, XFAIL, XPASS

if TYPE_CHECKING:
    import pandas as pd  # the results table (rngcheck.results.tables)

MAX_EXPECTED = 100_000             # entries of an expected-failures file
MAX_EXPECTED_BYTES = 16 << 20      # its size
KINDS = ("regression", "fixed", "changed", "still", "xfail", "xpass", "added", "removed", "n/a")
NOT_COMPARABLE = "n/a"


@dataclass(frozen=True)
class Expected:
    """One expected-failures entry."""

    pattern: str
    backend: str      # a pattern on the backend name; "*" for every backend
    reason: str
    line: int

    def matches(self, backend: str, case: str) -> bool:
        return fnmatch.fnmatchcase(case, self.pattern) and fnmatch.fnmatchcase(backend, self.backend)


def parse_expected(text: str, where: str = "expected failures") -> list[Expected]:
    entries: list[Expected] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if len(entries) == MAX_EXPECTED:
            raise RngcheckError(f"{where}:{number}: more than {MAX_EXPECTED} expected failures (use patterns, "
                                "e.g. 'kat/*  # reason', for a family of cases)")
        pattern, hash_, reason = line.partition("#")
        pattern, reason = pattern.strip(), reason.strip()
        if not hash_ or not reason:
            raise RngcheckError(f"{where}:{number}: an expected failure needs a reason: PATTERN  # reason")
        if len(pattern.split()) != 1:
            raise RngcheckError(f"{where}:{number}: one case pattern per line, got {pattern!r}")
        backend, sep, case = pattern.rpartition("::")
        entries.append(Expected(case if sep else pattern, backend if sep and backend else "*", reason, number))
    return entries


def read_expected(path: str | Path) -> list[Expected]:
    """The entries of an expected-failures file, read by rngcheck's bounded reader (rngcheck.jsonfile:
    no device, at most MAX_EXPECTED_BYTES) and at most MAX_EXPECTED entries (one line each when exceeded)."""
    from ..jsonfile import read_text_limited

    try:
        os.stat(path)
    except OSError as error:
        raise RngcheckError(f"cannot read the expected-failures file {path}: {error.strerror or error}") from None
    text = read_text_limited(path, what="expected-failures file", limit=MAX_EXPECTED_BYTES)
    return parse_expected(text, str(path))


_MAGIC = frozenset("*?[")


class Matcher:
    """The first entry (in file order) that names (backend, case), in time that does not grow with
    the product of entries and results: literal patterns (no ``* ? [``) are looked up in a dict,
    the others are compiled once (fnmatch's own cache holds 32768 patterns: past that, it compiled
    every pattern again for every result)."""

    def __init__(self, entries: list[Expected]):
        self.exact: dict[tuple[str, str], Expected] = {}      # literal backend and case
        self.any_backend: dict[str, Expected] = {}            # literal case, backend "*"
        # the others by the literal start of their case pattern ("kat/*": "kat/"): a case is tried only
        # against the patterns whose literal start it begins with
        self.wild: dict[str, list[Expected]] = {}
        self.compiled: dict[str, Callable[[str], object]] = {}   # each pattern compiled once, when first tried
        for entry in entries:
            literal_case = not _MAGIC & set(entry.pattern)
            if literal_case and entry.backend == "*":
                self.any_backend.setdefault(entry.pattern, entry)
            elif literal_case and not _MAGIC & set(entry.backend):
                self.exact.setdefault((entry.backend, entry.pattern), entry)
            else:
                start = next((i for i, c in enumerate(entry.pattern) if c in _MAGIC), len(entry.pattern))
                self.wild.setdefault(entry.pattern[:start], []).append(entry)
        self.starts = sorted({len(k) for k in self.wild})

    def __call__(self, backend: str, case: str) -> Expected | None:
        found = [e for e in (self.exact.get((backend, case)), self.any_backend.get(case)) if e is not None]
        candidates = [c for n in self.starts if n <= len(case) for c in self.wild.get(case[:n], ())]
        candidates.sort(key=lambda e: e.line)
        for entry in candidates:
            if found and entry.line > min(e.line for e in found):
                break
            if self._match(entry.pattern, case) and self._match(entry.backend, backend):
                found.append(entry)
                break
        return min(found, key=lambda e: e.line) if found else None

    def _match(self, pattern: str, text: str) -> bool:
        if pattern not in self.compiled:
            self.compiled[pattern] = re.compile(fnmatch.translate(pattern)).match
        return self.compiled[pattern](text) is not None


def expected_for(entries: list[Expected], backend: str, case: str) -> Expected | None:
    """The first entry naming (backend, case) (for many lookups: ``Matcher(entries)`` once)."""
    return Matcher(entries)(backend, case)


@dataclass(frozen=True)
class Change:
    """One (backend, case) whose outcome is worth telling."""

    kind: str            # one of KINDS
    backend: str
    case: str
    category: str
    before: str          # the baseline's effective status ("" when absent)
    after: str           # the new effective status ("" when absent)
    diagnosis: str = ""  # the new failure's diagnosis id (or the baseline's, for removed / fixed)
    message: str = ""
    reason: str = ""     # the expected-failures entry's reason (xfail, xpass)


@dataclass
class Comparison:
    baseline_runs: list[str]
    new_runs: list[str]
    common: int                                 # (backend, case) pairs on both sides
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # labels: other versions, unfinished runs, pairing
    unused_expected: list[Expected] = field(default_factory=list)

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of("regression")

    def counts(self) -> dict[str, int]:
        return {k: len(self.of(k)) for k in KINDS}


def _latest(data: pd.DataFrame) -> pd.DataFrame:
    """One row per (backend, case): the newest run's (runs are in the order given, newest last)."""
    return data.drop_duplicates(["backend", "case"], keep="last").set_index(["backend", "case"], drop=False)


def _records(rows: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """{(backend, case): row as a dict}: one lookup per key, not a pandas .loc (10^6 results:
    minutes through .loc, seconds through a dict)."""
    return {(row["backend"], row["case"]): row for row in rows.to_dict("records")}


def compare(baseline: pd.DataFrame, new: pd.DataFrame, expected: list[Expected] | None = None) -> Comparison:
    """The changes from ``baseline`` to ``new`` (results tables, rngcheck.results.tables)."""
    expected = expected or []
    notes: list[str] = []
    old_backends, new_backends = list(dict.fromkeys(baseline["backend"])), list(dict.fromkeys(new["backend"]))
    other_identity = False
    if len(old_backends) == 1 and len(new_backends) == 1 and old_backends != new_backends:
        notes.append(f"baseline backend {old_backends[0]!r} compared with new backend {new_backends[0]!r}")
        old_spec, new_spec = (str(data["spec"].iloc[0]) for data in (baseline, new))
        other_identity = identity(old_spec) != identity(new_spec)
        baseline = baseline.assign(backend=new_backends[0])
    for what, column in (("rngcheck", "rngcheck_version"), ("schema version", "schema_version")):
        old_values, new_values = set(map(str, baseline[column])), set(map(str, new[column]))
        if old_values != new_values:
            notes.append(f"the baseline was written by {what} {', '.join(sorted(old_values))}, "
                         f"the new runs by {', '.join(sorted(new_values))}")
    unfinished = sorted(set(new.loc[~new["complete"], "run"]))
    if unfinished:
        notes.append(f"new run(s) not finished: {', '.join(unfinished)}; cases they did not reach are 'not run'")
    old_rows, new_rows = _records(_latest(baseline)), _records(_latest(new))
    keys = list(dict.fromkeys(list(old_rows) + list(new_rows)))
    common = sum(1 for k in keys if k in old_rows and k in new_rows)
    used: set[Expected] = set()
    changes: list[Change] = []
    expected_for = Matcher(expected)
    for key in keys:
        before = old_rows.get(key)
        after = new_rows.get(key)
        row = after if after is not None else before
        if row is None:   # never: every key comes from one side or the other
            continue
        was = before["effective"] if before is not None else ""
        now = after["effective"] if after is not None else ""
        entry = expected_for(*key)
        if entry is not None and after is not None:
            used.add(entry)
        kind: str | None = None
        if after is None:
            kind = "removed"
        elif now in BROKEN:
            if entry is not None:
                kind = XFAIL
            elif was in BROKEN:
                kind = "still"
            else:
                kind = "regression"   # newly failing, or failing in a case the baseline did not have
        elif was == PASSED and now == NOT_APPLICABLE and other_identity:
            kind = NOT_COMPARABLE   # the other implementation does not implement it: nothing to compare
        elif was == PASSED and now in (NOT_APPLICABLE, SKIPPED) and bool(before is not None and before["required"]):
            kind = XFAIL if entry is not None else "regression"   # it passed; now it is not even run
        elif entry is not None and now == PASSED:
            kind = XPASS
        elif before is None:
            kind = "added"
        elif was in BROKEN and now == PASSED:
            kind = "fixed"
        elif was == PASSED and now == PASSED and before["output_sha256"] and after["output_sha256"] \
                and before["output_sha256"] != after["output_sha256"]:
            kind = "changed"
        if kind is None:
            continue
        source = after if after is not None and (now in BROKEN or now in (NOT_APPLICABLE, SKIPPED)) else \
            before if before is not None else row
        changes.append(Change(kind, key[0], key[1], str(row["category"]), was, now,
                              diagnosis=str(source["diagnosis"]), message=str(source["message"]),
                              reason=entry.reason if entry is not None and kind in (XFAIL, XPASS) else ""))
    absent = sum(c.kind == NOT_COMPARABLE for c in changes)
    if absent:
        notes.append(f"{absent} cases that passed on the baseline's backend are n/a on the new one (another "
                     f"implementation: what it does not implement is not compared)")
    if unfinished:
        changes = [c if c.kind != "removed" else Change("removed", c.backend, c.case, c.category, c.before, "",
                                                         c.diagnosis, "not run: the new run did not finish")
                   for c in changes]
    return Comparison(list(dict.fromkeys(baseline["run"])), list(dict.fromkeys(new["run"])), common, changes,
                      notes, [e for e in expected if e not in used])


def identity(spec: str) -> str:
    """A backend's identity across runs: a registered name without its options, else the whole spec
    (a program, module or file names itself)."""
    head, sep, _ = spec.partition(":")
    if sep and head in ("exec",) or "/" in head or head.endswith(".py") or "." in head:
        return spec
    return head


def gate(data: pd.DataFrame, expected: list[Expected]) -> tuple[list[Change], list[Change]]:
    """Without a baseline: (unexpected failures, unexpected passes) of a results table."""
    failures: list[Change] = []
    passes: list[Change] = []
    expected_for = Matcher(expected)
    for row in _latest(data).itertuples(index=False):
        if not row.required:
            continue
        entry = expected_for(row.backend, row.case)
        if row.effective in BROKEN and entry is None:
            failures.append(Change("regression", row.backend, row.case, row.category, "", row.effective,
                                   row.diagnosis, row.message))
        elif row.effective == PASSED and entry is not None:
            passes.append(Change(XPASS, row.backend, row.case, row.category, "", row.effective, reason=entry.reason))
    return failures, passes
