"""``rngcheck repro --property ID``: one property case rerun on one backend, its verdict and what shows it."""

from __future__ import annotations

import argparse

from ...errors import RngcheckError
from ..axis import Repro
from ..outcome import Outcome
from .cases import Case, by_id, property_cases


def _arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--property", metavar="ID", help="a property case (properties/...; rngcheck run --list "
                                                        "--case 'properties/*' lists them)")


def _claims(args: argparse.Namespace) -> list[str]:
    return ["--property"] if getattr(args, "property", None) is not None else []


def _case(args: argparse.Namespace) -> Case:
    case = by_id(args.property)
    if case is None:
        raise RngcheckError(f"--property: no property case {args.property!r} (known: "
                            f"{', '.join(c.id for c in property_cases())})")
    return case


def _show(case: Case, outcome: Outcome) -> list[str]:
    lines = [f"  {case.description}"]
    if outcome.diagnosis:
        lines.append(f"  {outcome.diagnosis['id']}: {outcome.diagnosis['summary']}")
    return lines


REPRO = Repro(arguments=_arguments, claims=_claims, case=_case, show=_show, needs_state=False)
