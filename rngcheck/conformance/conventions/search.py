"""Search, then name: which step of the conversion an implementation changed (issue 40, numbers).

The chain is rngcheck.conformance.conventions.pipeline (TensorFlow's conversion as steps whose
parameters are data). On a failing case the diagnosis (rngcheck.conformance.conventions.diagnosis)
asks this module which changes of the chain reproduce the backend's numbers.

Rules:
  1. A *change* replaces one step's parameters by a value of that step's catalog (``catalog``: what
     implementations really do: other bit windows and scales, roundings, precisions, range
     formulas, Box-Muller orders and clamps, integer methods, pairings, stream positions, seed
     rules). A change whose parameters are a named point (``NAMED``) reports that point's old id
     (``uniform-high-bits``, ``normal-pair-swapped``, ``stream-one-block-late``, ...); any other
     reports its step's id (``numbers-range-formula``, ...: ``STEP_IDS``).
  2. Single changes first, every one of the catalog; pairs of changes of two different steps only
     when no single change (and no named model of the diagnosis) reproduces the numbers exactly
     (one within the bound may hide a second step: a truncation the bound admits), and only pairs
     with a change that alone reproduces at least PAIR_SHARE of the first PREFIX numbers (a lead:
     the other change then explains the rest; numbers that no change comes near, NaN everywhere,
     pay for no pairs).
  3. A change *reproduces* a case when its prediction is within the request's bound of the
     backend's numbers and not itself within the bound of the right ones (the diagnosis's test,
     ``explains``); it is judged on the first PREFIX elements first, then on all.
  4. The search stops at BUDGET_SECONDS a case; the result says what was not tried.
  5. Every change that reproduces the case is reported (``matches``), not the first only: a
     cross-case check intersects them. Exact reproductions rank before those within the bound.
  6. Where nothing reproduces the case, ``infer`` reads from the numbers themselves how the words
     feed them (which bits of which word, an affine map of the right values, an off-by-one span)
     and says it in one line; bounded: a few dozen array comparisons.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ...numbers import BITS, INTEGERS, NORMAL, UNIFORM, floats
from . import pipeline as chain

EXACT = 2   # rngcheck.conformance.conventions.diagnosis's level of an exact reproduction

BUDGET_SECONDS = 2.0   # rule 4: the search's time per failing case
PREFIX = 128           # rule 3: elements a change is first judged on
PAIR_SHARE = 0.25      # rule 2: a pair is tried when one of its changes alone reproduces this share

# Rule 1: one id a step (a change that is no named point), and one for a pair of changes.
STEP_IDS = {f"numbers-{name.replace(' ', '-')}": f"{name}: the conversion's {name} step differs from the "
            f"convention's (the step's parameters say how)" for name in chain.STEPS.values()}
PAIR_ID = "numbers-two-steps"
STEP_IDS[PAIR_ID] = "two steps of the conversion differ from the convention's (both steps' parameters say how)"


def step_id(step: str) -> str:
    return f"numbers-{chain.STEPS[step].replace(' ', '-')}"


@dataclass(frozen=True)
class Change:
    """One step's new value (rule 1)."""

    step: str            # a chain.Pipeline field
    value: Any           # that step's dataclass

    def parameters(self) -> dict:
        return {k: v for k, v in asdict(self.value).items()}

    def text(self, base: chain.Pipeline) -> str:
        where = f" in {base.precision.dtype}" if self.step == "formula" and base.precision.dtype else ""
        return f"{chain.STEPS[self.step]}: {self.value.text()}{where}, not {getattr(base, self.step).text()}"


@dataclass(frozen=True)
class NamedPoint:
    """A change, or a pair, that an old variant of the diagnosis names (rule 1)."""

    id: str
    changes: tuple[tuple[str, Any], ...]   # (step, value) each
    applies: Callable                      # (request) -> bool


def _point(id_: str, applies: Callable, *changes: tuple[str, Any]) -> NamedPoint:
    return NamedPoint(id_, tuple(changes), applies)


