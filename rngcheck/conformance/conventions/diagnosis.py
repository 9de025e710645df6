"""Diagnosis for numbers: which known wrong conversion an implementation's numbers look like.

As rngcheck.conformance.directml.diagnosis does for words: each variant is a deliberately wrong model of
a conversion, built from the conventions' own pieces (rngcheck.numbers); on a failure the suite
runs every variant that applies to the request and names those whose prediction is within the
request's bound of what the backend produced (and is not itself within the bound of the right
answer). Every other registered convention that defines the same kind and dtype is a variant too
("convention-jax": the implementation used JAX's conversion). Ids and summaries live here only,
with the step search's (rngcheck.conformance.conventions.search.STEP_IDS).

Then the step search (issue 40): TensorFlow's conversion as a chain of named steps
(rngcheck.conformance.conventions.pipeline) with one step changed, then two; a change equal to a
variant above reports that variant's id, with its step and parameters. The verdict:
  1. exact reproductions rank before those within the bound; named variants before single
     changes, single changes before pairs; the first gives ``id`` and ``summary`` (and ``step``
     and ``parameters`` where it is a change of the chain, or a named point of it);
  2. ``alternatives``: every other id that reproduces the case; ``matches``: every change that
     does, with its step, parameters and summary (a cross-case check intersects them);
  3. nothing reproduces it: ``unknown-numbers``, with ``inference``, what the numbers show;
  4. ``search``: what was tried, in how long, and what was not (and why).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ... import counter, numbers
from ...numbers import (
    BITS,
    INTEGERS,
    NORMAL,
    TRUNCATED_NORMAL,
    UNIFORM,
    floats,
    tolerance,
)
from ...numbers import tensorflow as tf
from ...numbers.box_muller import polar32
from . import pipeline, search

UNKNOWN = "unknown-numbers"
NO, WITHIN, EXACT = 0, 1, 2   # how a prediction reproduces a case: not, within the bound, bit for bit
UNKNOWN_SUMMARY = "the numbers match no known wrong conversion"


@dataclass(frozen=True)
class NumbersVariant:
    id: str
    summary: str
    kinds: tuple[str, ...]
    predict: Callable     # (request, state) -> values held per floats rule 1, or None (does not apply)


def _words(request, state, count):
    return tf.stream(_state(request, state), 0, count)


def _state(request, state):
    return tf.stateless_state(request.seed) if request.seed is not None else state


def _float_unit(request, state, convert64, convert32):
    """A [0, 1) draw with another word-to-float rule (TensorFlow's layout: 1 or 2 words an element)."""
    if request.dtype == "float64":
        words = _words(request, state, 2 * request.count)
        values = convert64(words[0::2], words[1::2])
    else:
        values = convert32(_words(request, state, request.count))
        values = tf.round_float32(request.dtype, np.asarray(values, dtype=np.float32)) \
            if request.dtype != "float32" else np.asarray(values, dtype=np.float32)
    if request.low is not None:
        return tf.scaled(request.dtype, values, *request.range)
    return values


def _only(kind, dtypes=None):
    def guard(predict):
        def wrapped(request, state):
            if request.kind != kind or (dtypes and request.dtype not in dtypes):
                return None
            return predict(request, state)
        return wrapped
    return guard


def _high_bits(request, state):
    """The mantissa from the high bits: word >> 9 (float32); for float64 the stream's 64-bit value
    (word 2i | word 2i+1 << 32, as JAX and XLA read it) >> 12."""
    return _float_unit(request, state,
                       lambda hi, lo: ((np.asarray(hi, np.uint64) | np.asarray(lo, np.uint64) << np.uint64(32))
                                       >> np.uint64(12) | np.uint64(1023 << 52)).view(np.float64) - 1.0,
                       lambda w: ((w >> np.uint32(9)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1))


def _bfloat16_truncated_high_bits(request, state):
    """bfloat16 as the high-bit float32 uniform truncated to its top 16 bits (XLA's, as measured)."""
    if request.dtype != "bfloat16":
        return None
    words = _words(request, state, request.count)
    unit32 = ((words >> np.uint32(9)) | np.uint32(127 << 23)).view(np.float32) - np.float32(1)
    values = (unit32.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return tf.scaled("bfloat16", values, *request.range) if request.low is not None else values


def _bits_24(request, state):
    return _float_unit(request, state,
                       lambda hi, lo: (np.asarray(hi, np.uint64) << np.uint64(32) | np.asarray(lo, np.uint64))
                       .__rshift__(np.uint64(11)).astype(np.float64) * 2.0 ** -53,
                       lambda w: ((w >> np.uint32(8)).astype(np.float64) * 2.0 ** -24).astype(np.float32))


def _open_closed(request, state):
    return _float_unit(request, state,
                       lambda hi, lo: np.asarray(hi, np.float64) * 2.0 ** -32 + 2.0 ** -33,
                       lambda w: (w.astype(np.float64) * 2.0 ** -32 + 2.0 ** -33).astype(np.float32))


def _float32_uniform(request, state):
    """The float32 uniform whatever the dtype: the low 23 bits of one word an element; [low, high) by
    one fused rounding in float32 (OpenVINO's CPU plugin computes RandomUniform so, measured)."""
    unit = tf.uint32_to_float(_words(request, state, request.count))
    if request.low is not None:
        low, high = (np.float32(x) for x in request.range)
        unit = (unit.astype(np.float64) * np.float64(high - low) + np.float64(low)).astype(np.float32)
    return unit


def _computed_in_float32(request, state):
    """float16/bfloat16/float64 as the float32 uniform converted at the end (rounded to nearest even,
    or widened)."""
    if request.dtype not in ("float16", "bfloat16", "float64"):
        return None
    unit = _float32_uniform(request, state)
    if request.dtype == "float64":
        return unit.astype(np.float64)
    return tf.round_float32(request.dtype, unit)


def _bfloat16_sticky_bits_ignored(request, state):
    """bfloat16 as the float32 uniform rounded by (bits + ((bits & 0x10000) >> 1)) >> 16: bit 15 is
    carried into bit 16 only where bit 16 is set, so the low 15 bits (the sticky bits) never count and
    every value with bit 15 set rounds as a tie, to even. The formula OpenVINO's bfloat16 types
    (ov::bfloat16, the CPU plugin's bfloat16_t) call round_to_nearest_even; measured on its CPU
    plugin where it reports no BF16 (an AMD EPYC with AVX2)."""
    if request.dtype != "bfloat16":
        return None
    bits = _float32_uniform(request, state).view(np.uint32)
    return ((bits + ((bits & np.uint32(0x10000)) >> np.uint32(1))) >> np.uint32(16)).astype(np.uint16)


def _pairs_swapped(request, state):
    if request.dtype != "float64":
        return None
    return _float_unit(request, state, lambda hi, lo: tf.uint64_to_double(lo, hi), None)


def _one_word_double(request, state):
    if request.dtype != "float64":
        return None
    words = _words(request, state, request.count)
    values = tf.uint64_to_double(words, np.zeros_like(words))
    return tf.scaled("float64", values, *request.range) if request.low is not None else values


def _narrow_rounded(request, state):
    """float16/bfloat16 uniform made by rounding the float32 uniform (not from the low bits)."""
    if request.dtype not in ("float16", "bfloat16"):
        return None
    unit = tf.uint32_to_float(_words(request, state, request.count))
    values = tf.round_float32(request.dtype, unit)
    return tf.scaled(request.dtype, values, *request.range) if request.low is not None else values


def _normal(request, state, pair=None, order=None, clamp=True, two_pi32=False, narrow=None, first_block=0):
    """TensorFlow's normal with one thing changed."""
    if request.kind != NORMAL or request.dtype == "float64":
        return None
    whole = -(-request.count // 2) * 2
    words = tf.stream(_state(request, state), 4 * first_block, whole)
    x0, x1 = (words[1::2], words[0::2]) if pair == "swapped" else (words[0::2], words[1::2])
    u1 = tf.uint32_to_float(x0)
    if clamp:
        u1 = np.maximum(u1, np.float32(tf.EPSILON))
    unit1 = tf.uint32_to_float(x1)
    v1 = np.float32(2 * math.pi) * unit1 if two_pi32 else (2 * math.pi * unit1.astype(np.float64)).astype(np.float32)
    sin, cos = polar32(u1, v1)
    values = tf.interleave(cos, sin) if order == "cos-first" else tf.interleave(sin, cos)
    values = values[:request.count]
    if request.dtype == "float32":
        return values
    if narrow == "truncated":
        bits = values.view(np.uint32)
        if request.dtype == "bfloat16":
            return (bits >> np.uint32(16)).astype(np.uint16)
        return _truncate_to_half(values)
    return tf.round_float32(request.dtype, values)


def _truncate_to_half(values: np.ndarray) -> np.ndarray:
    """float32 to float16 rounding toward zero."""
    nearest = values.astype(np.float16)
    too_far = np.abs(nearest.astype(np.float32)) > np.abs(values)
    step_down = np.nextafter(nearest, np.float16(0))
    return np.where(too_far, step_down, nearest).astype(np.float16)


def _no_clamp(request, state):
    values = _normal(request, state, clamp=False)
    return values


def _flush_to_zero(request, state):
    fmt = request.format
    if fmt is None:
        return None
    right = numbers.draw(request, state)
    values = floats.as_values(fmt, right)
    tiny = 2.0 ** (1 - fmt.exponent_bias)
    flushed = np.where(np.abs(values) < tiny, 0.0, values)
    return floats.round_to(fmt, flushed)


def _late_stream(request, state):
    """The whole draw one block late (Random123 Engine's counter + 1 first)."""
    if request.seed is not None:
        return None
    return numbers.draw(request, counter.add_to_counter(counter.state_array(state), 1))


def _range_in_32_bits(request, state):
    """int64 computed as int32: one word an element, the range saturated to int32, and high - low
    overflowing int32 as for int32 itself (every element low) (OpenVINO's CPU plugin)."""
    if request.kind != INTEGERS or request.dtype != "int64":
        return None
    low = max(request.low, -(1 << 31))
    high = min(request.high, (1 << 31) - 1)
    if low >= high or high - low >= 1 << 31:
        return np.full(request.count, low, dtype=np.int64)
    words = _words(request, state, request.count)
    return tf.integers("int32", words, low, high).astype(np.int64)


def _range_overflow(request, state):
    """high - low overflowing the signed type: every element equals low (OpenVINO's full-range int32)."""
    if request.kind != INTEGERS:
        return None
    bits = 32 if request.dtype == "int32" else 64
    if request.high - request.low < (1 << (bits - 1)):
        return None
    return np.full(request.count, request.low, dtype=request.dtype)


def _multiply_shift(request, state):
    """(word * span) >> 32 instead of word mod span (a multiply-shift reduction)."""
    if request.kind != INTEGERS or request.dtype != "int32":
        return None
    words = _words(request, state, request.count).astype(object)
    span = request.high - request.low
    return np.array([request.low + (int(w) * span >> 32) for w in words], dtype=np.int32)


def _wide_words_swapped(request, state):
    """A 64-bit value from words 2i and 2i+1 in the wrong order (high word first)."""
    if request.kind not in (INTEGERS, BITS) or request.dtype not in ("int64", "uint64"):
        return None
    words = _words(request, state, 2 * request.count)
    swapped = np.empty_like(words)
    swapped[0::2], swapped[1::2] = words[1::2], words[0::2]
    if request.kind == BITS:
        return tf.full_range(request.dtype, swapped)
    return tf.integers(request.dtype, swapped, request.low, request.high)


VARIANTS = (
    NumbersVariant("uniform-high-bits", "the mantissa is filled from the word's high bits (JAX's conversion), "
                   "not the low bits", (UNIFORM,), _only(UNIFORM)(_high_bits)),
    NumbersVariant("uniform-bfloat16-truncated-high-bits", "bfloat16 as the high-bit float32 uniform truncated "
                   "to 16 bits (TensorFlow under XLA, measured)", (UNIFORM,),
                   _only(UNIFORM)(_bfloat16_truncated_high_bits)),
    NumbersVariant("uniform-24-bits", "24 (53) bits times 2^-24 (2^-53), PyTorch's conversion, not a 23-bit "
                   "mantissa in [1, 2)", (UNIFORM,), _only(UNIFORM)(_bits_24)),
    NumbersVariant("uniform-open-closed", "x * 2^-32 + 2^-33: a uniform in (0, 1] (cuRAND's), not [0, 1)",
                   (UNIFORM,), _only(UNIFORM)(_open_closed)),
    NumbersVariant("uniform-computed-in-float32", "float16/bfloat16/float64 as the float32 uniform (23 bits of "
                   "one word; a range by one fused rounding) converted at the end (OpenVINO's CPU plugin)",
                   (UNIFORM,), _only(UNIFORM)(_computed_in_float32)),
    NumbersVariant("uniform-bfloat16-sticky-bits-ignored", "bfloat16 as the float32 uniform (23 bits of one "
                   "word; a range by one fused rounding) rounded by (bits + ((bits & 0x10000) >> 1)) >> 16: to "
                   "nearest even as if the low 15 bits were zero, bit 15 set rounding up only from an odd "
                   "bfloat16 (OpenVINO's bfloat16 round_to_nearest_even; its CPU plugin where it reports no BF16)",
                   (UNIFORM,), _only(UNIFORM)(_bfloat16_sticky_bits_ignored)),
    NumbersVariant("uniform-64-words-swapped", "a float64 from words 2i+1 (high) and 2i in the wrong order",
                   (UNIFORM,), _only(UNIFORM)(_pairs_swapped)),
    NumbersVariant("uniform-64-one-word", "a float64 from one word an element (the low 32 mantissa bits zero)",
                   (UNIFORM,), _only(UNIFORM)(_one_word_double)),
    NumbersVariant("uniform-narrow-rounded", "float16/bfloat16 by rounding the float32 uniform, not from the "
                   "word's low bits", (UNIFORM,), _only(UNIFORM)(_narrow_rounded)),
    NumbersVariant("normal-pair-swapped", "Box-Muller's words paired in the wrong order: u1 from word 2k+1",
                   (NORMAL,), lambda r, s: _normal(r, s, pair="swapped")),
    NumbersVariant("normal-sin-cos-swapped", "Box-Muller's cos value first, sin second", (NORMAL,),
                   lambda r, s: _normal(r, s, order="cos-first")),
    NumbersVariant("normal-no-epsilon-clamp", "u1 not clamped to 1e-7: a zero mantissa gives log(0), an "
                   "infinity or NaN", (NORMAL,), _no_clamp),
    NumbersVariant("normal-two-pi-float32", "2 pi u computed in float32 (TensorFlow forms 2.0f * M_PI * u in "
                   "double and rounds once)", (NORMAL,), lambda r, s: _normal(r, s, two_pi32=True)),
    NumbersVariant("normal-narrow-truncated", "float16/bfloat16 normals truncated from float32, not rounded",
                   (NORMAL,), lambda r, s: _normal(r, s, narrow="truncated")
                   if r.dtype in ("float16", "bfloat16") else None),
    NumbersVariant("flush-to-zero", "subnormal results flushed to zero", (UNIFORM, NORMAL, TRUNCATED_NORMAL),
                   _flush_to_zero),
    NumbersVariant("stream-one-block-late", "the numbers come from the stream one block late (counter + 1 first, "
                   "Random123's Engine)", (UNIFORM, NORMAL, TRUNCATED_NORMAL, INTEGERS, BITS), _late_stream),
    NumbersVariant("integers-range-32-bit", "a 64-bit range computed in 32 bits: int32's rule with the range "
                   "clamped to int32 (OpenVINO's CPU RandomUniform)", (INTEGERS,), _range_in_32_bits),
    NumbersVariant("integers-range-overflow", "high - low overflows the signed type: every element equals low "
                   "(OpenVINO's CPU RandomUniform, full-range int32)", (INTEGERS,), _range_overflow),
    NumbersVariant("integers-multiply-shift", "(word * span) >> 32 instead of word mod span", (INTEGERS,),
                   _multiply_shift),
    NumbersVariant("wide-words-swapped", "a 64-bit integer from words 2i and 2i+1 in the wrong order",
                   (INTEGERS, BITS), _wide_words_swapped),
)
IDS = {v.id: v.summary for v in VARIANTS} | {UNKNOWN: UNKNOWN_SUMMARY} | search.STEP_IDS


def registered_ids() -> dict[str, str]:
    """Every id this axis's diagnosis gives, with its summary (a convention-NAME id: another
    registered convention's conversion)."""
    conventions = {f"convention-{name}": f"{convention.title}'s conversion"
                   for name, convention in sorted(numbers.CONVENTIONS.items())}
    return {**IDS, **conventions}


def _convention_variants(request) -> list[NumbersVariant]:
    out = []
    for name, convention in sorted(numbers.CONVENTIONS.items()):
        other = replace(request, convention=name, seed=None) if request.seed is not None else \
            replace(request, convention=name)
        if name == request.convention or not convention.supports(other):
            continue
        out.append(NumbersVariant(f"convention-{name}", f"{convention.title}'s conversion", (request.kind,),
                                  lambda r, s, c=convention, o=other: c.draw(o, _state(r, s))))
    return out


def _near(request, bound: tolerance.Bound) -> tolerance.Bound:
    """How near a model's numbers must be to the backend's: the request's bound; one step of the narrow
    format under a wide bound (tolerance rule 5); under a set of evaluation orders (rule 7), 1 ULP of the
    range's larger endpoint, as a model computes in one order and the backend may use another."""
    if bound.orders and request.low is not None:
        return tolerance.one_rounding(*request.uniform_range)
    return bound if bound.wide is None else tolerance.Bound(1, "one step of the narrow format")


def _first(wide: np.ndarray | None, n: int) -> np.ndarray | None:
    """The first ``n`` elements of a wide reference (rule 5) or of each evaluation order's row (rule 7)."""
    if wide is None:
        return None
    return wide[..., :n]


def _explainer(request, state, actual, right, wide) -> Callable:
    """Whether a prediction reproduces ``actual`` (NO, WITHIN or EXACT): within the request's bound
    of it and not within the bound of the right numbers (``prefix``: judged on the first
    len(predicted) elements; ``share``: the fraction of those elements within the bound instead)."""
    bound = numbers.bound(request)
    near = _near(request, bound)

    def explains(predicted, prefix: bool = False, share: bool = False) -> float:
        if predicted is None:
            return NO
        n = np.size(predicted) if prefix else np.size(actual)
        if np.size(predicted) != n or n > np.size(actual):
            return NO
        predicted = np.asarray(predicted, dtype=actual.dtype).reshape(-1)
        if share:   # the fraction of the elements it reproduces
            near_enough = tolerance.compare(request.dtype, predicted, actual[:n], near)
            return 1.0 - near_enough.over / max(n, 1)
        admitted = numbers.excess(request, _first(wide, n), predicted)
        if tolerance.compare(request.dtype, right[:n], predicted, bound, excess=admitted).within:
            return NO  # indistinguishable from the right conversion on this case
        if predicted.tobytes() == actual[:n].tobytes():
            return EXACT
        return WITHIN if tolerance.compare(request.dtype, predicted, actual[:n], near).within else NO
    return explains


def _named_matches(request, state, explains) -> list[tuple[NumbersVariant, bool]]:
    """The named models that reproduce the case, each with whether it does so exactly."""
    matches = []
    for variant in (*VARIANTS, *_convention_variants(request)):
        if request.kind not in variant.kinds:
            continue
        try:
            with np.errstate(all="ignore"):
                predicted = variant.predict(request, state)
        except Exception:  # a variant that cannot model this request does not apply
            continue
        level = explains(predicted)
        if level:
            matches.append((variant, level == EXACT))
    return matches


def diagnose(request, state, actual: np.ndarray, right: np.ndarray | None = None,
             wide: np.ndarray | None = None) -> dict:
    """The named models and the changes of the conversion's steps whose numbers are within the
    request's bound of ``actual`` (and not of the right ones): the first named model's id, or the
    first change's (rngcheck.conformance.conventions.search), every other id in ``alternatives`` and
    every change with its parameters in ``matches``; where nothing reproduces the numbers, what the
    numbers show (``inference``). ``right`` and ``wide``: the reference and its wide form
    (numbers.wide_reference), when the caller has them already."""
    if right is None:
        right = numbers.draw(request, state)
        wide = numbers.wide_reference(request, state)
    actual = np.asarray(actual).reshape(-1)
    explains = _explainer(request, state, actual, right, wide)
    named = _named_matches(request, state, explains)
    searched = search.search(request, state, explains, singles_only_if_named=any(exact for _, exact in named))
    return _verdict(request, state, actual, right, named, searched)


def _verdict(request, state, actual, right, named: list[tuple[NumbersVariant, bool]], searched) -> dict:
    """Exact reproductions first (named models, then single changes, then pairs), then those within
    the bound; the first names the case, every other id is an alternative."""
    base = pipeline.baseline(request)
    found = [] if searched is None or base is None else searched.found
    ranked = sorted([(not exact, 0, v.id, v) for v, exact in named] + [(not f.exact, 1, f.id, f) for f in found],
                    key=lambda entry: entry[:2])
    ids = list(dict.fromkeys(entry[2] for entry in ranked))
    if not ranked:
        verdict: dict = {"id": UNKNOWN, "summary": UNKNOWN_SUMMARY, "alternatives": []}
        line = search.infer(request, state, actual, right)
        if line:
            verdict["inference"] = line
    else:
        first = ranked[0][3]
        if isinstance(first, NumbersVariant):
            verdict = {"id": first.id, "summary": first.summary, "alternatives": ids[1:]}
            first = next((f for f in found if f.id == first.id), None)
        else:
            verdict = {"id": first.id, "summary": first.summary(base), "alternatives": ids[1:]}
        if first is not None and base is not None:
            verdict |= {"step": first.step(), "parameters": first.parameters()}
    if found and base is not None:
        verdict["matches"] = [f.as_dict(base) for f in found]
    if searched is None:
        verdict["search"] = {"tried": 0, "not_tried": f"the step search (it models {pipeline.CONVENTION}'s "
                             "uniform, normal but float64, integers and bits only)"}
    else:
        verdict["search"] = {"tried": searched.tried, "seconds": round(searched.seconds, 3),
                             "budget_seconds": search.BUDGET_SECONDS}
        if searched.not_tried:
            verdict["search"]["not_tried"] = searched.not_tried
    return verdict
