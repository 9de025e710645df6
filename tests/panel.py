"""A panel of deliberately broken backends: the suite must catch each one and name its bug.

The panel shares no code with rngcheck's reference: its Philox and its counter arithmetic
are written again here, plainly, with knobs that introduce one bug each. To add a broken
backend, add an entry to PANEL: (name, knobs or a class, expected diagnosis id).
"""

from __future__ import annotations

import math

import numpy as np

from rngcheck import Rejected
from rngcheck.backends import Backend
from rngcheck.backends.reference import NumpyBackend

MASK32 = 0xFFFFFFFF


def philox_blocks(counters: np.ndarray, k0: int, k1: int, rounds: int = 10) -> np.ndarray:
    """Philox4x32-R over an (m, 4) array of counter words; returns (m, 4) uint32."""
    x = counters.astype(np.uint64)
    for _ in range(rounds):
        p0 = x[:, 0] * np.uint64(0xD2511F53)
        p1 = x[:, 2] * np.uint64(0xCD9E8D57)
        x = np.stack([(p1 >> np.uint64(32)) ^ x[:, 1] ^ np.uint64(k0), p1 & np.uint64(MASK32),
                      (p0 >> np.uint64(32)) ^ x[:, 3] ^ np.uint64(k1), p0 & np.uint64(MASK32)], axis=1)
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return x.astype(np.uint32)


def counter_plus(words, increments: np.ndarray, carry_bits: int = 128) -> np.ndarray:
    """(m, 4) counter words of (counter + increment) mod 2^carry_bits (higher words kept)."""
    value = sum(int(words[i]) << (32 * i) for i in range(4))
    field = (1 << carry_bits) - 1
    base_low = value & field
    rows = []
    for inc in increments.tolist():
        v = (value & ~field & ((1 << 128) - 1)) | ((base_low + inc) & field)
        rows.append([(v >> (32 * i)) & MASK32 for i in range(4)])
    return np.array(rows, dtype=np.uint64).reshape(-1, 4)


