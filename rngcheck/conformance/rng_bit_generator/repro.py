"""``rngcheck repro --algorithm ...`` of one StableHLO rng_bit_generator call: the verdict, the first
differing elements and the divergence named."""

from __future__ import annotations

import argparse

import numpy as np

from ... import arguments, stablehlo
from ...errors import Rejected, RngcheckError
from ..axis import Repro
from ..outcome import Outcome
from .cases import Case, case


def _arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--algorithm", choices=("DEFAULT", "THREE_FRY", "PHILOX"),
                       help="--state is then its u64 words, --sizes its shape (empty for a scalar), "
                            "--dtype its element type (default uint32)")


def _claims(args: argparse.Namespace) -> list[str]:
    return ["--algorithm"] if args.algorithm is not None else []


def _case(args: argparse.Namespace) -> Case:
    state = arguments.words(args.state, None, "--state")
    if any(not 0 <= w < 1 << 64 for w in state):
        raise RngcheckError("--state: the rng_bit_generator state is u64 words")
    shape = tuple(arguments.words(args.sizes or "", None, "--sizes"))
    dtype = args.dtype or "uint32"
    try:
        stablehlo.validate(args.algorithm, np.array(state, dtype=np.uint64), shape, dtype)
        expected_rule = None
    except Rejected as error:
        if error.rule != "state-size":
            flag = {"element-type": "--dtype", "shape": "--sizes", "element-count": "--sizes"}.get(error.rule or "",
                                                                                                 "--algorithm")
            raise RngcheckError(f"{flag}: {error}") from None
        expected_rule = error.rule   # a validation case reproduced: the backend must refuse it
    return case("repro", "repro", "rngcheck repro", args.algorithm, state, shape, dtype, expected_rule=expected_rule)


def _show(case: Case, outcome: Outcome) -> list[str]:
    return [f"  element {row['index']:>6}  expected {row['expected']}  got {row['actual']}"
            for row in outcome.mismatches or []]


REPRO = Repro(arguments=_arguments, claims=_claims, case=_case, show=_show)
