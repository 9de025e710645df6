"""The diagnoses a check gives without a model of the defect, shared by every axis.

A broken contract, a crash, a hang, a write outside the extent, a refusal of a valid call: each
id here says what it means, once; ``named`` is how every check writes one. The model-based ids
(the wrong variants each axis searches) live in the axis's own diagnosis module, and the one
registry of every id a result can carry is rngcheck.conformance.axes.DIAGNOSES.
"""

from __future__ import annotations

CHECKS = {
    "contract": "the backend broke the Python contract (what random_generator returns or raises)",
    "out-of-extent-write": "wrote outside [0, sum((size_d-1)*stride_d)] of the buffer",
    "input-state-modified": "the InputStateTensor is read-only",
    "padding-overwritten": "wrote between elements",
    "rank-4-only": "refuses tensors that are not 4-D (4.0 allows 1 to 8 dims)",
    "rejects-valid": "refuses a valid description",
    "accepts-invalid": "accepts a description the rules forbid",
    "hidden-state": "output depends on earlier executions (state kept between executions)",
    "nondeterministic": "the same description gave different results when run again (sometimes right, "
                        "sometimes not): the backend's nondeterminism",
    "crashed": "the backend's process died during the call",
    "timeout": "no answer within the time limit; process ended",
    "stopped": "the backend stopped answering; its remaining cases were not run",
    "protocol": "stdout carries only protocol messages",
    "rngcheck-internal-error": "please report this",
    "unknown": "no known defect predicts this output",
}


def named(id_: str, summary: str | None = None, **fields) -> dict:
    """A check's diagnosis: a registered id (CHECKS), with the summary this case adds, if any."""
    if id_ not in CHECKS:
        raise KeyError(f"diagnosis id {id_!r} is not registered in conformance.checks.CHECKS")
    return {"id": id_, "summary": summary or CHECKS[id_], **fields}


def rounds_id(rounds: int) -> str:
    """The id of a wrong round count (R rounds instead of the generator's), for every generator and
    every axis that models one (the operator's words, the generators' blocks)."""
    return f"rounds-{rounds}"


def looks_like(message: str, diagnosis: dict) -> str:
    """A failure's message with the diagnosis it was given."""
    return f"{message}; looks like: {diagnosis['id']}"
