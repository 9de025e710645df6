"""Diagnosis: which known bug class a wrong answer looks like.

Each variant is a deliberately wrong model built from the reference's own pieces
(rngcheck.philox, rngcheck.counter, rngcheck.layout). On a mismatch the suite runs them on
the same case and names the first whose prediction equals what the backend produced.
Add a bug class by adding a function to OUTPUT_VARIANTS or STATE_VARIANTS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import counter, layout, philox, reference

DIAGNOSIS_LIMIT = 1 << 18  # extents up to this many words are diagnosed whole; larger ones by a prefix
PREFIX = 4096


@dataclass(frozen=True)
class Variant:
    id: str
    summary: str
    predict: Callable


def _blocks(state, block_count, *, counter_bits=128, rounds=10, key=None, counter_words=None):
    ctr = counter.block_counters(state, 0, block_count, counter_bits=counter_bits)
    if counter_words is not None:
        ctr = counter_words(ctr)
    k0, k1 = key if key is not None else counter.key_of(state)
    return philox.philox4x32(*ctr, k0, k1, rounds=rounds)


def _lane_order(n, **kw):
    """Words of elements 0..n-1 in logical order for a variant of the block computation."""
    def words(state):
        return _blocks(state, counter.blocks_for(n), **kw).reshape(-1)[:n]
    return words


def _counter_words_reversed(n):
    def words(state):
        reversed_state = np.concatenate([np.asarray(state)[3::-1], np.asarray(state)[4:]])
        c = counter.block_counters(reversed_state, 0, counter.blocks_for(n))
        k0, k1 = counter.key_of(state)
        return philox.philox4x32(c[3], c[2], c[1], c[0], k0, k1).reshape(-1)[:n]
    return words


def _lanes_reversed(n):
    return lambda state: _blocks(state, counter.blocks_for(n))[:, ::-1].reshape(-1)[:n]


def _lane_major(n):
    def words(state):
        m = counter.blocks_for(n)
        blocks = _blocks(state, m)
        i = np.arange(n)
        return blocks[i % m, i // m]
    return words


def _block_per_element(n):
    def words(state):
        c = counter.block_counters(state, 0, n)
        blocks = philox.philox4x32(*c, *counter.key_of(state))
        return blocks[np.arange(n), np.arange(n) % 4]
    return words


def _counter_64(n):
    def words(state):
        low = np.concatenate([np.asarray(state)[:2], [0, 0], np.asarray(state)[4:]]).astype(np.uint32)
        return _blocks(low, counter.blocks_for(n), counter_bits=64).reshape(-1)[:n]
    return words


def _key_as_counter_high(n):
    """XLA's two-word Philox state {key, counter}: the key doubles as the counter's high 64 bits."""
    def words(state):
        k0, k1 = counter.key_of(state)
        low = counter.counter_of(state) & ((1 << 64) - 1)
        return reference.words(counter.make_state(((k0 | k1 << 32) << 64) | low, (k0, k1)), 0, n)
    return words


def _from_advanced_state(n):
    return lambda state: reference.words(counter.advance(state, n), 0, n)


def _constant(value):
    return lambda n: (lambda state: np.full(n, value, dtype=np.uint32))


# Element-level variants: a wrong word for element i, written where the spec says.
def _word_variants():
    variants = [
        Variant("counter-words-reversed", "counter words in reverse order (word 3 taken as least significant)",
                _counter_words_reversed),
        Variant("key-words-swapped", "key words swapped (word 5 used as k0)",
                lambda n: lambda s: _blocks(s, counter.blocks_for(n), key=counter.key_of(s)[::-1]).reshape(-1)[:n]),
        Variant("key-high-ignored", "only the low key word used (k1 taken as 0)",
                lambda n: lambda s: _blocks(s, counter.blocks_for(n), key=(counter.key_of(s)[0], 0)).reshape(-1)[:n]),
        Variant("lanes-reversed", "the four lanes of each block in reverse order", _lanes_reversed),
        Variant("lane-major", "lanes handed out lane-major (element i from block i mod m) instead of block-major",
                _lane_major),
        Variant("block-per-element", "counter advanced per element (counter + i) instead of per 4 elements",
                _block_per_element),
        Variant("carry-32-bit", "counter + block index carried only within word 0 (32-bit add)",
                lambda n: _lane_order(n, counter_bits=32)),
        Variant("carry-64-bit", "counter + block index carried only within words 0-1 (64-bit add)",
                lambda n: _lane_order(n, counter_bits=64)),
        Variant("counter-64-bit", "counter words 2 and 3 ignored (a 64-bit counter)", _counter_64),
        Variant("generated-after-advance", "words generated from the advanced (output) counter",
                _from_advanced_state),
        Variant("key-as-counter-high", "counter words 2-3 replaced by the key (XLA's 2-word Philox state)",
                _key_as_counter_high),
    ]
    for rounds in (7, 6, 8, 9, 11, 12, 1, 0):
        variants.append(Variant(f"rounds-{rounds}", f"Philox4x32-{rounds}: {rounds} rounds instead of 10",
                                (lambda r: lambda n: _lane_order(n, rounds=r))(rounds)))
    variants.append(Variant("zeros", "all output elements are zero", _constant(0)))
    return variants


# Layout variants: the right words, written in the wrong places.
def _strides_ignored(sizes, strides):
    return np.arange(layout.element_count(sizes), dtype=np.int64)


def _strides_reversed(sizes, strides):
    return layout.physical_offsets(sizes, tuple(reversed(layout.effective_strides(sizes, strides))))


def _physical_order(sizes, strides):
    """Word j written to the j-th lowest element offset (logical and physical order confused)."""
    return np.sort(layout.physical_offsets(sizes, strides))


LAYOUT_VARIANTS = [
    Variant("strides-ignored", "strides ignored: elements written packed row-major", _strides_ignored),
    Variant("strides-reversed", "strides applied to the dimensions in reverse order", _strides_reversed),
    Variant("logical-physical-confused", "words handed out in physical (memory) order instead of logical order",
            _physical_order),
]

STATE_VARIANTS = [
    Variant("state-not-advanced", "output state equals the input state (counter not advanced)",
            lambda s, n: counter.state_array(s)),
    Variant("increment-n", "counter advanced by n instead of ceil(n/4)", lambda s, n: counter.add_to_counter(s, n)),
    Variant("increment-floor", "counter advanced by floor(n/4) instead of ceil(n/4)",
            lambda s, n: counter.add_to_counter(s, n // 4)),
    Variant("increment-ceil-plus-one", "counter advanced by ceil(n/4) + 1", lambda s, n: counter.add_to_counter(
        s, counter.blocks_for(n) + 1)),
    Variant("increment-256n", "counter advanced by 256 * n (TensorFlow's Generator.skip(n) rule)",
            lambda s, n: counter.add_to_counter(s, 256 * n)),
    Variant("state-carry-32-bit", "output counter carried only within word 0",
            lambda s, n: counter.advance(s, n, counter_bits=32)),
    Variant("state-carry-64-bit", "output counter carried only within words 0-1",
            lambda s, n: counter.advance(s, n, counter_bits=64)),
    Variant("state-counter-words-reversed", "output counter advanced with word 3 as least significant",
            lambda s, n: np.concatenate([counter.advance(np.concatenate([np.asarray(s)[3::-1], np.asarray(s)[4:]]),
                                                         n)[3::-1], np.asarray(s)[4:]]).astype(np.uint32)),
    Variant("state-key-words-swapped", "output key words swapped",
            lambda s, n: counter.advance(np.asarray(s)[[0, 1, 2, 3, 5, 4]], n)),
]


def _verdict(matches: list[Variant], unknown: str, summary: str) -> dict:
    """The first matching variant, naming the others that predict the same on this case."""
    if not matches:
        return {"id": unknown, "summary": summary, "alternatives": []}
    return {"id": matches[0].id, "summary": matches[0].summary, "alternatives": [v.id for v in matches[1:]]}


def diagnose_state(state, element_count: int, actual) -> dict:
    """The state variants that match the returned state (those equal to the right answer excluded)."""
    actual = np.asarray(actual).reshape(-1)
    right = counter.advance(state, element_count)
    matches = []
    for variant in STATE_VARIANTS:
        predicted = np.asarray(variant.predict(state, element_count)).reshape(-1)
        if np.array_equal(predicted, right):
            continue  # indistinguishable from the spec on this case
        if predicted.shape == actual.shape and np.array_equal(predicted, actual):
            matches.append(variant)
    return _verdict(matches, "unknown-state", "the returned state matches no known bug class")


def diagnose_output(state, sizes, strides, extent: np.ndarray, unwritten: int) -> dict:
    """The variants whose prediction equals ``extent`` (the tensor's part of the buffer after the call).

    Element variants are compared on the first PREFIX elements (at their offsets); layout
    variants on the whole extent when it is at most DIAGNOSIS_LIMIT words.
    """
    n = layout.element_count(sizes)
    count = min(n, PREFIX)
    offsets = layout.physical_offsets(sizes, strides, 0, count)
    actual = extent[offsets]
    aliased = layout.aliases(sizes, strides)
    if np.all(actual == unwritten):
        return {"id": "not-written", "summary": "the output elements were never written", "alternatives": []}
    right = reference.words(state, 0, count)
    matches = []
    for variant in _word_variants():
        predicted = variant.predict(count)(counter.state_array(state))
        if aliased:
            # Last writer wins at shared offsets, as the reference writes.
            model = np.array(extent, copy=True)
            model[offsets] = predicted
            predicted = model[offsets]
        if np.array_equal(predicted, actual) and not np.array_equal(predicted, right):
            matches.append(variant)
    if extent.size <= DIAGNOSIS_LIMIT and not aliased:
        offsets_all = layout.physical_offsets(sizes, strides)
        right_words = reference.words(state, 0, n)
        for variant in LAYOUT_VARIANTS:
            placed = variant.predict(sizes, strides)
            if np.array_equal(placed, offsets_all):
                continue  # the same placement as the spec's on this layout
            if placed.max(initial=-1) < extent.size and np.array_equal(extent[placed], right_words):
                matches.append(variant)
    return _verdict(matches, "unknown", "the output matches no known bug class")
