"""The ``triton`` backend (issue 43): Triton 3.9.0's Philox, run by its interpreter (TRITON_INTERPRET=1) in a worker
process as ``rngcheck run`` hosts it, checked bit for bit against rngcheck.philox (Random123's known answers,
``tl.rand`` and its int64 offsets), ``tl.randn`` against its Box-Muller, and through the property axis.
Locally a missing triton skips; with CI=true it fails."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from helpers import isolated_backend
from rngcheck import counter
from rngcheck.conformance import axes
from rngcheck.conformance.properties import cases as property_cases
from rngcheck.conformance.runner import NamedBackend, RunOptions, run
from rngcheck.numbers import triton as triton_numbers
from rngcheck.philox import philox4x32
from rngcheck.results.statuses import NOT_APPLICABLE, PASSED

SPEC = "rngcheck.backends.triton_backend:TritonBackend"


@pytest.fixture(scope="module")
def triton():
    backend = isolated_backend(SPEC, "triton", "torch")
    yield backend
    backend.close()


def _lane0_and_1(seed: int, first: int, count: int) -> np.ndarray:
    """rngcheck.numbers.triton rule 1: Philox4x32-10 of counters (offset lo, offset hi, 0, 0), key (seed lo, hi)."""
    return triton_numbers.blocks(seed, first, count)[:, :2]


_uniform = triton_numbers.uniform      # rule 2: folded and scaled


def _draw(backend, kind: str, seed: int, position: int, count: int) -> np.ndarray:
    request = {"convention": "triton", "kind": kind, "dtype": "float32", "count": count}
    return np.asarray(backend.random_numbers(request, property_cases.seed_state(seed, position)))


def test_its_philox_core_gives_every_random123_philox4x32_known_answer(triton):
    document = run([NamedBackend("triton", triton)], RunOptions(select=["generator"]))
    found = Counter((r["case"].split("/")[1].split("-")[0], r["status"]) for r in document["results"])
    assert found[("philox4x32", PASSED)] == 6, found
    assert {status for (generator, status) in found if generator != "philox4x32"} == {NOT_APPLICABLE}


def test_its_philox_core_takes_any_counter_key_and_round_count(triton):
    rng = np.random.default_rng(43)
    counters = rng.integers(0, 1 << 32, size=(100, 4), dtype=np.uint64).astype(np.uint32)
    for rounds, key in ((10, (0xDEADBEEF, 0xFFFFFFFF)), (7, (1, 0))):
        blocks = triton.generator_blocks("philox4x32", rounds, counters, key)
        assert np.array_equal(blocks, philox4x32(*counters.T, *key, rounds=rounds)), rounds


@pytest.mark.parametrize("seed, position, count", [(42, 0, 1000), (0, 3, 256), (7, 1 << 20, 4096)])
def test_rand_is_lane_0_of_the_offsets_block_folded_and_scaled(triton, seed, position, count):
    """Position c reads offsets c*n..; 2^20 * 4096 = 2^32 is an int64 offset: its high word is counter word 1,
    Philox4x32 still (triton#6832; before it, Philox4x64)."""
    drawn = _draw(triton, "uniform", seed, position, count)
    expected = triton_numbers.draw("uniform", seed, position * count, count)
    assert drawn.dtype == np.float32 and np.array_equal(drawn, expected)


def test_rand_stays_below_1_at_its_largest_word(triton):
    """Seed 0, offset 9297664: lane 0 is -2147483611, folded to 2^31 - 37, which float32 rounds to 2^31; the scale
    is just under 2^-31, so tl.rand gives 1 - 2^-24, not 1.0 (1 word in 2^25 folds that high)."""
    assert int(_lane0_and_1(0, 9297664, 1)[0, 0].view(np.int32)) == -2147483611
    drawn = _draw(triton, "uniform", 0, 9297664 // 8, 8)
    assert drawn[0] == np.float32(1 - 2 ** -24) and drawn.max() < 1


def test_randn_is_box_muller_of_lanes_0_and_1_the_cosine_only(triton):
    words = _lane0_and_1(5, 0, 2048)
    cosine = triton_numbers.normal(words[:, 0], words[:, 1])
    drawn = _draw(triton, "normal", 5, 0, 2048)
    np.testing.assert_allclose(drawn, cosine, rtol=1e-5, atol=1e-6)
    assert np.array_equal(triton_numbers.draw("normal", 5, 0, 2048), cosine)
    u1, u2 = np.maximum(np.float32(1e-7), _uniform(words[:, 0])), _uniform(words[:, 1])
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    sine = radius * np.sin(np.float32(6.283185307179586) * u2)
    assert not np.allclose(drawn[1:], sine[:-1], atol=1e-3)   # the sine of block i is not element i + 1


def test_every_property_it_can_draw_passes(triton):
    statuses = {}
    for case in property_cases.property_cases():
        outcome = axes.run_case(triton, case)
        statuses[case.id] = outcome.status
        assert outcome.status in (PASSED, NOT_APPLICABLE), (case.id, outcome.message)
    # Triton has no integer range: the two integer properties are not applicable, nor is rule 10 (it keys no
    # platform's generator); every other one passes
    assert [i for i, s in statuses.items() if s == NOT_APPLICABLE] == ["properties/integers/range-m5-5",
                                                                       "properties/bits/range-0-2pow30",
                                                                       "properties/keying/seed-42"]


def test_its_seed_is_one_word_and_a_range_is_not_applicable(triton):
    from rngcheck.errors import NotApplicable

    with pytest.raises(NotApplicable, match="one uint32 word"):
        triton.random_numbers({"convention": "triton", "kind": "uniform", "dtype": "float32", "count": 4},
                              counter.state_from_words((0, 0, 0, 0), (1, 1)))
    with pytest.raises(NotApplicable, match="no uniform range"):
        triton.random_numbers({"convention": "triton", "kind": "uniform", "dtype": "float32", "count": 4,
                               "low": -1, "high": 1}, property_cases.seed_state(1))


def test_its_handshake_says_what_it_is(triton):
    described = triton.describe()
    assert described["written_against"] == "3.9.0" and described["triton"] and "interpreter" in described["device"]
