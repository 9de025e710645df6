"""The state's conversions (rngcheck.counter, rules 1-5) and the one write loop
(rngcheck.layout.write_elements, rule 4), which every adapter, the reference and the reports
call instead of restating them."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rngcheck import counter, layout, reference
from rngcheck.backends import placement

U32 = st.integers(0, counter.WORD_MASK)
COUNTERS = st.integers(0, (1 << 128) - 1)
KEYS = st.integers(0, (1 << 64) - 1)


def test_the_words_of_a_state_in_every_form():
    """Rules 1-3 on one state whose words are all different."""
    state = np.array([0x11, 0x22, 0x33, 0x44, 0x55, 0x66], dtype=np.uint32)
    assert counter.counter_of(state) == 0x11 | 0x22 << 32 | 0x33 << 64 | 0x44 << 96
    assert counter.key_of(state) == (0x55, 0x66)
    assert counter.key_value(state) == 0x55 | 0x66 << 32
    assert counter.counter_halves(state) == (0x11 | 0x22 << 32, 0x33 | 0x44 << 32)
    assert counter.counter_words(state).tolist() == [0x11, 0x22, 0x33, 0x44]
    assert counter.key_words(state).tolist() == [0x55, 0x66]
    assert counter.counter_words(state).dtype == counter.key_words(state).dtype == np.uint32


@given(value=COUNTERS, key=KEYS)
def test_conversions_round_trip(value, key):
    state = counter.make_state(value, key)
    assert counter.counter_of(state) == value
    assert counter.key_value(state) == key
    assert counter.key_of(state) == (key & counter.WORD_MASK, key >> 32)
    assert np.array_equal(counter.make_state(value, counter.key_of(state)), state)  # key as (k0, k1)
    low, high = counter.counter_halves(state)
    assert 0 <= low < 1 << 64 and 0 <= high < 1 << 64
    assert counter.counter_from_halves(low, high) == value
    assert np.array_equal(counter.state_from_words(counter.counter_words(state), counter.key_words(state)), state)
    assert counter.value_of_words(counter.words_of_value(value, 4)) == value


@given(value=COUNTERS, key=KEYS, step=st.integers(-(1 << 130), 1 << 130))
def test_add_to_counter_is_mod_2_128_both_ways(value, key, step):
    """Rule 4, negative increments too (randomgen's adapter steps back one block)."""
    state = counter.make_state(value, key)
    moved = counter.add_to_counter(state, step)
    assert counter.counter_of(moved) == (value + step) % (1 << 128)
    assert counter.key_value(moved) == key
    assert np.array_equal(counter.add_to_counter(moved, -step), state)


def test_one_block_back_from_zero_wraps_to_all_ones():
    state = counter.make_state(0, (7, 9))
    assert counter.add_to_counter(state, -1).tolist() == [counter.WORD_MASK] * 4 + [7, 9]


@given(value=st.integers(0, (1 << 130) - 1))
def test_counter_text_is_32_hex_digits_most_significant_word_first(value):
    """Rule 5, in the two forms the documents and the HTML report print."""
    plain = counter.counter_text(value)
    assert plain == f"0x{value % (1 << 128):032x}"
    words = counter.words_of_value(value, 4)
    assert counter.counter_text(value, "'") == "0x" + "'".join(f"{w:08x}" for w in reversed(words))


def test_counter_text_of_the_dml_page_example():
    value = 0x48656C6C_6F46726F_6D536561_74746C65
    assert counter.counter_text(value, "'") == "0x48656c6c'6f46726f'6d536561'74746c65"


@pytest.mark.parametrize("counter_words, key_words", [([1, 2, 3], [4, 5, 6]), ([1, 2, 3, 4, 5], [6]),
                                                      ([1, 2, 3, 4], [5]), ([1, 2, 3, 4], [5, 1 << 32])])
def test_state_from_words_refuses_anything_but_four_and_two_words(counter_words, key_words):
    with pytest.raises(ValueError):
        counter.state_from_words(counter_words, key_words)


def test_word_accessors_refuse_a_state_that_is_not_six_words():
    with pytest.raises(ValueError):
        counter.counter_words([1, 2, 3, 4, 5])
    with pytest.raises(ValueError):
        counter.key_words([1, 2, 3, 4, 5, 6, 7])


# -- layout.write_elements -----------------------------------------------------------------------

@pytest.mark.parametrize("sizes, strides, packed", [((2, 3), None, True), ((2, 3), (3, 1), True),
                                                    ((2, 3), (4, 1), False), ((2, 3), (1, 2), False),
                                                    ((5,), (1,), True), ((5,), (0,), False)])
def test_is_packed_means_offset_equals_index(sizes, strides, packed):
    assert layout.is_packed(sizes, strides) is packed
    n = layout.element_count(sizes)
    assert np.array_equal(layout.physical_offsets(sizes, strides), np.arange(n)) is packed


@st.composite
def layouts(draw):
    rank = draw(st.integers(1, 3))
    sizes = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    strides = draw(st.none() | st.lists(st.integers(0, 9), min_size=rank, max_size=rank).map(tuple))
    return sizes, strides


def element_by_element(sizes, strides, buffer, words):
    """Rule 4 written the slow way: element i, in row-major order, at sum(coord_d * stride_d)."""
    strides = layout.effective_strides(sizes, strides)
    for i, coords in enumerate(np.ndindex(*sizes)):
        buffer[sum(c * s for c, s in zip(coords, strides))] = words[i]


@given(shape=layouts(), chunk=st.integers(1, 40))
@settings(max_examples=300, deadline=None)
def test_write_elements_places_each_element_and_nothing_else(shape, chunk):
    """Any layout (aliasing ones too: the last element stays), any chunking: the slow loop's buffer,
    and the words where no element lives keep their value."""
    sizes, strides = shape
    n = layout.element_count(sizes)
    length = layout.required_elements(sizes, strides) + 3 if n else 3
    words = np.arange(1, n + 1, dtype=np.uint32) * np.uint32(0x9E3779B9)
    expected = np.full(length, 0xFEEDFACE, dtype=np.uint32)
    element_by_element(sizes, strides, expected, words)
    buffer = np.full(length, 0xFEEDFACE, dtype=np.uint32)
    layout.write_elements(sizes, strides, buffer, ((first, words[first:first + count])
                                                   for first, count in reference.chunks(n, chunk)))
    assert np.array_equal(buffer, expected)


def test_write_elements_stores_each_piece_before_asking_for_the_next():
    """A producer may hand over one scratch array again and again (the reference does)."""
    scratch = np.empty(4, dtype=np.uint32)

    def pieces():
        for first in range(0, 12, 4):
            scratch[:] = np.arange(first, first + 4)
            yield first, scratch

    for strides in (None, (2,)):
        buffer = np.zeros(24, dtype=np.uint32)
        layout.write_elements((12,), strides, buffer, pieces())
        step = 1 if strides is None else 2
        assert buffer[::step][:12].tolist() == list(range(12))


@given(shape=layouts(), state=st.lists(U32, min_size=6, max_size=6))
@settings(max_examples=100, deadline=None)
def test_placement_and_the_reference_write_the_same_buffer(shape, state):
    """The library backends' placement, fed the reference's words, leaves the reference's buffer."""
    sizes, strides = shape
    if layout.aliases(sizes, strides) or not layout.element_count(sizes):
        return  # refused or empty alike in both: nothing to compare
    state = np.array(state, dtype=np.uint32)
    length = layout.required_elements(sizes, strides) + 5
    ours = np.full(length, 0xBAADF00D, dtype=np.uint32)
    reference.random_generator(state, sizes, strides, ours, output_state=False)
    theirs = np.full(length, 0xBAADF00D, dtype=np.uint32)
    placement.place(sizes, strides, theirs, lambda first, count: reference.words(state, first, count), chunk=4)
    assert np.array_equal(ours, theirs)


# -- the HTML report prints the case's counter through counter.counter_text ---------------------

def test_the_html_report_shows_a_case_counter_as_words_most_significant_first():
    for module in ("jinja2", "matplotlib"):  # the report extra: required in CI
        if os.environ.get("CI") == "true":
            __import__(module)
        else:
            pytest.importorskip(module)
    from rngcheck.backends import load
    from rngcheck.conformance.runner import NamedBackend, RunOptions, run
    from rngcheck.reports import html

    document = run([NamedBackend("numpy", load("numpy"))],
                   RunOptions(profile="quick", select=["counter/dml-example-324855"], command=["run"]))
    page = html.render([json.loads(json.dumps(document))])
    # the case's inputs as the DirectML axis records them: its counter most significant word first (Jinja2
    # escapes the apostrophes)
    assert "counter 0x48656c6c&#39;6f46726f&#39;6d536561&#39;74746c65" in page


def test_write_elements_refuses_negative_strides_and_keeps_the_last_aliased_element():
    buffer = np.zeros(4, dtype=np.uint32)
    with pytest.raises(ValueError, match="negative"):
        layout.write_elements((2,), (-1,), buffer, [(0, np.array([1, 2], dtype=np.uint32))])
    assert not buffer.any()
    # stride 0 on the rows: rows 0, 1, 2 all land on offsets 0-1; row 2 (the last) stays (rule 4)
    layout.write_elements((3, 2), (0, 1), buffer, [(0, np.arange(1, 7, dtype=np.uint32))])
    assert buffer.tolist() == [5, 6, 0, 0]


def test_counter_of_refuses_fewer_than_four_words():
    with pytest.raises(ValueError, match="4 words"):
        counter.counter_of([1, 2, 3])


@given(st.integers(min_value=-(1 << 40), max_value=1 << 40))
def test_word_of_and_signed_word_keep_the_bits(value):
    word = counter.word_of(value)
    assert 0 <= word <= counter.WORD_MASK and (word - value) % (1 << 32) == 0
    signed = counter.signed_word(value)
    assert -(1 << 31) <= signed < 1 << 31 and counter.word_of(signed) == word
    assert counter.signed_word(0xFFFFFFFF) == -1 and counter.word_of(-1) == 0xFFFFFFFF
