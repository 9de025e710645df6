"""The verdict on one case for one backend. The suite owns it; a backend only computes.

Every execution goes through :func:`execute`: the buffer is prefilled (guard words
outside the extent, a padding pattern in the gaps, an "unwritten" pattern on the
elements), the input state is copied, the backend is called, and then, in order:
input state untouched, guard words intact, element words, returned state, padding.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ... import counter, layout, reference, sharedmem
from ...errors import NotRunHere, Rejected, one_line
from ...results.statuses import (  # noqa: F401  (the statuses, as the checks of this axis name them)
    BROKEN,
    CRASHED,
    ERROR,
    FAILED,
    INFO,
    NOT_APPLICABLE,
    NOT_RUN,
    PASSED,
    SKIPPED,
    TIMEOUT,
)
from ...vectors import sha256_of_words
from .. import chain
from ..checks import looks_like, named
from ..judging import judged
from ..outcome import BackendRaised, CaseFailed, Outcome, call_backend
from . import anatomy, search, wraps
from . import cases as C
from .cases import hex_word
from .diagnosis import diagnose_output, diagnose_state

GUARD_WORDS = 64
GUARD = 0xDEADBEEF      # outside the extent: must never change
PADDING = 0xFEEDFACE    # inside the extent, no element there: implementation-defined
UNWRITTEN = 0xBAADF00D  # element positions before the call: "never written" shows
MISMATCHES_SHOWN = 8
# A buffer at least this large (words) is held once: no second execution of the case to compare with
# (a wrong answer is not run again), and every pass over it is chunked (issue 29, the huge profile).
HUGE_WORDS = 1 << 28
MEMORY_MARGIN = 1 << 30   # bytes left free besides a shared buffer (chunks, the worker, the rest)



@dataclass
class Execution:
    """One call of the backend and what it left behind."""

    full: np.ndarray            # guards + buffer: the backend saw full[GUARD_WORDS:]
    extent: int                 # words of the tensor's extent
    returned: object
    state_before: np.ndarray    # the state array as passed (the case's shape and dtype) ...
    state_after: np.ndarray     # ... and as the backend left it
    seconds: float
    # The input state as the expectation reads it: six uint32 words (counter.as_state_words),
    # None when the case's state is not one (some validation cases). The one normalisation.
    state: np.ndarray | None = None

    @property
    def tensor(self) -> np.ndarray:
        return self.full[GUARD_WORDS:GUARD_WORDS + self.extent]


def state_input(case: C.Case, words) -> np.ndarray:
    """The state array the backend is given: ``words`` in the case's state shape and dtype."""
    values = np.array([int(w) for w in np.asarray(words).reshape(-1)], dtype=np.int64)
    # A state described with other sizes than 6 words (a validation case) repeats its words.
    return np.resize(values, case.shape_of_state()).astype(case.state_dtype)


def new_buffer(words: int) -> np.ndarray:
    """An uninitialised uint32 buffer: in shared memory when it is large (rngcheck.sharedmem, so that a
    worker maps it instead of receiving a copy), after checking that this machine has room for it."""
    if words < sharedmem.SHARED_WORDS:
        return np.empty(words, dtype=np.uint32)
    why = sharedmem.shortfall(words * sharedmem.WORD_BYTES, MEMORY_MARGIN)
    if why is not None:
        raise NotRunHere(f"not run on this machine: the buffer does not fit: {why}")
    return sharedmem.allocate(words)


def prefilled_buffer(case: C.Case) -> tuple[np.ndarray, int]:
    """(full array, extent): guards, then the extent with padding/unwritten patterns, then guards."""
    if case.buffer_elements is not None:
        extent = case.buffer_elements
        full = np.full(GUARD_WORDS + extent + GUARD_WORDS, GUARD, dtype=np.uint32)
        full[GUARD_WORDS:GUARD_WORDS + extent] = UNWRITTEN
        return full, extent
    extent = layout.required_elements(case.sizes, case.strides)
    full = new_buffer(GUARD_WORDS + extent + GUARD_WORDS)
    full[:GUARD_WORDS] = GUARD
    full[GUARD_WORDS + extent:] = GUARD
    tensor = full[GUARD_WORDS:GUARD_WORDS + extent]
    if layout.is_packed(case.sizes, case.strides):
        tensor[:] = UNWRITTEN
    else:
        tensor[:] = PADDING
        for first, count in reference.chunks(case.element_count, 1 << 22):   # bounded: no mask of the extent
            tensor[layout.physical_offsets(case.sizes, case.strides, first, count)] = UNWRITTEN
    return full, extent


