"""The reference model against independent answers: Random123, randomgen, the spec's arithmetic."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import require, unavailable
from rngcheck import counter, layout, philox, reference
from rngcheck.vectors import kat_vectors

SHARED_KAT = Path(__file__).resolve().parents[2] / "shared" / "reference" / "random123_kat_vectors.txt"


@pytest.mark.parametrize("vector", kat_vectors(generator="philox4x32"), ids=lambda v: f"R{v.rounds}-{v.counter[0]:08x}")
def test_philox_matches_every_random123_philox4x32_line(vector):
    block = philox.philox4x32(*([w] for w in vector.counter), *vector.key, rounds=vector.rounds)
    assert tuple(int(w) for w in block[0]) == vector.expected


def _compiled_stream():
    """philox.c's library: skips locally where it cannot be built, fails in CI (gcc is installed there)."""
    if philox.KERNELS.active() is None:
        unavailable(f"the compiled Philox stream cannot be had here: {philox.KERNELS.describe()}")


@pytest.mark.parametrize("path", ["c", "numpy"])
@pytest.mark.parametrize("vector", kat_vectors(generator="philox4x32"), ids=lambda v: f"R{v.rounds}-{v.counter[0]:08x}")
def test_the_reference_stream_gives_every_random123_line_on_both_paths(vector, path):
    """reference.words, compiled (philox.c) and in numpy: element 0..3 of a state whose counter and
    key are the line's are the line's four words, at its round count."""
    if path == "c":
        _compiled_stream()
    state = np.array([*vector.counter, *vector.key], dtype=np.uint32)
    with philox.KERNELS.using(path):
        assert tuple(int(w) for w in reference.words(state, 0, 4, rounds=vector.rounds)) == vector.expected


# counters near each carry of the 128-bit add (words 0-1, 1-2, 2-3, and the wrap to 0), and anywhere
COUNTERS = st.one_of(st.integers(0, (1 << 128) - 1),
                     *(st.integers((1 << bits) - 70, (1 << bits) - 1).map(lambda v: v % (1 << 128))
                       for bits in (32, 64, 96, 128)))


@given(counter_value=COUNTERS, key=st.integers(0, (1 << 64) - 1), first=st.integers(0, 100),
       count=st.integers(0, 200), rounds=st.integers(0, 13))
@settings(max_examples=150, deadline=None)
def test_the_compiled_stream_is_the_numpy_code_bit_for_bit(counter_value, key, first, count, rounds):
    """philox.c against philox.philox4x32 (the spec): every carry of the counter, any key, 0-13
    rounds, runs that start inside a block and lengths on both sides of its batch of 16 blocks."""
    _compiled_stream()
    state = counter.make_state(counter_value, key)
    with philox.KERNELS.using("numpy"):
        expected = reference.words(state, first, count, rounds=rounds).copy()
    with philox.KERNELS.using("c"):
        np.testing.assert_array_equal(reference.words(state, first, count, rounds=rounds), expected)


def test_the_compiled_stream_fills_long_runs_and_keeps_its_scratch():
    """A run of many batches (the last one partial) and a scratch reused for a shorter run."""
    _compiled_stream()
    state = counter.make_state((1 << 128) - 1000, (0xDEADBEEF, 0x12345678))
    scratch = philox.Scratch()
    for first, count in ((3, 70_001), (70_004, 13), (0, 1 << 16)):
        with philox.KERNELS.using("numpy"):
            expected = reference.words(state, first, count).copy()
        np.testing.assert_array_equal(reference.words(state, first, count, scratch=scratch), expected)


def test_one_switch_chooses_the_reference_s_path_and_the_battery_s(tmp_path):
    """RNGCHECK_KERNELS=numpy builds neither library (and says so); c without a compiler refuses in
    one line naming the reference's stream."""
    import os
    import subprocess
    import sys

    code = ("from rngcheck import philox; from rngcheck.stats import kernels; "
            "print(philox.KERNELS.describe(), kernels.describe())")
    env = {**os.environ, "RNGCHECK_CACHE": str(tmp_path / "cache")}
    numpy_only = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env={**env, "RNGCHECK_KERNELS": "numpy"})
    assert numpy_only.stdout.split() == ["numpy", "(RNGCHECK_KERNELS=numpy)"] * 2, numpy_only.stderr
    no_cc = subprocess.run([sys.executable, "-c", "from rngcheck import reference; reference.words([0] * 6, 0, 4)"],
                           capture_output=True, text=True,
                           env={**env, "RNGCHECK_KERNELS": "c", "CC": str(tmp_path / "no-such-cc")})
    assert no_cc.returncode != 0
    assert "RNGCHECK_KERNELS=c: the reference's Philox stream cannot be had compiled: no C compiler" in no_cc.stderr
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("*.so"))


def test_the_vendored_random123_lines_are_verbatim_from_the_shared_reference():
    if not SHARED_KAT.is_file():
        unavailable(f"{SHARED_KAT} is missing (shared/reference is not beside this checkout)")
    shared = [line for line in SHARED_KAT.read_text().splitlines() if line.startswith("philox4x32 ")]
    assert [v.line for v in kat_vectors(generator="philox4x32")] == shared
    assert len(shared) == 6


def test_kat_count_covers_both_round_counts():
    assert sorted({v.rounds for v in kat_vectors(generator="philox4x32")}) == [7, 10]


@given(counter_value=st.integers(0, (1 << 128) - 1), key=st.integers(0, (1 << 64) - 1),
       n=st.integers(1, 300))
