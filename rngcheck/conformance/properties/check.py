"""The checks of the property cases (rngcheck.conformance.properties.cases, rules 2-10).

Each draw is the backend's ``random_numbers`` (rngcheck.backends.contract) under the first of its
``conventions`` that draws the case's kind and dtype: a convention rngcheck.numbers models must define
them; a library's own (one rngcheck.numbers does not model) is asked, and NotApplicable moves on to the
next. A backend that draws none of them is not applicable, never a pass. The verdict needs no model:
the numbers are compared with each other (bit for bit), with the range, or counted; rule 10 alone
compares them with the platform's own numbers (PLATFORM_NUMBERS).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ... import numbers
from ...errors import NotApplicable
from ...numbers import jax as jax_numbers
from ...numbers import jax_keys
from ...results.statuses import FAILED, PASSED
from ..checks import named
from ..outcome import CaseFailed, Outcome, call_backend
from .cases import FALSE_ALARM, OVERLAP_RUN, PLATFORMS, POSITIONS, Case, seed_state
from .diagnosis import diagnosis

Draw = Callable[[int, int], np.ndarray]   # (seed, position) -> the numbers


def _failed(message: str, id_: str, detail: str, **parameters) -> CaseFailed:
    return CaseFailed(Outcome(FAILED, message, diagnosis=diagnosis(id_, detail, **parameters)))


def _conventions(backend) -> tuple[str, ...]:
    """The backend's conventions; NotApplicable when it draws no numbers."""
    conventions = tuple(getattr(backend, "conventions", ()) or ())
    if not conventions:
        raise NotApplicable("the backend draws no numbers")
    return conventions


def _drawer(backend, case: Case) -> tuple[str, Draw, np.ndarray]:
    """(the convention, a draw of the case's request at a seed and position, the draw of the case's first
    seed at position 0) for ``backend``."""
    conventions = _conventions(backend)
    why = []
    for name in conventions:
        modelled = name in numbers.CONVENTIONS
        if modelled and not numbers.convention_of(name).supports(case.request(name)):
            why.append(f"{name} defines no {case.kind} {case.dtype}")
            continue
        draw = _draw_under(backend, case, name)
        try:
            first = draw(case.seeds[0], 0)
        except NotApplicable as error:
            why.append(f"{name}: {error}")
            continue
        return name, draw, first
    raise NotApplicable(f"no convention of the backend draws {case.kind} {case.dtype}: {'; '.join(why)}")


def _draw_under(backend, case: Case, convention: str) -> Draw:
    request = case.request(convention).to_dict()

    def draw(seed: int, position: int) -> np.ndarray:
        returned = call_backend(backend, "random_numbers", dict(request), seed_state(seed, position))
        array = np.asarray(returned).reshape(-1) if hasattr(returned, "__len__") else np.asarray([])
        if array.size != case.count or array.dtype == object:
            raise CaseFailed(Outcome(FAILED, f"returned {array.size} numbers, not {case.count}",
                                     diagnosis=named("contract", f"return {case.count} numbers of {case.dtype}")))
        return array
    return draw


def _bits(array: np.ndarray) -> np.ndarray:
    """The numbers as unsigned words of their width: equal bit for bit is equal."""
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def _runs(array: np.ndarray) -> list[bytes]:
    windows = np.lib.stride_tricks.sliding_window_view(_bits(array), OVERLAP_RUN)
    return [row.tobytes() for row in windows]


def _same(first: np.ndarray, again: np.ndarray) -> int | None:
    """The first index where ``again`` differs from ``first`` bit for bit; None when equal."""
    differ = np.flatnonzero(_bits(first) != _bits(again))
    return int(differ[0]) if differ.size else None


def _passed(convention: str, text: str) -> Outcome:
    return Outcome(PASSED, f"{text} (under {convention})")


def check_repeat(backend, case: Case, strict: bool) -> Outcome:
    """Rule 2."""
    seed = case.seeds[0]
    convention, draw, first = _drawer(backend, case)
    for call in (2, 3):
        at = _same(first, draw(seed, 0))
        if at is not None:
            raise _failed(f"seed {seed}: call {call} differs from call 1 at number {at}", "property-repeat",
                          f"seed {seed}, call {call} of 3, first at number {at}", seed=seed, call=call, index=at)
    return _passed(convention, f"seed {seed}: 3 calls of {case.count} numbers the same")


