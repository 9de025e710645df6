"""The ``curand`` backend: cuRAND's host Philox generator (docs/library-findings.md, "cuRAND").

Expressible states (counter word 3 = 0, word 2 < 65536, words 0-1 + blocks < 2^46, at most
max_blocks blocks) must agree bit for bit, words and state: from library_cases.CURAND_STATES in
every layout, feature level 3 and unplaceable descriptions, that is the contract
(tests/test_library_contract.py: TestCurand). Here: every other state must be not applicable
with the reason, chained executions, random expressible descriptions, the cost cap, the
library's own subsequence layout and offset, and the suite's quick profile. Locally a missing
nvidia-curand-cu12 skips; in CI it fails.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from helpers import require, unavailable
from library_cases import CURAND_STATES, KEY, SENTINEL, run_one, x_z
from rngcheck import NotApplicable, counter, layout, reference
from rngcheck.backends import load
from rngcheck.conformance import axes
from rngcheck.conformance.directml import cases as C
from rngcheck.conformance.known_answers.cases import GENERATOR
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.errors import BackendUnavailable

SPEC = "rngcheck.backends.curand_backend:CurandBackend"


@pytest.fixture(scope="module")
def backend():
    require("nvidia.curand", load=False)
    from rngcheck.backends.curand_backend import CurandBackend
    try:
        made = CurandBackend()
    except BackendUnavailable as error:
        unavailable(f"curand backend unavailable: {error}")
    yield made
    made.close()


EXPRESSIBLE = CURAND_STATES
NOT_EXPRESSIBLE = [
    (counter.make_state(x_z(0, 0, 1), KEY), "counter word 3 = 0x1"),
    (counter.make_state(x_z(0, 0x10000), KEY), "counter word 2 = 0x10000"),
    (counter.make_state((1 << 64) - 2, KEY), "counter words 0-1 = 0xfffffffffffffffe"),   # carry 1 -> 2
    (counter.make_state((1 << 128) - 2, KEY), "counter word 3 = 0xffffffff"),            # the wrap
    (counter.make_state(x_z((1 << 46) - 2), KEY), "reach 2^46"),
]


def spec_buffer(state, sizes, strides, length):
    buffer = np.full(length, SENTINEL, dtype=np.uint32)
    n = layout.element_count(sizes)
    buffer[layout.physical_offsets(sizes, strides)] = reference.words(state, 0, n)
    return buffer


def test_runs_on_the_host_without_a_gpu(backend):
    """curandCreateGeneratorHost needs neither libcuda nor a device: nothing CUDA is loaded."""
    with open("/proc/self/maps") as maps_file:
        maps = maps_file.read()
    assert "libcurand.so" in maps and "libcuda.so" not in maps and "libcudart" not in maps


@pytest.mark.parametrize("state, reason", NOT_EXPRESSIBLE, ids=[r for _, r in NOT_EXPRESSIBLE])
def test_other_states_are_not_applicable_and_write_nothing(backend, state, reason):
    buffer = np.full(12, SENTINEL, dtype=np.uint32)
    with pytest.raises(NotApplicable, match=reason.replace("^", r"\^")):
        backend.random_generator(state.copy(), (9,), None, buffer)
    assert np.all(buffer == SENTINEL)


def test_chained_executions_continue_the_subsequence(backend):
    """The returned state fed back gives the words of one larger execution (rule 4, subsequence z)."""
    state = EXPRESSIBLE[2]
    first, middle = run_one(backend, state, (7,), None, extra=0)
    second, last = run_one(backend, middle, (9,), None, extra=0)
    whole = reference.words(state, 0, 8 + 9)
    assert np.array_equal(first, whole[:7]) and np.array_equal(second, whole[8:])
    assert np.array_equal(last, counter.advance(state, 8 + 9))


def test_larger_tensor_and_cost_cap():
    require("nvidia.curand", load=False)
    from rngcheck.backends.curand_backend import CurandBackend
    capped = CurandBackend(max_blocks=300)
    state = EXPRESSIBLE[1]
    buffer, new_state = run_one(capped, state, (1200,), None, extra=0)     # 300 blocks: allowed
    assert np.array_equal(buffer, reference.words(state, 0, 1200))
    assert np.array_equal(new_state, counter.advance(state, 1200))
    with pytest.raises(NotApplicable, match="max_blocks=300"):
        run_one(capped, state, (1201,), None)
    capped.close()


def test_library_interleaves_65536_subsequences_in_counter_word_2(backend):
    """curandGenerate's word p is lane p % 4 of Philox(x = (p // 4) // 65536, word 2 = (p // 4) % 65536)."""
    from rngcheck.backends.curand_backend import Generator
    seed = KEY[0] | (KEY[1] << 32)
    generator = Generator(backend.lib)
    generator.start(seed, 4 * 65535 * 65536 + 4 * 65535)      # block (x, z) = (65535, 65535)
    words = generator.generate(np.empty(8, dtype=np.uint32))
    generator.close()
    assert np.array_equal(words[:4], reference.words(counter.make_state(x_z(65535, 65535), KEY), 0, 4))
    assert np.array_equal(words[4:], reference.words(counter.make_state(x_z(65536, 0), KEY), 0, 4))


