"""The check of a numbers case: floats, normals and integers drawn from the operator's words.

The cases are rngcheck.conformance.conventions.cases (procedure NUMBERS). A case names a
request (rngcheck.numbers.Request) and a state; the backend answers through its optional
``random_numbers``. The verdict: the numbers are compared with the reference's (or the printed
ones) within the request's bound (rngcheck.numbers.tolerance), the ULP histogram and the worst
element recorded; a failure is diagnosed (rngcheck.conformance.conventions.diagnosis). A backend that
does not draw the convention's numbers is not applicable (skipped), never a pass.
"""

from __future__ import annotations

import numpy as np

from ... import counter, numbers
from ...errors import NotApplicable
from ...numbers import floats, tolerance
from ...results.statuses import FAILED, PASSED
from ..checks import named
from ..outcome import CaseFailed, Outcome, call_backend
from .diagnosis import diagnose

SHOWN = 8


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
    distances = tolerance.distances(request.dtype, expected, actual, bound.scale, bound.interval)
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


def check_numbers(backend, case, strict: bool) -> Outcome:
    """The verdict on one numbers case (rngcheck.conformance.conventions.cases.Case)."""
    request = case.request
    if request.convention not in tuple(getattr(backend, "conventions", ()) or ()):
        raise NotApplicable(f"the backend draws no {request.convention} numbers")
    state = None if request.seed is not None else counter.state_array(case.state)
    given = None if state is None else state.copy()
    returned = call_backend(backend, "random_numbers", request.to_dict(), given)
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
    wide = None if case.expected_values is not None else numbers.wide_reference(request, state)
    excess = numbers.excess(request, wide, actual)
    cmp, summary = _comparison(request, expected, actual, mask, bound, excess)
    what = f"ULP{'s' if bound.ulps != 1 else ''}" if request.floating else "difference"
    values = (expected, actual, mask, excess)
    if cmp.within:
        note = f"{cmp.count} numbers within {bound.ulps} {what} (worst {cmp.worst})" if request.floating else \
            f"{cmp.count} numbers exact"
        return Outcome(PASSED, note, numbers=summary, values=values)
    if case.expected_values is None:
        diagnosis = diagnose(request, state, actual, right=expected, wide=wide)
    else:  # printed numbers: the variants are measured against the reference
        diagnosis = diagnose(request, state, actual)
    against = "the printed numbers" if case.expected_values is not None else "the reference"
    limit = f" beyond the bound of {bound.ulps} {bound.wide or ''} ULP".replace("  ", " ") if request.floating \
        else ""
    if bound.orders:
        limit = f", none of its {len(bound.orders)} evaluation orders' results"
    message = (f"{cmp.over} of {cmp.count} numbers differ from {against}{limit}"
               + (f" (worst {cmp.worst} ULP at element {summary['worst']['index']})" if request.floating else "")
               + f"; looks like: {diagnosis['id']}")
    return Outcome(FAILED, message, diagnosis=diagnosis, numbers=summary, mismatch_count=cmp.over, values=values)


def repro_text(request, values, rows: int = 16) -> list[str]:
    """The numbers of a repro: each shown element's expected and actual value with bits and ULPs
    (the elements past the bound first, then the worst; ``*`` marks one past the bound)."""
    expected, actual, mask, excess = values
    fmt = request.format
    bound = numbers.bound(request)
    distances = tolerance.distances(request.dtype, expected, actual, bound.scale, bound.interval)
    past = (excess > 0) if excess is not None else (distances > bound.ulps)
    past &= mask
    order = list(np.flatnonzero(past)[:rows])
    if len(order) < rows:
        order += [int(i) for i in range(min(actual.size, rows)) if i not in order][:rows - len(order)]
    said = f"bound: one of {len(bound.orders)} evaluation orders' results" if bound.orders else \
        f"bound {bound.ulps} ULP{' of ' + bound.wide if bound.wide else ''}"
    lines = [f"numbers ({request.text()}; {said}; "
             f"* marks a number past it): {int(past.sum())} of {int(mask.sum())} past the bound"]
    for i in sorted(order):
        flag = "*" if past[i] else " "
        lines.append(f"  {i:>6}  expected {_value_text(fmt, expected[i]):<40} got {_value_text(fmt, actual[i]):<40}"
                     f" {distances[i]:>6} ULP{flag}" if request.floating else
                     f"  {i:>6}  expected {int(expected[i])}  got {int(actual[i])}{flag}")
    return lines