def check_order(backend, case: Case, strict: bool) -> Outcome:
    """Rule 3."""
    seed = case.seeds[0]
    convention, draw, first = _drawer(backend, case)
    forward = [first] + [draw(seed, p) for p in range(1, POSITIONS)]
    backward = {p: draw(seed, p) for p in reversed(range(POSITIONS))}
    for position in range(POSITIONS):
        at = _same(forward[position], backward[position])
        if at is not None:
            raise _failed(f"seed {seed} position {position}: asked last to first it differs at number {at}",
                          "property-order", f"seed {seed}, position {position}, first at number {at}", seed=seed,
                          position=position, index=at)
    return _passed(convention, f"seed {seed}: positions 0..{POSITIONS - 1} the same in both orders")


def check_recreate(backend, case: Case, strict: bool) -> Outcome:
    """Rule 4."""
    seed, other = case.seeds
    convention, draw, first = _drawer(backend, case)
    draw(other, 0)
    at = _same(first, draw(seed, 0))
    if at is not None:
        raise _failed(f"seed {seed} drawn again after seed {other} differs at number {at}", "property-recreate",
                      f"seed {seed} after seed {other}, first at number {at}", seed=seed, between=other, index=at)
    return _passed(convention, f"seed {seed} repeated after seed {other}")


def _stream(draw: Draw, seed: int, first: np.ndarray | None = None) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Seed ``seed``'s draws at positions 0..POSITIONS-1 joined (``first``: position 0's, when drawn), and
    each number's (position, index)."""
    parts = [draw(seed, 0) if first is None else first] + [draw(seed, p) for p in range(1, POSITIONS)]
    return np.concatenate(parts), [(p, i) for p, part in enumerate(parts) for i in range(part.size)]


def check_seeds(backend, case: Case, strict: bool) -> Outcome:
    """Rule 5."""
    seed, next_seed = case.seeds
    convention, draw, first = _drawer(backend, case)
    mine, where_mine = _stream(draw, seed, first)
    theirs, where_theirs = _stream(draw, next_seed)
    starts = {run: i for i, run in reversed(list(enumerate(_runs(mine))))}
    for j, run in enumerate(_runs(theirs)):
        i = starts.get(run)
        if i is not None:
            (p, a), (q, b) = where_mine[i], where_theirs[j]
            raise _failed(f"seed {next_seed} position {q} number {b} onward equals seed {seed} position {p} number "
                          f"{a} onward ({OVERLAP_RUN} numbers or more)", "property-seeds-overlap",
                          f"seed {next_seed} position {q} = seed {seed} position {p}, shift {i - j}",
                          seeds=[seed, next_seed], positions=[p, q], indexes=[a, b], window=int(mine.size))
    return _passed(convention, f"seeds {seed} and {next_seed}: no run of {OVERLAP_RUN} in common within "
                               f"{mine.size} numbers each")


def check_stream(backend, case: Case, strict: bool) -> Outcome:
    """Rule 6."""
    seed = case.seeds[0]
    convention, _, numbers_drawn = _drawer(backend, case)
    seen: dict[bytes, int] = {}
    for j, run in enumerate(_runs(numbers_drawn)):
        i = seen.setdefault(run, j)
        if i != j:
            raise _failed(f"seed {seed}: numbers {j} onward repeat numbers {i} onward (shift {j - i})",
                          "property-stream-repeats", f"seed {seed}, shift {j - i} from number {i}", seed=seed,
                          shift=j - i, index=i, window=int(numbers_drawn.size))
    return _passed(convention, f"seed {seed}: no run of {OVERLAP_RUN} twice in {numbers_drawn.size} numbers")


