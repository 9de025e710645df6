"""TensorFlow's conversion as a chain of named steps whose parameters are data (issue 40, numbers).

rngcheck.numbers.tensorflow says the conversion rule by rule; this module says the same rules as a
chain of steps, each a small frozen dataclass, so that a diagnosis can change one step's parameters
(or two steps') and see what an implementation with that change would have drawn
(rngcheck.conformance.conventions.search). The chain with TensorFlow's parameters (``baseline``)
draws exactly the reference's numbers (tests/test_numbers_search.py checks every kind and dtype).

Rules:
  1. The words. ``stream position``: element data starts ``words`` words into the operator's stream
     (negative: before it); ``seed derivation``: how a stateless seed becomes key and counter
     (TensorFlow's rule 10: one Philox block scrambles the seed; key (m0, m1), counter (0, 0, m2, m3)).
  2. ``word pairing``: how a 64-bit value is made from the stream: ``first-low`` (word 2i | word 2i+1
     << 32, TensorFlow's integers and bits), ``first-high`` (word 2i << 32 | word 2i+1, TensorFlow's
     float64 mantissa) or ``one-word`` (word i alone: zero-extended for integers, the high half of a
     float64's 64 bits).
  3. Uniform floats: ``bit selection`` takes k bits of the word (or pair), the low k or the high k;
     ``scaling`` multiplies them by 2^-e (e = k unless given) and adds half a step (2^-(e+1)) or
     not; the exact value is rounded once into the ``intermediate precision`` by the ``rounding``
     step's mode (nearest-even, or toward zero); TensorFlow's [1, 2) - 1 construction is the low k
     bits times 2^-k, exact.
  4. A ranged uniform: the ``range formula`` in the intermediate precision, every operation rounded
     to nearest there (``fma``: the product and sum rounded once, formed in binary64 then rounded);
     ``clamping`` optionally moves results at or past high to the largest value below it; the
     result is rounded into the dtype by the rounding step's mode.
  5. Normals (float32, float16, bfloat16): Box-Muller on the uniforms of words 2k, 2k+1 (rule 3's
     bits): ``normal pairing`` (which word is u1), ``normal clamp`` (max(u1, 1e-7), none, or 1 - u
     in (0, 1]), ``angle precision`` (2 pi u formed in binary64 and rounded, or in float32),
     ``log precision`` (log rounded once to float32; computed in float16; or the radius in binary64
     rounded once), ``normal output`` (sin first, cos first, cos only or sin only: one element a
     pair of words); the float32 value is narrowed by the rounding step's mode.
  6. Integers in [low, high): the ``integer method`` on the (paired) word: ``mod`` (low + word mod
     span), ``multiply-shift`` (low + (word * span) >> width), ``float32`` (low + trunc(u * span) in
     float32, u the float32 uniform of rule 3 from the low or the high 23 bits), ``float-range``
     (trunc(u * span + low) in float32: truncation toward zero), ``mask-reject`` (word & (2^b - 1),
     values >= span rejected, the next word tried); ``integer span`` adds -1 or +1 to high - low.
  7. Bits: the word, or the pair of rule 2, reinterpreted.
Every step's ``text()`` says what it does in the spec's words; the search reports a changed step as
"STEP: what it does instead, not what TensorFlow's does".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ... import counter, reference
from ...numbers import BITS, INTEGERS, NORMAL, UNIFORM, floats
from ...numbers import tensorflow as tf
from ...numbers.box_muller import radius32, sincos32

CONVENTION = "tensorflow"     # the chain models TensorFlow's conversion (other conventions: not searched)
BEFORE = 16                   # words of the stream kept before element 0 (stream position < 0)


@dataclass(frozen=True)
class StreamPosition:
    words: int = 0

    def text(self) -> str:
        if not self.words:
            return "element data from word 0 of the stream"
        blocks = f" ({abs(self.words) // 4} block{'s' if abs(self.words) != 4 else ''})" if self.words % 4 == 0 else ""
        return f"element data {abs(self.words)} word{'s' if abs(self.words) != 1 else ''}{blocks} " \
               f"{'late' if self.words > 0 else 'early'}"


@dataclass(frozen=True)
class SeedDerivation:
    rule: str = "tensorflow"

    TEXTS = {"tensorflow": "key (m0, m1), counter (0, 0, m2, m3) of the scrambled seed",
             "key-counter-swapped": "key (m2, m3), counter (0, 0, m0, m1) of the scrambled seed",
             "counter-low-words": "key (m0, m1), counter (m2, m3, 0, 0) of the scrambled seed",
             "seed-pair-swapped": "the seed pair [b, a] scrambled, not [a, b]",
             "not-scrambled": "the seed itself: key (lo a, hi a), counter (0, 0, lo b, hi b), no Philox block"}

    def text(self) -> str:
        return self.TEXTS[self.rule]


@dataclass(frozen=True)
class WordPairing:
    order: str = "first-low"

    def text(self) -> str:
        return {"first-low": "a 64-bit value is word 2i | word 2i+1 << 32",
                "first-high": "a 64-bit value is word 2i << 32 | word 2i+1",
                "one-word": "a 64-bit value from one word an element"}[self.order]


@dataclass(frozen=True)
class BitSelection:
    source: str = "low"
    bits: int = 23

    def text(self) -> str:
        return f"the {self.source} {self.bits} bits of the word"


@dataclass(frozen=True)
class Scaling:
    exponent: int | None = None     # None: 2^-k for k selected bits
    offset: str = "none"            # "half-step": + 2^-(exponent + 1)

    def text(self) -> str:
        scale = "times 2^-k" if self.exponent is None else f"times 2^-{self.exponent}"
        return scale + (" plus half a step" if self.offset == "half-step" else "")


@dataclass(frozen=True)
class Rounding:
    mode: str = "nearest"

    def text(self) -> str:
        return {"nearest": "rounded to nearest-even", "toward-zero": "rounded toward zero (truncated)"}[self.mode]


@dataclass(frozen=True)
class Precision:
    dtype: str = ""                 # "": the request's dtype

    def text(self) -> str:
        return f"computed in {self.dtype or 'the dtype itself'}"


@dataclass(frozen=True)
class RangeFormula:
    formula: str = "u*(high-low)+low"

    def text(self) -> str:
        return {"u*(high-low)+low": "u*(high-low) + low, each operation rounded",
                "fma": "u*(high-low) + low fused (one rounding)",
                "low*(1-u)+high*u": "low*(1-u) + high*u",
                "high-u*(high-low)": "high - u*(high-low)"}[self.formula]


@dataclass(frozen=True)
class Clamping:
    rule: str = "none"

    def text(self) -> str:
        return {"none": "no clamp", "below-high": "results at or past high clamped below high"}[self.rule]


@dataclass(frozen=True)
class NormalPairing:
    u1: str = "first"

    def text(self) -> str:
        return f"u1 from word {'2k' if self.u1 == 'first' else '2k+1'}, the angle from word " \
               f"{'2k+1' if self.u1 == 'first' else '2k'}"


@dataclass(frozen=True)
class NormalClamp:
    rule: str = "epsilon"

    def text(self) -> str:
        return {"epsilon": "u1 clamped to at least 1e-7", "none": "u1 not clamped (log 0 possible)",
                "one-minus-u": "u1 = 1 - u, in (0, 1], no clamp"}[self.rule]


@dataclass(frozen=True)
class AnglePrecision:
    dtype: str = "float64"

    def text(self) -> str:
        return f"2 pi u formed in {'binary64 and rounded once' if self.dtype == 'float64' else 'float32'}"


@dataclass(frozen=True)
class LogPrecision:
    dtype: str = "float32"

    def text(self) -> str:
        return {"float32": "log(u1) rounded once to float32", "float16": "log(u1) computed in float16",
                "float64": "the radius sqrt(-2 log u1) in binary64, rounded once"}[self.dtype]


@dataclass(frozen=True)
class NormalOutput:
    order: str = "sin-cos"

    def text(self) -> str:
        return {"sin-cos": "r sin first, r cos second", "cos-sin": "r cos first, r sin second",
                "cos-only": "r cos only: one element a pair of words", "sin-only": "r sin only: one element a pair "
                "of words"}[self.order]


@dataclass(frozen=True)
class IntegerMethod:
    method: str = "mod"
    unit: str = "low"               # float32 methods: the uniform's 23 bits, low or high

    def text(self) -> str:
        return {"mod": "low + word mod span", "multiply-shift": "low + (word * span) >> width",
                "float32": f"low + trunc(u * span) in float32 (u from the {self.unit} 23 bits)",
                "float-range": f"trunc(u * span + low) in float32, toward zero (u from the {self.unit} 23 bits)",
                "mask-reject": "word masked to the span's bit width, values >= span rejected"}[self.method]


@dataclass(frozen=True)
class IntegerSpan:
    delta: int = 0

    def text(self) -> str:
        return "span = high - low" if not self.delta else f"span = high - low {'+' if self.delta > 0 else '-'} 1"


@dataclass(frozen=True)
class Pipeline:
    """One value of every step (rules 1-7); a kind reads the steps it has."""

    stream: StreamPosition = field(default_factory=StreamPosition)
    seed: SeedDerivation = field(default_factory=SeedDerivation)
    pairing: WordPairing = field(default_factory=WordPairing)
    bits: BitSelection = field(default_factory=BitSelection)
    scaling: Scaling = field(default_factory=Scaling)
    rounding: Rounding = field(default_factory=Rounding)
    precision: Precision = field(default_factory=Precision)
    formula: RangeFormula = field(default_factory=RangeFormula)
    clamp: Clamping = field(default_factory=Clamping)
    u1: NormalPairing = field(default_factory=NormalPairing)
    epsilon: NormalClamp = field(default_factory=NormalClamp)
    angle: AnglePrecision = field(default_factory=AnglePrecision)
    log: LogPrecision = field(default_factory=LogPrecision)
    output: NormalOutput = field(default_factory=NormalOutput)
    method: IntegerMethod = field(default_factory=IntegerMethod)
    span: IntegerSpan = field(default_factory=IntegerSpan)

    def changed(self, **steps: Any) -> Pipeline:
        return replace(self, **steps)


# The steps by their field: their names in the spec's words (the diagnosis's ``step``).
STEPS = {"stream": "stream position", "seed": "seed derivation", "pairing": "word pairing",
         "bits": "bit selection", "scaling": "scaling", "rounding": "rounding",
         "precision": "intermediate precision", "formula": "range formula", "clamp": "clamping",
         "u1": "normal pairing", "epsilon": "normal clamp", "angle": "angle precision",
         "log": "log precision", "output": "normal output", "method": "integer method", "span": "integer span"}
assert set(STEPS) == {f.name for f in fields(Pipeline)}


def baseline(request) -> Pipeline | None:
    """TensorFlow's chain for ``request`` (rules 1-7), or None where the chain does not model it
    (another convention, float64 normals, truncated normals)."""
    if request.convention != CONVENTION or request.kind not in (UNIFORM, NORMAL, INTEGERS, BITS):
        return None
    if request.kind == NORMAL and request.dtype == "float64":
        return None
    pairing = WordPairing("first-high" if request.dtype == "float64" else "first-low")
    mantissa = {"float16": 10, "bfloat16": 7, "float32": 23, "float64": 52}.get(request.dtype, 23)
    bits = BitSelection("low", 23 if request.kind == NORMAL else mantissa)
    return Pipeline(pairing=pairing, bits=bits, precision=Precision(request.dtype if request.floating else ""))


# ---------------------------------------------------------------------------------- the words
class Words:
    """Rule 1's words for a request and state, per seed derivation, fetched once and sliced."""

    def __init__(self, request, state) -> None:
        self.request, self.state = request, state
        self._held: dict[str, np.ndarray] = {}

    def state_for(self, rule: str) -> np.ndarray:
        if self.request.seed is None:
            return counter.state_array(self.state)
        a, b = self.request.seed
        if rule == "seed-pair-swapped":
            return tf.stateless_state((b, a))
        if rule == "not-scrambled":
            a, b = (int(s) & tf.MASK64 for s in (a, b))
            return counter.state_from_words((0, 0, b & 0xFFFFFFFF, b >> 32), (a & 0xFFFFFFFF, a >> 32))
        (k0, k1), (_, _, m2, m3) = tf.stateless_key_counter((a, b))
        if rule == "key-counter-swapped":
            return counter.state_from_words((0, 0, k0, k1), (m2, m3))
        if rule == "counter-low-words":
            return counter.state_from_words((m2, m3, 0, 0), (k0, k1))
        return counter.state_from_words((0, 0, m2, m3), (k0, k1))

    def take(self, pipeline: Pipeline, count: int) -> np.ndarray:
        """``count`` words from the stream position on (uint64)."""
        rule = pipeline.seed.rule if self.request.seed is not None else "tensorflow"
        need = BEFORE + pipeline.stream.words + count
        held = self._held.get(rule)
        if held is None or held.size < need:
            start = counter.add_to_counter(self.state_for(rule), -(BEFORE // 4))
            held = reference.words(start, 0, max(need, 2 * (held.size if held is not None else 0))).astype(np.uint64)
            self._held[rule] = held
        first = BEFORE + pipeline.stream.words
        return held[first:first + count]


# ---------------------------------------------------------------------------------- rounding
def held(values: np.ndarray, dtype: str, mode: str = "nearest") -> np.ndarray:
    """float64 values rounded into ``dtype`` by ``mode``, held per rngcheck.numbers.floats rule 1."""
    fmt = floats.format_of(dtype)
    values = np.asarray(values, dtype=np.float64)
    nearest = floats.round_to(fmt, values)
    if mode != "toward-zero":
        return nearest
    too_far = np.abs(floats.as_values(fmt, nearest)) > np.abs(values)
    bits = fmt.bits_of(nearest).copy()
    bits[too_far] -= 1          # sign-magnitude: one less magnitude is one step toward zero
    return fmt.from_bits(bits)


def rounded(values: np.ndarray, dtype: str, mode: str = "nearest") -> np.ndarray:
    """float64 values rounded into ``dtype`` and back to float64 (an operation's result there)."""
    if dtype == "float64":
        return np.asarray(values, dtype=np.float64)
    return floats.as_values(floats.format_of(dtype), held(values, dtype, mode))


# ---------------------------------------------------------------------------------- rules 2-4
def pair_words(pipeline: Pipeline, words: Words, count: int) -> np.ndarray:
    """Rule 2: one 64-bit value an element (uint64)."""
    if pipeline.pairing.order == "one-word":
        return words.take(pipeline, count)
    pair = words.take(pipeline, 2 * count)
    first, second = pair[0::2], pair[1::2]
    if pipeline.pairing.order == "first-high":
        return (first << np.uint64(32)) | second
    return first | (second << np.uint64(32))


def unit_values(pipeline: Pipeline, m: np.ndarray, width: int, precision: str) -> np.ndarray:
    """Rule 3: the selected bits of ``m`` scaled, rounded into ``precision`` (float64 values)."""
    k = pipeline.bits.bits
    if k > width:
        raise ValueError("more bits than the word has")
    if pipeline.bits.source == "low":
        m = m & np.uint64((1 << k) - 1) if k < 64 else m
    else:
        m = m >> np.uint64(width - k)
    exponent = k if pipeline.scaling.exponent is None else pipeline.scaling.exponent
    exact = m.astype(np.float64) * 2.0 ** -exponent
    if pipeline.scaling.offset == "half-step":
        exact = exact + 2.0 ** -(exponent + 1)
    return rounded(exact, precision, pipeline.rounding.mode)


def ranged(pipeline: Pipeline, unit: np.ndarray, low: float, high: float, precision: str) -> np.ndarray:
    """Rule 4: the range formula in ``precision``, each operation rounded to nearest there."""
    def op(x):
        return rounded(x, precision)

    lo, hi = op(np.float64(low)), op(np.float64(high))
    formula = pipeline.formula.formula
    if formula == "u*(high-low)+low":
        values = op(op(unit * op(hi - lo)) + lo)
    elif formula == "fma":
        values = op(unit * op(hi - lo) + lo)
    elif formula == "low*(1-u)+high*u":
        values = op(op(lo * op(1.0 - unit)) + op(hi * unit))
    else:
        values = op(hi - op(unit * op(hi - lo)))
    if pipeline.clamp.rule == "below-high":
        values = np.where(values >= hi, _below(float(hi), precision), values)
    return values


def _below(value: float, dtype: str) -> float:
    """The largest value of ``dtype`` below the positive or negative ``value`` (one of its values)."""
    if dtype == "float64":
        return float(np.nextafter(value, -np.inf))
    fmt = floats.format_of(dtype)
    bits = int(fmt.bits_of(held(np.array([value]), dtype))[0])
    sign = 1 << (fmt.bits - 1)
    step = -1 if value > 0 else 1            # sign-magnitude: toward -inf is less magnitude above 0
    bits = sign | 1 if value == 0 else bits + step
    return float(floats.as_values(fmt, fmt.from_bits(np.array([bits])))[0])


def uniform(pipeline: Pipeline, request, words: Words) -> np.ndarray:
    """Rules 2-4: a uniform float in ``request.dtype``."""
    wide = request.dtype == "float64"
    m = pair_words(pipeline, words, request.count) if wide else words.take(pipeline, request.count)
    width = 64 if wide and pipeline.pairing.order != "one-word" else 32
    if wide and pipeline.pairing.order == "one-word":
        m, width = m << np.uint64(32), 64          # the word as the high half (the low 32 bits zero)
    precision = pipeline.precision.dtype or request.dtype
    unit = unit_values(pipeline, m, width, precision)
    low, high = request.uniform_range
    values = unit if request.low is None else ranged(pipeline, unit, low, high, precision)
    return held(values, request.dtype, pipeline.rounding.mode)


# ---------------------------------------------------------------------------------- rule 5
def normal(pipeline: Pipeline, request, words: Words) -> np.ndarray:
    """Rule 5: Box-Muller in float32, narrowed to the dtype."""
    one_each = pipeline.output.order in ("cos-only", "sin-only")
    pairs = request.count if one_each else -(-request.count // 2)
    stream = words.take(pipeline, 2 * pairs)
    first, second = (stream[0::2], stream[1::2]) if pipeline.u1.u1 == "first" else (stream[1::2], stream[0::2])
    u1 = unit_values(pipeline, first, 32, "float32").astype(np.float32)
    unit2 = unit_values(pipeline, second, 32, "float32").astype(np.float32)
    if pipeline.epsilon.rule == "epsilon":
        u1 = np.maximum(u1, np.float32(tf.EPSILON))
    elif pipeline.epsilon.rule == "one-minus-u":
        u1 = np.float32(1) - u1
    if pipeline.angle.dtype == "float64":
        angle = (2 * math.pi * unit2.astype(np.float64)).astype(np.float32)
    else:
        angle = np.float32(2 * math.pi) * unit2
    with np.errstate(divide="ignore", invalid="ignore"):
        if pipeline.log.dtype == "float16":
            log_u = np.log(u1.astype(np.float16)).astype(np.float32)
            r = np.sqrt((np.float32(-2) * log_u).astype(np.float64)).astype(np.float32)
        elif pipeline.log.dtype == "float64":
            r = np.sqrt(-2.0 * np.log(u1.astype(np.float64))).astype(np.float32)
        else:
            r = radius32(u1)
        sin, cos = sincos32(angle)
        sin, cos = sin * r, cos * r
    order = pipeline.output.order
    if one_each:
        values = cos if order == "cos-only" else sin
    else:
        values = tf.interleave(cos, sin) if order == "cos-sin" else tf.interleave(sin, cos)
    values = values[:request.count]
    if request.dtype == "float32":
        return values
    return held(values.astype(np.float64), request.dtype, pipeline.rounding.mode)


# ---------------------------------------------------------------------------------- rules 6-7
def integers(pipeline: Pipeline, request, words: Words) -> np.ndarray:
    """Rule 6: integers in [low, high) (an element outside the dtype: ValueError)."""
    low, high = request.integer_range
    wide = request.dtype == "int64"
    width = 64 if wide else 32
    span = ((high - low) & ((1 << width) - 1)) + pipeline.span.delta
    if span <= 0:
        raise ValueError("an empty span")
    method = pipeline.method.method
    if method == "mask-reject":
        return _rejected(pipeline, request, words, low, span, width)
    m = pair_words(pipeline, words, request.count) if wide else words.take(pipeline, request.count)
    if method == "mod":
        offsets = [int(v) % span for v in m]
    elif method == "multiply-shift":
        offsets = [(int(v) * span) >> width for v in m]
    else:
        source = BitSelection(pipeline.method.unit, 23)
        unit = unit_values(replace(pipeline, bits=source, scaling=Scaling()), m & np.uint64(0xFFFFFFFF), 32,
                           "float32").astype(np.float32)
        product = unit * np.float32(span)
        if method == "float32":
            offsets = [int(v) for v in np.trunc(product)]
        else:
            return _checked([int(v) for v in np.trunc(product + np.float32(low))], request.dtype)
    return _checked([low + o for o in offsets], request.dtype)


def _rejected(pipeline: Pipeline, request, words: Words, low: int, span: int, width: int) -> np.ndarray:
    mask = (1 << max(span - 1, 1).bit_length()) - 1
    per = 2 if width == 64 else 1
    budget = 4 * request.count + 64
    m = pair_words(pipeline, words, budget) if per == 2 else words.take(pipeline, budget)
    kept = [int(v) & mask for v in m if int(v) & mask < span][:request.count]
    if len(kept) < request.count:
        raise ValueError("too many rejections")
    return _checked([low + v for v in kept], request.dtype)


def _checked(values: list[int], dtype: str) -> np.ndarray:
    lowest, highest = np.iinfo(dtype).min, np.iinfo(dtype).max
    if values and (min(values) < lowest or max(values) > highest):
        raise ValueError("outside the dtype")
    return np.array(values, dtype=dtype)


def bits(pipeline: Pipeline, request, words: Words) -> np.ndarray:
    """Rule 7."""
    if request.dtype in ("int64", "uint64"):
        return pair_words(pipeline, words, request.count).view(request.dtype)
    return words.take(pipeline, request.count).astype(np.uint32).view(request.dtype)


KINDS = {UNIFORM: uniform, NORMAL: normal, INTEGERS: integers, BITS: bits}


def predict(pipeline: Pipeline, request, words: Words) -> np.ndarray:
    """What an implementation with ``pipeline`` draws for ``request`` (ValueError: it cannot)."""
    with np.errstate(all="ignore"):
        return KINDS[request.kind](pipeline, request, words)
