"""``rngcheck repro``: one call of one axis on one backend, judged as ``rngcheck run`` judges it.

The command's options are the shared ones (--backend, --state, --sizes, --dtype, --json,
--timeout) and each axis's own (rngcheck.conformance.axis.Repro.arguments). The axis whose own
options are given reruns the call; with none, the first axis that has a repro (DirectML's words).
Two axes' options together are a usage error (one line), never one silently ignored.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import RngcheckError
from .axes import AXES
from .axis import Axis
from .case import Case
from .runner import NamedBackend, RunOptions, run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Each axis's own options, a group each."""
    for axis in AXES.values():
        if axis.repro is not None:
            axis.repro.arguments(parser.add_argument_group(axis.title))


def axis_for(args: argparse.Namespace) -> Axis:
    """The axis whose own options ``args`` give (RngcheckError, one line, for two axes' options)."""
    claimed = [(axis, flags) for axis in AXES.values() if axis.repro is not None
               if (flags := axis.repro.claims(args))]
    if len(claimed) > 1:
        (first, one), (second, other) = claimed[:2]
        raise RngcheckError(f"{one[0]} ({first.title}) and {other[0]} ({second.title}) cannot be combined: "
                            f"repro reruns one call")
    axis = claimed[0][0] if claimed else next(axis for axis in AXES.values() if axis.repro is not None)
    assert axis.repro is not None
    if axis.repro.needs_state and getattr(args, "state", None) is None:
        raise RngcheckError("--state is required (the state's words, e.g. 0x0,0x0,0x0,0x0,0x1,0x2)")
    return axis


def run_one(backends: list[NamedBackend], case: Case, axis: Axis, command: list[str]) -> tuple[dict, Any]:
    """The result document of ``case`` on the one backend, and what the axis looked at in its outcome
    (Repro.look, while the call's buffers are still held)."""
    assert axis.repro is not None
    looked: list[Any] = []
    document = run(backends, RunOptions(profile="repro", command=command, cases=[case]),
                   observe=lambda named, case, outcome: looked.append(axis.repro.look(case, outcome)))
    if axis.repro.settle is not None:
        axis.repro.settle(document, case)
    return document, looked[0] if looked else None
