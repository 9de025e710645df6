"""The numbers cases and their check: floats, normals and integers drawn from the operator's words.

Categories: uniform, normal, truncated-normal, integers, bits (per convention, kind and dtype,
on states that cross blocks and carries), seed (stateless seed rules), and guide (every number
TensorFlow's guide prints, rngcheck/vectors/tensorflow_guide.json). A case names a request
(rngcheck.numbers.Request) and a state; the backend answers through its optional
``random_numbers``. The verdict: the numbers are compared with the reference's (or the printed
ones) within the request's bound (rngcheck.numbers.tolerance), the ULP histogram and the worst
element recorded; a failure is diagnosed (rngcheck.conformance.numbers_diagnosis). A backend that
does not draw the convention's numbers is not applicable (skipped), never a pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import counter, numbers
from ..errors import BackendProcessFailed, BackendStopped, NotApplicable, Rejected
from ..numbers import BITS, INTEGERS, NORMAL, TRUNCATED_NORMAL, UNIFORM, floats, tolerance
from ..numbers import tensorflow as tf
from ..results.statuses import FAILED, PASSED
from ..vectors import guide_vectors
from . import cases as C
from .numbers_diagnosis import diagnose

if TYPE_CHECKING:
    from .check import Outcome

NUMBERS = "numbers"      # the procedure (rngcheck.conformance.check.PROCEDURES)
CATEGORIES = {UNIFORM: "uniform", NORMAL: "normal", TRUNCATED_NORMAL: "truncated-normal",
              INTEGERS: "integers", BITS: "bits"}
GUIDE = "../shared/seeds/004_a9f6993c0c6e48da.digest.md (TensorFlow guide 'Random number generation')"
RULE = "the convention's conversion of the operator's words (rngcheck.numbers), within its bound"
SHOWN = 8
QUICK_COUNT = 1027       # odd: a partial block and a half Box-Muller pair at the end
FULL_COUNT = (1 << 16) + 3
# A state whose stream has a word with a zero 23-bit mantissa at element 2 (found by search, checked
# by tests/test_numbers.py): a float32 normal's u1 is 0 there, and only the epsilon clamp keeps log finite.
ZERO_MANTISSA_COUNTER = 4751841

INT_RANGES = {
    "int32": [("small", -5, 10), ("power-of-two", 0, 1 << 20), ("full", -(1 << 31), (1 << 31) - 1),
              ("2pow31", -(1 << 30), 1 << 30)],
    "int64": [("small", -5, 10), ("2pow32", 0, 1 << 32), ("int32-span", -(1 << 31), (1 << 31) - 1),
              ("2pow40", -(1 << 39), 1 << 39), ("full", -(1 << 63), (1 << 63) - 1)],
}
FLOAT_RANGE = (-3.5, 7.25)


def _case(case_id, category, description, request, state, *, source, expected=None, profiles=C.ALL, note=""):
    return C.Case(id=case_id, category=category, description=description, rule=RULE, source=source,
                  state=tuple(int(w) for w in state), sizes=(max(1, request.count),), procedure=NUMBERS,
                  request=request, expected_values=expected, profiles=profiles, note=note)


def convention_cases() -> list[C.Case]:
    cases = []
    carry_state = counter.make_state((1 << 64) - 2, (0xA4093822, 0x299F31D0))
    for name, convention in sorted(_conventions().items()):
        for kind, dtypes in convention.kinds.items():
            category = CATEGORIES[kind]
            for dtype in dtypes:
                stem = f"{category}/{name}/{dtype}"
                source = convention.sources.get(kind, convention.title)
                for label, low, high in _ranges(kind, dtype):
                    suffix = f"-{label}" if label else ""
                    if not convention.supports(numbers.Request(name, kind, dtype, 1, low, high)):
                        continue  # the convention defines no such range (cuRAND's uniform has none)
                    for profile_count, profiles in ((QUICK_COUNT, frozenset({"quick"})), (FULL_COUNT, C.FULL_ONLY)):
                        request = numbers.Request(name, kind, dtype, profile_count, low, high)
                        cases.append(_case(f"{stem}{suffix}" + ("" if profiles != C.FULL_ONLY else "-large"),
                                           category, f"{request.text()} from the pi state", request, C.BASE_STATE,
                                           source=source, profiles=profiles))
                request = numbers.Request(name, kind, dtype, 13, *(_ranges(kind, dtype)[0][1:]))
                cases.append(_case(f"{stem}-carry", category, f"{request.text()} across the carry out of word 1",
                                   request, carry_state, source=source))
    return cases


def _ranges(kind, dtype):
    if kind == INTEGERS:
        return INT_RANGES.get(dtype, [("small", -5, 10)])
    if kind == UNIFORM:
        return [("", None, None), ("range", *FLOAT_RANGE)]
    return [("", None, None)]


def _conventions():
    numbers.convention_of("tensorflow")  # the registry is loaded
    return numbers.CONVENTIONS


def special_cases() -> list[C.Case]:
    zero = counter.make_state(ZERO_MANTISSA_COUNTER, (0xA4093822, 0x299F31D0))
    cases = []
    for dtype in ("float32", "float16", "bfloat16"):
        request = numbers.Request("tensorflow", NORMAL, dtype, 4)
        cases.append(_case(f"normal/tensorflow/{dtype}-epsilon-clamp", "normal",
                           "element 2's u1 word has a zero mantissa: the 1e-7 clamp keeps the value finite",
                           request, zero, source=tf.SOURCE_R + " (BoxMullerFloat: u1 < epsilon)"))
    for seed in ((1, 2), ((1 << 63) + 5, (1 << 64) - 1)):
        for kind, dtype in ((UNIFORM, "float32"), (BITS, "uint64")):
            request = numbers.Request("tensorflow", kind, dtype, 9, seed=seed)
            cases.append(_case(f"seed/tensorflow/{kind}-{dtype}-{seed[0]:x}-{seed[1]:x}", "seed",
                               f"stateless {kind} {dtype} with seed {list(seed)}: key and counter from the seed",
                               request, (0,) * 6, source=tf.SOURCE_S + " (GenerateKey)"))
    return cases


def guide_cases() -> list[C.Case]:
    cases = []
    for vector in guide_vectors():
        draws, _ = tf.run_program(vector.steps)
        for draw in draws:
            if draw.expected is None:
                continue
            replica = draw.label.split(":")[0].replace(" ", "") + "-" if draw.label.startswith("replica") else ""
            state = draw.state if draw.state is not None else (0,) * 6
            cases.append(_case(f"guide/{vector.id}/step{draw.step}{('-' + replica[:-1]) if replica else ''}",
                               "guide", f"{draw.label}: the printed {list(draw.expected)}", draw.request, state,
                               source=f"{vector.source}; {GUIDE}", expected=tuple(draw.expected),
                               note="the state is the Generator model's (rngcheck.numbers.tensorflow rules 11-14)"))
    return cases


def numbers_cases() -> list[C.Case]:
    return convention_cases() + special_cases() + guide_cases()


# ---------------------------------------------------------------------------------- the check
def _as_format(request, returned) -> np.ndarray | None:
    """The backend's answer held as the request's dtype (floats rule 1), or None if it is not one."""
    try:
        array = np.asarray(returned)
    except Exception:
        return None
    if array.dtype == object or array.size != request.count:
        return None
    array = array.reshape(-1)
    if request.dtype == "bfloat16":
        if array.dtype == np.uint16:
            return array
        if array.dtype == np.float32:
            held = floats.bfloat16_from_float32(array)
            exact = np.array_equal(floats.bfloat16_to_float32(held).view(np.uint32), array.view(np.uint32))
            return held if exact else None
        return None
    return array if array.dtype == np.dtype(request.dtype) else None


def _value_text(fmt, value) -> str:
    if fmt is None:
        return str(int(value))
    shown = floats.as_values(fmt, np.asarray([value])).astype(np.float32 if fmt.bits <= 32 else np.float64)[0]
    return f"{np.format_float_positional(shown, unique=True, trim='-')} ({floats.hex_bits(fmt, value)})"


def number_row(request, index: int, expected, actual, ulps: int) -> dict:
    fmt = request.format
    return {"index": int(index), "expected": _value_text(fmt, expected), "actual": _value_text(fmt, actual),
            "ulps": int(ulps)}


def _comparison(request, expected, actual, mask, bound, excess=None):
    cmp = tolerance.compare(request.dtype, expected[mask], actual[mask], bound,
                            excess=None if excess is None else excess[mask])
    positions = np.flatnonzero(mask)
    distances = tolerance.distances(request.dtype, expected, actual, bound.scale)
    distances[~mask] = 0
    rows = [number_row(request, int(i), expected[i], actual[i], distances[i])
            for i in positions[cmp.first_over][:SHOWN]]
    worst = int(positions[cmp.worst_index]) if positions.size else 0
    summary = {
        "request": request.to_dict(), "bound_ulps": bound.ulps, "bound": bound.why, "count": int(mask.sum()),
        "over": cmp.over, "histogram": cmp.histogram,
        "worst": number_row(request, worst, expected[worst], actual[worst], distances[worst]) if actual.size else None,
        "mismatches": rows,
    }
    return cmp, summary


def check_numbers(backend, case: C.Case, strict: bool, *, raised) -> Outcome:
    """The verdict on one numbers case (``raised`` wraps the backend's own exceptions: check.BackendRaised)."""
    from .check import CaseFailed, Outcome
    from .diagnosis import named

    request = case.numbers_request
    if request.convention not in tuple(getattr(backend, "conventions", ()) or ()):
        raise NotApplicable(f"the backend draws no {request.convention} numbers")
    state = None if request.seed is not None else counter.state_array(case.state)
    given = None if state is None else state.copy()
    try:
        returned = backend.random_numbers(request.to_dict(), given)
    except (Rejected, NotApplicable, BackendProcessFailed, BackendStopped):
        raise
    except Exception as error:
        raise raised(error) from error
    if state is not None and given is not None and not np.array_equal(given, state):
        raise CaseFailed(Outcome(FAILED, "modified the input state", diagnosis=named("input-state-modified")))
    actual = _as_format(request, returned)
    if actual is None:
        shown = np.asarray(returned).dtype if hasattr(returned, "dtype") else type(returned).__name__
        raise CaseFailed(Outcome(FAILED, f"returned {shown} of size {np.size(returned)}, not {request.count} "
                                         f"{request.dtype}", diagnosis=named("contract", f"return {request.count} "
                                                                             f"numbers of {request.dtype}")))
    bound = numbers.bound(request)
    if case.expected_values is not None:
        printed = np.array([np.nan if v is None else v for v in case.expected_values], dtype=np.float64)
        expected = floats.round_to(floats.format_of(request.dtype), printed)
        mask = ~np.isnan(printed)
    else:
        expected = numbers.draw(request, state)
        mask = np.ones(request.count, dtype=bool)
    excess = numbers.excess(request, state, actual, case.expected_values)
    cmp, summary = _comparison(request, expected, actual, mask, bound, excess)
    what = f"ULP{'s' if bound.ulps != 1 else ''}" if request.floating else "difference"
    values = (expected, actual, mask, excess)
    if cmp.within:
        note = f"{cmp.count} numbers within {bound.ulps} {what} (worst {cmp.worst})" if request.floating else \
            f"{cmp.count} numbers exact"
        return Outcome(PASSED, note, numbers=summary, values=values)
    diagnosis = diagnose(request, state, actual)
    against = "the printed numbers" if case.expected_values is not None else "the reference"
    limit = f" beyond the bound of {bound.ulps} {bound.wide or ''} ULP".replace("  ", " ") if request.floating \
        else ""
    message = (f"{cmp.over} of {cmp.count} numbers differ from {against}{limit}"
               + (f" (worst {cmp.worst} ULP at element {summary['worst']['index']})" if request.floating else "")
               + f"; looks like: {diagnosis['id']}")
    return Outcome(FAILED, message, diagnosis=diagnosis, numbers=summary, mismatch_count=cmp.over, values=values,
                   reproduce=reproduction(case))


def reproduction(case: C.Case) -> dict:
    """A numbers case as the arguments of ``rngcheck repro`` (results.document.repro_command)."""
    return {"state": ",".join(f"0x{int(w):08x}" for w in case.state), "sizes": str(case.numbers_request.count),
            "strides": None, "feature_level": "4.0", "request": case.numbers_request.to_dict()}


def repro_text(request, values, rows: int = 16) -> list[str]:
    """The numbers of a repro: each shown element's expected and actual value with bits and ULPs
    (the elements past the bound first, then the worst; ``*`` marks one past the bound)."""
    expected, actual, mask, excess = values
    fmt = request.format
    bound = numbers.bound(request)
    distances = tolerance.distances(request.dtype, expected, actual, bound.scale)
    past = (excess > 0) if excess is not None else (distances > bound.ulps)
    past &= mask
    order = list(np.flatnonzero(past)[:rows])
    if len(order) < rows:
        order += [int(i) for i in range(min(actual.size, rows)) if i not in order][:rows - len(order)]
    lines = [f"numbers ({request.text()}; bound {bound.ulps} ULP{' of ' + bound.wide if bound.wide else ''}; "
             f"* marks a number past it): {int(past.sum())} of {int(mask.sum())} past the bound"]
    for i in sorted(order):
        flag = "*" if past[i] else " "
        lines.append(f"  {i:>6}  expected {_value_text(fmt, expected[i]):<40} got {_value_text(fmt, actual[i]):<40}"
                     f" {distances[i]:>6} ULP{flag}" if request.floating else
                     f"  {i:>6}  expected {int(expected[i])}  got {int(actual[i])}{flag}")
    return lines
