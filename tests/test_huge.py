"""The 2^31 boundary (issue 29) in small: the huge profile's cases, the wrap diagnoses on stand-ins
(the logic does not depend on the size), bounded memory, and the shared-buffer transport.

The huge profile itself, at its real sizes, runs in CI (tests/test_huge_profile.py and .ci/run).
"""

from __future__ import annotations

import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from panel import WRAPS, WrapsAt32Bits
from rngcheck import counter, layout, reference, sharedmem
from rngcheck.backends import exec_protocol as P
from rngcheck.backends.exec_backend import ExecBackend, isolated
from rngcheck.conformance import axes
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.directml import check, diagnosis, wraps
from rngcheck.conformance.runner import RunOptions, select_cases
from rngcheck.errors import NotApplicable
from rngcheck.results.statuses import FAILED, PASSED

STAND_IN_INDEX = 1 << 14   # stand-ins for 2^31 and 2^30: the diagnosis reads windows, whatever the size
STAND_IN_BYTES = 1 << 13


def test_the_huge_profile_has_the_cases_the_issue_asks_for():
    huge = {c.id: c for c in axes.cases_for("huge")}
    assert set(huge) == {"scale/huge-2pow31-plus", "scale/huge-bytes-past-4gib", "scale/huge-strided-extent",
                         "scale/huge-2pow32-minus-1"}
    assert huge["scale/huge-2pow31-plus"].element_count > 1 << 31
    assert (1 << 30) < huge["scale/huge-bytes-past-4gib"].element_count < 1 << 31
    assert huge["scale/huge-2pow32-minus-1"].element_count == (1 << 32) - 1
    strided = huge["scale/huge-strided-extent"]
    assert layout.required_elements(strided.sizes, strided.strides) > 1 << 31 and strided.element_count < 1 << 16
    # The counter carries out of words 0, 1 and 2 inside the packed calls.
    start = counter.counter_of(C.HUGE_STATE)
    for case in huge.values():
        if case.strides is None:
            assert (start + counter.blocks_for(case.element_count)) >> 96 != start >> 96
    assert not any(c.id.startswith("scale/huge") for p in ("quick", "full", "strict") for c in axes.cases_for(p))


def test_huge_cases_join_another_profile_only_when_a_pattern_says_huge():
    chosen = [c.id for c in select_cases(RunOptions(profile="quick", select=["scale/huge-bytes*"]))]
    assert chosen == ["scale/huge-bytes-past-4gib"]
    assert not [c for c in select_cases(RunOptions(profile="quick", select=["scale"])) if "huge" in c.id]


def _case(n, state=C.HUGE_STATE):
    return C.Case(id="scale/stand-in", category="scale", description="", rule="", source="", state=state,
                  sizes=(n,))


@pytest.fixture
def stand_ins(monkeypatch):
    monkeypatch.setattr(wraps, "INT32_WRAP", STAND_IN_INDEX)
    monkeypatch.setattr(wraps, "BYTE_WRAP", STAND_IN_BYTES)


