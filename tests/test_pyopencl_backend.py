"""The ``pyopencl`` backend (docs/library-findings.md, "pyopencl"): pyopencl's bundled Random123
Philox header from rngcheck's kernel (mode=header) must conform bit for bit;
``pyopencl.clrandom.PhiloxGenerator`` (mode=generator) must differ exactly as documented.

Runs on PoCL (CI installs pocl-opencl-icd): locally a missing pyopencl or OpenCL device skips,
in CI it fails.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from helpers import require, unavailable
from library_cases import KEY, SENTINEL, STATES, layouts, run_one
from rngcheck import NotApplicable, counter, layout, reference
from rngcheck.backends import load, placement
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendUnavailable, Rejected

MASK96 = (1 << 96) - 1
INT32_MAX = (1 << 31) - 1


def make(mode):
    require("pyopencl", load=False)
    from rngcheck.backends.pyopencl_backend import PyopenclBackend
    try:
        return PyopenclBackend(mode=mode)
    except BackendUnavailable as error:
        unavailable(f"pyopencl backend unavailable: {error}")


@pytest.fixture(scope="module")
def header():
    return make("header")


@pytest.fixture(scope="module")
def generator():
    return make("generator")


def placed(words, sizes, strides, length):
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    buffer[layout.physical_offsets(sizes, strides)] = words
    return buffer


# ---- mode=header: conforms --------------------------------------------------------------

def test_header_describe(header):
    info = header.describe()
    assert "pyopencl-random123/philox.cl" in info["implementation"] and info["device"] and info["pyopencl"]


@pytest.mark.parametrize("state", STATES, ids=lambda s: hex(counter.counter_of(s)))
def test_header_agrees(header, state):
    for n in range(1, 10):
        for sizes, strides in layouts(n):
            buffer, new_state = run_one(header, state, sizes, strides)
            count = layout.element_count(sizes)
            assert np.array_equal(buffer, placed(reference.words(state, 0, count), sizes, strides, buffer.size))
            assert np.array_equal(new_state, counter.advance(state, count)), (n, sizes)


@pytest.mark.parametrize("state", [STATES[0], STATES[3], STATES[5]], ids=["plain", "carry64", "wrap"])
def test_header_chunk_boundaries_and_large_tensor(header, state, monkeypatch):
    monkeypatch.setattr(placement, "CHUNK_ELEMENTS", 8)
    for n in (7, 8, 9, 17, 30):
        buffer, new_state = run_one(header, state, (n,), None, extra=0)
        assert np.array_equal(buffer, reference.words(state, 0, n)), n
        assert np.array_equal(new_state, counter.advance(state, n))
    monkeypatch.undo()
    buffer, new_state = run_one(header, state, (7, 14286, 1), None, extra=0)
    assert np.array_equal(buffer, reference.words(state, 0, 100002))
    assert np.array_equal(new_state, counter.advance(state, 100002))


def test_header_quick_profile_passes(header):
    document = run([NamedBackend("pyopencl", header)], RunOptions(profile="quick"))
    assert document["summary"]["verdict"] == "pass"
    statuses = {r["status"] for r in document["results"]}
    assert statuses <= {"passed", "info", "skipped"}
    assert sum(r["status"] == "passed" for r in document["results"]) >= 100


def test_unplaceable_description_is_rejected(header, generator):
    for backend in (header, generator):
        buffer = np.full(15, SENTINEL, dtype=np.uint32)
        with pytest.raises(Rejected):
            backend.random_generator(STATES[0].copy(), (4, 4), None, buffer)
        assert np.all(buffer == SENTINEL)


# ---- mode=generator: the documented differences, exactly --------------------------------

def global_size(backend, n):
    from pyopencl.array import _splay
    return _splay(backend.device, n)[0][0]


def generator_words(backend, state, n):
    """PhiloxGenerator's float64 fill, as words: element i (block b = i // 4) is lane i % 4 of
    Philox(counter + 2 * (b // G) with the carry stopping at word 2, key = (b % G, k1))."""
    G = global_size(backend, n)
    c = counter.counter_of(state)
    k1 = int(state[5])
    out = np.empty(n, dtype=np.uint32)
    for b in range(-(-n // 4)):
        ctr = (c & ~MASK96) | (((c & MASK96) + 2 * (b // G)) & MASK96)
        block = reference.words(counter.make_state(ctr, (b % G, k1)), 0, 4)
        out[4 * b:4 * b + 4] = block[:n - 4 * b]
    return out


def signed(word):
    return word - (1 << 32) if word >= 1 << 31 else word


def generator_state(state, n):
    """pyopencl's host update (clrandom.Random123GeneratorBase._fill): counter word 0 (as int32)
    += 2n, carried into words 1 and 2 by divmod with 2^31 - 1; word 3 untouched; k0 as given."""
    c = [signed(int(w)) for w in state[:4]]
    c[0] += 2 * n
    carry, c[0] = divmod(c[0], INT32_MAX)
    if carry:
        c[1] += carry
        carry, c[1] = divmod(c[1], INT32_MAX)
        c[2] += carry
    return np.array([w & 0xFFFFFFFF for w in c] + [int(state[4]), int(state[5])], dtype=np.uint32)


@pytest.mark.parametrize("state", STATES, ids=lambda s: hex(counter.counter_of(s)))
def test_generator_matches_the_model(generator, state):
    for n in list(range(1, 10)) + [33, 300, 1001]:
        for sizes, strides in layouts(n)[:2] + layouts(n)[3:4]:
            count = layout.element_count(sizes)
            buffer, new_state = run_one(generator, state, sizes, strides)
            want = placed(generator_words(generator, state, count), sizes, strides, buffer.size)
            assert np.array_equal(buffer, want), (n, sizes)
            assert np.array_equal(new_state, generator_state(state, count)), (n, sizes)


def test_generator_key_word_0_is_the_work_item_id(generator):
    """Block b uses key (b % G, k1): a state whose k0 equals b's work item agrees on that block only."""
    state = counter.make_state(1000, (3, KEY[1]))
    buffer, _ = run_one(generator, state, (40,), None, extra=0)      # G >= 32 work items, one pass
    blocks = buffer.reshape(-1, 4)
    want = reference.words(counter.make_state(1000, (3, KEY[1])), 0, 4)
    assert np.array_equal(blocks[3], want)                            # block 3: work item 3, pass 0
    assert not np.array_equal(blocks[2], reference.words(state, 8, 4))


def test_generator_counter_steps_per_pass_and_depends_on_global_size(generator):
    """Block G is work item 0's second pass: counter + 2 (float64 draws two blocks per pass)."""
    G = global_size(generator, 1 << 24)          # the largest global size _splay picks on this device
    n = 4 * G + 8
    assert global_size(generator, n) == G
    buffer, _ = run_one(generator, STATES[1], (n,), None, extra=0)
    second_pass = reference.words(counter.make_state(2, (0, KEY[1])), 0, 4)
    assert np.array_equal(buffer.reshape(-1, 4)[G], second_pass)


def test_generator_carry_stops_at_word_2(generator):
    state = counter.make_state(MASK96 - 1, KEY)                      # ffffffff ffffffff fffffffe
    G = global_size(generator, 1 << 24)
    n = 4 * G + 8
    buffer, new_state = run_one(generator, state, (n,), None, extra=0)
    wrapped = reference.words(counter.make_state(0, (0, KEY[1])), 0, 4)   # counter + 2 with word 3 = 0
    assert np.array_equal(buffer.reshape(-1, 4)[G], wrapped)
    # the host: word 0 = -2 + 2n, no carry (below 2^31 - 1); word 3 never touched
    assert counter.counter_of(new_state) == (MASK96 - 1 - 0xFFFFFFFE) | (2 * n - 2)


def test_generator_host_counter_carries_modulo_2_pow_31_minus_1(generator):
    state = counter.make_state(INT32_MAX - 3, KEY)
    _, new_state = run_one(generator, state, (4,), None, extra=0)
    assert [int(w) for w in new_state[:4]] == [5, 1, 0, 0]            # 2^31 - 4 + 8 = 1 * (2^31 - 1) + 5
    assert counter.advance(state, 4)[0] != new_state[0]


def test_generator_float64_recovery():
    require("pyopencl", load=False)
    from rngcheck.backends.pyopencl_backend import recover_words
    a = np.array([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF], dtype=np.float64)
    b = np.array([0x12345678, 0xFFFFF000 - 1, 77777, 0x40000000, 0x7FFFFFFF], dtype=np.float64)
    x = a * 2.0 ** -32 + b * 2.0 ** -64
    assert np.array_equal(recover_words(x), a.astype(np.uint32))
    # x * 2^32 an integer: B too small to show (rounded down), or so large it rounded A up
    with pytest.raises(NotApplicable, match="cannot pin 2 word"):
        recover_words(np.array([7, 0x80000000, 0xFFFFFFFE], dtype=np.float64) * 2.0 ** -32
                      + np.array([0x12345, 5, 0xFFFFFFFF], dtype=np.float64) * 2.0 ** -64)


def test_generator_quick_profile_fails_as_documented(generator):
    document = run([NamedBackend("pyopencl:mode=generator", generator)],
                   RunOptions(profile="quick", select=["kat", "counter", "key", "mapping", "state"]))
    assert document["summary"]["verdict"] == "fail"
    results = {r["case"]: r for r in document["results"]}
    assert {r["status"] for r in results.values()} == {"failed"}
    # key 0, block 0: work item 0's key is the spec's; only the state (counter + 2n) differs
    zero = results["kat/philox4x32-10-00000000-00000000"]
    assert zero["mismatch_count"] == 0 and "output state ['0x00000008'" in zero["message"]
    assert results["kat/philox4x32-10-ffffffff-ffffffff"]["mismatch_count"] == 4


@pytest.mark.parametrize("mode", ["header", "generator"])
def test_missing_pyopencl_is_unavailable_with_install_hint(mode, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    with pytest.raises(BackendUnavailable) as error:
        name = "PyopenclBackend" if mode == "header" else "PyopenclGeneratorBackend"
        load(f"rngcheck.backends.pyopencl_backend:{name}")
    message = str(error.value)
    assert "pip install rngcheck[opencl]" in message and "\n" not in message
