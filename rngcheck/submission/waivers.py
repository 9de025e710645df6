"""Waivers: a vendor's stated exceptions to a must-pass list, each approved and dated.

A waivers file is JSON: ``{"waivers": [{"id", "case", "reason", "approver", "expires", "backend"?}]}``.

1. ``id``: unique in the file; ``case``: a case id or an fnmatch pattern (``layout/pad-*``);
   ``backend``: an optional pattern of the backends it covers (default: every backend of the package);
   ``reason`` and ``approver``: text, not empty; ``expires``: an ISO date (YYYY-MM-DD), the last day
   the waiver holds.
2. A waiver covers a must-pass case of a claim whose result does not count (a failure, an error, an n/a
   where the list does not allow it, a missing result): that case then counts as waived, and the
   statement names the waiver beside it.
3. Errors, each one line naming the file and the waiver: a malformed entry; an expired waiver (its
   ``expires`` before the day it is used: the package's creation, a verification); a waiver that matches
   no must-pass case of the claims it could serve (a stale waiver hides nothing and says nothing).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..errors import RngcheckError
from ..jsonfile import read_json
from ..results.text import printable

FIELDS = ("id", "case", "reason", "approver", "expires")


@dataclass(frozen=True)
class Waiver:
    id: str
    case: str
    reason: str
    approver: str
    expires: date
    backend: str = "*"

    def covers(self, backend: str, case: str) -> bool:
        return fnmatch.fnmatchcase(case, self.case) and fnmatch.fnmatchcase(backend, self.backend)

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "case": self.case, "backend": self.backend, "reason": self.reason,
                "approver": self.approver, "expires": self.expires.isoformat()}


def parse(value: Any, where: str) -> list[Waiver]:
    """The waivers of a file's JSON value (rule 1); RngcheckError with one line otherwise."""
    entries = value.get("waivers") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        raise RngcheckError(f'{where}: not a waivers file: {{"waivers": [...]}} expected')
    waivers: list[Waiver] = []
    for number, entry in enumerate(entries, 1):
        label = f"{where}: waiver {number}"
        if not isinstance(entry, dict):
            raise RngcheckError(f"{label}: an object with {', '.join(FIELDS)} expected")
        missing = [f for f in FIELDS if not isinstance(entry.get(f), str) or not entry[f].strip()]
        if missing:
            raise RngcheckError(f"{label} ({printable(str(entry.get('id', '?')))}): no {', '.join(missing)}")
        unknown = sorted(set(entry) - set(FIELDS) - {"backend"})
        if unknown:
            raise RngcheckError(f"{label} ({printable(entry['id'])}): unknown fields "
                                f"{', '.join(map(printable, unknown))}")
        try:
            expires = date.fromisoformat(entry["expires"])
        except ValueError:
            raise RngcheckError(f"{label} ({printable(entry['id'])}): expires {printable(entry['expires'])!r} "
                                f"is not a date (YYYY-MM-DD)") from None
        backend = entry.get("backend", "*")
        if not isinstance(backend, str) or not backend:
            raise RngcheckError(f"{label} ({printable(entry['id'])}): backend must be a name or pattern")
        if any(w.id == entry["id"] for w in waivers):
            raise RngcheckError(f"{label}: the id {printable(entry['id'])} is used twice")
        waivers.append(Waiver(entry["id"], entry["case"], entry["reason"], entry["approver"], expires, backend))
    return waivers


def read(path: str | Path) -> list[Waiver]:
    return parse(read_json(Path(path), what="waivers file"), str(path))


def expired(waivers: list[Waiver], on: date, where: str) -> list[str]:
    """Rule 3's expiry: one line per waiver whose last day is before ``on``."""
    return [f"{where}: waiver {printable(w.id)} expired on {w.expires.isoformat()} (before {on.isoformat()}; "
            f"approved by {printable(w.approver)})" for w in waivers if w.expires < on]