def _inside(case: Case, drawn: np.ndarray) -> tuple[np.ndarray, int, int]:
    """(the numbers as int64, low, high) once every number lies in the case's [low, high)."""
    values = drawn.astype(np.int64)
    low, high = int(case.low or 0), int(case.high or 0)
    outside = values[(values < low) | (values >= high)]
    if outside.size:
        raise _failed(f"{outside.size} of {values.size} numbers outside [{low}, {high}), e.g. {int(outside[0])}",
                      "property-range-outside", f"[{low}, {high}): {int(outside[0])}", low=low, high=high,
                      value=int(outside[0]), count=int(outside.size))
    return values, low, high


def check_integers(backend, case: Case, strict: bool) -> Outcome:
    """Rule 7."""
    convention, _, drawn = _drawer(backend, case)
    values, low, high = _inside(case, drawn)
    counts = np.bincount(values - low, minlength=high - low)
    missing = [low + int(v) for v in np.flatnonzero(counts == 0)]
    if missing:
        raise _failed(f"[{low}, {high}) never gave {missing[:8]} in {values.size} numbers", "property-range-missing",
                      f"[{low}, {high}) never gave {missing[0]}", low=low, high=high, missing=missing[:8],
                      count=int(values.size))
    from scipy import stats as scipy_stats  # here: the command line imports no scipy (tests/test_startup.py)

    chi2, p = scipy_stats.chisquare(counts)
    if p < FALSE_ALARM:
        expected = values.size / counts.size
        worst = int(np.argmax(np.abs(counts - expected)))
        raise _failed(f"[{low}, {high}): chi-square {chi2:.1f} on {counts.size - 1} degrees of freedom, p = {p:.2e} "
                      f"< {FALSE_ALARM:g}; {low + worst} came {int(counts[worst])} times, not about {expected:.0f}",
                      "property-range-biased", f"[{low}, {high}): {low + worst} {int(counts[worst])} times for "
                      f"{expected:.0f}, p = {p:.1e}", low=low, high=high, value=low + worst,
                      times=int(counts[worst]), expected=round(expected, 1), p=float(p))
    return _passed(convention, f"[{low}, {high}): every value, chi-square p = {p:.3g} over {values.size} numbers")


def check_bits(backend, case: Case, strict: bool) -> Outcome:
    """Rule 8."""
    convention, _, drawn = _drawer(backend, case)
    values, low, high = _inside(case, drawn)
    width = (high - low - 1).bit_length()
    offsets = values - low
    ever_set = int(np.bitwise_or.reduce(offsets)) if offsets.size else 0
    ever_clear = int(np.bitwise_or.reduce(~offsets & ((1 << width) - 1))) if offsets.size else 0
    stuck = [b for b in range(width) if not (ever_set >> b) & 1 or not (ever_clear >> b) & 1]
    if stuck:
        never_set = [b for b in stuck if not (ever_set >> b) & 1]
        low_clear = math.gcd(*map(int, offsets)) if offsets.size else 0
        multiple = f"; every number a multiple of {low_clear}" if low_clear > 1 else ""
        raise _failed(f"[{low}, {high}): bit{'s' if len(stuck) > 1 else ''} {_spans(stuck)} of {width} never "
                      f"{'set' if never_set == stuck else 'set or never clear'} in {values.size} numbers{multiple}",
                      "property-bits-unreachable", f"[{low}, {high}): bits {_spans(stuck)} stuck{multiple}",
                      low=low, high=high, bits=stuck, multiple_of=low_clear)
    return _passed(convention, f"[{low}, {high}): all {width} bits set and clear over {values.size} numbers")


def _spans(bits: list[int]) -> str:
    spans, start = [], bits[0]
    for prev, cur in zip(bits, [*bits[1:], None]):
        if cur != prev + 1 if cur is not None else True:
            spans.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = cur if cur is not None else start
    return ", ".join(spans)


def check_interval(backend, case: Case, strict: bool) -> Outcome:
    """Rule 9."""
    seed = case.seeds[0]
    convention, _, drawn = _drawer(backend, case)
    values = drawn.astype(np.float64)
    bad = np.flatnonzero(~((values >= 0.0) & (values < 1.0)))
    if bad.size:
        first = float(values[bad[0]])
        ones = int(np.count_nonzero(values == 1.0))
        raise _failed(f"{bad.size} of {values.size} numbers outside [0, 1) ({ones} equal to 1.0); number "
                      f"{int(bad[0])} is {first!r}", "property-interval",
                      f"{case.dtype} [0, 1) gave {first!r} ({bad.size} of {values.size})", seed=seed,
                      value=first, index=int(bad[0]), count=int(bad.size), ones=ones)
    return _passed(convention, f"{values.size} {case.dtype} uniforms in [0, 1)")


