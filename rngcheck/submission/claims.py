"""A backend's claim against a must-pass list, decided once from the results: ``submission create``
writes it into the statement and ``submission verify`` decides it again from the documents and
refuses a statement that says otherwise.

1. The results: one per (backend, case) over all the package's documents; the same backend and case
   in two documents is an error (a claim rests on one result a case, never "the last one wins").
2. Which lists a backend claims: the lists asked for (``--list``), each for every backend; by default
   every published list (its newest version) of which the backend ran at least one case (a result
   that is not n/a, skipped or not-run): an implementation claims what it implements.
3. Each must-pass case of a claim counts by the list's rule (mustpass rule 3), or is waived by the
   first waiver that covers it (waivers rule 2), or does not count: failed, error, ..., n/a,
   "missing" (no result). A claim is met when every case counts or is waived.
4. Every waiver must cover at least one must-pass case of the claims (waivers rule 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import RngcheckError
from ..results import statuses
from ..results.text import printable
from .mustpass import MustPassList
from .waivers import Waiver

MISSING = "missing"


@dataclass
class Claim:
    backend: str
    list_name: str
    version: str
    cases: int
    counted: dict[str, int] = field(default_factory=dict)       # passed / implementation-defined / optional n/a
    waived: list[dict[str, str]] = field(default_factory=list)  # {case, status, waiver}
    not_counted: list[dict[str, str]] = field(default_factory=list)   # {case, status}

    @property
    def met(self) -> bool:
        return not self.not_counted

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.backend, "list": self.list_name, "version": self.version, "met": self.met,
                "cases": self.cases, "counted": dict(self.counted), "waived": list(self.waived),
                "not_counted": list(self.not_counted)}

    def line(self) -> str:
        head = f"{printable(self.backend)}: must-pass list {self.list_name} {self.version}: "
        if self.met:
            return head + f"met ({self.cases} cases" + (f", {len(self.waived)} waived" if self.waived else "") + ")"
        shown = ", ".join(f"{printable(n['case'])} {n['status']}" for n in self.not_counted[:3])
        more = f" and {len(self.not_counted) - 3} more" if len(self.not_counted) > 3 else ""
        return head + f"not met: {len(self.not_counted)} of {self.cases} cases do not count ({shown}{more})"


def results_by_case(documents: list[tuple[str, dict[str, Any]]]) -> dict[tuple[str, str], str]:
    """(backend, case) -> status over ``documents`` ((label, document) pairs), rule 1."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for label, document in documents:
        for result in document.get("results", []):
            key = (str(result.get("backend")), str(result.get("case")))
            status = statuses.read_status(result.get("status"), result.get("message"))
            if key in found:
                raise RngcheckError(f"{printable(key[0])}: case {printable(key[1])} has results in {found[key][0]} "
                                    f"and {label} (a claim rests on one result a case)")
            found[key] = (label, statuses.effective(status, result.get("required")))
    return {key: status for key, (_, status) in found.items()}


def backends_of(documents: list[tuple[str, dict[str, Any]]]) -> list[str]:
    names: list[str] = []
    for _, document in documents:
        names += [str(b.get("name")) for b in document.get("backends", []) if str(b.get("name")) not in names]
    return names


def decide(backend: str, must: MustPassList, results: dict[tuple[str, str], str],
           waivers: list[Waiver]) -> Claim:
    """One claim (rule 3)."""
    claim = Claim(backend, must.name, must.version, len(must.cases))
    for case in must.cases:
        status = results.get((backend, case), MISSING)
        if must.counts(case, None if status == MISSING else status):
            kind = statuses.PASSED if status == statuses.PASSED else must.marks[case]
            claim.counted[kind] = claim.counted.get(kind, 0) + 1
            continue
        waiver = next((w for w in waivers if w.covers(backend, case)), None)
        if waiver is not None:
            claim.waived.append({"case": case, "status": status, "waiver": waiver.id})
        else:
            claim.not_counted.append({"case": case, "status": status})
    return claim


def claims_of(documents: list[tuple[str, dict[str, Any]]], lists: list[MustPassList], waivers: list[Waiver],
              *, asked: bool = False) -> list[Claim]:
    """Every backend's claims (rules 2-3); ``asked``: ``lists`` were named by the user (each is claimed
    by every backend), else a backend claims those of ``lists`` it ran a case of."""
    results = results_by_case(documents)
    claims = []
    for backend in backends_of(documents):
        for must in lists:
            ran = any(results.get((backend, case)) in statuses.RAN for case in must.cases)
            if asked or ran:
                claims.append(decide(backend, must, results, waivers))
    return claims


def unused_waivers(claims: list[Claim], lists: list[MustPassList], waivers: list[Waiver], where: str) -> list[str]:
    """Rule 4: one line per waiver that covers no must-pass case of ``claims``."""
    by_key = {(m.name, m.version): m for m in lists}
    covered = set()
    for claim in claims:
        for case in by_key[(claim.list_name, claim.version)].cases:
            covered |= {w.id for w in waivers if w.covers(claim.backend, case)}
    return [f"{where}: waiver {printable(w.id)} ({printable(w.case)}) matches no must-pass case of the claims "
            f"(a stale waiver: remove it)" for w in waivers if w.id not in covered]
