"""The axis interface: what a conformance axis is, as data.

An axis is one thing rngcheck checks implementations of: DirectML's operator, the numbers
conventions on its words, StableHLO's rng_bit_generator, the generators' known answers. Each is
a folder of rngcheck/conformance/ with its cases (a Case subclass: rngcheck.conformance.case),
its checks and its diagnosis, and one :class:`Axis` value in its ``__init__``; the registry
(rngcheck.conformance.axes) lists them. The runner, the judging chain, the reports and the CLI
dispatch on this value, never on which axis it is (docs/adding-an-operator.md).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .case import Case
from .outcome import Outcome


@dataclass(frozen=True)
class Repro:
    """How ``rngcheck repro`` reruns one call of the axis (the CLI asks the axis that claims its options).

    ``arguments(parser)`` adds the axis's own options (the shared ones: --backend, --state, --sizes,
    --dtype, --json, --timeout). ``claims(args)``: the axis's own options that ``args`` give (none:
    not this axis's call).
    ``case(args)``: the case they describe (RngcheckError, one line, for one that cannot be).
    ``look(case, outcome)``: what to keep of the outcome while its call is still held (the words).
    ``show(case, looked)``: the lines printed before the verdict. ``settle(document, case)``: the
    verdict's last word (an implementation-defined call: nothing needs to pass). ``write(path,
    document, case, looked)``: the ``--json`` document (None: the result document). ``needs_state``:
    whether the call reads ``--state`` (a property case names its own seeds).
    """

    # (The hooks take the axis's own Case subclass: typed loosely, as a registry of callables is.)
    arguments: Callable[[argparse._ArgumentGroup], None]
    claims: Callable[[argparse.Namespace], list[str]]
    case: Callable[[argparse.Namespace], Case]
    look: Callable[..., Any] = lambda case, outcome: outcome
    show: Callable[..., list[str]] = lambda case, looked: []
    settle: Callable[..., None] | None = None
    write: Callable[..., None] | None = None
    needs_state: bool = True          # False: the axis's call names its own states (--state is not asked)


@dataclass(frozen=True)
class Axis:
    name: str                          # the registry key; a backend lists it in ``operators`` unless required
    title: str
    spec: str                          # the spec module (the reference model)
    method: str                        # the backend contract method (rngcheck.backends.contract)
    rules: Mapping[str, str]           # the description rules, by id
    cases: Callable[[], list]          # every case of the axis (its rngcheck.conformance.case.Case subclass)
    categories: tuple[str, ...]        # the case categories, in table order
    procedures: Mapping[str, Callable[..., Outcome]] = field(default_factory=dict)   # procedure -> check
    required: bool = False             # every backend is asked (whether a case applies is the case's to say)
    divergences: Mapping[str, str] = field(default_factory=dict)   # named implementation-defined variants
    seeded: frozenset[str] = frozenset()   # the procedures that also take the run's seed (property cases)
    diagnoses: Callable[[], Mapping[str, str]] = dict   # every id its checks give beside the shared ones
    # What the axis keeps per backend over a run (DirectML: the anatomy budget of its first failing cases),
    # and how each of its cases runs under it.
    keep: Callable[[], Any] | None = None
    within: Callable[[Any], contextlib.AbstractContextManager] | None = None
    repro: Repro | None = None
    errata: tuple[str, ...] = ()       # what the axis's sources get wrong (the result document says it)

    def runs(self, backend) -> bool:
        """Whether ``backend`` implements the axis (its ``operators`` list it, or every backend is asked)."""
        return self.required or self.name in tuple(getattr(backend, "operators", ()) or ())