def execute(backend, case: C.Case, state=None, sizes=None) -> Execution:
    """Call the backend on ``case`` (or its state/sizes overridden) with a prefilled buffer."""
    if sizes is not None:
        case = replace(case, sizes=tuple(sizes), strides=None)
    full, extent = prefilled_buffer(case)
    # Normally the buffer runs on past the extent (the tail guards are in it, as in a larger
    # D3D12 buffer); a case that sets buffer_elements gets exactly that many words.
    buffer = full[GUARD_WORDS:] if case.buffer_elements is None else full[GUARD_WORDS:GUARD_WORDS + extent]
    if case.output_dtype != "uint32":
        buffer = buffer.view(case.output_dtype)
    given = case.state if state is None else state
    state_array = state_input(case, given)
    state_before = state_array.copy()
    start = time.perf_counter()
    returned = call_backend(backend, "random_generator", state_array, tuple(case.sizes), case.strides, buffer,
                            output_state=case.output_state, feature_level=case.feature_level)
    seconds = time.perf_counter() - start
    return Execution(full, extent, returned, state_before, state_array, seconds, counter.as_state_words(given))


def expected_words(case: C.Case, state, first: int, count: int) -> np.ndarray:
    """Expected logical words first .. first+count-1: the case's explicit words, or the reference's."""
    if case.expected_words is not None:
        return np.array(case.expected_words[first:first + count], dtype=np.uint32)
    return reference.words(state, first, count)


def actual_words(case: C.Case, tensor: np.ndarray, first: int, count: int) -> np.ndarray:
    """The tensor's logical elements first .. first+count-1, read at their physical offsets (packed:
    a view of the buffer, not a copy)."""
    if layout.is_packed(case.sizes, case.strides):
        return tensor[first:first + count]
    return tensor[layout.physical_offsets(case.sizes, case.strides, first, count)]


def expected_chunks(case: C.Case, state: np.ndarray):
    """(first, words) of the expected logical words, chunk by chunk (bounded memory)."""
    if case.expected_words is not None:
        yield 0, np.array(case.expected_words, dtype=np.uint32)
        return
    for first, count in reference.chunks(case.element_count):
        yield first, expected_words(case, state, first, count)


def actual_chunks(case: C.Case, tensor: np.ndarray, whole: bool = False):
    """(first, words) of the tensor's elements in logical order, chunk by chunk (or whole)."""
    chunk = max(1, case.element_count) if whole else reference.CHUNK_ELEMENTS
    for first, count in reference.chunks(case.element_count, chunk):
        yield first, actual_words(case, tensor, first, count)


def compared_chunks(case: C.Case, state, tensor: np.ndarray):
    """(first, expected, actual, wrong) chunk by chunk; ``wrong``: the chunk's positions that differ."""
    whole = case.expected_words is not None  # an explicit expectation is one chunk
    for (first, expected), (_, actual) in zip(expected_chunks(case, state), actual_chunks(case, tensor, whole)):
        yield first, expected, actual, np.flatnonzero(expected != actual)


