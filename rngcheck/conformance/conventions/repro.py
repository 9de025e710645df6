"""``rngcheck repro --kind ...`` of one numbers request: each number with its bits and ULPs."""

from __future__ import annotations

import argparse

from ... import arguments, numbers
from ...counter import as_state_words
from ...errors import RngcheckError
from ..axis import Repro
from ..outcome import Outcome
from .cases import NUMBERS_RULE, Case
from .check import repro_text

REPRO_ID = "repro/command-line"
OPTIONS = ("--kind", "--convention", "--count", "--low", "--high", "--seed-pair")


def _arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--kind", help="uniform, normal, truncated_normal, integers, bits")
    group.add_argument("--convention", help="tensorflow (default), jax, pytorch, curand, mkl, onnxruntime, ...")
    group.add_argument("--count", help="how many numbers (default 8)")
    group.add_argument("--low")
    group.add_argument("--high")
    group.add_argument("--seed-pair", metavar="A,B", help="a stateless seed (the state is then ignored)")


def _claims(args: argparse.Namespace) -> list[str]:
    return [flag for flag in OPTIONS if getattr(args, flag[2:].replace("-", "_")) is not None]


def _case(args: argparse.Namespace) -> Case:
    if args.kind is None:
        raise RngcheckError(f"repro draws numbers with --kind; {', '.join(_claims(args))} without it")
    words = tuple(arguments.words(args.state, 6, "--state"))
    if as_state_words(words) is None:
        raise RngcheckError(f"--state: every word must be in 0..0xffffffff, got {args.state!r}")
    seed: tuple[int, int] | None = None
    if args.seed_pair:
        first, second = arguments.words(args.seed_pair, 2, "--seed-pair")
        seed = (first, second)
    count = arguments.number(args.count or "8", "--count")
    if not isinstance(count, int) or count < 1:
        raise RngcheckError(f"--count {args.count!r}: repro draws a positive whole number of numbers")
    request = numbers.Request(args.convention or "tensorflow", args.kind, args.dtype or "float32", count,
                              arguments.number(args.low, "--low"), arguments.number(args.high, "--high"), seed)
    numbers.check(request)   # one its convention does not define: NumbersError, one line
    return Case(id=REPRO_ID, category="repro", description=f"from the command line: {request.text()}",
                rule=NUMBERS_RULE, source="rngcheck.numbers", state=words, request=request)


def _show(case: Case, outcome: Outcome) -> list[str]:
    return repro_text(case.request, outcome.values) if outcome.values is not None else []


REPRO = Repro(arguments=_arguments, claims=_claims, case=_case, show=_show)