def _uniform_in(*dtypes: str) -> Callable:
    return lambda r: r.kind == UNIFORM and r.dtype in dtypes


NAMED = (
    _point("uniform-high-bits", _uniform_in("float32"), ("bits", chain.BitSelection("high", 23))),
    _point("uniform-high-bits", _uniform_in("float64"), ("pairing", chain.WordPairing("first-low")),
           ("bits", chain.BitSelection("high", 52))),
    _point("uniform-24-bits", _uniform_in("float32"), ("bits", chain.BitSelection("high", 24))),
    _point("uniform-24-bits", _uniform_in("float64"), ("bits", chain.BitSelection("high", 53))),
    _point("uniform-open-closed", _uniform_in("float32"), ("bits", chain.BitSelection("low", 32)),
           ("scaling", chain.Scaling(None, "half-step"))),
    _point("uniform-bfloat16-truncated-high-bits", _uniform_in("bfloat16"), ("bits", chain.BitSelection("high", 23)),
           ("rounding", chain.Rounding("toward-zero"))),
    _point("uniform-narrow-rounded", _uniform_in("float16", "bfloat16"), ("bits", chain.BitSelection("low", 23))),
    _point("uniform-64-words-swapped", _uniform_in("float64"), ("pairing", chain.WordPairing("first-low"))),
    _point("uniform-64-one-word", _uniform_in("float64"), ("pairing", chain.WordPairing("one-word"))),
    _point("wide-words-swapped", lambda r: r.kind in (INTEGERS, BITS), ("pairing", chain.WordPairing("first-high"))),
    _point("normal-pair-swapped", lambda r: r.kind == NORMAL, ("u1", chain.NormalPairing("second"))),
    _point("normal-sin-cos-swapped", lambda r: r.kind == NORMAL, ("output", chain.NormalOutput("cos-sin"))),
    _point("normal-no-epsilon-clamp", lambda r: r.kind == NORMAL, ("epsilon", chain.NormalClamp("none"))),
    _point("normal-two-pi-float32", lambda r: r.kind == NORMAL, ("angle", chain.AnglePrecision("float32"))),
    _point("normal-narrow-truncated", lambda r: r.kind == NORMAL and r.dtype in ("float16", "bfloat16"),
           ("rounding", chain.Rounding("toward-zero"))),
    _point("integers-multiply-shift", lambda r: r.kind == INTEGERS and r.dtype == "int32",
           ("method", chain.IntegerMethod("multiply-shift"))),
    _point("stream-one-block-late", lambda r: r.seed is None, ("stream", chain.StreamPosition(4))),
)


def named_id(request, changes: tuple[Change, ...]) -> str:
    """The old id of the named point ``changes`` are, or the step's id (a pair's: PAIR_ID)."""
    given = {(c.step, c.value) for c in changes}
    for point in NAMED:
        if set(point.changes) == given and point.applies(request):
            return point.id
    return step_id(changes[0].step) if len(changes) == 1 else PAIR_ID


# ---------------------------------------------------------------------------------- rule 1: catalogs
STREAM_OFFSETS = (-8, -4, -3, -2, -1, 1, 2, 3, 4, 8)
SEED_RULES = ("key-counter-swapped", "counter-low-words", "seed-pair-swapped", "not-scrambled")
NARROW_BITS = (7, 8, 10, 11, 16, 23, 24, 32)
WIDE_BITS = (32, 52, 53, 64)


def _uniform_catalog(request) -> list[Change]:
    wide = request.dtype == "float64"
    out = [Change("pairing", chain.WordPairing(o)) for o in ("first-low", "one-word")] if wide else []
    windows = WIDE_BITS if wide else NARROW_BITS
    out += [Change("bits", chain.BitSelection(s, k)) for s in ("low", "high") for k in windows]
    exponents = (52, 53, 64) if wide else (23, 24, 32)
    out += [Change("scaling", chain.Scaling(e, o)) for e in (None, *exponents) for o in ("none", "half-step")]
    out.append(Change("rounding", chain.Rounding("toward-zero")))
    out += [Change("precision", chain.Precision(p)) for p in ("float32", "float64")]
    if request.low is not None:
        formulas = ("fma", "low*(1-u)+high*u", "high-u*(high-low)")
        out += [Change("formula", chain.RangeFormula(f)) for f in formulas]
        out.append(Change("clamp", chain.Clamping("below-high")))
    return out


