"""The ``pyopencl`` backend (docs/library-findings.md, "pyopencl"): what is its own.

pyopencl's bundled Random123 Philox header from rngcheck's kernel (mode=header) must conform bit
for bit; ``pyopencl.clrandom.PhiloxGenerator`` (mode=generator) must differ exactly as documented
(its model: library_cases.pyopencl_generator_words and _state). Both modes against every state and
layout, chunks and large tensors, unplaceable descriptions, the header's quick profile and the
install hint are the contract (tests/test_library_contract.py: TestPyopenclHeader,
TestPyopenclGenerator). Here: the generator's key, passes, carries and float64 recovery, and its
quick profile failing as documented.

Runs on PoCL (CI installs pocl-opencl-icd): locally a missing pyopencl or OpenCL device skips,
in CI it fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import require, unavailable
from library_cases import INT32_MAX, KEY, MASK96, STATES, run_one
from library_cases import pyopencl_global_size as global_size
from rngcheck import NotApplicable, counter, reference
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendUnavailable


def make(mode):
    require("pyopencl", load=False)
    from rngcheck.backends.pyopencl_backend import PyopenclBackend
    try:
        return PyopenclBackend(mode=mode)
    except BackendUnavailable as error:
        unavailable(f"pyopencl backend unavailable: {error}")


@pytest.fixture(scope="module")
def generator():
    return make("generator")


# ---- mode=generator: the documented differences, exactly --------------------------------

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