def mismatch_row(case: C.Case, state, index: int, offset: int, expected: int, actual: int) -> dict:
    coords = [int(c[0]) for c in layout.coordinates(case.sizes, [index])]
    return {
        "index": int(index), "coordinates": coords,
        "offset": int(offset), "expected": hex_word(expected), "actual": hex_word(actual),
        "philox_counter": counter.counter_text(counter.counter_of(counter.add_to_counter(state, index // 4))),
        "lane": int(index % 4),
    }


def check_guards(execution: Execution) -> None:
    front = execution.full[:GUARD_WORDS]
    back = execution.full[GUARD_WORDS + execution.extent:]
    bad_front = np.flatnonzero(front != GUARD)
    bad_back = np.flatnonzero(back != GUARD)
    if bad_front.size or bad_back.size:
        offsets = [int(i) - GUARD_WORDS for i in bad_front] + [execution.extent + int(i) for i in bad_back]
        raise CaseFailed(Outcome(
            FAILED, f"wrote outside the tensor's extent of {execution.extent} words at offsets "
                    f"{offsets[:8]}{' ...' if len(offsets) > 8 else ''}",
            diagnosis=named("out-of-extent-write")))


def check_input_state(execution: Execution) -> None:
    if not np.array_equal(execution.state_before, execution.state_after):
        raise CaseFailed(Outcome(
            FAILED, f"modified the input state: {[hex_word(w) for w in execution.state_before.reshape(-1)]} -> "
                    f"{[hex_word(w) for w in execution.state_after.reshape(-1)]}",
            diagnosis=named("input-state-modified")))


def compare_words(case: C.Case, execution: Execution) -> str:
    """Raise CaseFailed on mismatching words; return the output's sha256."""
    state = execution.state
    tensor = execution.tensor
    if case.expected_sha256 is not None:
        digest = sha256_of_words(words for _, words in actual_chunks(case, tensor))
        if digest != case.expected_sha256:
            rows, count, _ = scan_mismatches(replace(case, expected_sha256=None), state, tensor)
            raise _mismatch_outcome(case, state, execution, rows, count, digest,
                                    f"sha256 of the output is {digest[:16]}..., expected "
                                    f"{case.expected_sha256[:16]}...")
        return digest
    rows, count, digest = scan_mismatches(case, state, tensor)
    if count:
        raise _mismatch_outcome(case, state, execution, rows, count, digest,
                                f"{count} of {case.element_count} elements differ")
    return digest


def scan_mismatches(case: C.Case, state, tensor):
    """(first mismatch rows, mismatch count, sha256 of the actual words) of the tensor against the
    expectation, in one pass of bounded chunks."""
    import hashlib

    rows: list[dict] = []
    count = 0
    digest = hashlib.sha256()
    for first, expected, actual, wrong in compared_chunks(case, state, tensor):
        digest.update(np.ascontiguousarray(actual, dtype="<u4").data.cast("B"))
        count += wrong.size
        for i in wrong[:max(0, MISMATCHES_SHOWN - len(rows))]:
            index = first + int(i)
            offset = int(layout.physical_offsets(case.sizes, case.strides, index, 1)[0])
            rows.append(mismatch_row(case, state, index, offset, expected[i], actual[i]))
    return rows, count, digest.hexdigest()


class WrongWords(CaseFailed):
    """Wrong element words: the outcome, and the message before its diagnosis (so that a
    later finding, such as hidden state, can give it another)."""

    def __init__(self, outcome: Outcome, message: str):
        super().__init__(outcome)
        self.message = message

    def diagnosed(self, diagnosis: dict) -> None:
        """Another diagnosis of the same wrong words (the anatomy of the words stays)."""
        explained = (self.outcome.diagnosis or {}).get("anatomy")
        if explained is not None and "anatomy" not in diagnosis:
            diagnosis = {**diagnosis, "anatomy": explained}
        self.outcome.diagnosis = diagnosis
        self.outcome.message = looks_like(self.message, diagnosis)


def _mismatch_outcome(case, state, execution, rows, count, digest, message) -> WrongWords:
    wrapped = wraps.diagnose(state, case.sizes, case.strides, execution.tensor, UNWRITTEN) \
        if state is not None else None
    diagnosis = wrapped or diagnose_output(state, case.sizes, case.strides, execution.tensor, UNWRITTEN)
    if rows and state is not None:
        padding = None if layout.is_packed(case.sizes, case.strides) else PADDING
        explained, found = anatomy.explain_words(state, case.sizes, case.strides, execution.tensor,
                                                 rows[0]["index"], UNWRITTEN, padding,
                                                 named=diagnosis["id"] != "unknown")
        if found is not None and wrapped is None:
            diagnosis = found
        if wrapped is None:
            diagnosis = _searched(state, case, execution.tensor, diagnosis) or diagnosis
        if explained is not None:
            diagnosis["anatomy"] = explained
            if "inference" in diagnosis and "findings" in explained:
                explained["findings"].append(f"search: no change of one or two steps of the chain reproduces it; "
                                             f"{diagnosis['inference']}")
    return WrongWords(Outcome(FAILED, looks_like(message, diagnosis), diagnosis=diagnosis,
                              mismatches=rows, mismatch_count=int(count), output_sha256=digest), message)


def _searched(state, case, tensor: np.ndarray, diagnosis: dict) -> dict | None:
    """The chain's search (rngcheck.conformance.directml.search) within the backend's search budget: on an
    unknown case, its single changes then pairs; on a named one that is a point of the chain (the backend's
    first anatomy.COMPLETIONS_PER_BACKEND of them), the other single changes that reproduce the case (its
    alternatives made complete)."""
    seconds = anatomy.search_seconds(chain.SECONDS)
    if seconds is None or (diagnosis["id"] != "unknown" and (diagnosis["id"] not in search.POINT_IDS
                                                              or not anatomy.take_completion())):
        return None
    start = time.perf_counter()
    try:
        if diagnosis["id"] == "unknown":
            return search.diagnose_words(state, case.sizes, case.strides, tensor, seconds=seconds)
        return search.complete(diagnosis, state, case.sizes, case.strides, tensor)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception:  # rngcheck's own bug: the search never changes a verdict, the diagnosis stays
        return None
    finally:
        anatomy.search_spent(time.perf_counter() - start)


def expected_state(case: C.Case, state: np.ndarray | None) -> np.ndarray:
    """The output state the case expects: explicit, or the input counter advanced by ceil(n/4)."""
    if case.expected_state is not None:
        return np.array(case.expected_state, dtype=np.uint32)
    if state is None:
        raise ValueError(f"case {case.id}: its input is not a state, so there is no output state to expect")
    return counter.advance(state, case.element_count)


def check_returned_state(case: C.Case, execution: Execution) -> list | None:
    state = execution.state
    returned = execution.returned
    if not case.output_state:
        if returned is not None:
            raise CaseFailed(Outcome(FAILED, "returned a state although no OutputStateTensor was described",
                                     diagnosis=named("contract", "return None without an output state")))
        return None
    if returned is None:
        raise CaseFailed(Outcome(FAILED, "returned no state although an OutputStateTensor was described",
                                 diagnosis=named("contract", "return the 6-word output state")))
    actual = counter.as_state_words(returned)
    if actual is None:
        raise CaseFailed(Outcome(FAILED, f"returned state is not 6 uint32 words: {str(returned)[:80]!r}",
                                 diagnosis=named("contract", "return numpy uint32 of 6 words")))
    expected = expected_state(case, state)
    if not np.array_equal(actual, expected):
        diagnosis = diagnose_state(state, case.element_count, actual)
        if state is not None:
            explained, found = anatomy.explain_state(state, case.element_count, actual,
                                                     named=diagnosis["id"] != "unknown-state")
            diagnosis = {**(found or diagnosis), **({"anatomy": explained} if explained else {})}
        raise CaseFailed(Outcome(
            FAILED, looks_like(f"output state {[hex_word(w) for w in actual]}, expected "
                               f"{[hex_word(w) for w in expected]}", diagnosis), diagnosis=diagnosis))
    return [hex_word(w) for w in actual]


def padding_observation(case: C.Case, execution: Execution, strict: bool) -> str | None:
    tensor = execution.tensor
    if layout.is_packed(case.sizes, case.strides) or layout.aliases(case.sizes, case.strides):
        gap_count = 0 if layout.is_packed(case.sizes, case.strides) else -1
    else:
        gap_count = tensor.size - case.element_count   # distinct offsets: every other word is a gap
    if gap_count < 0:
        gaps = ~layout.covered_mask(case.sizes, case.strides, tensor.size)
        gap_count = int(gaps.sum())
        changed = int((tensor[gaps] != PADDING).sum()) if gap_count else 0
    elif gap_count:
        # Bounded: words that are not PADDING over the extent, less those at element offsets.
        changed = sum(int(np.count_nonzero(tensor[at:at + (1 << 22)] != PADDING))
                      for at in range(0, tensor.size, 1 << 22))
        changed -= sum(int(np.count_nonzero(words != PADDING)) for _, words in actual_chunks(case, tensor))
    if not gap_count:
        return None
    if not changed:
        return f"padding preserved ({gap_count} padding words untouched)"
    text = f"padding not preserved: {changed} of {gap_count} padding words overwritten"
    if strict:
        raise CaseFailed(Outcome(FAILED, text + " (strict profile requires padding to be preserved)",
                                 diagnosis=named("padding-overwritten")))
    return text


def check_execute(backend, case: C.Case, strict: bool) -> Outcome:
    execution = execute(backend, case)
    try:
        outcome = _judge_execution(backend, case, execution, strict)
    except CaseFailed as failed:
        failed.outcome.execution = execution
        raise
    outcome.execution = execution
    return outcome


def _judge_execution(backend, case: C.Case, execution: Execution, strict: bool) -> Outcome:
    check_input_state(execution)
    check_guards(execution)
    try:
        digest = compare_words(case, execution)
    except WrongWords as failed:
        if execution.full.size >= HUGE_WORDS:
            raise  # held once: not run again to compare (two buffers this size would not fit)
        # Wrong words: first ask whether the same input even gives the same output twice.
        again = execute(backend, case)
        if not np.array_equal(again.tensor, execution.tensor):
            failed.diagnosed(changed_between_runs(backend, case, execution, again))
        raise
    returned = check_returned_state(case, execution)
    observations = [o for o in [padding_observation(case, execution, strict)] if o]
    return Outcome(PASSED, "", output_sha256=digest, returned_state=returned, observations=observations)


REPEATS = 3  # further executions of a description whose output changed when it was run again


def words_right(case: C.Case, execution: Execution) -> bool:
    """Whether an execution's words are the expected ones (no diagnosis: a plain comparison)."""
    if case.expected_sha256 is not None:
        return sha256_of_words(w for _, w in actual_chunks(case, execution.tensor)) == case.expected_sha256
    return scan_mismatches(case, execution.state, execution.tensor)[1] == 0


def first_difference(case: C.Case, one: np.ndarray, other: np.ndarray, state) -> dict | None:
    """The first element (logical order) at which two outputs of the same description differ."""
    for (first, a), (_, b) in zip(actual_chunks(case, one), actual_chunks(case, other)):
        at = np.flatnonzero(a != b)
        if at.size:
            index = first + int(at[0])
            offset = int(layout.physical_offsets(case.sizes, case.strides, index, 1)[0])
            right = expected_words(case, state, index, 1) if state is not None else None
            return {"index": index, "offset": offset, "values": [hex_word(a[at[0]]), hex_word(b[at[0]])],
                    "expected": None if right is None or not right.size else hex_word(right[0])}
    return None


def difference_text(difference: dict | None) -> str:
    if not difference:
        return ""
    expected = f" (expected {difference['expected']})" if difference.get("expected") else ""
    return (f"; first difference at element {difference['index']} (offset {difference['offset']}): "
            f"{difference['values'][0]} then {difference['values'][1]}{expected}")


def changed_between_runs(backend, case: C.Case, first: Execution, again: Execution) -> dict:
    """The diagnosis of a description whose words changed when it was run again: REPEATS more runs.

    Some run right: ``nondeterministic`` (the backend is sometimes right: a race, an uninitialised
    read, a flaky device). Every run wrong, differently: ``hidden-state`` (the output follows the
    backend's history). Either way the backend's fault, with the first difference as evidence.
    """
    runs = [first, again] + [execute(backend, case) for _ in range(REPEATS)]
    right = sum(words_right(case, run) for run in runs)
    distinct = len({run.tensor.tobytes() for run in runs})
    difference = first_difference(case, first.tensor, again.tensor, first.state)
    evidence = {"executions": len(runs), "right": int(right), "distinct_outputs": distinct,
                "first_difference": difference}
    said = f"{len(runs)} runs of the same description gave {distinct} different outputs, {right} of them right"
    if right:
        return named("nondeterministic", said + difference_text(difference), repeats=evidence)
    return named("hidden-state", said + " (state kept between executions)" + difference_text(difference),
                 repeats=evidence)


def check_repeat(backend, case: C.Case, strict: bool) -> Outcome:
    first = check_execute(backend, case, strict)
    state = first.execution.state if first.execution is not None else None
    assert state is not None, "check_execute keeps the execution; a repeat case's input is a state"
    execute(backend, case, state=counter.add_to_counter(state, 0x1234567))
    again = execute(backend, case)
    if not np.array_equal(again.tensor, execute_reference_tensor(case, state)) or \
            not np.array_equal(np.asarray(again.returned).reshape(-1), counter.advance(state, case.element_count)):
        raise CaseFailed(Outcome(
            FAILED, "the same input gave a different result on a later execution",
            diagnosis=named("hidden-state", "output depends on earlier executions (global state)")))
    return first


def execute_reference_tensor(case: C.Case, state: np.ndarray) -> np.ndarray:
    full, extent = prefilled_buffer(case)
    tensor = full[GUARD_WORDS:]
    reference.random_generator(state, case.sizes, case.strides, tensor,
                               output_state=False, feature_level=case.feature_level)
    return tensor[:extent]


def check_chain(backend, case: C.Case, strict: bool) -> Outcome:
    """Executions chained through the returned state equal one execution of the total."""
    state: tuple[int, ...] | np.ndarray = case.state
    pieces = []
    for sizes in case.chain:
        piece = replace(case, sizes=tuple(sizes), strides=None, state=tuple(int(w) for w in state),
                        procedure=C.EXECUTE)
        execution = execute(backend, piece)
        check_input_state(execution)
        check_guards(execution)
        try:
            compare_words(piece, execution)
        except WrongWords as failed:
            again = execute(backend, piece)
            if not np.array_equal(again.tensor, execution.tensor):
                failed.diagnosed(changed_between_runs(backend, piece, execution, again))
            raise
        check_returned_state(piece, execution)
        pieces.append(execution.tensor.copy())
        words = counter.as_state_words(execution.returned)
        assert words is not None, "six words: check_returned_state passed"
        state = words
    joined = np.concatenate(pieces)
    single = reference.words(case.state, 0, joined.size)
    if not np.array_equal(joined, single) or not np.array_equal(state, counter.advance(case.state, joined.size)):
        raise CaseFailed(Outcome(FAILED, "chained executions differ from one execution",
                                 diagnosis=named("unknown", "each piece is right but the chain is not",
                                                 alternatives=[])))
    return Outcome(PASSED, f"{len(case.chain)} executions chained", returned_state=[hex_word(w) for w in state])


def check_reject(backend, case: C.Case, strict: bool) -> Outcome:
    validates = bool(getattr(backend, "validates", False))
    if not validates and case.only_if_validating:
        return Outcome(NOT_APPLICABLE, f"not applicable: not run on a backend that does not validate: "
                                       f"{case.only_if_validating}")
    try:
        execution = execute(backend, case)
    except Rejected as error:
        rule = getattr(error, "rule", None)
        note = f"rejected ({rule})" if rule else "rejected"
        if rule and rule != case.expected_rule:
            note += f"; expected rule {case.expected_rule}"
        return Outcome(PASSED, note)
    except BackendRaised as raised:
        cause = raised.error
        if validates:
            return Outcome(FAILED, f"raised {one_line(cause)} instead of rngcheck.Rejected",
                           diagnosis=named("contract", "refuse invalid descriptions with Rejected"))
        return Outcome(INFO, f"does not validate; raised {one_line(cause)}")
    if validates:
        return Outcome(FAILED, f"accepted an invalid description ({case.expected_rule})",
                       diagnosis=named("accepts-invalid", f"does not enforce rule {case.expected_rule}"))
    written = int((execution.tensor != UNWRITTEN).sum())
    return Outcome(INFO, f"does not validate: accepted it and wrote {written} words")


def check_alias(backend, case: C.Case, strict: bool) -> Outcome:
    try:
        execution = execute(backend, case)
    except Rejected as error:
        # What an aliasing output holds is implementation-defined; refusing to describe one
        # is as valid an implementation choice as any content (real DirectML refuses it).
        what = "refused the aliasing output description"
        return Outcome(INFO, f"implementation-defined: {what} ({one_line(error)})", observations=[what])
    check_input_state(execution)
    check_guards(execution)
    check_returned_state(case, execution)
    offsets = layout.physical_offsets(case.sizes, case.strides)
    expected = reference.words(case.state, 0, case.element_count)
    tensor = execution.tensor
    last = np.empty(tensor.size, dtype=np.uint32)
    last[offsets] = expected
    first = np.empty(tensor.size, dtype=np.uint32)
    first[offsets[::-1]] = expected[::-1]
    written = np.unique(offsets)  # every offset some element maps to (some of them shared)
    if np.array_equal(tensor[written], last[written]):
        what = "each shared offset holds the last element in row-major order (as the reference)"
    elif np.array_equal(tensor[written], first[written]):
        what = "each shared offset holds the first element in row-major order"
    elif np.all(np.isin(tensor[written], expected)):
        what = "each shared offset holds one of its elements' words, in no row-major rule"
    else:
        what = "some shared offsets hold words that belong to none of their elements"
    return Outcome(INFO, "implementation-defined: " + what, observations=[what])


PROCEDURES = {
    C.EXECUTE: check_execute, C.REPEAT: check_repeat, C.CHAIN: check_chain,
    C.REJECT: check_reject, C.ALIAS: check_alias,
}


def run_case(backend, case: C.Case, *, strict: bool = False, seed: int = 0,
             explain: anatomy.Budget | None = None) -> Outcome:
    """The outcome of DirectML's ``case`` (a procedure of PROCEDURES: one description) on ``backend``,
    judged (rngcheck.conformance.judging): never raises for anything the backend does. Any axis's
    case, a property case included: rngcheck.conformance.axes.run_case.

    ``explain``: the anatomy budget of this backend (rngcheck.conformance.directml.anatomy.Budget; a
    run keeps one per backend); None gives this case one of its own.
    """
    def procedure() -> Outcome:
        return PROCEDURES[case.procedure](backend, case, strict)

    with anatomy.using(explain):
        return judged(case, procedure)