def _normal_catalog(request) -> list[Change]:
    out = [Change("bits", chain.BitSelection(s, k)) for s, k in (("high", 23), ("high", 24), ("low", 24))]
    out += [Change("scaling", chain.Scaling(e, o)) for e, o in ((None, "half-step"), (24, "none"), (32, "none"))]
    out += [Change("u1", chain.NormalPairing("second"))]
    out += [Change("epsilon", chain.NormalClamp(c)) for c in ("none", "one-minus-u")]
    out += [Change("angle", chain.AnglePrecision("float32"))]
    out += [Change("log", chain.LogPrecision(p)) for p in ("float16", "float64")]
    out += [Change("output", chain.NormalOutput(o)) for o in ("cos-sin", "cos-only", "sin-only")]
    if request.dtype != "float32":
        out.append(Change("rounding", chain.Rounding("toward-zero")))
    return out


def _integer_catalog(request) -> list[Change]:
    out = [Change("pairing", chain.WordPairing(o)) for o in ("first-high", "one-word")] \
        if request.dtype in ("int64", "uint64") else []
    if request.kind == INTEGERS:
        methods = [chain.IntegerMethod("multiply-shift"), chain.IntegerMethod("mask-reject")]
        methods += [chain.IntegerMethod(m, u) for m in ("float32", "float-range") for u in ("low", "high")]
        out += [Change("method", m) for m in methods]
        out += [Change("span", chain.IntegerSpan(d)) for d in (-1, 1)]
    return out


def catalog(request, base: chain.Pipeline) -> list[Change]:
    """Every single change tried for ``request`` (rule 1), the base's own values left out."""
    if request.kind == UNIFORM:
        out = _uniform_catalog(request)
    elif request.kind == NORMAL:
        out = _normal_catalog(request)
    else:
        out = _integer_catalog(request)
    out += [Change("stream", chain.StreamPosition(w)) for w in STREAM_OFFSETS]
    if request.seed is not None:
        out += [Change("seed", chain.SeedDerivation(rule)) for rule in SEED_RULES]
    return [c for c in out if getattr(base, c.step) != c.value and
            not (c.step == "precision" and c.value.dtype == request.dtype)]


# ---------------------------------------------------------------------------------- rules 2-5: the search
@dataclass
class Found:
    """A change, or a pair of changes, that reproduces the case."""

    changes: tuple[Change, ...]
    id: str
    exact: bool = True     # bit for bit; False: within the request's bound

    def step(self) -> str:
        return " + ".join(chain.STEPS[c.step] for c in self.changes)

    def parameters(self) -> dict:
        return {chain.STEPS[c.step]: c.parameters() for c in self.changes}

    def summary(self, base: chain.Pipeline) -> str:
        return "; ".join(c.text(base) for c in self.changes)

    def as_dict(self, base: chain.Pipeline) -> dict:
        return {"id": self.id, "step": self.step(), "parameters": self.parameters(), "summary": self.summary(base)}


@dataclass
class Searched:
    """What the search found and what it did not try."""

    found: list[Found]
    tried: int
    seconds: float
    not_tried: str = ""


