"""The operator axis: every operator rngcheck checks, as data.

An Operator names its spec module, its backend contract method, its description rules, its case
families, its case categories and the procedures that judge its cases. The runner, the check and
the reports dispatch on this registry (by a case's procedure), never on which operator it is:
adding an operator is adding an entry here (docs/adding-an-operator.md), and
tests/test_stablehlo.py (test_no_module_of_the_directml_operator_or_the_runner_branches_on_an_operator)
checks that no other module names one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import layout
from ..errors import NotApplicable
from . import anatomy, check
from .cases import Case
from .outcome import Outcome


@dataclass(frozen=True)
class Operator:
    name: str                          # the registry key; a backend lists it in ``operators`` (but DirectML)
    title: str
    spec: str                          # the spec module (the reference model)
    method: str                        # the backend contract method (rngcheck.backends.contract)
    rules: Mapping[str, str]           # the description rules, by id
    cases: Callable[[], list]          # every case of the operator (rngcheck.conformance.cases.Case)
    categories: tuple[str, ...]        # the case categories, in table order
    procedures: Mapping[str, Callable[..., Any]] = field(default_factory=dict)   # procedure -> check
    required: bool = False             # every backend implements it (the contract's required method)
    divergences: Mapping[str, str] = field(default_factory=dict)   # named implementation-defined variants
    seeded: frozenset[str] = frozenset()   # the procedures that also take the run's seed (property cases)


_REGISTRY: dict[str, Operator] = {}


def registry() -> dict[str, Operator]:
    """Every operator, DirectML's first (built on first use: the checks import the cases)."""
    if not _REGISTRY:
        from .. import description, stablehlo
        from . import cases as C
        from . import stablehlo_cases, stablehlo_check, stablehlo_diagnosis

        directml_procedures: dict[str, Callable[..., Any]] = {**check.PROCEDURES, C.PROPERTY: check.check_property}
        _REGISTRY["directml"] = Operator(
            "directml", "DirectML DML_RANDOM_GENERATOR (Philox4x32-10)", "rngcheck.reference", "random_generator",
            description.RULES, C.directml_cases,
            ("kat", "vectors", "mapping", "counter", "key", "layout", "state", "validation", "property", "scale",
             "uniform", "normal", "truncated-normal", "integers", "bits", "seed", "guide"),
            directml_procedures, required=True, seeded=frozenset({C.PROPERTY}))
        _REGISTRY["stablehlo"] = Operator(
            "stablehlo", "StableHLO rng_bit_generator (XLA's variant as the reference)", stablehlo.__name__,
            "rng_bit_generator", stablehlo.RULES, stablehlo_cases.stablehlo_cases, stablehlo_cases.CATEGORIES,
            {stablehlo_cases.RNG_BIT_GENERATOR: stablehlo_check.check}, divergences=stablehlo_diagnosis.DIVERGENCES)
        from . import generator_kat
        # Not an operator but the generators under both: every Random123 known answer, one block each
        # (backend.generator_blocks). Asked of every backend (required): whether a backend computes a
        # generator, and at that round count, is each case's to say (not applicable, never a pass).
        _REGISTRY["known-answers"] = Operator(
            "known-answers", "Counter-based generators (Random123's known answers)", "rngcheck.generators",
            "generator_blocks", {}, C.generator_cases, ("generator",), {C.GENERATOR: generator_kat.check_generator},
            required=True)
    return _REGISTRY


def of_procedure(procedure: str) -> Operator:
    """The operator whose procedures include ``procedure``."""
    for operator in registry().values():
        if procedure in operator.procedures:
            return operator
    raise KeyError(f"no operator judges procedure {procedure!r}")


def of_category(category: str) -> Operator | None:
    for operator in registry().values():
        if category in operator.categories:
            return operator
    return None


def runs(backend, operator: Operator) -> bool:
    """Whether ``backend`` implements ``operator`` (its ``operators`` list it, or every backend must)."""
    return operator.required or operator.name in tuple(getattr(backend, "operators", ()) or ())


def all_cases() -> list[Case]:
    """Every operator's cases (DirectML's first)."""
    cases = [case for operator in registry().values() for case in operator.cases()]
    duplicates = {i for i, n in Counter(c.id for c in cases).items() if n > 1}
    assert not duplicates, f"duplicate case ids: {duplicates}"
    for case in cases:
        # Chained executions equal one execution only when every piece but the last fills whole blocks.
        assert all(layout.element_count(s) % 4 == 0 for s in case.chain[:-1]), case.id
        assert not case.chain or sum(layout.element_count(s) for s in case.chain) == case.element_count, case.id
    return cases


def cases_for(profile: str) -> list[Case]:
    return [c for c in all_cases() if profile in c.profiles]


def run_case(backend, case: Case, *, strict: bool = False, seed: int = 0,
             explain: anatomy.Budget | None = None) -> Outcome:
    """The outcome of any operator's ``case`` on ``backend`` (never raises for anything the backend
    does): its operator's procedure, dispatched on data; not applicable where the backend does not run
    the operator."""
    def procedure() -> Outcome:
        operator = of_procedure(case.procedure)   # the operator axis: dispatch on data
        if not runs(backend, operator):
            raise NotApplicable(f"the backend runs no {operator.title}")
        judge = operator.procedures[case.procedure]
        return judge(backend, case, strict, seed) if case.procedure in operator.seeded else judge(backend, case, strict)

    return check.judged(case, procedure, explain)