class KnobbedPhilox(Backend):
    """A Philox DML_RANDOM_GENERATOR with one knob per known bug class (default: correct)."""

    validates = False

    def __init__(self, name=None, *, counter_high_first=False, key_swapped=False, lanes_reversed=False,
                 rounds=10, carry_bits=128, increment="ceil", state_carry_bits=128, ignore_strides=False,
                 physical_order=False, lane_major=False, per_element=False, counter64=False,
                 counter_msb_first=False, first_block=0, carry_into_key=False, state_carry_into_key=False,
                 skip_partial_block=False):
        self.name = name or type(self).__name__
        self.knobs = dict(counter_high_first=counter_high_first, key_swapped=key_swapped,
                          lanes_reversed=lanes_reversed, rounds=rounds, carry_bits=carry_bits,
                          increment=increment, state_carry_bits=state_carry_bits, ignore_strides=ignore_strides,
                          physical_order=physical_order, lane_major=lane_major, per_element=per_element,
                          counter64=counter64, counter_msb_first=counter_msb_first, first_block=first_block,
                          carry_into_key=carry_into_key, state_carry_into_key=state_carry_into_key,
                          skip_partial_block=skip_partial_block)

    def describe(self):
        return {"implementation": "tests/panel.py KnobbedPhilox", "knobs": repr(self.knobs)}

    def logical_words(self, state, n):
        s = [int(w) for w in np.asarray(state).reshape(-1)]
        ctr, (k0, k1) = s[:4], (s[4], s[5])
        if self.knobs["counter_high_first"] or self.knobs["counter_msb_first"]:
            ctr = ctr[::-1]  # msb-first: set_counter({s0,s1,s2,s3}) of an engine that wants {s3,s2,s1,s0}
        if self.knobs["counter64"]:
            ctr = ctr[:2] + [0, 0]
        if self.knobs["key_swapped"]:
            k0, k1 = k1, k0
        blocks = n if self.knobs["per_element"] else math.ceil(n / 4)
        first = self.knobs["first_block"]  # 1: r123::Engine's c.incr() before the first block
        counters = counter_plus(ctr, np.arange(first, first + blocks),
                                64 if self.knobs["counter64"] else self.knobs["carry_bits"])
        if self.knobs["counter_high_first"]:
            counters = counters[:, ::-1]
        if self.knobs["carry_into_key"]:  # the six words as one 192-bit number
            value = sum(w << (32 * i) for i, w in enumerate(ctr))
            keys = [((k0 | k1 << 32) + ((value + first + b) >> 128)) & ((1 << 64) - 1) for b in range(blocks)]
            k0 = np.array([k & MASK32 for k in keys], dtype=np.uint64)
            k1 = np.array([k >> 32 for k in keys], dtype=np.uint64)
        out = philox_blocks(counters, k0, k1, self.knobs["rounds"])
        if self.knobs["lanes_reversed"]:
            out = out[:, ::-1]
        i = np.arange(n)
        if self.knobs["per_element"]:
            return out[i, i % 4]
        if self.knobs["lane_major"]:
            return out[i % blocks, i // blocks]
        return out.reshape(-1)[:n]

    def offsets(self, sizes, strides):
        n = math.prod(sizes)
        if strides is None or self.knobs["ignore_strides"]:
            return np.arange(n)
        coords = np.indices(sizes).reshape(len(sizes), -1)
        offsets = (coords * np.array(strides).reshape(-1, 1)).sum(axis=0)
        return np.sort(offsets) if self.knobs["physical_order"] else offsets

    def next_state(self, state, n):
        s = [int(w) for w in np.asarray(state).reshape(-1)]
        if self.knobs["increment"] == "pyopencl-2n":  # clrandom.py: counter[0] += 2n, divmod by 2^31 - 1 (int32)
            words = [w - (1 << 32) if w >= 1 << 31 else w for w in s]
            c1, words[0] = divmod(words[0] + 2 * n, (1 << 31) - 1)
            if c1:
                c2, words[1] = divmod(words[1] + c1, (1 << 31) - 1)
                words[2] += c2
            return np.array([w & MASK32 for w in words], dtype=np.uint32)
        inc = {"ceil": math.ceil(n / 4), "n": n, "2n": 2 * n, "floor": n // 4, "none": 0}[self.knobs["increment"]]
        ctr = counter_plus(s[:4], np.array([inc]), self.knobs["state_carry_bits"])[0]
        key = s[4] | s[5] << 32
        if self.knobs["state_carry_into_key"] and sum(w << (32 * i) for i, w in enumerate(s[:4])) + inc >> 128:
            key = (key + 1) & ((1 << 64) - 1)
        return np.array([*ctr, key & MASK32, key >> 32], dtype=np.uint32)

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True, feature_level=(4, 0)):
        n = math.prod(sizes)
        written = n - n % 4 if self.knobs["skip_partial_block"] else n
        buffer[self.offsets(tuple(sizes), strides)[:written]] = self.logical_words(state, n)[:written]
        return self.next_state(state, n) if output_state else None


class MutatesInputState(KnobbedPhilox):
    def random_generator(self, state, sizes, strides, buffer, **kw):
        result = super().random_generator(state, sizes, strides, buffer, **kw)
        state.reshape(-1)[0] ^= 1
        return result


class HiddenGlobalState(KnobbedPhilox):
    """Continues from its own counter after the first execution, as a stateful generator would."""

    def __init__(self):
        super().__init__("hidden-global-state")
        self.internal = None

    def random_generator(self, state, sizes, strides, buffer, **kw):
        used = np.array(state, dtype=np.uint32).reshape(-1) if self.internal is None else self.internal
        result = super().random_generator(used, sizes, strides, buffer, output_state=True)
        self.internal = result
        return result if kw.get("output_state", True) else None


class WritesPastExtent(KnobbedPhilox):
    def random_generator(self, state, sizes, strides, buffer, **kw):
        result = super().random_generator(state, sizes, strides, buffer, **kw)
        extent = sum((s - 1) * d for s, d in zip(sizes, strides or _packed(sizes))) + 1
        if buffer.size > extent:
            buffer[extent] = 0  # one word too many
        return result


class Only4D(KnobbedPhilox):
    validates = True

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if len(sizes) != 4:
            raise Rejected(f"{len(sizes)}-D tensors are not supported")
        return super().random_generator(state, sizes, strides, buffer, **kw)


class ClaimsToValidate(KnobbedPhilox):
    """Says it validates, but accepts everything it can compute."""

    validates = True

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if math.prod(sizes) >= 1 << 32:
            raise Rejected("too large")
        return super().random_generator(np.asarray(state).reshape(-1)[:6], sizes, strides, buffer, **kw)


class OverwritesPadding(KnobbedPhilox):
    def random_generator(self, state, sizes, strides, buffer, **kw):
        extent = sum((s - 1) * d for s, d in zip(sizes, strides or _packed(sizes))) + 1
        buffer[:extent] = 0
        return super().random_generator(state, sizes, strides, buffer, **kw)


class Crashes(KnobbedPhilox):
    def random_generator(self, state, sizes, strides, buffer, **kw):
        raise RuntimeError("device lost")


class GarbageState(KnobbedPhilox):
    def random_generator(self, state, sizes, strides, buffer, **kw):
        super().random_generator(state, sizes, strides, buffer, **kw)
        return np.zeros(5, dtype=np.float32) if kw.get("output_state", True) else None


class LanesReversed(KnobbedPhilox):
    """One knob as a class, for a ``tests/panel.py:LanesReversed`` backend spec (rngcheck repro)."""

    def __init__(self):
        super().__init__("lanes-reversed", lanes_reversed=True)


class StateNotAdvanced(KnobbedPhilox):
    """Right words; returns the input state (the counter not advanced)."""

    def __init__(self):
        super().__init__("state-not-advanced", increment="none")


class FlipsTwoWords(KnobbedPhilox):
    """Right but for the low bit of two elements: the second (1) and the next to last (n - 2)."""

    def random_generator(self, state, sizes, strides, buffer, **kw):
        result = super().random_generator(state, sizes, strides, buffer, **kw)
        offsets = self.offsets(tuple(sizes), strides)
        buffer[offsets[[1, offsets.size - 2]]] ^= 1
        return result


class KeyWord0IsIndex(KnobbedPhilox):
    """pyopencl's PhiloxGenerator kernel: work item g keys its blocks (g, k1) (k1: word 5; word 4 unused)
    and writes blocks g, g + W, g + 2W, ..., its counter going up by ``step`` a turn (2: float64 fill)."""

    def __init__(self, work_items=None, step=1):
        super().__init__("key-word-0-is-index" + (f"-w{work_items}" if work_items else ""))
        self.work_items, self.step = work_items, step  # step 2: the float64 fill's two blocks a turn

    def logical_words(self, state, n):
        s = [int(w) for w in np.asarray(state).reshape(-1)]
        blocks = math.ceil(n / 4)
        work_items = self.work_items or max(blocks, 1)
        b = np.arange(blocks)
        out = philox_blocks(counter_plus(s[:4], b // work_items * self.step), (b % work_items).astype(np.uint64), s[5])
        return out.reshape(-1)[:n]


class SubsequenceInterleave(KnobbedPhilox):
    """A curandGenerate-like layout: S subsequences (subsequence t at counter + t * 2^64, as curand_init
    puts it in counter words 2-3) handed out in turn, ``unit`` words at a time (1: curand(), 4: curand4())."""

    def __init__(self, subsequences=65536, unit=1):
        super().__init__(f"subsequence-interleave-{subsequences}x{unit}")
        self.subsequences, self.unit = subsequences, unit

    def logical_words(self, state, n):
        s = [int(w) for w in np.asarray(state).reshape(-1)]
        if self.unit == 1:
            positions = [i // self.subsequences for i in range(n)]
            steps = [(i % self.subsequences << 64) + p // 4 for i, p in zip(range(n), positions)]
            out = philox_blocks(counter_plus(s[:4], np.array(steps, dtype=object)), s[4], s[5])
            return out[np.arange(n), np.array(positions, dtype=np.int64) % 4]
        steps = [(j % self.subsequences << 64) + j // self.subsequences for j in range(math.ceil(n / 4))]
        return philox_blocks(counter_plus(s[:4], np.array(steps, dtype=object)), s[4], s[5]).reshape(-1)[:n]


def _packed(sizes):
    strides, step = [], 1
    for s in reversed(sizes):
        strides.append(step)
        step *= s
    return tuple(reversed(strides))


# (name, backend factory, expected diagnosis id of at least one failure, profile that catches it)
PANEL = [
    ("counter-words-reversed", lambda: KnobbedPhilox(counter_high_first=True), "counter-words-reversed", "quick"),
    ("key-words-swapped", lambda: KnobbedPhilox(key_swapped=True), "key-words-swapped", "quick"),
    ("lanes-reversed", lambda: KnobbedPhilox(lanes_reversed=True), "lanes-reversed", "quick"),
    ("lane-major", lambda: KnobbedPhilox(lane_major=True), "lane-major", "quick"),
    ("block-per-element", lambda: KnobbedPhilox(per_element=True), "block-per-element", "quick"),
    ("rounds-7", lambda: KnobbedPhilox(rounds=7), "rounds-7", "quick"),
    ("rounds-12", lambda: KnobbedPhilox(rounds=12), "rounds-12", "quick"),
    ("increment-n", lambda: KnobbedPhilox(increment="n"), "increment-n", "quick"),
    ("increment-floor", lambda: KnobbedPhilox(increment="floor"), "increment-floor", "quick"),
    ("state-not-advanced", lambda: KnobbedPhilox(increment="none"), "state-not-advanced", "quick"),
    ("carry-32-bit", lambda: KnobbedPhilox(carry_bits=32), "carry-32-bit", "quick"),
    ("carry-64-bit", lambda: KnobbedPhilox(carry_bits=64), "carry-64-bit", "quick"),
    ("state-carry-32-bit", lambda: KnobbedPhilox(state_carry_bits=32), "state-carry-32-bit", "quick"),
    ("state-carry-64-bit", lambda: KnobbedPhilox(state_carry_bits=64), "state-carry-64-bit", "quick"),
    ("counter-64-bit", lambda: KnobbedPhilox(counter64=True), "counter-64-bit", "quick"),
    ("strides-ignored", lambda: KnobbedPhilox(ignore_strides=True), "strides-ignored", "quick"),
    ("logical-physical-confused", lambda: KnobbedPhilox(physical_order=True), "logical-physical-confused", "quick"),
    ("mutates-input-state", lambda: MutatesInputState(), "input-state-modified", "quick"),
    ("hidden-global-state", lambda: HiddenGlobalState(), "hidden-state", "quick"),
    ("writes-past-extent", lambda: WritesPastExtent(), "out-of-extent-write", "quick"),
    ("only-4d", lambda: Only4D(), "rank-4-only", "quick"),
    ("claims-to-validate", lambda: ClaimsToValidate(), "accepts-invalid", "quick"),
    ("overwrites-padding", lambda: OverwritesPadding(), "padding-overwritten", "strict"),
    ("garbage-state", lambda: GarbageState(), "contract", "quick"),
    ("counter-words-msb-first", lambda: KnobbedPhilox(counter_msb_first=True), "counter-words-msb-first", "quick"),
    ("engine-convention", lambda: KnobbedPhilox(first_block=1, lanes_reversed=True), "engine-convention", "quick"),
    ("counter-plus-one", lambda: KnobbedPhilox(first_block=1), "counter-plus-one", "quick"),
    ("key-word-0-is-index", lambda: KeyWord0IsIndex(), "key-word-0-is-index", "quick"),
    ("key-word-0-is-index-w8", lambda: KeyWord0IsIndex(work_items=8), "key-word-0-is-index", "quick"),
    ("key-word-0-is-index-w5-float64", lambda: KeyWord0IsIndex(work_items=5, step=2), "key-word-0-is-index", "quick"),
    ("state-pyopencl-counter", lambda: KnobbedPhilox(increment="pyopencl-2n"), "state-pyopencl-counter", "quick"),
    ("subsequence-interleave", lambda: SubsequenceInterleave(65536, 1), "subsequence-interleave", "quick"),
    ("subsequence-interleave-blocks", lambda: SubsequenceInterleave(4096, 4), "subsequence-interleave", "quick"),
    ("subsequence-interleave-6", lambda: SubsequenceInterleave(6, 1), "subsequence-interleave", "quick"),
    ("subsequence-interleave-blocks-3", lambda: SubsequenceInterleave(3, 4), "subsequence-interleave", "quick"),
    ("counter-carries-into-key", lambda: KnobbedPhilox(carry_into_key=True, state_carry_into_key=True),
     "counter-carries-into-key", "quick"),
    ("state-carries-into-key", lambda: KnobbedPhilox(state_carry_into_key=True), "state-carries-into-key", "quick"),
    ("partial-block-unwritten", lambda: KnobbedPhilox(skip_partial_block=True), "partial-block-unwritten", "quick"),
]


# -- broken backends of kinds no named class models (issue 30): the anatomy must explain each ----

def _byte_swapped(words: np.ndarray) -> np.ndarray:
    w = words.astype(np.uint32)
    return ((w >> 24) | ((w >> 8) & 0xFF00) | ((w << 8) & 0xFF0000) | (w << 24)).astype(np.uint32)


class ByteSwapped(KnobbedPhilox):
    """Stores each word in the other byte order (a big-endian store)."""

    def logical_words(self, state, n):
        return _byte_swapped(super().logical_words(state, n))


class LanesRotatedInSomeBlocks(KnobbedPhilox):
    """A SIMD shuffle that, in every fourth block (b mod 4 == 3), writes lanes (1, 2, 3, 0)."""

    def logical_words(self, state, n):
        words = super().logical_words(state, -(-n // 4) * 4).reshape(-1, 4)
        words[3::4] = words[3::4][:, [1, 2, 3, 0]]
        return words.reshape(-1)[:n]


class FlipsOneBit(KnobbedPhilox):
    """Right but for bit 9 of every element i with i mod 64 == 5."""

    def logical_words(self, state, n):
        words = super().logical_words(state, n)
        words[5::64] ^= np.uint32(1 << 9)
        return words


class IndexWraps(KnobbedPhilox):
    """Computes element i as element i mod 2^bits (a 32-bit element index that wraps, scaled down)."""

    def __init__(self, bits=8):
        super().__init__(f"index-wraps-2pow{bits}")
        self.bits = bits

    def logical_words(self, state, n):
        head = super().logical_words(state, min(n, 1 << self.bits))
        return head[np.arange(n) % (1 << self.bits)]


class WrongOneCallInN(KnobbedPhilox):
    """Right but on every ``every``-th call, when its words are those of another key."""

    def __init__(self, every=5):
        super().__init__(f"wrong-one-call-in-{every}")
        self.every, self.calls = every, 0

    def logical_words(self, state, n):
        self.calls += 1
        words = super().logical_words(state, n)
        return words ^ np.uint32(0x00010000) if self.calls % self.every == 0 else words


class KeyPlusOne(KnobbedPhilox):
    """Key word 0 off by one (k0 + 1): an off-by-one in the kernel's key argument."""

    def logical_words(self, state, n):
        s = np.array(state, dtype=np.uint64).reshape(-1).copy()
        s[4] = (s[4] + 1) & MASK32
        return super().logical_words(s.astype(np.uint32), n)


class HighHalfLost(KnobbedPhilox):
    """A 16-bit store: each word's high half-word is lost (written as 0)."""

    def logical_words(self, state, n):
        return super().logical_words(state, n) & np.uint32(0xFFFF)


class NextBlockLane(KnobbedPhilox):
    """An off-by-one shuffle: lane 3 of each block holds lane 0 of the next block."""

    def logical_words(self, state, n):
        blocks = -(-n // 4)
        words = super().logical_words(state, (blocks + 1) * 4).reshape(-1, 4)
        words[:-1, 3] = words[1:, 0]
        return words[:-1].reshape(-1)[:n]


# (name, backend factory, the diagnosis id expected of at least one failure, a phrase its diagnosis
# or anatomy must say): kinds no named class models; none may end "unknown" with nothing else.
UNMODELLED = [
    ("byte-swapped", lambda: ByteSwapped("byte-swapped"), "byte-order", "(3, 2, 1, 0)"),
    ("lanes-rotated-in-every-4th-block", lambda: LanesRotatedInSomeBlocks("lanes-rotated"), "lane-permutation",
     "every 4th block"),
    ("carry-96-bit", lambda: KnobbedPhilox("carry-96", carry_bits=96), "carry-boundary", "low 96 bits"),
    ("state-carry-96-bit", lambda: KnobbedPhilox("state-carry-96", state_carry_bits=96), "state-carry-boundary",
     "low 96 bits"),
    ("flips-one-bit", lambda: FlipsOneBit("flips-one-bit"), "unknown", "only bit 9 differs"),
    ("index-wraps-2pow8", lambda: IndexWraps(8), "index-wrap", "wraps at 2^8"),
    ("wrong-one-call-in-7", lambda: WrongOneCallInN(7), "nondeterministic", "of them right"),
    ("key-plus-one", lambda: KeyPlusOne("key-plus-one"), "key-variant", "(k0 + 1, k1)"),
    ("high-half-lost", lambda: HighHalfLost("high-half-lost"), "unknown", "bits 16-31 always 0"),
    ("next-block-lane", lambda: NextBlockLane("next-block-lane"), "lane-shuffle",
     "lane 3 holds lane 0 of the next block"),
    ("rounds-13", lambda: KnobbedPhilox("rounds-13", rounds=13), "round-count", "Philox4x32-13"),
    ("increment-2n", lambda: KnobbedPhilox("increment-2n", increment="2n"), "state-increment", "2n"),
]


class WrongOnCall(KnobbedPhilox):
    """Right but on its ``call``-th call: then its words are wrong (``how`` "words") or it raises ("raises")."""

    def __init__(self, call=1, how="words"):
        super().__init__(f"wrong-on-call-{call}-{how}")
        self.call, self.how, self.calls = call, how, 0

    def random_generator(self, state, sizes, strides, buffer, **kw):
        self.calls += 1
        if self.calls == self.call and self.how == "raises":
            raise RuntimeError("device hiccup")
        result = super().random_generator(state, sizes, strides, buffer, **kw)
        if self.calls == self.call:
            buffer[self.offsets(tuple(sizes), strides)[0]] ^= np.uint32(1 << 20)
        return result


class HangsOnLargeDraws(KnobbedPhilox):
    """Right, but hangs on a description of more than 64 elements in 3 or more dimensions (the property
    case draws one soon; no fixed case of the 'property' selection is one)."""

    def __init__(self):
        super().__init__("hangs-on-large-draws")

    def random_generator(self, state, sizes, strides, buffer, **kw):
        if len(sizes) >= 3 and math.prod(sizes) > 64:
            import time
            time.sleep(3600)
        return super().random_generator(state, sizes, strides, buffer, **kw)


# -- the 2^31 boundary (issue 29): kernels that hold an index or a byte offset in 32 bits ------------
# These write tensors of 2^30 to 2^32 elements, so they are built on rngcheck's numpy reference
# (chunk by chunk, in place), not on the panel's plain Philox, which is far too slow there; the bug
# each one has is the panel's own. ``at`` is the wrap point: the real one by default, smaller ones
# (stand-ins) where a test proves the diagnosis logic, which does not depend on the size.

class WrapsAt32Bits(Backend):
    """The right words, but with an element index in int32 (``element-index-int32``: element i computed
    as element i mod 2^31) or a byte offset in uint32 (``byte-offset-uint32``: element i written at
    word (4i mod 2^32) / 4, elements in increasing order, so the later ones stay)."""

    validates = False
    KINDS = {"element-index-int32": 1 << 31, "byte-offset-uint32": 1 << 30}

    def __init__(self, kind, at=None):
        self.kind, self.at = kind, at or self.KINDS[kind]
        self.name = f"wraps-{kind}" + ("" if at is None else f"-at-{at}")

    def describe(self):
        return {"implementation": "tests/panel.py WrapsAt32Bits", "kind": self.kind, "wraps at": str(self.at)}

    def random_generator(self, state, sizes, strides, buffer, *, output_state=True, feature_level=(4, 0)):
        from rngcheck import counter, layout, reference

        n = math.prod(int(s) for s in sizes)
        state = counter.state_array(state)
        for first, count in reference.chunks(n, 1 << 22):
            index = np.arange(first, first + count, dtype=np.int64)
            offsets = layout.physical_offsets(sizes, strides, first, count)
            if self.kind == "element-index-int32":
                index %= self.at
            else:
                offsets %= self.at
            # The words of elements index (runs of consecutive indices: at most two per chunk here).
            breaks = np.flatnonzero(np.diff(index) != 1) + 1
            words = np.concatenate([reference.words(state, int(run[0]), run.size)
                                    for run in np.split(index, breaks)])
            buffer[offsets] = words
        return counter.advance(state, n) if output_state else None


# (name, backend factory, diagnosis id, the case of the huge profile that catches it, a phrase it must say)
WRAPS = [
    ("element-index-int32", lambda: WrapsAt32Bits("element-index-int32"), "element-index-int32",
     "scale/huge-2pow31-plus", "from element 2147483648 (2^31) on"),
    ("byte-offset-uint32", lambda: WrapsAt32Bits("byte-offset-uint32"), "byte-offset-uint32",
     "scale/huge-bytes-past-4gib", "from element 1073741824 (2^30, byte offset 4 GiB) on"),
]


# ---------------------------------------------------------------------------------------
# The report's panel (tests/test_report_html.py): the reference with one fault whose failures
# the page groups and draws.
# ---------------------------------------------------------------------------------------

class FlipsBit0OfElement5(NumpyBackend):
    """The reference, but bit 0 of logical element 5 is flipped whenever the call writes more
    than five elements: every such case fails with one wrong word ("only element 5, bit 0 flipped")."""

    name = "flips-bit0-element5"

    def describe(self):
        return {"implementation": "tests/panel.py FlipsBit0OfElement5", "fault": "element 5 xor 1"}

    def random_generator(self, state, sizes, strides, buffer, **kw):
        from rngcheck import layout

        result = super().random_generator(state, sizes, strides, buffer, **kw)
        if math.prod(int(s) for s in sizes) > 5:
            buffer[int(layout.physical_offsets(tuple(int(s) for s in sizes), strides, 5, 1)[0])] ^= 1
        return result


class NumbersOffByUlps(NumpyBackend):
    """The reference, but every float it draws is ``i mod 8`` ULPs (its bits as an integer) above the
    right one: the numbers cases fail with a spread of ULP distances (a histogram to draw)."""

    name = "numbers-off-by-ulps"

    def random_numbers(self, request, state):
        values = np.array(super().random_numbers(request, state))
        if values.dtype.kind != "f" or values.itemsize not in (4, 8):
            return values
        bits = values.view(np.uint32 if values.itemsize == 4 else np.uint64).copy()
        bits += (np.arange(bits.size) % 8).astype(bits.dtype).reshape(bits.shape)
        return bits.view(values.dtype)