def search(request, state, explains: Callable, singles_only_if_named: bool = False) -> Searched | None:
    """Rules 2-5. ``explains(predicted, prefix, share=False)``: whether a prediction reproduces the
    case (on the first PREFIX elements when ``prefix``; with ``share``, the fraction of elements it
    reproduces). ``singles_only_if_named``: a named model already reproduces the case exactly, so
    pairs are not searched (rule 2). None: the chain does not model the request."""
    base = chain.baseline(request)
    if base is None:
        return None
    words = chain.Words(request, state)
    start = time.perf_counter()
    changes = catalog(request, base)
    short = _prefix(request)
    found: list[Found] = []
    leads = set()
    for index, change in enumerate(changes):
        level, share = _reproduces(base.changed(**{change.step: change.value}), request, short, words, explains)
        if level:
            found.append(Found((change,), named_id(request, (change,)), level == EXACT))
        if level or share >= PAIR_SHARE:
            leads.add(index)
    tried = len(changes) + _named_pairs(request, base, short, words, explains, found)
    if any(f.exact for f in found) or singles_only_if_named:
        reason = "a single change" if found else "a named model"
        return Searched(found, tried, time.perf_counter() - start,
                        f"pairs of changes ({reason} reproduces the numbers exactly)")
    every = [(i, j) for i, j in combinations(range(len(changes)), 2) if changes[i].step != changes[j].step]
    pairs = [(changes[i], changes[j]) for i, j in every if i in leads or j in leads]
    skipped = f"{len(every) - len(pairs)} of {len(every)} pairs of changes (neither change alone reproduces " \
              f"{PAIR_SHARE:.0%} of the numbers)" if len(pairs) < len(every) else ""
    for index, (a, b) in enumerate(pairs):
        if time.perf_counter() - start > BUDGET_SECONDS:
            return Searched(found, tried, time.perf_counter() - start,
                            f"{len(pairs) - index} of {len(every)} pairs of changes (past the budget of "
                            f"{BUDGET_SECONDS:g} s)" + (f"; {skipped}" if skipped else ""))
        if any(set(f.changes) == {a, b} for f in found):
            continue   # a named pair, tried already
        tried += 1
        level, _ = _reproduces(base.changed(**{a.step: a.value, b.step: b.value}), request, short, words, explains)
        if level:
            found.append(Found((a, b), named_id(request, (a, b)), level == EXACT))
    return Searched(found, tried, time.perf_counter() - start, skipped)


def _named_pairs(request, base: chain.Pipeline, short, words: chain.Words, explains: Callable,
                 found: list[Found]) -> int:
    """The named points that are pairs (rule 1), tried with the single changes: an old id keeps its
    step and parameters even when pairs are not searched. Returns how many were tried."""
    points = [p for p in NAMED if len(p.changes) == 2 and p.applies(request)]
    for point in points:
        changes = tuple(Change(step, value) for step, value in point.changes)
        level, _ = _reproduces(base.changed(**dict(point.changes)), request, short, words, explains)
        if level:
            found.append(Found(changes, point.id, level == EXACT))
    return len(points)


def _prefix(request):
    from dataclasses import replace

    return replace(request, count=min(request.count, PREFIX))


def _reproduces(candidate: chain.Pipeline, request, short, words: chain.Words,
                explains: Callable) -> tuple[int, float]:
    """(0: not, 1: within the bound, 2: exactly (rule 3); the share of the prefix it reproduces)."""
    try:
        predicted = chain.predict(candidate, short, words)
        level = explains(predicted, True)
        if not level:
            return 0, float(explains(predicted, True, share=True))
        if short.count == request.count:
            return int(level), 1.0
        level = explains(chain.predict(candidate, request, words), False)
        return int(level), 1.0
    except Exception:  # a change that cannot model this request does not apply (the diagnosis never fails a run)
        return 0, 0.0


# ---------------------------------------------------------------------------------- rule 6: inference
def infer(request, state, actual: np.ndarray, right: np.ndarray) -> str:
    """One line on how the words feed the numbers, read off the numbers (rule 6), or ""."""
    try:
        if request.kind == UNIFORM:
            return _infer_uniform(request, state, actual, right)
        if request.kind == INTEGERS:
            return _infer_integers(request, state, actual)
        if request.kind == NORMAL:
            return _infer_normal(actual, right, request)
    except Exception:  # the inference is an explanation, never a failure of the run
        return ""
    return ""


def _values(request, array: np.ndarray) -> np.ndarray:
    return floats.as_values(floats.format_of(request.dtype), array)