@pytest.mark.parametrize("kind, at, n, phrase", [
    ("element-index-int32", STAND_IN_INDEX, 3 * STAND_IN_INDEX // 2 + 7, "from element 16384 (2^14) on"),
    ("element-index-int32", STAND_IN_INDEX, 2 * STAND_IN_INDEX + 4097, "repeats elements 0, 1, ..."),
    ("byte-offset-uint32", STAND_IN_BYTES, STAND_IN_BYTES + 5003, "elements 8192 .. 13194 were never written"),
    ("byte-offset-uint32", STAND_IN_BYTES, STAND_IN_BYTES + 3, "hold the words of elements 8192 .. 8194"),
])
def test_each_wrap_class_is_caught_and_named_with_where_the_output_repeats(stand_ins, kind, at, n, phrase):
    outcome = check.run_case(WrapsAt32Bits(kind, at), _case(n))
    assert outcome.status == FAILED
    assert outcome.diagnosis["id"] == kind, outcome.message
    assert phrase in outcome.diagnosis["summary"], outcome.diagnosis["summary"]
    assert kind in outcome.message


def test_the_wrap_classes_are_not_confused_with_each_other_or_with_a_right_answer(stand_ins):
    n = 2 * STAND_IN_INDEX + 11   # past both stand-in boundaries
    index = check.run_case(WrapsAt32Bits("element-index-int32", STAND_IN_INDEX), _case(n))
    offset = check.run_case(WrapsAt32Bits("byte-offset-uint32", STAND_IN_BYTES), _case(n))
    assert (index.diagnosis["id"], offset.diagnosis["id"]) == ("element-index-int32", "byte-offset-uint32")
    # A wrap point the tensor does not pass: the backend is right, and passes.
    assert check.run_case(WrapsAt32Bits("element-index-int32", 1 << 20), _case(n)).status == PASSED
    assert check.run_case(WrapsAt32Bits("byte-offset-uint32", 1 << 20), _case(n)).status == PASSED


def test_a_wrong_answer_that_is_no_wrap_is_not_named_a_wrap(stand_ins):
    """Other wrong answers past the boundary: the right words from 2^k on (no repeat), or one flipped bit."""
    n = STAND_IN_INDEX + 5000
    right = np.zeros(n, dtype=np.uint32)
    reference.random_generator(np.array(C.HUGE_STATE, dtype=np.uint32), (n,), None, right)
    flipped = right.copy()
    flipped[STAND_IN_INDEX + 10] ^= 1
    assert wraps.diagnose(C.HUGE_STATE, (n,), None, flipped, check.UNWRITTEN) is None
    half = right.copy()
    half[STAND_IN_BYTES:] = check.UNWRITTEN   # never written, but nothing wrapped onto the start
    assert wraps.diagnose(C.HUGE_STATE, (n,), None, half, check.UNWRITTEN) is None


def test_the_wrap_ids_are_registered_families():
    assert {"element-index-int32", "byte-offset-uint32"} <= set(diagnosis.FAMILIES)
    assert {w[2] for w in WRAPS} <= set(diagnosis.FAMILIES)


# -- bounded memory -----------------------------------------------------------------------------------

def _traced_peak(function) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_comparison_holds_no_copy_of_the_tensor():
    """compare_words on a 2^24-word tensor (64 MiB): chunks only (it once kept every chunk for the sha256)."""
    n = (1 << 24) + 3
    case = _case(n)
    execution = check.Execution(*check.prefilled_buffer(case), None, None, None, 0.0, counter.state_array(case.state))
    reference.random_generator(np.array(case.state, dtype=np.uint32), case.sizes, None, execution.tensor)
    digest, peak = _traced_peak(lambda: check.compare_words(case, execution))
    assert digest == sha_of(execution.tensor)
    assert peak < 16 << 20, peak


def sha_of(words):
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(words, dtype="<u4").tobytes()).hexdigest()


def test_the_diagnosis_of_a_large_wrong_tensor_holds_no_copy_of_it():
    """A 2^24 + 3 word tensor whose partial block is unwritten: the diagnosis reads windows, not a copy."""
    n = (1 << 24) + 3
    extent = np.zeros(n, dtype=np.uint32)
    reference.random_generator(np.array(C.HUGE_STATE, dtype=np.uint32), (n,), None, extent)
    extent[-3:] = check.UNWRITTEN
    found, peak = _traced_peak(lambda: diagnosis.diagnose_output(C.HUGE_STATE, (n,), None, extent, check.UNWRITTEN))
    assert found["id"] == "partial-block-unwritten"
    assert peak < 16 << 20, peak