def _jax_uniforms(key: tuple[int, int], layout: str, count: int) -> np.ndarray:
    return jax_numbers.uniform_from_bits("float32", jax_keys.words(key, count, layout))


def _jax_keys(seed: int) -> list[tuple[tuple[int, int], str]]:
    """Key data a front end may have made of ``seed`` (the platform's own first), each with how it is read."""
    low, high = seed & jax_keys.MASK32, (seed >> 32) & jax_keys.MASK32
    return [((0, low), f"jax.random.key({seed})"), ((high, low), f"jax.random.key({seed}) with 64-bit mode on"),
            ((low, 0), "[seed, 0]: the seed in word 0"), ((low, high), "[seed mod 2^32, seed >> 32]: the words "
            "swapped"), ((low, low), "[seed, seed]"), ((0, 0), "[0, 0]: the seed ignored")]


# Rule 10's platforms: (the key data the platform makes of a seed and a search of others, the float32
# uniforms of key data under a layout, the layouts, the platform's own layout).
PLATFORM_NUMBERS = {"jax": (_jax_keys, _jax_uniforms, jax_keys.LAYOUTS)}   # one entry per PLATFORMS name


def check_keying(backend, case: Case, strict: bool) -> Outcome:
    """Rule 10."""
    seed = case.seeds[0]
    _conventions(backend)
    try:
        platform = backend.describe().get("platform_seeding")
    except Exception:   # a backend whose describe fails names no platform here (the run records why)
        platform = None
    if not platform:
        raise NotApplicable("the backend names no platform whose generator it seeds (describe()['platform_seeding'])")
    if platform not in PLATFORM_NUMBERS:
        raise NotApplicable(f"rngcheck models no seeding of platform {platform!r} (it models {', '.join(PLATFORMS)})")
    keys, uniforms, layouts = PLATFORM_NUMBERS[platform]
    convention, _, drawn = _drawer(backend, case)
    candidates = keys(seed)
    (own, own_text), own_layout = candidates[0], layouts[0]
    if _same(uniforms(own, own_layout, case.count), drawn) is None:
        return _passed(convention, f"seed {seed}: {case.count} numbers are {platform}'s from {own_text}, key data "
                                   f"{list(own)}")
    found = next(((key, text, layout) for layout in layouts for key, text in candidates
                  if _same(uniforms(key, layout, case.count), drawn) is None), None)
    if found is None:
        at = _same(uniforms(own, own_layout, case.count), drawn)
        raise _failed(f"seed {seed}: number {at} differs from {platform}'s {own_text} (key data {list(own)}), and no "
                      f"other key data tried ({len(candidates)} under {len(layouts)} layouts) gives these numbers",
                      "property-keying", f"seed {seed}: not {platform}'s key data {list(own)}; none of "
                      f"{len(candidates) * len(layouts)} tried", seed=seed, platform=platform, expected=list(own),
                      key=None, index=at)
    key, text, layout = found
    how = "" if layout == own_layout else f", in {platform}'s {layout} layout"
    raise _failed(f"seed {seed}: the numbers are {platform}'s from key data {list(key)} ({text}{how}), not from "
                  f"{own_text}'s {list(own)}", "property-keying", f"seed {seed} keyed as {list(key)}{how}, not "
                  f"{platform}'s {list(own)}", seed=seed, platform=platform, expected=list(own), key=list(key),
                  layout=layout)


PROCEDURES = {"property-repeat": check_repeat, "property-order": check_order, "property-recreate": check_recreate,
              "property-seeds": check_seeds, "property-stream": check_stream, "property-integers": check_integers,
              "property-bits": check_bits, "property-interval": check_interval, "property-keying": check_keying}