def _infer_uniform(request, state, actual: np.ndarray, right: np.ndarray) -> str:
    values, reference = _values(request, actual), _values(request, right)
    finite = np.isfinite(values)
    if request.low is not None or not finite.all():
        return _affine(values[finite], reference[finite])
    k = next((k for k in range(1, 65) if np.all(np.ldexp(values, k) == np.round(np.ldexp(values, k)))), None)
    if k is None:
        return _affine(values, reference)
    q = [int(x) for x in np.ldexp(values, k)]
    words = chain.Words(request, state)
    wide = request.dtype == "float64"
    for order in (("first-high", "first-low", "one-word") if wide else ("",)):
        for shift in range(-8, 9):
            p = chain.Pipeline(stream=chain.StreamPosition(shift), pairing=chain.WordPairing(order or "first-low"))
            m = chain.pair_words(p, words, request.count) if wide else words.take(p, request.count)
            width = 64 if wide else 32
            m = m << np.uint64(32) if order == "one-word" else m
            for s in range(0, width - k + 1):
                if all((int(w) >> s) & ((1 << k) - 1) == x for w, x in zip(m, q)):
                    where = f"{'pairs ' + order if wide else 'word'} i{shift:+d}" if shift else \
                        (f"pairs {order}" if wide else "word i")
                    return f"value * 2^{k} is an integer: bits {s}..{s + k - 1} of {where}"
    return f"value * 2^{k} is an integer (at most {k} bits a value), equal to no {k}-bit window of the words"


def _affine(values: np.ndarray, reference: np.ndarray) -> str:
    if values.size < 3 or np.ptp(reference) == 0:
        return ""
    scale, offset = np.polyfit(reference, values, 1)
    residual = np.max(np.abs(scale * reference + offset - values))
    spread = np.ptp(values) or 1.0
    if residual <= 1e-3 * spread:
        return f"an affine map of the right values: value = {scale:.6g} * right + {offset:.6g} " \
               f"(within {residual:.3g}): a wrong scale or range formula"
    return f"no affine map of the right values (residual {residual:.3g} of a spread of {spread:.3g})"


def _infer_integers(request, state, actual: np.ndarray) -> str:
    low, high = request.integer_range
    offsets = [int(v) - low for v in actual]
    words = chain.Words(request, state)
    m = [int(w) for w in chain.pair_words(chain.Pipeline(), words, request.count)] \
        if request.dtype == "int64" else [int(w) for w in words.take(chain.Pipeline(), request.count)]
    width = 64 if request.dtype == "int64" else 32
    span = high - low
    for candidate in {span - 1, span + 1, span + 2, max(span - 2, 1)} - {span}:
        if candidate > 0 and all(w % candidate == o for w, o in zip(m, offsets)):
            return f"value - low = word mod {candidate}: a span of {candidate}, not {span}"
        if candidate > 0 and all((w * candidate) >> width == o for w, o in zip(m, offsets)):
            return f"value - low = (word * {candidate}) >> {width}: a span of {candidate}, not {span}"
    reached = f"; values reach {max(offsets) + low} (high is {high})" if offsets and max(offsets) >= span else ""
    return f"value - low is word mod m or (word * m) >> {width} for no m near the span{reached}"


def _infer_normal(actual: np.ndarray, right: np.ndarray, request) -> str:
    values, reference = _values(request, actual), _values(request, right)
    n = min(values.size, reference.size)
    same = np.isclose(values[:n], reference[:n], rtol=1e-2, atol=1e-3)
    pairs = n // 2 * 2
    swapped = np.isclose(values[:pairs:2], reference[1:pairs:2], rtol=1e-2, atol=1e-3)
    line = f"{int(same.sum())} of {n} values near the right ones (1%), {int(swapped.sum())} of {pairs // 2} " \
           f"pairs' first value near the right pair's second"
    magnitude = np.isclose(np.abs(values[:n]), np.abs(reference[:n]), rtol=1e-2, atol=1e-3)
    if magnitude.mean() > 0.9 and same.mean() < 0.9:
        line += "; the magnitudes agree, the signs differ: the angle or its sin/cos differ"
    return line