def test_the_padding_of_a_strided_tensor_is_counted_without_a_mask_of_the_extent():
    case = replace(_case(1), sizes=(2, 3, 1000), strides=((1 << 24) + 5, 4096, 1))
    execution = check.Execution(*check.prefilled_buffer(case), None, None, None, 0.0, None)
    reference.random_generator(np.array(case.state, dtype=np.uint32), case.sizes, case.strides, execution.tensor)
    assert check.padding_observation(case, execution, strict=True).startswith("padding preserved")
    gap = (1 << 24) + 5 + 2000   # between two rows of the second half
    execution.tensor[gap] = 1
    assert gap not in set(layout.physical_offsets(case.sizes, case.strides).tolist())
    text, peak = _traced_peak(lambda: check.padding_observation(case, execution, strict=False))
    assert text.startswith("padding not preserved: 1 of ")
    assert peak < 8 << 20, peak


def test_a_buffer_this_machine_cannot_hold_is_not_run_and_says_why(monkeypatch):
    monkeypatch.setattr(sharedmem, "memory_limits", lambda: {"MemAvailable": 3 << 30})
    outcome = check.run_case(isolated_numpy_free(), C.huge_cases()[0])
    assert outcome.status == "skipped"
    assert ("not run on this machine: the buffer does not fit: it needs 8.0 GiB and this process can allocate "
            "3.0 GiB (MemAvailable, 1.0 GiB kept free)") in outcome.message


def isolated_numpy_free():
    from rngcheck.backends import load

    return load("numpy")


# -- the shared-buffer transport ------------------------------------------------------------------------

def test_a_shared_buffer_crosses_the_exec_protocol_by_name_and_is_written_in_place():
    buffer = sharedmem.allocate(1 << 20)
    buffer[:] = check.UNWRITTEN
    view = buffer[64:64 + 1000]
    shared = sharedmem.segment_of(view)
    assert shared is not None and shared[1] == 256
    state = np.array(C.HUGE_STATE, dtype=np.uint32)
    payload = P.encode_call(state, (1000,), None, view, True, (4, 0), shared=shared)
    assert len(payload) < 200   # the words are not in the message
    backend = isolated("numpy")
    try:
        assert backend.child.hello.get("shared_buffer") is True
        returned = backend.random_generator(state, (1000,), None, view)
    finally:
        backend.close()
    assert np.array_equal(view, reference.words(state, 0, 1000))
    assert np.all(buffer[:64] == check.UNWRITTEN) and np.all(buffer[1064:] == check.UNWRITTEN)
    assert np.array_equal(returned, counter.advance(state, 1000))
    done = P.encode_done(returned, view, state, shared=True)
    assert len(done) < 100 and P.decode_done(done)[1] is None


def test_a_buffer_past_the_pipe_limit_to_a_child_without_shared_buffers_is_not_applicable():
    import sys

    backend = ExecBackend([sys.executable, "-m", "rngcheck.backends.worker", "numpy"])
    backend.child.hello.pop("shared_buffer", None)   # as a child that does not map shared buffers answers
    huge = np.broadcast_to(np.uint32(0), ((1 << 30) + 1,))   # 4 GiB + 4 bytes, no memory behind it
    try:
        with pytest.raises(NotApplicable, match="over the exec protocol's 4 GiB message limit"):
            backend.random_generator(np.zeros(6, dtype=np.uint32), ((1 << 30) + 1,), None, huge)
    finally:
        backend.close()


def _worker_maps_a_buffer(backend) -> bool:
    with open(f"/proc/{backend.child.process.pid}/maps") as maps:
        return any("rngcheck-buffer" in line for line in maps)


def test_the_worker_lets_go_of_a_shared_buffer_after_every_answer():
    """A worker that kept the mapping of a refused call's buffer kept its pages alive: 5 GiB per backend
    that answered 'not applicable' to a huge case, until its next call."""
    from rngcheck.errors import Rejected

    backend = isolated("numpy")
    try:
        state = np.array(C.HUGE_STATE, dtype=np.uint32)
        buffer = sharedmem.allocate(1 << 20)
        with pytest.raises(Rejected):
            backend.random_generator(state, (0, 4), None, buffer)   # a size of 0: refused
        assert not _worker_maps_a_buffer(backend)
        backend.random_generator(state, (1 << 20,), None, buffer)
        assert not _worker_maps_a_buffer(backend)
    finally:
        backend.close()
