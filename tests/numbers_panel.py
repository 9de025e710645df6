"""A panel of deliberately broken numbers implementations (issue 40, numbers).

Each is written plainly here with numpy, reading only the reference's words (rngcheck.reference.words)
and TensorFlow's stateless seed rule: no conversion code of rngcheck. Each names the request it breaks,
and the id, step and parameters the diagnosis should give (step and parameters None: an old named
variant that the search need not express as one change).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rngcheck import counter, reference
from rngcheck.numbers import Request
from rngcheck.numbers import tensorflow as tf

KEY = (0xA4093822, 0x299F31D0)
STATE = counter.make_state(0x0123456789ABCDEF, KEY)
# Word 1 of this state's stream has a zero 23-bit mantissa (found by search): with u1 from word 2k+1
# and no epsilon clamp, elements 0 and 1 are log(0)'s.
ODD_ZERO_MANTISSA = counter.make_state(3586580, KEY)
N = 256
RANGE = (-3.5, 7.25)


def words(state, count, first=0):
    return reference.words(state, first, count).astype(np.uint64)


def unit_low23(w):
    """TensorFlow's float32 uniform: the low 23 bits times 2^-23."""
    return ((w & 0x7FFFFF).astype(np.float64) * 2.0 ** -23).astype(np.float32)


def unit_high23(w):
    return ((w >> 9).astype(np.float64) * 2.0 ** -23).astype(np.float32)


def toward_zero(values64, dtype):
    """float64 values to a narrow numpy float type, truncated."""
    out = values64.astype(dtype)
    too_far = np.abs(out.astype(np.float64)) > np.abs(values64)
    return np.where(too_far, np.nextafter(out, dtype(0)), out).astype(dtype)


