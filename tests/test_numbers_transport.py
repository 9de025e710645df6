"""The numbers layer across process isolation: DRAW / NUMS (docs/exec-protocol.md).

A hosted backend's numbers arrive exactly as the reference draws them, in every dtype; a child
that crashes, hangs or breaks the protocol during a DRAW ends that request as a CALL would; a
child that advertises no conventions is never sent a DRAW.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import rngcheck
from rngcheck import counter, numbers
from rngcheck.backends import exec_protocol as P
from rngcheck.backends.exec_backend import ExecBackend, isolated
from rngcheck.errors import (
    BackendCrashed,
    BackendProtocolError,
    BackendTimeout,
    BackendUnavailable,
    NotApplicable,
    RemoteError,
)

TESTS = Path(__file__).parent
ROOT = Path(rngcheck.__file__).parents[1]
FAULTS = str(TESTS / "faults.py")
TRIGGER = 7  # faults.DRAW_TRIGGER: the count a faulty child fails on
STATE = counter.make_state((1 << 64) - 2, 0x0123456789ABCDEF)  # the counter's low half carries within a draw


def every_request(count=9, state=STATE):
    """One request per kind and dtype the tensorflow convention defines (ranges for integers and one uniform)."""
    convention = numbers.convention_of("tensorflow")
    for kind, dtypes in convention.kinds.items():
        for dtype in dtypes:
            if kind == numbers.INTEGERS:
                low, high = numbers.INT_RANGES[dtype]
                yield numbers.Request("tensorflow", kind, dtype, count, low, high)
                yield numbers.Request("tensorflow", kind, dtype, count, -3, 11)
            else:
                yield numbers.Request("tensorflow", kind, dtype, count)
    yield numbers.Request("tensorflow", numbers.UNIFORM, "bfloat16", count, -2.5, 3.0)
    yield numbers.Request("tensorflow", numbers.NORMAL, "float32", count, seed=(1, 2))


def same_bits(expected: np.ndarray, actual: np.ndarray) -> bool:
    return expected.dtype == actual.dtype and expected.shape == actual.shape and expected.tobytes() == actual.tobytes()


def raw_child(mode: str, timeout: float = 60) -> ExecBackend:
    """tests/faults.py's draw_child in its own process (this worktree's rngcheck first on its path)."""
    code = (f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(TESTS)!r}]; import faults; "
            f"sys.exit(faults.draw_child({mode!r}))")
    return ExecBackend([sys.executable, "-c", code], timeout=timeout, label=f"draw-child {mode}")


@pytest.fixture(scope="module")
def hosted():
    backend = isolated("numpy", timeout=120)
    yield backend
    backend.close()


def test_a_hosted_backend_advertises_its_conventions(hosted):
    assert "tensorflow" in hosted.conventions
    assert hosted.conventions == tuple(sorted(numbers.CONVENTIONS))


@pytest.mark.parametrize("request_", list(every_request()), ids=lambda r: r.text())
def test_hosted_numbers_are_the_reference_s_bit_for_bit(hosted, request_):
    expected = numbers.draw(request_, STATE)
    actual = hosted.random_numbers(request_.to_dict(), STATE)
    assert same_bits(expected, actual), (expected, actual)
    if request_.dtype == "bfloat16":
        assert actual.dtype == np.uint16  # bfloat16 as its bits
    else:
        assert actual.dtype == np.dtype(request_.dtype)


def test_zero_numbers_and_a_few_hundred_cross_too(hosted):
    for count in (0, 301):
        request_ = numbers.Request("tensorflow", numbers.BITS, "int64", count)
        actual = hosted.random_numbers(request_.to_dict(), STATE)
        assert actual.size == count and same_bits(numbers.draw(request_, STATE), actual)


def test_a_seeded_request_ignores_the_state(hosted):
    request_ = numbers.Request("tensorflow", numbers.UNIFORM, "float64", 5, seed=((1 << 64) - 1, 3))
    assert same_bits(hosted.random_numbers(request_.to_dict(), None), hosted.random_numbers(request_.to_dict(), STATE))
    assert same_bits(numbers.draw(request_), hosted.random_numbers(request_.to_dict(), None))


def test_a_request_the_reference_cannot_draw_fails_with_its_reason(hosted):
    bad = {"convention": "tensorflow", "kind": "integers", "dtype": "uint32", "count": 3, "low": 0, "high": 5}
    with pytest.raises(RemoteError, match="draws integers as int32, int64"):
        hosted.random_numbers(bad, STATE)
    good = numbers.Request("tensorflow", numbers.BITS, "uint32", 3)       # the same child goes on
    assert same_bits(numbers.draw(good, STATE), hosted.random_numbers(good.to_dict(), STATE))


# ---- a child without conventions is never sent a DRAW ---------------------------------------------
def test_a_backend_without_conventions_is_not_applicable_and_no_draw_is_sent():
    backend = isolated(f"{FAULTS}:Correct", timeout=120)
    sent = []
    send = backend.child.send
    backend.child.send = lambda data, deadline: (sent.append(bytes(data[:4])), send(data, deadline))[1]
    try:
        assert backend.conventions == ()
        request_ = numbers.Request("tensorflow", numbers.NORMAL, "float32", 4)
        with pytest.raises(NotApplicable, match="draws no numbers under the 'tensorflow' convention"):
            backend.random_numbers(request_.to_dict(), STATE)
        buffer = np.zeros(8, dtype=np.uint32)
        backend.random_generator(STATE.copy(), (8,), None, buffer, output_state=False)
        assert sent == [P.CALL]
        assert np.array_equal(buffer, rngcheck.reference.words(STATE, 0, 8))
    finally:
        backend.close()


def test_a_convention_the_child_did_not_advertise_is_not_sent():
    backend = raw_child("ok")
    try:
        assert backend.conventions == ("tensorflow",)
        other = {"convention": "pytorch", "kind": "normal", "dtype": "float32", "count": 4}
        with pytest.raises(NotApplicable, match="'pytorch' convention"):
            backend.random_numbers(other, STATE)
        request_ = numbers.Request("tensorflow", numbers.NORMAL, "float32", 4)
        assert same_bits(numbers.draw(request_, STATE), backend.random_numbers(request_.to_dict(), STATE))
        assert backend.child.stderr_tail().count("draw-child got DRAW") == 1  # the second request only
    finally:
        backend.close()


# ---- faults during a DRAW ---------------------------------------------------------------------------
def trigger(dtype="float32"):
    return numbers.Request("tensorflow", numbers.UNIFORM, dtype, TRIGGER).to_dict()


def harmless():
    return numbers.Request("tensorflow", numbers.BITS, "uint64", 3)


def test_a_child_that_crashes_during_a_draw_is_backend_crashed_and_the_next_child_answers():
    backend = isolated(f"{FAULTS}:DrawSegfaults", timeout=120)
    try:
        assert same_bits(numbers.draw(harmless(), STATE), backend.random_numbers(harmless().to_dict(), STATE))
        with pytest.raises(BackendCrashed, match=r"signal 11 \(SIGSEGV\)"):
            backend.random_numbers(trigger(), STATE)
        assert backend.child.process is None
        assert same_bits(numbers.draw(harmless(), STATE), backend.random_numbers(harmless().to_dict(), STATE))
    finally:
        backend.close()


def test_a_child_that_hangs_during_a_draw_is_backend_timeout():
    backend = isolated(f"{FAULTS}:DrawSleepsForever", timeout=5)
    try:
        with pytest.raises(BackendTimeout, match="did not answer within 5 s"):
            backend.random_numbers(trigger(), STATE)
        assert backend.child.process is None
    finally:
        backend.close()


@pytest.mark.parametrize("mode, dtype, words", [
    ("short-nums", "float32", "NUMS of 7 float32 carries 24 bytes, not 28"),
    ("short-nums", "bfloat16", "NUMS of 7 bfloat16 carries 12 bytes, not 14"),
    ("unknown-dtype", "float64", "NUMS with unknown dtype 'qqqqqqq'"),
    ("noise", "float32", "noise on stdout"),
    ("huge-nums", "float32", f"announced a NUMS of {P.MAX_PAYLOAD} bytes where this call's answer is at most "
                             f"{P.numbers_limit(TRIGGER)} bytes"),
])
def test_garbage_during_a_draw_is_a_protocol_error_and_ends_the_child(mode, dtype, words):
    backend = raw_child(mode)
    try:
        assert same_bits(numbers.draw(harmless(), STATE), backend.random_numbers(harmless().to_dict(), STATE))
        with pytest.raises(BackendProtocolError, match=words) as raised:
            backend.random_numbers(trigger(dtype), STATE)
        assert "draw-child got DRAW" in raised.value.stderr_tail
        assert backend.child.process is None
    finally:
        backend.close()


def test_a_draw_the_child_cannot_express_is_not_applicable_with_its_reason():
    backend = isolated(f"{FAULTS}:DrawNotApplicable", timeout=120)
    try:
        with pytest.raises(NotApplicable, match="7 numbers: not in one call"):
            backend.random_numbers(trigger(), STATE)
        assert same_bits(numbers.draw(harmless(), STATE), backend.random_numbers(harmless().to_dict(), STATE))
    finally:
        backend.close()


def test_numbers_the_protocol_cannot_carry_are_a_failure_not_a_crash():
    backend = isolated(f"{FAULTS}:DrawReturnsObjects", timeout=120)
    try:
        pid = backend.child.process.pid
        with pytest.raises(RemoteError, match="the exec protocol carries float16, bfloat16"):
            backend.random_numbers(trigger(), STATE)
        assert backend.child.process.pid == pid
    finally:
        backend.close()


def test_a_handshake_with_conventions_that_are_not_a_list_is_refused():
    with pytest.raises(BackendUnavailable, match="conventions is not a list of names"):
        raw_child("bad-conventions")


# ---- the messages themselves ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", list(P.NUMBER_DTYPES))
def test_nums_round_trips_every_dtype_little_endian(dtype):
    storage = "uint16" if dtype == "bfloat16" else dtype
    values = np.arange(-3, 4).astype(storage) if dtype.startswith(("int", "float")) else \
        np.arange(7).astype(storage) * 0x1234
    payload = P.encode_numbers(values, dtype)
    width = P.NUMBER_DTYPES[dtype]
    assert payload[-7 * width:] == values.astype(np.dtype(storage).newbyteorder("<")).tobytes()
    assert same_bits(values, P.decode_numbers(payload))
    big_endian = values.astype(np.dtype(storage).newbyteorder(">"))
    if dtype != "bfloat16":  # a big-endian array crosses as its values
        assert same_bits(values, P.decode_numbers(P.encode_numbers(big_endian, dtype)))


def test_draw_round_trips_the_request_and_the_state():
    request_ = numbers.Request("tensorflow", numbers.INTEGERS, "int64", 5, -(1 << 63), (1 << 63) - 1).to_dict()
    decoded, state = P.decode_draw(P.encode_draw(request_, STATE))
    assert decoded == request_ and numbers.Request.from_dict(decoded).high == (1 << 63) - 1
    assert state.dtype == np.uint32 and np.array_equal(state, STATE)
    assert np.array_equal(P.decode_draw(P.encode_draw(request_, None))[1], np.zeros(6, dtype=np.uint32))
