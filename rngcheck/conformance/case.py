"""A conformance case: the header every axis shares, and the axis's own record of the call.

A case is data. Its header is the same on every axis (rngcheck.conformance.axis):

1. ``id`` is stable and unique over all axes; ``category`` is a column of its axis's table;
   ``description``, ``rule`` and ``source`` say what it checks and where the rule is written.
2. ``procedure`` says how its axis runs and judges it (one of the axis's procedures).
3. ``profiles``: the profiles that run it (quick, full, strict; huge is opt-in).
4. An axis subclasses Case with the fields of its call (a state and sizes, a numbers request, a
   generator block, an rng_bit_generator program) and says, through three methods, what the
   result document records of it (:meth:`Case.inputs`), how ``rngcheck repro`` reruns it
   (:meth:`Case.reproduction` and :meth:`Case.repro_arguments`), and what a refusal of it means
   (:meth:`Case.refused`), and whether its failure fails the run on a backend (:meth:`Case.required_on`).
   Nothing outside the axis reads those fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

PROFILES = ("quick", "full", "strict")
ALL = frozenset(PROFILES)
FULL_ONLY = frozenset({"full", "strict"})
HUGE = frozenset({"huge"})   # opt-in (issue 29): --profile huge, or --case scale/huge* in any profile


@dataclass(frozen=True, kw_only=True)
class Case:
    """The shared header (rules 1-3); an axis's subclass adds its call's fields (rule 4)."""

    axis: ClassVar[str] = ""           # the axis that owns the subclass (rngcheck.conformance.axes)
    # What a backend that lacks the axis does not implement, in a few words ("numbers", "StableHLO"):
    # the result document records it, and a backend's n/a results are counted by it.
    layer: ClassVar[str] = ""

    id: str
    category: str
    description: str
    rule: str
    source: str
    procedure: str = ""
    profiles: frozenset = ALL
    note: str = ""

    def inputs(self) -> dict[str, Any]:
        """The call's inputs as the result document records them (JSON values)."""
        return {}

    def size(self) -> int:
        """How many values the call produces (elements, numbers, blocks): the smallest failing case of a
        group of failures is the one to reproduce first."""
        return 1

    def part(self) -> str:
        """Which of its axis's computations the case exercises, where a fault in one leaves the others
        right (a numbers convention's kind and dtype, a generator): a failure group weighs a diagnosis
        against the failures of its part (rngcheck.results.groups rule 6). "": the axis is one part."""
        return ""

    def reproduction(self) -> dict[str, Any] | None:
        """The call as the result document's ``reproduce`` record; None when ``rngcheck repro`` cannot
        rerun it alone (``rngcheck run --case ID`` does)."""
        return None

    def repro_arguments(self) -> list[str] | None:
        """The arguments of ``rngcheck repro`` (after ``--backend SPEC``) that rerun the call; None as
        for :meth:`reproduction`."""
        return None

    def memory_needed(self) -> int:
        """Bytes the check of this case holds at once beyond what rngcheck holds anyway (0: its check
        says itself, as DirectML's buffers do); the judging chain skips a case that does not fit."""
        return 0

    def required_on(self, backend) -> bool:
        """Whether a failure of this case on ``backend`` fails the run (what is implementation-defined
        there comes back as info and never fails)."""
        return True

    def refused(self) -> tuple[str, str | None]:
        """(diagnosis id, its summary or None) of a backend that refused this valid call."""
        return "rejects-valid", None
