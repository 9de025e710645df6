"""The axes: one registry of every conformance axis, and running any axis's case.

Each axis is a folder of rngcheck/conformance/ whose ``AXIS`` (rngcheck.conformance.axis.Axis)
is listed here, DirectML's first; adding one is a folder, one line in ``_load`` and the backends'
method for it (docs/adding-an-operator.md). Everything else dispatches on the case's axis (the
case class names it) and the case's procedure, never on which axis it is.

DIAGNOSES is the one registry of every diagnosis id a result can carry: the shared check ids
(rngcheck.conformance.checks) and each axis's own.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any

from ..errors import NotApplicable
from ..registry import Registry
from .axis import Axis
from .case import Case
from .checks import CHECKS
from .judging import judged
from .outcome import Outcome


def _load() -> None:
    from . import conventions, directml, known_answers, properties, rng_bit_generator

    for package in (directml, conventions, rng_bit_generator, known_answers, properties):
        AXES.add(package.AXIS.name, package.AXIS)


AXES: Registry[Axis] = Registry("axis", load=_load)


def _load_diagnoses() -> None:
    for id_, summary in CHECKS.items():
        DIAGNOSES.add(id_, summary)
    for axis in AXES.values():
        for id_, summary in axis.diagnoses().items():
            if id_ not in DIAGNOSES:   # an id two axes give (a round count) is one defect
                DIAGNOSES.add(id_, summary)


DIAGNOSES: Registry[str] = Registry("diagnosis", load=_load_diagnoses)


def axis_of(case: Case) -> Axis:
    """The axis that owns ``case`` (its class names it)."""
    return AXES.get(case.axis)


def of_category(category: str) -> Axis | None:
    for axis in AXES.values():
        if category in axis.categories:
            return axis
    return None


def all_cases() -> list[Case]:
    """Every axis's cases, DirectML's first; a case id is unique over all of them."""
    cases = [case for axis in AXES.values() for case in axis.cases()]
    duplicates = {i for i, n in Counter(c.id for c in cases).items() if n > 1}
    assert not duplicates, f"duplicate case ids: {duplicates}"
    return cases


def errata_of(cases: list[Case]) -> list[str]:
    """The errata of the axes ``cases`` come from (Axis.errata), each once, in registry order."""
    named = {case.axis for case in cases}
    return [text for axis in AXES.values() if axis.name in named for text in axis.errata]


def cases_for(profile: str) -> list[Case]:
    return [c for c in all_cases() if profile in c.profiles]


def run_case(backend, case: Case, *, strict: bool = False, seed: int = 0,
             kept: dict[str, Any] | None = None) -> Outcome:
    """The outcome of any axis's ``case`` on ``backend`` (never raises for anything the backend does):
    its axis's procedure, judged (rngcheck.conformance.judging); not applicable where the backend does
    not implement the axis. ``kept``: what each axis keeps for this backend over a run (Axis.keep),
    filled on first use; None gives this case its own."""
    axis = axis_of(case)
    state = None
    if axis.keep is not None:
        state = axis.keep() if kept is None else kept.setdefault(axis.name, axis.keep())
    context = axis.within(state) if axis.within is not None else contextlib.nullcontext()

    def procedure() -> Outcome:
        if not axis.runs(backend):
            raise NotApplicable(f"the backend runs no {axis.title}")
        judge = axis.procedures[case.procedure]
        return judge(backend, case, strict, seed) if case.procedure in axis.seeded else judge(backend, case, strict)

    with context:
        return judged(case, procedure)