def bf16_toward_zero(values32):
    return (values32.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


# ------------------------------------------------------------------ the broken implementations
def bfloat16_uniform_truncated(r, state):
    """The float32 uniform's top 16 bits: a bfloat16 truncated from the low-23-bit float32 uniform."""
    return bf16_toward_zero(unit_low23(words(state, r.count)))


def range_from_high(r, state):
    u = unit_low23(words(state, r.count))
    lo, hi = np.float32(r.low), np.float32(r.high)
    return (hi - u * (hi - lo)).astype(np.float32)


def range_lerp(r, state):
    """low * (1 - u) + high * u in float32: within 1 ULP of the larger endpoint nearly everywhere."""
    u = unit_low23(words(state, r.count))
    lo, hi = np.float32(r.low), np.float32(r.high)
    return (lo * (np.float32(1) - u) + hi * u).astype(np.float32)


def half_high24_truncated(r, state):
    m = words(state, r.count) >> 8
    return toward_zero(m.astype(np.float64) * 2.0 ** -24, np.float16)


def whole_word_2_32(r, state):
    return (words(state, r.count).astype(np.float64) * 2.0 ** -32).astype(np.float32)


def half_step_offset(r, state):
    m = words(state, r.count) & 0x7FFFFF
    return ((m.astype(np.float64) + 0.5) * 2.0 ** -23).astype(np.float32)


def two_words_late(r, state):
    return unit_low23(words(state, r.count, first=2))


def seed_key_counter_swapped(r, state):
    (k0, k1), (_, _, m2, m3) = tf.stateless_key_counter(r.seed)
    swapped = counter.state_from_words((0, 0, k0, k1), (m2, m3))
    return unit_low23(words(swapped, r.count))


def integers_through_float32(r, state):
    """tinygrad's way: (rand * (high - low)).cast(int) + low, rand from the high 23 bits."""
    u = unit_high23(words(state, r.count))
    product = u * np.float32(r.high - r.low)
    return np.array([r.low + int(p) for p in product], dtype=np.int32)


def integers_truncated_float_range(r, state):
    """trunc(u * span + low) in float32: low itself only at u = 0 exactly (TF.js-like)."""
    u = unit_low23(words(state, r.count))
    x = u * np.float32(r.high - r.low) + np.float32(r.low)
    return np.array([math.trunc(float(v)) for v in x], dtype=np.int32)


def inclusive_high(r, state):
    return np.array([r.low + int(w) % (r.high - r.low + 1) for w in words(state, r.count)], dtype=np.int32)


def mask_then_reject(r, state):
    span = r.high - r.low
    mask = (1 << (span - 1).bit_length()) - 1
    kept = [int(w) & mask for w in words(state, 4 * r.count) if int(w) & mask < span]
    return np.array([r.low + v for v in kept[:r.count]], dtype=np.int32)


def int64_one_word(r, state):
    w = words(state, r.count)
    return np.array([r.low + int(x) % (r.high - r.low) for x in w], dtype=np.int64)


def uint64_one_word_early(r, state):
    w = reference.words(counter.add_to_counter(state, -1), 3, 2 * r.count).astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


def _box_muller(w0, w1, clamp=True, log16=False):
    u1 = unit_low23(w0)
    if clamp:
        u1 = np.maximum(u1, np.float32(1e-7))
    v = (2 * math.pi * unit_low23(w1).astype(np.float64)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if log16:
            log_u = np.log(u1.astype(np.float16).astype(np.float64)).astype(np.float16).astype(np.float32)
        else:
            log_u = np.log(u1.astype(np.float64)).astype(np.float32)
        r = np.sqrt((np.float32(-2) * log_u).astype(np.float64)).astype(np.float32)
        sin = np.sin(v.astype(np.float64)).astype(np.float32)
        cos = np.cos(v.astype(np.float64)).astype(np.float32)
        return r * sin, r * cos


def _pairs(sin, cos, count):
    out = np.empty(2 * sin.size, dtype=np.float32)
    out[0::2], out[1::2] = sin, cos
    return out[:count]


def normal_cos_only(r, state):
    w = words(state, 2 * r.count)
    return _box_muller(w[0::2], w[1::2])[1]


def normal_log_in_half(r, state):
    w = words(state, 2 * (-(-r.count // 2)))
    return _pairs(*_box_muller(w[0::2], w[1::2], log16=True), r.count)


def normal_second_word_no_clamp(r, state):
    w = words(state, 2 * (-(-r.count // 2)))
    return _pairs(*_box_muller(w[1::2], w[0::2], clamp=False), r.count)


def normal_bf16_swapped_truncated(r, state):
    w = words(state, 2 * (-(-r.count // 2)))
    return bf16_toward_zero(_pairs(*_box_muller(w[1::2], w[0::2]), r.count))


# Old named variants, written the same way
def uniform_high_bits(r, state):
    return unit_high23(words(state, r.count))


def normal_cos_first(r, state):
    w = words(state, 2 * (-(-r.count // 2)))
    sin, cos = _box_muller(w[0::2], w[1::2])
    return _pairs(cos, sin, r.count)


def multiply_shift(r, state):
    return np.array([r.low + (int(w) * (r.high - r.low) >> 32) for w in words(state, r.count)], dtype=np.int32)


def one_block_late(r, state):
    return unit_low23(words(state, r.count, first=4))


def open_closed(r, state):
    """cuRAND's float: the word times 2^-32 plus 2^-33, rounded to float32."""
    return (words(state, r.count).astype(np.float64) * 2.0 ** -32 + 2.0 ** -33).astype(np.float32)


def bits_words_swapped(r, state):
    w = words(state, 2 * r.count)
    return (w[0::2] << np.uint64(32)) | w[1::2]


# ------------------------------------------------------------------ unmodelled (the inference)
def bits_3_to_25(r, state):
    return (((words(state, r.count) >> 3) & 0x7FFFFF).astype(np.float64) * 2.0 ** -23).astype(np.float32)


def range_times_high(r, state):
    """u * high + low: the span taken as high (an affine map of the right numbers)."""
    u = unit_low23(words(state, r.count))
    return (u * np.float32(r.high) + np.float32(r.low)).astype(np.float32)


def span_plus_two(r, state):
    return np.array([r.low + int(w) % (r.high - r.low + 2) for w in words(state, r.count)], dtype=np.int32)


@dataclass(frozen=True)
class Broken:
    name: str
    request: Request
    draw: Callable
    id: str
    step: str | None = None
    parameters: dict[str, Any] | None = None
    state: Any = None
    new: bool = True          # a kind no old variant names
    first: bool = True        # the expected id comes first (False: another model reproduces it as well)

    def state_of(self):
        return STATE if self.state is None else self.state


def _uniform(dtype="float32", ranged=False, seed=None, count=N):
    return Request("tensorflow", "uniform", dtype, count, *(RANGE if ranged else (None, None)), seed=seed)


def _ints(dtype="int32", low=-5, high=10):
    return Request("tensorflow", "integers", dtype, N, low, high)


def _normal(dtype="float32", count=N):
    return Request("tensorflow", "normal", dtype, count)


PAIR = "numbers-two-steps"
PANEL = [
    Broken("bfloat16-uniform-truncated", _uniform("bfloat16"), bfloat16_uniform_truncated, PAIR,
           "bit selection + rounding", {"bit selection": {"source": "low", "bits": 23},
                                        "rounding": {"mode": "toward-zero"}}, first=False),
    Broken("range-from-high", _uniform(ranged=True), range_from_high, "numbers-range-formula", "range formula",
           {"range formula": {"formula": "high-u*(high-low)"}}),
    # tolerance rule 7 fails it (a distance of 1 ULP of the larger endpoint admitted it)
    Broken("range-lerp", _uniform(ranged=True), range_lerp, "numbers-range-formula", "range formula",
           {"range formula": {"formula": "low*(1-u)+high*u"}}),
    # truncated to float16, the high 24 bits and the whole word are the same: both are listed
    Broken("half-high24-truncated", _uniform("float16"), half_high24_truncated, PAIR, "bit selection + rounding",
           {"bit selection": {"source": "high", "bits": 24}, "rounding": {"mode": "toward-zero"}}, first=False),
    # cuRAND's and PyTorch's conversions give the same numbers on this state: they come first
    Broken("whole-word-2^-32", _uniform(), whole_word_2_32, "numbers-bit-selection", "bit selection",
           {"bit selection": {"source": "low", "bits": 32}}, first=False),
    Broken("half-step-offset", _uniform(), half_step_offset, "numbers-scaling", "scaling",
           {"scaling": {"exponent": None, "offset": "half-step"}}),
    Broken("two-words-late", _uniform(), two_words_late, "numbers-stream-position", "stream position",
           {"stream position": {"words": 2}}),
    Broken("seed-key-counter-swapped", _uniform(seed=(1, 2), count=64), seed_key_counter_swapped,
           "numbers-seed-derivation", "seed derivation", {"seed derivation": {"rule": "key-counter-swapped"}}),
    Broken("integers-through-float32", _ints(low=-(1 << 30), high=1 << 30), integers_through_float32,
           "numbers-integer-method", "integer method", {"integer method": {"method": "float32", "unit": "high"}}),
    Broken("integers-truncated-float-range", _ints(), integers_truncated_float_range, "numbers-integer-method",
           "integer method", {"integer method": {"method": "float-range", "unit": "low"}}),
    Broken("inclusive-high", _ints(), inclusive_high, "numbers-integer-span", "integer span",
           {"integer span": {"delta": 1}}),
    Broken("mask-then-reject", _ints(), mask_then_reject, "numbers-integer-method", "integer method",
           {"integer method": {"method": "mask-reject", "unit": "low"}}),
    Broken("int64-one-word", _ints("int64", 0, 1 << 40), int64_one_word, "numbers-word-pairing", "word pairing",
           {"word pairing": {"order": "one-word"}}),
    Broken("uint64-one-word-early", Request("tensorflow", "bits", "uint64", N), uint64_one_word_early,
           "numbers-stream-position", "stream position", {"stream position": {"words": -1}}),
    Broken("normal-cos-only", _normal(), normal_cos_only, "numbers-normal-output", "normal output",
           {"normal output": {"order": "cos-only"}}),
    Broken("normal-log-in-float16", _normal(), normal_log_in_half, "numbers-log-precision", "log precision",
           {"log precision": {"dtype": "float16"}}),
    Broken("normal-second-word-no-clamp", _normal(count=4), normal_second_word_no_clamp, PAIR,
           "normal pairing + normal clamp", {"normal pairing": {"u1": "second"}, "normal clamp": {"rule": "none"}},
           state=ODD_ZERO_MANTISSA),
    Broken("normal-bf16-swapped-truncated", _normal("bfloat16"), normal_bf16_swapped_truncated, PAIR,
           "normal pairing + rounding", {"normal pairing": {"u1": "second"}, "rounding": {"mode": "toward-zero"}}),
    # old named variants: their old ids, and the step they are a point of
    Broken("uniform-high-bits", _uniform(), uniform_high_bits, "uniform-high-bits", "bit selection",
           {"bit selection": {"source": "high", "bits": 23}}, new=False),
    Broken("normal-sin-cos-swapped", _normal(), normal_cos_first, "normal-sin-cos-swapped", "normal output",
           {"normal output": {"order": "cos-sin"}}, new=False),
    Broken("integers-multiply-shift", _ints(), multiply_shift, "integers-multiply-shift", "integer method",
           {"integer method": {"method": "multiply-shift", "unit": "low"}}, new=False),
    Broken("stream-one-block-late", _uniform(), one_block_late, "stream-one-block-late", "stream position",
           {"stream position": {"words": 4}}, new=False),
    Broken("uniform-open-closed", _uniform(), open_closed, "uniform-open-closed", "bit selection + scaling",
           {"bit selection": {"source": "low", "bits": 32}, "scaling": {"exponent": None, "offset": "half-step"}},
           new=False),
    Broken("wide-words-swapped", Request("tensorflow", "bits", "uint64", N), bits_words_swapped,
           "wide-words-swapped", "word pairing", {"word pairing": {"order": "first-high"}}, new=False),
]

# Faults no step of the chain models: the diagnosis says unknown-numbers, with what the numbers show.
UNMODELLED = [
    (Broken("bits-3-to-25", _uniform(), bits_3_to_25, "unknown-numbers"), "bits 3..25 of word i"),
    (Broken("span-plus-two", _ints(), span_plus_two, "unknown-numbers"), "word mod 17"),
    (Broken("range-times-high", _uniform(ranged=True), range_times_high, "unknown-numbers"),
     "an affine map of the right values: value = 0.674419 * right + -1.1395"),
]
