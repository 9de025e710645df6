"""The verdict on one rng_bit_generator case (procedure RNG_BIT_GENERATOR; rngcheck.stablehlo).

In order: a program the rules forbid must be refused (rbg-validation); the backend's call
(``rng_bit_generator``: rngcheck.backends.contract) must leave the input state alone and return a
state of the input's size and an output of the case's shape and element type; then the output's
bits and the new state are compared with XLA's variant (the spec), chunk by chunk. An answer that
differs is a *divergence* of an implementation-defined operator: it is named by
rngcheck.conformance.rng_bit_generator.diagnosis when a known variant predicts it ("unknown" otherwise).
"""

from __future__ import annotations

import numpy as np

from ... import stablehlo
from ...errors import Rejected, one_line
from ...results.statuses import FAILED, INFO, PASSED
from ..checks import named
from ..outcome import CaseFailed, Outcome, call_backend
from .diagnosis import diagnose

SHOWN = 8


def call_of(case) -> stablehlo.Call:
    """The case's call, unchecked (a validation case's breaks a rule on purpose)."""
    return stablehlo.Call(case.algorithm, tuple(int(w) for w in case.state), tuple(case.shape), case.dtype)


def _run(backend, call: stablehlo.Call):
    state = np.array(call.state, dtype=np.uint64)
    given = state.copy()
    returned = call_backend(backend, "rng_bit_generator", call.algorithm, given, call.shape, call.dtype)
    if not np.array_equal(given, state):
        raise CaseFailed(Outcome(FAILED, "modified the input state", diagnosis=named("input-state-modified")))
    return returned


def _shaped(call: stablehlo.Call, returned) -> tuple[np.ndarray, np.ndarray]:
    """(new state uint64, output bits as the unsigned type, 1-D) or CaseFailed naming the broken contract."""
    try:
        new_state, output = returned
        new_state, output = np.asarray(new_state), np.asarray(output)
    except (TypeError, ValueError):
        raise CaseFailed(Outcome(FAILED, f"returned {type(returned).__name__}, not (state, output)",
                                 diagnosis=named("contract", "return (new state, output)"))) from None
    if new_state.dtype != np.uint64 or new_state.shape != (len(call.state),):
        raise CaseFailed(Outcome(FAILED, f"returned a state of {new_state.dtype}{list(new_state.shape)}, not "
                                         f"uint64[{len(call.state)}]",
                                 diagnosis=named("contract", "return the state as uint64 of the input's size")))
    if output.dtype != np.dtype(call.dtype) or output.size != call.element_count:
        raise CaseFailed(Outcome(FAILED, f"returned {output.dtype}{list(output.shape)}, not {call.dtype}"
                                         f"{list(call.shape)}",
                                 diagnosis=named("contract", "return the output of the case's shape and dtype")))
    return new_state, output.reshape(-1).view(call.unsigned)


def _expected_chunks(case, call: stablehlo.Call):
    if case.expected_words is not None:
        yield 0, np.array(case.expected_words, dtype=np.uint64).astype(call.unsigned)
        return
    yield from stablehlo.chunks(call)


def hexed(value: int, bits: int) -> str:
    return f"0x{int(value):0{max(2, bits // 4)}x}"


def mismatch_row(call: stablehlo.Call, index: int, expected, actual) -> dict:
    """A wrong element as a results row (rngcheck.results.text MISMATCH_FIELDS): its offset is its
    row-major index (the output is dense), its counter the block that made XLA's element (128 bits for
    PHILOX, 64 for THREE_FRY; the result schema allows both, and elements and states of 8 to 64 bits)."""
    block, lane = stablehlo.block_of(call, index)
    digits = 32 if call.resolved == stablehlo.PHILOX else 16
    coordinates = [int(c) for c in np.unravel_index(index, call.shape)] if call.shape else []
    return {"index": index, "coordinates": coordinates, "offset": index, "expected": hexed(expected, call.bits),
            "actual": hexed(actual, call.bits), "philox_counter": f"0x{block:0{digits}x}", "lane": lane}


def check(backend, case, strict: bool) -> Outcome:
    call = call_of(case)
    if case.expected_rule:
        try:
            _run(backend, call)
        except Rejected as error:
            return Outcome(PASSED, f"refused ({one_line(error)[:160]})")
        if getattr(backend, "validates", False):
            return Outcome(FAILED, f"accepted a program the rules forbid ({case.expected_rule})",
                           diagnosis=named("accepts-invalid", f"does not enforce rule {case.expected_rule}"))
        return Outcome(INFO, "does not validate: accepted it")
    try:
        returned = _run(backend, call)
    except Rejected as error:
        return Outcome(FAILED, f"refused a valid program: {one_line(error)[:300]}", diagnosis=named("rejects-valid"))
    new_state, output = _shaped(call, returned)
    rows: list[dict] = []
    count = 0
    for first, expected in _expected_chunks(case, call):
        actual = output[first:first + expected.size]
        wrong = np.flatnonzero(expected != actual)
        count += int(wrong.size)
        for i in wrong[:max(0, SHOWN - len(rows))]:
            rows.append(mismatch_row(call, first + int(i), expected[i], actual[i]))
    expected_state = np.array(case.expected_state, dtype=np.uint64) if case.expected_state is not None \
        else stablehlo.new_state(call)
    state_right = np.array_equal(new_state, expected_state)
    if not count and state_right:
        return Outcome(PASSED, f"{call.element_count} {call.dtype} elements and the state as XLA's",
                       returned_state=[hexed(w, 64) for w in new_state])
    said = []
    if count:
        said.append(f"{count} of {call.element_count} elements differ from XLA's variant")
    if not state_right:
        said.append(f"output state [{', '.join(hexed(w, 64) for w in new_state)}], XLA's "
                    f"[{', '.join(hexed(w, 64) for w in expected_state)}]")
    found = diagnose(call, new_state, output)   # the variants are models of the call (explicit words are XLA's)
    if found is not None:
        message = f"{'; '.join(said)}: a divergence (the variant is implementation-defined): {found['id']}"
    else:
        found = named("unknown", "no known variant of rng_bit_generator predicts this output")
        message = f"{'; '.join(said)}; looks like: unknown"
    return Outcome(FAILED, message, diagnosis=found, mismatches=rows, mismatch_count=count)
