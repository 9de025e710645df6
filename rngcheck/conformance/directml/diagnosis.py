"""Diagnosis: which known bug class a wrong answer looks like.

Each variant is a deliberately wrong model built from the reference's own pieces
(rngcheck.philox, rngcheck.counter, rngcheck.layout). On a mismatch the suite runs them on
the same case and names the first whose prediction equals what the backend produced (and
every other id that predicts the same). Add a bug class by adding a Variant to
WORD_VARIANTS (a word for each element), _case_variants (a family with a parameter, some of
it read off the output itself), LAYOUT_VARIANTS or STATE_VARIANTS. The diagnoses that need no
model (a broken contract, a crash, a write outside the extent) are the shared ones of
rngcheck.conformance.checks. Ids and summaries live here only. When nothing here (nor the anatomy's
families) names a wrong answer, rngcheck.conformance.directml.search changes one or two of the chain's
steps (issue 40); its ids are FAMILIES'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from ... import counter, layout, philox, reference
from ...generators import FAMILY_LABELS, PHILOX4X32, Generator
from ..checks import rounds_id

DIAGNOSIS_LIMIT = 1 << 18  # extents up to this many words are diagnosed whole; larger ones by a prefix
PREFIX = 4096
# subsequence-interleave: the subsequence counts tried (cuRAND's host Philox interleaves 65536
# subsequences a block at a time, as measured for the curand backend; 4096 in case a generator runs
# that many threads), besides any count the output itself shows (FITTED_CANDIDATES).
SUBSEQUENCES = (65536, 4096)
FITTED_CANDIDATES = 2  # parameter values read off the output per fitted family (bounded work)


@dataclass(frozen=True)
class Variant:
    id: str
    summary: str
    predict: Callable[..., Any]


def _blocks(state, block_count, *, counter_bits=128, rounds=10, key=None, counter_words=None, first=0):
    ctr = counter.block_counters(state, first, block_count, counter_bits=counter_bits)
    if counter_words is not None:
        ctr = counter_words(ctr)
    k0, k1 = key if key is not None else counter.key_of(state)
    return philox.philox4x32(*ctr, k0, k1, rounds=rounds)


def _lane_order(n, **kw):
    """Words of elements 0..n-1 in logical order for a variant of the block computation."""
    def words(state):
        return _blocks(state, counter.blocks_for(n), **kw).reshape(-1)[:n]
    return words


def _stream(generator: Generator, state, block_count: int, *, first: int = 0, rounds: int | None = None):
    """Blocks first .. first + block_count - 1 of the generator's operator stream, (blocks, words per block)."""
    return generator.stream(state, first, block_count, rounds)