@settings(max_examples=60, deadline=None)
def test_reference_words_equal_randomgen_philox4x32(counter_value, key, n):
    """randomgen's C Philox (it emits block C+1 first for counter C, hence C-1)."""
    randomgen = require("randomgen")
    state = counter.make_state(counter_value, key)
    bitgen = randomgen.Philox(counter=(counter_value - 1) % (1 << 128), key=key, number=4, width=32)
    expected = bitgen.random_raw(n).astype(np.uint32)
    np.testing.assert_array_equal(reference.words(state, 0, n), expected)


@given(first=st.integers(0, 5000), count=st.integers(0, 700), split=st.integers(0, 700))
@settings(max_examples=80, deadline=None)
def test_words_do_not_depend_on_how_the_stream_is_chunked(first, count, split):
    state = counter.make_state((1 << 64) - 7, (3, 4))
    split = min(split, count)
    whole = reference.words(state, first, count)
    parts = np.concatenate([reference.words(state, first, split), reference.words(state, first + split, count - split)])
    np.testing.assert_array_equal(whole, parts)


def test_chunked_operator_equals_one_piece(monkeypatch):
    state = counter.make_state((1 << 32) - 3, (9, 9))
    big = np.zeros(1000, dtype=np.uint32)
    reference.random_generator(state, (1000,), None, big)
    monkeypatch.setattr(reference, "CHUNK_ELEMENTS", 7)
    small = np.zeros(1000, dtype=np.uint32)
    reference.random_generator(state, (10, 100), None, small)
    np.testing.assert_array_equal(big, small)


@pytest.mark.parametrize("start, blocks, expected_high_words", [
    ((1 << 32) - 1, 1, (0, 1, 0, 0)),
    ((1 << 64) - 1, 1, (0, 0, 1, 0)),
    ((1 << 96) - 1, 1, (0, 0, 0, 1)),
    ((1 << 128) - 1, 1, (0, 0, 0, 0)),
])
def test_counter_add_carries_through_all_128_bits(start, blocks, expected_high_words):
    state = counter.make_state(start, (5, 6))
    assert tuple(int(w) for w in counter.add_to_counter(state, blocks)[:4]) == expected_high_words
    assert tuple(int(w) for w in counter.add_to_counter(state, blocks)[4:]) == (5, 6)


def test_block_counters_equal_the_scalar_add_across_every_carry():
    for start in ((1 << 32) - 3, (1 << 64) - 3, (1 << 96) - 3, (1 << 128) - 3):
        state = counter.make_state(start, 0)
        words = counter.block_counters(state, 0, 6)
        for j in range(6):
            value = sum(int(words[i][j]) << (32 * i) for i in range(4))
            assert value == (start + j) % (1 << 128)


def test_the_dml_page_example_follows_the_rule_not_the_printed_value():
    seattle = 0x48656C6C_6F46726F_6D536561_74746C65
    n = 3 * 3 * 20 * 7219
    assert counter.blocks_for(n) == 324_855
    advanced = counter.counter_of(counter.advance(counter.make_state(seattle, 0), n))
    assert advanced == 0x48656C6C_6F46726F_6D536561_7479615C
    assert seattle - 324_855 == 0x48656C6C_6F46726F_6D536561_746F776E  # what the page prints


@pytest.mark.parametrize("n, blocks", [(1, 1), (3, 1), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_blocks_for_is_ceil_of_n_over_4(n, blocks):
    assert counter.blocks_for(n) == blocks


def test_element_i_is_lane_i_mod_4_of_block_i_div_4():
    state = counter.make_state(41, (7, 8))
    words = reference.words(state, 0, 12)
    for i in range(12):
        block = philox.philox4x32([41 + i // 4], [0], [0], [0], 7, 8)[0]
        assert words[i] == block[i % 4]


def test_strided_placement_follows_the_strides_page_example():
    # DHW 2x2x3 packed: the H element (d=1, h=0, w=1) is at offset 7.
    assert layout.packed_strides((2, 2, 3)) == (6, 3, 1)
    index = np.ravel_multi_index((1, 0, 1), (2, 2, 3))
    assert layout.physical_offsets((2, 2, 3), None, index, 1)[0] == 7
    # Padded 2x3 with row stride 5 needs 8 elements; column-major 2x3 is strides (1, 2).
    assert layout.required_elements((2, 3), (5, 1)) == 8
    assert list(layout.physical_offsets((2, 3), (1, 2))) == [0, 2, 4, 1, 3, 5]
    assert layout.required_bytes((2, 3), (5, 1)) == 32


def test_reference_writes_nothing_but_the_elements():
    buffer = np.full(20, 0xFEEDFACE, dtype=np.uint32)
    reference.random_generator(counter.make_state(0, 0), (2, 3), (5, 1), buffer)
    untouched = [3, 4, 8] + list(range(9, 20))
    assert all(buffer[i] == 0xFEEDFACE for i in untouched)
    assert all(buffer[i] != 0xFEEDFACE for i in (0, 1, 2, 5, 6, 7))


@pytest.mark.parametrize("sizes, strides, aliased", [
    ((3, 4), None, False), ((3, 4), (1, 3), False), ((3, 4), (0, 1), True), ((3, 4), (2, 1), True),
    ((1, 4), (0, 1), False), ((2, 2, 2), (1, 2, 4), False), ((2, 2), (1, 1), True),
])
def test_aliasing_is_detected(sizes, strides, aliased):
    assert layout.aliases(sizes, strides) == aliased
    offsets = layout.physical_offsets(sizes, strides)
    assert (len(set(offsets.tolist())) < offsets.size) == aliased


def test_interleaved_strides_that_do_not_collide_are_not_aliasing():
    # offsets {0, 2, 3, 4, 5, 7}: distinct, though no stride clears the span below it
    assert not layout.aliases((2, 3), (3, 2))
