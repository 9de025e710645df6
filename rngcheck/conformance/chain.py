"""The spec's steps as parameters, and the search over them (issue 40).

A generator or an operator is a chain of named steps (the state's layout, the counter's increment,
the key schedule, the round function, the rounds, the lanes' order, placement) whose parameters are
data. Each axis writes its chain as a model that takes ``knobs`` (a dict: a parameter's name to its
value, the spec's value when absent) and a catalog of Changes, each one step's parameters as real
implementations get them wrong (published constants of every family and width, orders, windows).
``search`` then names a wrong answer, by these rules:

1. Single changes first, every one of the catalog (but those marked to be tried in pairs only, which
   another class names alone): those whose prediction reproduces the case exactly all match (the first
   named, the others its alternatives: complete on the catalog).
2. Only when no single change matches: pairs of changes of two different steps, in catalog order,
   within the time left of the case's budget; every matching pair whose two changes are both needed
   (neither alone reproduces the case) is kept.
3. A match reproduces the whole compared output exactly (a short probe first, then the whole);
   a prediction equal to the spec's answer never matches (it cannot tell the change from the spec).
4. Past the budget the search stops and says how many pairs it did not try (``not_tried``).

The constants here are facts of the papers and headers (Salmon et al., SC11, tables 2 and 3;
Random123's philox.h and threefry.h; Skein 1.1's and 1.3's key-schedule parity constant).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, TypeVar

from .. import philox, threefry

SECONDS = 2.0  # the search's time per failing case (single changes always run whole; pairs within it)

# Philox multipliers of every family and width and the Weyl constants (rngcheck.philox: philox.h), and
# ThreeFry's key-schedule parity: Skein 1.3's C240 (rngcheck.threefry; Random123's 32-bit cut is its high
# half), and Skein 1.1's C240 before the 1.2 tweak changed it.
PHILOX_4X32 = philox.MULTIPLIERS[4, 32]
WEYL_32, WEYL_64 = philox.WEYL[32], philox.WEYL[64]
PARITY_SKEIN_13 = threefry.PARITY_64
PARITY_SKEIN_11 = 0x5555555555555555


def hexed(value: int, bits: int = 32) -> str:
    return f"0x{int(value):0{bits // 4}X}"


def multiplier_catalog(bits: int) -> dict[int, str]:
    """Every published Philox multiplier as a ``bits``-wide value, with where it comes from."""
    named: dict[int, str] = {}
    sources = [(multiplier, f"Philox{lanes}x{width}'s M{i}")
               for lanes, width in ((4, 32), (2, 32), (4, 64), (2, 64))
               for i, multiplier in enumerate(philox.MULTIPLIERS[lanes, width])]
    for value, source in sources:
        if value >> 32 and bits == 32:
            named.setdefault(value & 0xFFFFFFFF, f"the low 32 bits of {source}")
            named.setdefault(value >> 32, f"the high 32 bits of {source}")
        else:
            named.setdefault(value, source)
    return named


def weyl_catalog(bits: int) -> dict[int, str]:
    """Every published Weyl constant as a ``bits``-wide value (0: no bump), with where it comes from."""
    named: dict[int, str] = {0: "0 (no bump)"}
    for value, source in ((WEYL_32[0], "W0 of 32 bits"), (WEYL_32[1], "W1 of 32 bits"),
                          (WEYL_64[0], "W0 of 64 bits"), (WEYL_64[1], "W1 of 64 bits")):
        if value >> 32 and bits == 32:
            named.setdefault(value & 0xFFFFFFFF, f"the low 32 bits of {source}")
        else:
            named.setdefault(value, source)
    return named


@dataclass(frozen=True)
class Change:
    """One step's parameters as an implementation has them: the id it is named by, its step, what it
    does instead (the spec's words), its JSON-safe parameters, and the knobs the model takes."""

    id: str
    step: str
    summary: str
    parameters: dict
    knobs: dict
    alone: bool = True   # False: tried in pairs only (alone, another class names it: one name for one fault)

    def named(self) -> dict:
        return {"id": self.id, "step": self.step, "summary": f"{self.step}: {self.summary}",
                "parameters": self.parameters}


@dataclass
class Found:
    """What a search found: the matching singles or pairs (each a list of Changes), and its cost."""

    matches: list[tuple[Change, ...]] = field(default_factory=list)
    singles: int = 0
    pairs_tried: int = 0
    pairs_total: int = 0
    seconds: float = 0.0

    @property
    def not_tried(self) -> int:
        return self.pairs_total - self.pairs_tried if not self.matches or len(self.matches[0]) > 1 else 0


def pairs(changes: Sequence[Change]) -> list[tuple[Change, Change]]:
    """Every pair of changes of two different steps whose knobs do not overlap, over a growing prefix of
    the catalog (the pairs among its first k changes before any with change k + 1: small steps first)."""
    ordered = sorted(combinations(range(len(changes)), 2), key=lambda ij: (ij[1], ij[0]))
    return [(changes[i], changes[j]) for i, j in ordered
            if changes[i].step != changes[j].step and not set(changes[i].knobs) & set(changes[j].knobs)]


def search(changes: Sequence[Change], reproduces: Callable[[dict], bool], seconds: float = SECONDS) -> Found:
    """Rules 1-4: ``reproduces(knobs)`` says whether the model with those knobs gives the case's output."""
    start = time.perf_counter()
    singles = [c for c in changes if c.alone]
    found = Found(singles=len(singles))
    found.matches = [(c,) for c in singles if reproduces(c.knobs)]
    if not found.matches:
        candidates = pairs(changes)
        found.pairs_total = len(candidates)
        ends = start + seconds
        for a, b in candidates:
            if time.perf_counter() >= ends:
                break
            found.pairs_tried += 1
            # Both changes must be needed: a pair whose other change does nothing on this case is not one.
            if reproduces({**a.knobs, **b.knobs}) and not reproduces(a.knobs) and not reproduces(b.knobs):
                found.matches.append((a, b))
    found.seconds = time.perf_counter() - start
    return found


def pair_id(changes: tuple[Change, ...]) -> str:
    return changes[0].id if len(changes) == 1 else "two-steps"


def described(changes: tuple[Change, ...]) -> dict[str, Any]:
    """One match as a diagnosis: a single change as its own id, a pair as ``two-steps`` with both."""
    if len(changes) == 1:
        return changes[0].named()
    return {"id": "two-steps", "step": " + ".join(c.step for c in changes),
            "summary": "two steps differ: " + "; ".join(f"{c.step}: {c.summary}" for c in changes),
            "parameters": {"changes": [{"id": c.id, "step": c.step, "parameters": c.parameters} for c in changes]}}


def diagnosis(found: Found) -> dict | None:
    """The first match named with its step and parameters; ``alternatives``: every other id that
    reproduces the case, ``matches``: every match as (id, parameters) (what a cross-case check
    intersects); ``search``: what it cost and what it did not try. None when nothing matched."""
    if not found.matches:
        return None
    every = [described(m) for m in found.matches]
    first = every[0]
    ids = list(dict.fromkeys(d["id"] for d in every))
    result = {**first, "alternatives": [i for i in ids if i != first["id"]],
              "matches": [{"id": d["id"], "parameters": d["parameters"]} for d in every],
              "search": cost(found)}
    return result


def cost(found: Found) -> dict:
    said: dict[str, Any] = {"singles": found.singles, "pairs_tried": found.pairs_tried, "pairs": found.pairs_total,
            "seconds": round(found.seconds, 4)}
    if found.not_tried:
        said["not_tried"] = f"{found.not_tried} of {found.pairs_total} pairs of changes (past the budget)"
    return said


B = TypeVar("B")


@contextlib.contextmanager
def budget_in_force(var: contextvars.ContextVar[B | None], budget: B | None, fresh: Callable[[], B]) -> Iterator[B]:
    """A backend's search budget (its axis keeps one per backend) in force for the checks inside: ``budget``,
    or a ``fresh`` one for a single case (as in repro)."""
    token = var.set(budget if budget is not None else fresh())
    try:
        yield var.get() or fresh()
    finally:
        var.reset(token)