def test_library_offset_is_absolute_and_generate_continues(backend):
    """The semantics the output state rests on: after k words from offset o, cuRAND continues at o + k."""
    from rngcheck.backends.curand_backend import Generator
    one, two = Generator(backend.lib), Generator(backend.lib)
    one.start(12345, 1000)
    split = np.concatenate([one.generate(np.empty(7, dtype=np.uint32)), one.generate(np.empty(5, dtype=np.uint32))])
    two.start(12345, 1000)
    assert np.array_equal(split, two.generate(np.empty(12, dtype=np.uint32)))
    two.start(12345, 1007)
    assert np.array_equal(split[7:], two.generate(np.empty(5, dtype=np.uint32)))
    one.close(), two.close()


def test_random_expressible_descriptions_agree(backend):
    """The suite's random states are almost never expressible (word 3 random): here they all are."""
    rng = np.random.default_rng(20)
    for _ in range(40):
        state = counter.make_state(x_z(int(rng.integers(0, 1 << 46)) if rng.random() < 0.5 else int(rng.integers(0, 9)),
                                       int(rng.integers(0, 1 << 16))),
                                   (int(rng.integers(0, 1 << 32)), int(rng.integers(0, 1 << 32))))
        rank = int(rng.integers(1, 5))
        sizes = tuple(int(s) for s in rng.integers(1, 6, size=rank))
        order = rng.permutation(rank)
        strides, step = [0] * rank, 1
        for dim in order[::-1]:
            strides[dim] = step
            step *= sizes[dim] + int(rng.integers(0, 2))
        buffer, new_state = run_one(backend, state, sizes, tuple(strides))
        n = layout.element_count(sizes)
        assert np.array_equal(buffer, spec_buffer(state, sizes, tuple(strides), buffer.size)), (state, sizes, strides)
        assert np.array_equal(new_state, counter.advance(state, n))


def expressible_case(case) -> bool:
    """Whether every execution of a quick-profile case has a state cuRAND can express."""
    if case.procedure == C.CHAIN:
        sizes = [layout.element_count(s) for s in case.chain]
    elif case.procedure == "numbers":   # a numbers case reads as many words as it draws numbers (at least)
        sizes = [max(1, case.request.count)]
    else:
        sizes = [case.element_count]
    words = list(case.state)
    x = words[0] | (words[1] << 32)
    return words[3] == 0 and words[2] < 1 << 16 and x + sum(map(counter.blocks_for, sizes)) < 1 << 46


def test_quick_profile_expressible_cases_pass_the_rest_are_not_applicable(backend):
    """The suite's verdict: PASS; a case is not applicable exactly when its state is not expressible."""
    document = run([NamedBackend("curand", backend)], RunOptions(profile="quick"))
    assert document["summary"]["verdict"] == "pass"
    by_id = {case.id: case for case in axes.cases_for("quick")}
    passed = skipped = 0
    for result in document["results"]:
        case = by_id[result["case"]]
        if not axes.axis_of(case).required:   # another operator: cuRAND runs none
            assert result["status"] == "n/a" and "runs no" in result["message"], result
            continue
        if case.axis == "properties":   # cuRAND's host generator holds every property it can be asked
            assert result["status"] in ("passed", "n/a"), result
            continue
        if case.procedure == GENERATOR:   # Random123's known answers: cuRAND computes no generator blocks
            assert result["status"] == "n/a" and "computes no" in result["message"], result
            continue
        if case.procedure == "numbers":  # float32 uniform/normal and bits of the curand convention (issue #26)
            drawn = "/curand/" in case.id and expressible_case(case) and "float64" not in case.id
            assert result["status"] == ("passed" if drawn else "n/a"), result
            continue
        if result["status"] == "n/a" and result["message"].startswith("not applicable: "):
            skipped += 1
            assert case.procedure != C.PROPERTY
            assert not expressible_case(case), result["case"]
        elif result["status"] == "passed":
            passed += 1
            if case.procedure in (C.EXECUTE, C.REPEAT, C.CHAIN, C.ALIAS) and not case.id.startswith("validation/"):
                assert expressible_case(case), result["case"]
        else:
            assert result["status"] == "n/a" and case.category == "validation", result
    assert passed >= 15 and skipped >= 90
    ids = {r["case"] for r in document["results"] if r["status"] == "passed"}
    assert {"kat/philox4x32-10-00000000-00000000", "counter/carry-word0-inside", "key/zero", "key/ones",
            "vectors/cxx26-philox4x32-10000th"} <= ids


def test_missing_library_is_unavailable_with_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "nvidia.curand", None)
    monkeypatch.setitem(sys.modules, "nvidia", None)
    monkeypatch.delenv("RNGCHECK_CURAND_LIBRARY", raising=False)
    with pytest.raises(BackendUnavailable) as error:
        load(SPEC)
    message = str(error.value)
    assert "pip install rngcheck[curand]" in message and "\n" not in message