def _lanes_in_reverse(blocks: np.ndarray, generator: Generator) -> np.ndarray:
    """Each block's W-bit lanes in reverse order (a W = 64 lane's two 32-bit words stay in order)."""
    return blocks.reshape(len(blocks), generator.lanes, generator.word_bits // 32)[:, ::-1].reshape(len(blocks), -1)


def _blocks_for(generator: Generator, n: int) -> int:
    return -(-n // generator.words_per_block)


def _counter_words_reversed(n):
    def words(state):
        reversed_state = np.concatenate([np.asarray(state)[3::-1], np.asarray(state)[4:]])
        c = counter.block_counters(reversed_state, 0, counter.blocks_for(n))
        k0, k1 = counter.key_of(state)
        return philox.philox4x32(c[3], c[2], c[1], c[0], k0, k1).reshape(-1)[:n]
    return words


def _counters_plus(state: npt.ArrayLike, high: npt.ArrayLike,
                   low: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Counter words (c0, c1, c2, c3) of counter + high * 2^64 + low mod 2^128 (uint64 arrays < 2^64)."""
    base_low, base_high = (np.uint64(half) for half in counter.counter_halves(state))
    low = np.add(base_low, np.asarray(low, dtype=np.uint64))  # wraps mod 2^64
    high = base_high + np.asarray(high, dtype=np.uint64) + (low < base_low)
    mask, shift = np.uint64(0xFFFFFFFF), np.uint64(32)
    return low & mask, low >> shift, high & mask, high >> shift


def _counter_words_msb_first(n):
    """oneDPL/std::philox_engine's set_counter({s0, s1, s2, s3}): it takes the words most significant
    first, so the counter Philox sees is (s3, s2, s1, s0), and s3 is the word that counts."""
    def words(state):
        s = np.asarray(state)
        flipped = np.concatenate([s[3::-1], s[4:]])
        return _blocks(flipped, counter.blocks_for(n)).reshape(-1)[:n]
    return words


def _key_word_0_is_index(work_items=None, step=1):
    """pyopencl's PhiloxGenerator: work item g keys its blocks (g, k1) and walks the counter.

    Block b is written by work item b mod W on its (b div W)-th turn: Philox(counter + step *
    (b div W), (b mod W, k1)) (step 2: its float64 fill draws two blocks a turn, the first
    giving the words). With W >= the block count (work_items None) every block has the input
    counter and the key (b, k1).
    """
    def predict(n):
        def words(state):
            m = counter.blocks_for(n)
            b = np.arange(m, dtype=np.uint64)
            w = np.uint64(work_items or max(m, 1))
            ctr = _counters_plus(state, np.zeros(m, dtype=np.uint64), b // w * np.uint64(step))
            k0 = (b % w) & np.uint64(0xFFFFFFFF)
            return philox.philox4x32(*ctr, k0, counter.key_of(state)[1]).reshape(-1)[:n]
        return words
    return predict


def _subsequence_interleave(subsequences, unit):
    """curandGenerate-like: S subsequences of one key, subsequence s at counter + s * 2^64 (its
    index in counter words 2-3, as curand_init's skipahead_sequence puts it), handed out in
    turn, ``unit`` words (1: a word, curand(); 4: a block, curand4()) at a time.

    unit 1: element i is word i div S of subsequence i mod S (block (i div S) div 4 of it,
    lane (i div S) mod 4). unit 4: block j (elements 4j..4j+3) is block j div S of
    subsequence j mod S, lanes in order.
    """
    def predict(n):
        def words(state):
            key = counter.key_of(state)
            if unit == 1:
                i = np.arange(n, dtype=np.uint64)
                s, position = i % np.uint64(subsequences), i // np.uint64(subsequences)
                blocks = philox.philox4x32(*_counters_plus(state, s, position // np.uint64(4)), *key)
                return blocks[np.arange(n), (position % np.uint64(4)).astype(np.int64)]
            j = np.arange(counter.blocks_for(n), dtype=np.uint64)
            ctr = _counters_plus(state, j % np.uint64(subsequences), j // np.uint64(subsequences))
            return philox.philox4x32(*ctr, *key).reshape(-1)[:n]
        return words
    return predict


def _carries_into_key(n):
    """The six state words as one 192-bit number: counter + b carries out of word 3 into the key."""
    def words(state):
        m = counter.blocks_for(n)
        ctr = counter.block_counters(state, 0, m)
        first_wrapped = (1 << 128) - counter.counter_of(state)  # blocks from here on carried out of word 3
        carry = (np.arange(m) >= first_wrapped).astype(np.uint64)
        key = np.uint64(counter.key_value(state)) + carry  # wraps mod 2^64
        low, high = key & np.uint64(0xFFFFFFFF), key >> np.uint64(32)
        return philox.philox4x32(*ctr, low, high).reshape(-1)[:n]
    return words


def _state_carries_into_key(state, n):
    total = counter.counter_of(state) + counter.blocks_for(n)
    return counter.make_state(total, (counter.key_value(state) + (total >> 128)) & counter.HALF_MASK)


def _pyopencl_state(multiplier):
    """pyopencl's PhiloxGenerator host counter: word 0 += multiplier * n, carried into words 1 and 2
    by divmod with counter_max = 2^31 - 1, the words taken as int32 (clrandom.py; none into word 3)."""
    top = (1 << 31) - 1

    def advance(state, n):
        words = [counter.signed_word(w) for w in np.asarray(state).reshape(-1)]
        carry, words[0] = divmod(words[0] + multiplier * n, top)
        if carry:
            words[1] += carry
            carry, words[1] = divmod(words[1], top)
            words[2] += carry
        return np.array([counter.word_of(w) for w in words], dtype=np.uint32)
    return advance


def _lanes_reversed(generator: Generator):
    return lambda n: lambda state: _lanes_in_reverse(_stream(generator, state, _blocks_for(generator, n)),
                                                     generator).reshape(-1)[:n]


def _lane_major(generator: Generator):
    def predict(n):
        def words(state):
            m = _blocks_for(generator, n)
            blocks = _stream(generator, state, m)
            i = np.arange(n)
            return blocks[i % m, i // m]
        return words
    return predict


def _block_per_element(generator: Generator):
    def predict(n):
        def words(state):
            blocks = _stream(generator, state, n)
            return blocks[np.arange(n), np.arange(n) % generator.words_per_block]
        return words
    return predict


def _engine_convention(generator: Generator):
    """Random123's r123::Engine: c.incr() before the first block, then the lanes last first."""
    return lambda n: lambda state: _lanes_in_reverse(_stream(generator, state, _blocks_for(generator, n), first=1),
                                                     generator).reshape(-1)[:n]


def _from_advanced_state(generator: Generator):
    """Words generated from the advanced counter: the stream from block ceil(n / B) on."""
    return lambda n: lambda state: reference.words(state, _blocks_for(generator, n) * generator.words_per_block, n,
                                                   generator=generator)


def _counter_64(n):
    def words(state):
        low = np.concatenate([np.asarray(state)[:2], [0, 0], np.asarray(state)[4:]]).astype(np.uint32)
        return _blocks(low, counter.blocks_for(n), counter_bits=64).reshape(-1)[:n]
    return words


def _key_as_counter_high(n):
    """XLA's two-word Philox state {key, counter}: the key doubles as the counter's high 64 bits."""
    def words(state):
        key, (low, _) = counter.key_value(state), counter.counter_halves(state)
        return reference.words(counter.make_state(counter.counter_from_halves(low, key), key), 0, n)
    return words


def _constant(value):
    return lambda n: (lambda state: np.full(n, value, dtype=np.uint32))


# Element-level variants: a wrong word for element i, written where the spec says. Built once per
# generator (word_variants): the generic ones for any generator of rngcheck.generators, and those
# that model mistakes with DirectML's six state words (counter words 0-3, key words 4-5) for a
# generator whose state has that layout.
LANE_COUNT_WORDS = {2: "two", 4: "four"}


def _dml_layout(generator: Generator) -> bool:
    """Whether the generator's operator state is DirectML's: 4 counter words then 2 key words, 4 words a block."""
    return generator.state_words == counter.STATE_WORDS and generator.words_per_block == 4 and \
        generator.counter_bits == counter.COUNTER_BITS


def _build_word_variants(generator: Generator) -> tuple[Variant, ...]:
    dml = _dml_layout(generator)
    per = generator.words_per_block
    lanes = LANE_COUNT_WORDS.get(generator.lanes, str(generator.lanes))
    variants = []
    if dml:
        variants += [
            Variant("counter-words-reversed", "counter words in reverse order (word 3 taken as least significant), "
                    "fed to Philox in state order (oneDPL's set_counter order is counter-words-msb-first)",
                    _counter_words_reversed),
            Variant("counter-words-msb-first", "counter words taken most significant first (Philox sees s3, s2, s1, "
                    "s0 and counts in s3): set_counter({s0,s1,s2,s3}) of oneDPL/std::philox_engine, which wants "
                    "{s3,s2,s1,s0}", _counter_words_msb_first),
            Variant("key-words-swapped", "key words swapped (word 5 used as k0)",
                    lambda n: lambda s: _blocks(s, counter.blocks_for(n), key=counter.key_of(s)[::-1]).reshape(-1)[:n]),
            Variant("key-high-ignored", "only the low key word used (k1 taken as 0)",
                    lambda n: lambda s: _blocks(s, counter.blocks_for(n),
                                                key=(counter.key_of(s)[0], 0)).reshape(-1)[:n]),
        ]
    variants += [
        Variant("lanes-reversed", f"the {lanes} lanes of each block in reverse order", _lanes_reversed(generator)),
        Variant("lane-major", "lanes handed out lane-major (element i from block i mod m) instead of block-major",
                _lane_major(generator)),
        Variant("block-per-element", f"counter advanced per element (counter + i) instead of per {per} elements",
                _block_per_element(generator)),
    ]
    if dml:
        variants += [
            Variant("carry-32-bit", "counter + block index carried only within word 0 (32-bit add)",
                    lambda n: _lane_order(n, counter_bits=32)),
            Variant("carry-64-bit", "counter + block index carried only within words 0-1 (64-bit add)",
                    lambda n: _lane_order(n, counter_bits=64)),
            Variant("counter-64-bit", "counter words 2 and 3 ignored (a 64-bit counter)", _counter_64),
        ]
    variants.append(Variant("generated-after-advance", "words generated from the advanced (output) counter",
                            _from_advanced_state(generator)))
    if dml:
        variants.append(Variant("key-as-counter-high", "counter words 2-3 replaced by the key (XLA's 2-word Philox "
                                "state)", _key_as_counter_high))
    last_first = ", ".join(str(lane) for lane in reversed(range(generator.lanes)))
    variants += [
        Variant("engine-convention", "Random123's r123::Engine: first block at counter + 1 and lanes handed out "
                f"{last_first}", _engine_convention(generator)),
        Variant("counter-plus-one", "first block at counter + 1 instead of counter (r123::Engine's increment "
                f"before use; with lanes {last_first} too see engine-convention)",
                lambda n: lambda s: _stream(generator, s, _blocks_for(generator, n), first=1).reshape(-1)[:n]),
    ]
    if dml:
        variants += [
            Variant("key-word-0-is-index", "key word 0 replaced by the block index: block b is Philox(counter, "
                    "(b, k1)) (pyopencl's PhiloxGenerator, a work item per block)", _key_word_0_is_index()),
            Variant("counter-carries-into-key", "counter + block index carries out of word 3 into the key (words "
                    "4-5) instead of wrapping mod 2^128", _carries_into_key),
        ]
    name = f"{FAMILY_LABELS[generator.family]}{generator.lanes}x{generator.word_bits}"
    for rounds in generator.wrong_rounds:
        variants.append(Variant(rounds_id(rounds), f"{name}-{rounds}: {rounds} rounds instead of "
                                f"{generator.default_rounds}",
                                (lambda r: lambda n: lambda s: reference.words(s, 0, n, rounds=r,
                                                                               generator=generator))(rounds)))
    variants.append(Variant("zeros", "all output elements are zero", _constant(0)))
    return tuple(variants)


@cache
def word_variants(generator: Generator = PHILOX4X32) -> tuple[Variant, ...]:
    """The element-level variants for an operator built on ``generator`` (Philox4x32-10: DirectML's)."""
    return _build_word_variants(generator)


WORD_VARIANTS = word_variants(PHILOX4X32)


def _subsequence_variant(subsequences: int, unit: int, count: int) -> Variant:
    """subsequence-interleave with S subsequences, as far as the first ``count`` elements show S."""
    turns = count if unit == 1 else counter.blocks_for(count)
    many = f"S >= {turns} (cuRAND's 65536, say)" if subsequences >= turns else f"S = {subsequences}"
    what = ("element i is word i div S of subsequence i mod S" if unit == 1 else
            "a block at a time: block j is block j div S of subsequence j mod S")
    return Variant("subsequence-interleave", f"cuRAND-like interleave over {many} subsequences (subsequence s "
                   f"at counter + s*2^64): {what}", _subsequence_interleave(subsequences, unit))


def _case_variants(state, actual: np.ndarray, right: np.ndarray) -> list[Variant]:
    """Families with a parameter, for this case: the values tried, and those the output shows.

    subsequence-interleave: S in SUBSEQUENCES (those that all look alike on this prefix once),
    and the S at which the output holds the spec's word 1 (word 1 of subsequence 0) or, a block
    at a time, the spec's block 1. key-word-0-is-index with W work items: the W at which the
    output holds Philox(counter + step, (0, k1)) (work item 0's second turn; step 1 or 2). Bounded: at most
    FITTED_CANDIDATES values read off the output per family.
    """
    count = actual.size
    lane0 = actual[0:count:4]
    found: dict[int, np.ndarray | list[int]] = {1: (np.flatnonzero(actual[2:] == right[1]) + 2) if count >= 3 else [],
             4: (np.flatnonzero(lane0[2:] == right[4]) + 2) if count >= 9 else []}
    variants = []
    for unit in (1, 4):
        turns = count if unit == 1 else counter.blocks_for(count)
        tried = sorted({min(s, max(SUBSEQUENCES)) if s >= turns else s for s in SUBSEQUENCES}, reverse=True)
        fitted = [int(s) for s in found[unit][:FITTED_CANDIDATES] if int(s) not in tried]
        variants += [_subsequence_variant(s, unit, count) for s in tried + fitted]
    if count >= 9:
        for step in (1, 2):
            second = philox.philox4x32(*_counters_plus(state, [0], [step]), 0, counter.key_of(state)[1])[0, 0]
            for at in (np.flatnonzero(lane0[1:] == second) + 1)[:FITTED_CANDIDATES]:
                turn = "b div W" if step == 1 else "2 * (b div W)"
                variants.append(Variant("key-word-0-is-index", f"key word 0 replaced by the work-item index: block b "
                                        f"is Philox(counter + {turn}, (b mod W, k1)), W = {int(at)} (pyopencl's "
                                        f"PhiloxGenerator)", _key_word_0_is_index(int(at), step)))
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
    Variant("state-carries-into-key", "output counter carried out of word 3 into the key instead of wrapping "
            "mod 2^128", _state_carries_into_key),
    Variant("state-pyopencl-counter", "output word 0 advanced by 2n (two blocks per 4 float64 outputs), carried "
            "into words 1-2 mod 2^31-1 on int32 words (pyopencl's PhiloxGenerator)", _pyopencl_state(2)),
    Variant("state-pyopencl-counter", "output word 0 advanced by n, carried into words 1-2 mod 2^31-1 on int32 "
            "words (pyopencl's PhiloxGenerator)", _pyopencl_state(1)),
]



def _found_by_its_own_check(*args: object) -> NoReturn:
    raise TypeError("this variant is recognised by its own check, not by a prediction")


PARTIAL_BLOCK = Variant("partial-block-unwritten", "the last partial block not written: the final n mod 4 "
                        "elements keep what the buffer held", _found_by_its_own_check)
NOT_WRITTEN = Variant("not-written", "the output elements were never written", _found_by_its_own_check)


# Structured families (rngcheck.conformance.directml.anatomy): searched when no named class matches, each
# verified on the anatomy's window and named with its parameters (``family``). Ids live here only.
FAMILIES = {
    "lane-permutation": "the lanes of some or all blocks permuted (the permutation and the blocks as parameters)",
    "lane-shuffle": "lanes taking words of a neighbouring block (the lane map and the blocks as parameters)",
    "byte-order": "every word stored with its bytes in another order",
    "carry-boundary": "counter + block index carried only within its low B bits",
    "round-count": "Philox4x32 with another number of rounds",
    "index-wrap": "an element index that wraps at 2^k: the output repeats from element 2^k on",
    "displacement": "element i holds element i + d",
    "key-variant": "the right counters under another key derived from the state",
    "counter-word-order": "the counter's words fed to Philox in another order",
    "state-carry-boundary": "output counter carried only within its low B bits",
    "state-increment": "output counter advanced by another rule than ceil(n/4)",
    # The 2^31 boundary (rngcheck.conformance.directml.wraps, issue 29): recognised on windows of huge tensors.
    "element-index-int32": "an element index held in a signed 32-bit int: from element 2^31 on the output "
                           "repeats elements 0, 1, ...",
    "byte-offset-uint32": "a byte offset held in 32 bits wraps at 4 GiB: elements from 2^30 on are written over "
                          "elements 0, 1, ... and are themselves never written",
    # The chain's search (rngcheck.conformance.directml.search, issue 40): one or two steps' parameters changed.
    "key-word-masked": "state layout: a key word masked (word, mask as parameters)",
    "key-schedule-weyl": "key schedule: other Weyl constants (weyl [W0, W1] as parameters)",
    "key-schedule-bump-first": "key schedule: the key bumped before the first round too",
    "round-multipliers": "round function: other multipliers (multipliers [M0, M1] as parameters)",
    "round-product-halves": "round function: a product's high and low halves exchanged (exchanged: the products)",
    "round-key-xor": "round function: the key words xored into each other's lanes",
    "two-steps": "two steps of the chain differ (changes [{id, step, parameters}] as parameters)",
}


def family(id_: str, summary: str, **parameters) -> dict:
    """A structured family's diagnosis: a registered id (FAMILIES), this case's summary, its parameters."""
    if id_ not in FAMILIES:
        raise KeyError(f"family id {id_!r} is not registered in conformance.directml.diagnosis.FAMILIES")
    return {"id": id_, "summary": summary, "alternatives": [], "parameters": parameters}


def _verdict(matches: list[Variant], unknown: str, summary: str) -> dict:
    """The first matching variant, naming the others that predict the same on this case (each id once)."""
    if not matches:
        return {"id": unknown, "summary": summary, "alternatives": []}
    ids = list(dict.fromkeys(v.id for v in matches))
    return {"id": ids[0], "summary": matches[0].summary, "alternatives": ids[1:]}


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
    verdict = _verdict(matches, "unknown-state", "the returned state matches no known bug class")
    return _same_advance(verdict, state, element_count, actual) if matches else verdict


# Increment rules implementations have (issue 40): a state class that reads an advance off one case is
# also each of these when it gives the same advance there; the case is then too small to tell them apart.
INCREMENT_RULES: dict[str, Callable[[int], int]] = {
    "n": lambda n: n, "2n": lambda n: 2 * n, "floor(n/4)": lambda n: n // 4,
    "ceil(n/4) + 1": lambda n: -(-n // 4) + 1, "2 * ceil(n/4)": lambda n: 2 * -(-n // 4),
    "ceil(n/2)": lambda n: -(-n // 2), "256n": lambda n: 256 * n,
}


def _same_advance(verdict: dict, state, n: int, actual: np.ndarray) -> dict:
    """A named state class whose advance other increment rules give too on this n: listed (``matches``
    with their rule as parameters, ``state-increment`` in the alternatives) and said (``indistinct``)."""
    rules = [rule for rule, advance in INCREMENT_RULES.items() if advance(n) != counter.blocks_for(n)
             and np.array_equal(counter.add_to_counter(state, advance(n)), actual)]
    if len(rules) < 2:
        return verdict
    return {**verdict, "alternatives": [*verdict["alternatives"], "state-increment"],
            "matches": [{"id": verdict["id"], "parameters": {}},
                        *({"id": "state-increment", "parameters": {"rule": rule}} for rule in rules)],
            "indistinct": f"on n = {n} the advance is also {', '.join(rules)}: too small a case to tell these "
                          f"increment rules apart"}


def _partial_block_unwritten(state, sizes, strides, extent, unwritten, offsets, actual, right,
                             generator: Generator = PHILOX4X32) -> bool:
    """Every element right but the last n mod B (the partial block, B words a block), which keep ``unwritten``.

    Judged on the first PREFIX elements and the tail (wherever the tail lies): only the tail unwritten.
    """
    n = layout.element_count(sizes)
    tail = n % generator.words_per_block
    if not tail:
        return False
    tail_offsets = layout.physical_offsets(sizes, strides, n - tail, tail)
    if np.all(reference.words(state, n - tail, tail, generator=generator) == unwritten):
        return False  # indistinguishable from the spec on this case
    written = min(actual.size, n - tail)
    # The model at the offsets it is read at only (bounded, whatever the extent's size).
    at, where = np.unique(np.concatenate([tail_offsets, offsets]), return_inverse=True)
    model = extent[at].copy()
    model[where[:tail]] = unwritten
    model[where[tail:tail + written]] = right[:written]  # the written elements win at offsets shared with the tail
    return np.array_equal(model[where[tail:]], actual) and np.array_equal(model[where[:tail]], extent[tail_offsets])


def diagnose_output(state, sizes, strides, extent: np.ndarray, unwritten: int, *,
                    generator: Generator = PHILOX4X32) -> dict:
    """The variants whose prediction equals ``extent`` (the tensor's part of the buffer after the call).

    Element variants are compared on the first PREFIX elements (at their offsets); layout
    variants on the whole extent when it is at most DIAGNOSIS_LIMIT words. ``generator`` is the
    one the operator is built on (DirectML's Philox4x32-10 by default; its state is the
    generator's counter words then key words).
    """
    n = layout.element_count(sizes)
    count = min(n, PREFIX)
    offsets = layout.physical_offsets(sizes, strides, 0, count)
    actual = extent[offsets]
    aliased = layout.aliases(sizes, strides)
    if np.all(actual == unwritten):
        # With fewer than 4 elements the partial block is the whole output.
        return {"id": NOT_WRITTEN.id, "summary": NOT_WRITTEN.summary,
                "alternatives": [PARTIAL_BLOCK.id] if n < 4 else []}
    state = counter.state_array(state) if _dml_layout(generator) else np.asarray(state, dtype=np.uint32).reshape(-1)
    right = reference.words(state, 0, count, generator=generator)
    matches = []
    if _partial_block_unwritten(state, sizes, strides, extent, unwritten, offsets, actual, right, generator):
        matches.append(PARTIAL_BLOCK)
    fitted = _case_variants(state, actual, right) if _dml_layout(generator) else []
    for variant in (*word_variants(generator), *fitted):
        predicted = variant.predict(count)(state)
        if aliased:
            # Last writer wins at shared offsets, as the reference writes.
            model = np.array(extent, copy=True)
            model[offsets] = predicted
            predicted = model[offsets]
        if np.array_equal(predicted, actual) and not np.array_equal(predicted, right):
            matches.append(variant)
    if extent.size <= DIAGNOSIS_LIMIT and not aliased:
        offsets_all = layout.physical_offsets(sizes, strides)
        right_words = reference.words(state, 0, n, generator=generator)
        for variant in LAYOUT_VARIANTS:
            placed = variant.predict(sizes, strides)
            if np.array_equal(placed, offsets_all):
                continue  # the same placement as the spec's on this layout
            if placed.max(initial=-1) < extent.size and np.array_equal(extent[placed], right_words):
                matches.append(variant)
    return _verdict(matches, "unknown", "the output matches no known bug class")


def registered_ids() -> dict[str, str]:
    """Every id this axis's diagnosis gives (the shared check ids aside: rngcheck.conformance.checks),
    with its summary; a fitted family's summary is its general form."""
    ids: dict[str, str] = {}
    for variant in (*WORD_VARIANTS, *LAYOUT_VARIANTS, *STATE_VARIANTS, PARTIAL_BLOCK, NOT_WRITTEN):
        ids.setdefault(variant.id, variant.summary)
    ids.setdefault("subsequence-interleave", "cuRAND-like interleave over S subsequences (subsequence s at "
                                             "counter + s*2^64)")
    ids.setdefault("unknown-state", "the returned state matches no known bug class")
    return {**ids, **{id_: summary for id_, summary in FAMILIES.items() if id_ not in ids}}

